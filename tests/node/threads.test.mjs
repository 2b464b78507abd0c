// The threaded module (wasm/dist-mt/, kernels/parallel.h; issue 15 item 7): Node loads it by default, it gives the
// single-threaded module's results bit for bit (texts, scores and every map), for 1 and 2 threads, and lists go to
// the engine in one call. The single-threaded module runs in a child process (one module per process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const skip = existsSync(`${ROOT}/wasm/dist-mt/attnlens-mt.wasm`) ? false : 'the threaded module is not built (npm run build:wasm)';

// Runs the same workloads in this process or in a child; returns every number of every result as hex bit patterns.
const WORKLOADS = `
  const bits = (v, out = []) => {
    if (v instanceof Float32Array) { for (const x of new Uint32Array(v.buffer, v.byteOffset, v.length)) out.push(x.toString(16)); }
    else if (v instanceof Int32Array || Array.isArray(v)) { for (const x of v) bits(x, out); }
    else if (v !== null && typeof v === 'object') { for (const k of Object.keys(v).sort()) { out.push(k); bits(v[k], out); } }
    else out.push(typeof v === 'number' ? new Uint32Array(new Float32Array([v]).buffer)[0].toString(16) + ':' + String(v) : String(v));
    return out;
  };
  const image = (w, h, seed) => {
    const data = new Uint8ClampedArray(w * h * 4);
    for (let i = 0; i < data.length; i++) data[i] = (i * (7 + seed) + ((i / (w * 4)) | 0) * 11) & 255;
    return { data, width: w, height: h, channels: 4 };
  };
  const run = async ({ pipeline }) => {
    const tr = await pipeline('translation', 'de-en-general');
    const texts = ['Wie geht es dir?', 'Ein Mann fährt mit dem Fahrrad über eine Brücke. Es regnet.', '', 'Danke!'];
    const clf = await pipeline('sentiment-analysis', 'sst2-selfattn');
    const cap = await pipeline('image-to-text', 'flickr8k-mobilenet');
    const out = {
      greedy: await tr(texts, { num_beams: 1 }),
      beam: await tr(texts.slice(0, 2), { num_beams: 4 }),
      one: await tr(texts[1]),
      sentiment: await clf(['a gorgeous , witty film', 'dull and far too long']),
      grid: cap.encode(image(160, 120, 1)),
      caption: await cap(image(96, 80, 2), { num_beams: 3 }),
      captions: await cap([image(96, 80, 2), image(120, 90, 3), image(64, 64, 4)], { num_beams: 2 }),
    };
    for (const p of [tr, clf, cap]) p.dispose();
    return bits(out);
  };
`;

function singleThreaded() {
  const code = `${WORKLOADS}
    const attnlens = await import(${JSON.stringify(`${ROOT}/wasm/index.js`)});
    await attnlens.init({ threads: 1 });
    if (attnlens.info().threaded) throw new Error('expected the single-threaded module');
    process.stdout.write(JSON.stringify(await run(attnlens)));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('Node loads the threaded module, and it equals the single-threaded one bit for bit', { skip, timeout: 600_000 }, async () => {
  const attnlens = await import('../../wasm/index.js');
  await attnlens.init({ threads: 2 });
  const info = attnlens.info();
  assert.equal(info.threaded, true, JSON.stringify(info));
  assert.equal(info.threads, 2);
  assert.equal(attnlens.threadsAvailable(), true);
  const run = new Function('return (async () => {' + WORKLOADS + 'return run; })()');
  const workloads = await run();
  const expected = singleThreaded();
  for (const n of [2, 1]) {
    assert.equal(attnlens.setThreads(n), n);
    const got = await workloads(attnlens);
    assert.equal(got.length, expected.length, `${n} threads: as many values`);
    const first = got.findIndex((v, i) => v !== expected[i]);
    assert.equal(first, -1, `${n} threads: value ${first} differs: ${got[first]} vs ${expected[first]}`);
  }
  // More threads than init() started, or a bad count, is a clear RangeError.
  assert.throws(() => attnlens.setThreads(3), /init\(\) started 2 threads/);
  assert.throws(() => attnlens.setThreads(0), RangeError);
  assert.throws(() => attnlens.setThreads(1.5), RangeError);
  attnlens.setThreads(2);
});

test('init() in Node chooses the threaded module with the machine\'s threads (at most 4)', { skip }, () => {
  const code = `const a = await import(${JSON.stringify(`${ROOT}/wasm/index.js`)});
    await a.init();
    const os = await import('node:os');
    process.stdout.write(JSON.stringify({ info: a.info(), cores: os.availableParallelism() }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const { info, cores } = JSON.parse(r.stdout);
  assert.equal(info.threads, Math.min(cores, 4));
  assert.equal(info.threaded, cores > 1, JSON.stringify(info));
});

test('init({ threads }) refuses what is not a thread count', { skip }, () => {
  const code = `const a = await import(${JSON.stringify(`${ROOT}/wasm/index.js`)});
    for (const t of [0, -1, 17, 2.5, '2', null]) {
      try { a.init({ threads: t }); console.log('accepted', t); } catch (e) { console.log(e.constructor.name); }
    }`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), Array(6).fill('RangeError'));
});
