// A seeded mutation fuzzer over the Node image decoders (wasm/pipelines/image.js: png.js on node:zlib, jpeg.js with
// jpeg-scan.js and jpeg-pixels.js, orientation.js), run by the Node test suite for a bounded number of inputs. Seeds: the good PNG and JPEG
// fixtures of tests/fixtures/images/. Mutations: truncation, flipped and inserted/deleted bytes, corrupted chunk
// lengths, CRCs, IHDR fields and re-deflated (CRC-correct) scanlines for PNG; corrupted Huffman and quantisation
// tables, frame headers, scan data and EXIF blocks for JPEG; giant dimensions for both. The rule, for every input:
// the decoder returns valid pixels (width/height in 1..16384, data.length = width·height·4) or rejects with an Error
// whose message starts "attnlens: image-to-text: " — never another exception, never a crash of the thread that
// decodes, never a hang: each input runs in a worker thread with a time bound, and the worker is killed and the test
// fails when it is exceeded. A failing input is written to out/image-fuzz/ with its seed and mutation.
//
// ATTNLENS_IMAGE_FUZZ_ITERATIONS (default 1500) sets the number of inputs, ATTNLENS_IMAGE_FUZZ_SEED (default 1) the
// seed; a campaign: ATTNLENS_IMAGE_FUZZ_ITERATIONS=100000 ATTNLENS_IMAGE_FUZZ_SEED=7 node --test tests/node/image-fuzz.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { deflateSync, inflateSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { mulberry32 as rng } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIX = `${ROOT}tests/fixtures/images/`;
const ITERATIONS = Number(process.env.ATTNLENS_IMAGE_FUZZ_ITERATIONS ?? 1500);
const SEED = Number(process.env.ATTNLENS_IMAGE_FUZZ_SEED ?? 1);
const TIME_BOUND_MS = 5000; // per input; the fixtures decode in well under 50 ms
const SEEDS = ['rgb.png', 'rgba.png', 'palette.png', 'grey16.png', 'interlaced.png', 'bilevel.png', 'orient-6.png',
  'baseline.jpg', 'progressive.jpg', 'grey.jpg', 'cmyk.jpg', 'orient-6.jpg', 'baseline-444.jpg'];

// ---- mutations ---------------------------------------------------------------------------------------------------

const be32 = (b, at) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
const put32 = (b, at, v) => { b[at] = v >>> 24; b[at + 1] = (v >>> 16) & 255; b[at + 2] = (v >>> 8) & 255; b[at + 3] = v & 255; };

let crcTable;
function crc32(b, start, end) {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = crcTable[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunks(b) {
  const chunks = [];
  for (let at = 8; at + 12 <= b.length;) {
    const length = be32(b, at);
    if (at + 12 + length > b.length) break;
    chunks.push({ at, length, type: String.fromCharCode(...b.subarray(at + 4, at + 8)) });
    at += 12 + length;
  }
  return chunks;
}
const fixCrc = (b, c) => put32(b, c.at + 8 + c.length, crc32(b, c.at + 4, c.at + 8 + c.length));

function jpegSegments(b) {
  const segs = [];
  for (let at = 2; at + 4 <= b.length && b[at] === 0xff;) {
    const marker = b[at + 1];
    const length = (b[at + 2] << 8) | b[at + 3];
    segs.push({ at, marker, length });
    if (marker === 0xda) break;
    at += 2 + length;
  }
  return segs;
}

const flip = (b, r, lo = 0, hi = b.length) => {
  for (let n = 1 + Math.floor(r() * 4); n > 0 && hi > lo; n--) b[lo + Math.floor(r() * (hi - lo))] ^= 1 << Math.floor(r() * 8);
};
const anyValue = (r) => [0, 1, 255, 0xffff, 0x7fffffff, 0xffffffff, Math.floor(r() * 2 ** 32)][Math.floor(r() * 7)];

const GENERIC = {
  truncate: (b, r) => b.subarray(0, Math.floor(r() * b.length)),
  flipBytes: (b, r) => { flip(b, r); return b; },
  insertDelete: (b, r) => {
    const at = Math.floor(r() * b.length);
    const n = 1 + Math.floor(r() * 16);
    if (r() < 0.5) return Uint8Array.from([...b.subarray(0, at), ...Array.from({ length: n }, () => Math.floor(r() * 256)), ...b.subarray(at)]);
    return Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + n)]);
  },
};

const PNG = {
  chunkLength: (b, r, cs) => { const c = cs[Math.floor(r() * cs.length)]; put32(b, c.at, anyValue(r)); return b; },
  chunkCrc: (b, r, cs) => { const c = cs[Math.floor(r() * cs.length)]; put32(b, c.at + 8 + c.length, anyValue(r)); return b; },
  bodyWithCrc: (b, r, cs) => { const c = cs[Math.floor(r() * cs.length)]; flip(b, r, c.at + 8, c.at + 8 + c.length); fixCrc(b, c); return b; },
  ihdr: (b, r, cs) => { b[16 + Math.floor(r() * 13)] = Math.floor(r() * 256); fixCrc(b, cs[0]); return b; },
  giant: (b, r, cs) => { put32(b, 16 + 4 * Math.floor(r() * 2), 1 + Math.floor(r() * (r() < 0.5 ? 20000 : 2 ** 32 - 1))); fixCrc(b, cs[0]); return b; },
  scanlines: (b, r, cs) => { // inflate the IDAT, flip bytes of the scanlines (filter types too), deflate, fix the CRC
    const idat = cs.find((c) => c.type === 'IDAT');
    const raw = new Uint8Array(inflateSync(b.subarray(idat.at + 8, idat.at + 8 + idat.length)));
    flip(raw, r);
    const body = r() < 0.3 ? deflateSync(raw.subarray(0, Math.floor(r() * raw.length))) : deflateSync(raw);
    const out = new Uint8Array(b.length - idat.length + body.length);
    out.set(b.subarray(0, idat.at));
    put32(out, idat.at, body.length);
    out.set(b.subarray(idat.at + 4, idat.at + 8), idat.at + 4);
    out.set(body, idat.at + 8);
    fixCrc(out, { at: idat.at, length: body.length });
    out.set(b.subarray(idat.at + 12 + idat.length), idat.at + 12 + body.length);
    return out;
  },
};

const JPEG = {
  tables: (b, r, ss) => { // a Huffman (C4) or quantisation (DB) table
    const t = ss.filter((s) => s.marker === 0xc4 || s.marker === 0xdb);
    const s = t[Math.floor(r() * t.length)];
    if (r() < 0.5) flip(b, r, s.at + 4, s.at + 2 + s.length);
    else b[s.at + 4 + Math.floor(r() * Math.max(1, s.length - 2))] = Math.floor(r() * 256);
    return b;
  },
  segmentLength: (b, r, ss) => { const s = ss[Math.floor(r() * ss.length)]; b[s.at + 2] = Math.floor(r() * 256); b[s.at + 3] = Math.floor(r() * 256); return b; },
  frame: (b, r, ss) => { const s = ss.find((x) => x.marker >= 0xc0 && x.marker <= 0xc2); flip(b, r, s.at + 4, s.at + 2 + s.length); return b; },
  giant: (b, r, ss) => {
    const s = ss.find((x) => x.marker >= 0xc0 && x.marker <= 0xc2);
    const v = 1 + Math.floor(r() * (r() < 0.7 ? 16384 : 65535));
    const at = s.at + 5 + 2 * Math.floor(r() * 2);
    b[at] = v >> 8; b[at + 1] = v & 255;
    return b;
  },
  scanData: (b, r, ss) => { const sos = ss.find((x) => x.marker === 0xda); flip(b, r, sos.at + 2 + sos.length, b.length - 2); return b; },
  exif: (b, r, ss) => { const s = ss.find((x) => x.marker === 0xe1); if (s) flip(b, r, s.at + 4, s.at + 2 + s.length); return b; },
};

/** The seed file, mutation name and mutated bytes of fuzz input `i` (stacked mutations for a quarter of inputs). */
function mutate(i, seeds) {
  const r = rng(SEED * 1_000_003 + i);
  const name = SEEDS[i % SEEDS.length];
  let b = Uint8Array.from(seeds[name]);
  const steps = [];
  for (let n = r() < 0.25 ? 2 : 1; n > 0; n--) {
    const own = name.endsWith('.png') ? PNG : JPEG;
    const table = r() < 0.6 ? own : GENERIC;
    const key = Object.keys(table)[Math.floor(r() * Object.keys(table).length)];
    const parts = name.endsWith('.png') ? pngChunks(b) : jpegSegments(b);
    if (table !== GENERIC && parts.length === 0) continue;
    try {
      b = table[key](b, r, parts) ?? b;
    } catch {
      continue; // the mutation did not apply to an earlier mutation's result (e.g. an IDAT that no longer inflates)
    }
    steps.push(key);
  }
  return { name, steps, bytes: b };
}

// ---- the worker that decodes --------------------------------------------------------------------------------------

const WORKER = `
import { parentPort } from 'node:worker_threads';
const { decodeBytes } = await import(${JSON.stringify(new URL('../../wasm/pipelines/image.js', import.meta.url).href)});
parentPort.on('message', async (bytes) => {
  try {
    const px = await decodeBytes(bytes, 'image-to-text', 'the image bytes');
    parentPort.postMessage({ ok: true, width: px.width, height: px.height, channels: px.channels,
      length: px.data.length, isBytes: px.data instanceof Uint8Array });
  } catch (err) {
    parentPort.postMessage({ ok: false, isError: err instanceof Error, name: err?.constructor?.name, message: String(err?.message ?? err) });
  }
});
parentPort.postMessage('ready');
`;

function startWorker() {
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER)}`), { resourceLimits: { maxOldGenerationSizeMb: 4096 } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => (m === 'ready' ? resolve(worker) : reject(new Error(`worker said ${m}`))));
    worker.once('error', reject);
  });
}

function decodeIn(worker, bytes) {
  return new Promise((resolve) => {
    const done = (result) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      resolve(result);
    };
    const onMessage = (m) => done(m);
    const onError = (err) => done({ crash: `worker error: ${err?.message ?? err}` });
    const onExit = (code) => done({ crash: `worker exited with ${code}` });
    const timer = setTimeout(() => done({ hang: true }), TIME_BOUND_MS);
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
    worker.postMessage(bytes);
  });
}

/** Why a worker result breaks the rule, or null. */
export function problem(res) {
  if (res.hang) return `no answer within ${TIME_BOUND_MS} ms (a hang)`;
  if (res.crash) return res.crash;
  if (res.ok) {
    const { width, height, channels, length, isBytes } = res;
    const valid = Number.isInteger(width) && Number.isInteger(height) && width >= 1 && height >= 1 &&
      width <= 16384 && height <= 16384 && channels === 4 && isBytes && length === width * height * 4;
    return valid ? null : `invalid pixels ${JSON.stringify(res)}`;
  }
  if (!res.isError || !res.message.startsWith('attnlens: image-to-text: ')) return `not a clean attnlens Error: ${res.name}: ${res.message}`;
  return null;
}

test(`image decoders: ${ITERATIONS} mutated PNG and JPEG files (seed ${SEED}) give valid pixels or a clean Error, in time`, { timeout: 600_000 }, async (t) => {
  const seeds = Object.fromEntries(SEEDS.map((f) => [f, new Uint8Array(readFileSync(FIX + f))]));
  let worker = await startWorker();
  const tally = { pixels: 0, errors: 0 };
  const failures = [];
  try {
    for (let i = 0; i < ITERATIONS; i++) {
      const input = mutate(i, seeds);
      const res = await decodeIn(worker, input.bytes);
      const why = problem(res);
      if (why) {
        failures.push(`input ${i} (${input.name}, ${input.steps.join('+')}): ${why}`);
        mkdirSync(`${ROOT}out/image-fuzz`, { recursive: true });
        writeFileSync(`${ROOT}out/image-fuzz/seed${SEED}-input${i}-${input.name}`, input.bytes);
        if (res.hang || res.crash) {
          await worker.terminate();
          worker = await startWorker();
        }
        if (failures.length >= 5) break;
        continue;
      }
      tally[res.ok ? 'pixels' : 'errors']++;
    }
  } finally {
    await worker.terminate();
  }
  t.diagnostic(`${tally.pixels} inputs decoded to valid pixels, ${tally.errors} rejected with a clean Error`);
  assert.deepEqual(failures, []);
  // The mutations reach both outcomes (a fuzzer whose inputs all fail at the signature would test little).
  assert.ok(tally.pixels > ITERATIONS / 20 && tally.errors > ITERATIONS / 4, JSON.stringify(tally));
});

test('the fuzzer\'s rule catches what it must: a hang, a crash, invalid pixels, a foreign error', () => {
  assert.match(problem({ hang: true }), /hang/);
  assert.match(problem({ crash: 'worker exited with 1' }), /exited/);
  assert.match(problem({ ok: true, width: 2, height: 2, channels: 4, length: 15, isBytes: true }), /invalid pixels/);
  assert.match(problem({ ok: true, width: 20000, height: 1, channels: 4, length: 80000, isBytes: true }), /invalid pixels/);
  assert.match(problem({ ok: false, isError: true, name: 'TypeError', message: 'Cannot read properties of undefined' }), /not a clean/);
  assert.match(problem({ ok: false, isError: false, name: 'String', message: 'unknown JPEG marker' }), /not a clean/);
  assert.equal(problem({ ok: false, isError: true, name: 'Error', message: 'attnlens: image-to-text: cannot decode x' }), null);
  assert.equal(problem({ ok: true, width: 2, height: 2, channels: 4, length: 16, isBytes: true }), null);
});
