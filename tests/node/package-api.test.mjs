// The package as a user meets it: loading, argument validation with clear errors, C++ errors surfacing as JS
// Errors (never an abort), results that outlive WASM memory growth, and deterministic dispose().
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, info, isReady, attention, MultiHeadKvCache, tensor } from '../../wasm/index.js';
import { loadAttentionGoldens, assertTensorClose } from './helpers.mjs';

const goldens = Object.fromEntries(loadAttentionGoldens().map((g) => [g.op, g]));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

before(async () => {
  await init();
});

test('init() is idempotent and info() reports the WASM SIMD kernels', async () => {
  const again = await init();
  assert.ok(again && isReady());
  const { version, simd } = info();
  assert.equal(version, pkg.version);
  assert.equal(simd, 'wasm-simd128');
});

test('the package.json exports map points at files that exist', () => {
  const root = pkg.exports['.'];
  assert.equal(root.types, './wasm/index.d.ts');
  for (const target of [root.types, root.node, root.default, pkg.exports['./attnlens.wasm']]) {
    assert.doesNotThrow(() => readFileSync(new URL(`../../${target}`, import.meta.url)), `${target} is missing`);
  }
  for (const f of pkg.files.filter((entry) => !entry.includes('*'))) { // globs: checked by the npm pack test
    assert.doesNotThrow(() => readFileSync(new URL(`../../${f}`, import.meta.url)), `files entry ${f} is missing`);
  }
});

const q = () => tensor([1, 0, 0, 1], [2, 2]);
const keys = () => tensor([1, 2, 3, 4, 5, 6], [3, 2]);

test('wrong dims are reported with the op, the input and the expected shape', () => {
  assert.throws(() => attention.scoreDot({ q: q(), keys: tensor([1, 2, 3], [3, 1]) }),
    { name: 'Error', message: /score_dot: input 'keys' has dims \[3,1\], expected \[\*,2\]/ });
  assert.throws(() => attention.scoreDot({ q: tensor(new Float32Array(8), [2, 2, 2]), keys: keys() }),
    /score_dot: input 'q' must be \[n, d\] or \[d\]/);
  assert.throws(() => attention.multiHeadAttention({ query: q() }, { num_heads: 1 }), /missing input 'key'/);
});

test('data that does not match its dims, and wrong JS types, are TypeErrors/RangeErrors before any WASM call', () => {
  assert.throws(() => attention.scoreDot({ q: { dims: [2, 2], data: new Float32Array(3) }, keys: keys() }),
    { name: 'RangeError', message: /input 'q' has dims \[2,2\] \(4 values\) but data holds 3/ });
  assert.throws(() => attention.scoreDot({ q: { dims: [2, 2], data: [1, 0, 0, 1] }, keys: keys() }),
    { name: 'TypeError', message: /data must be a Float32Array, got an Array/ });
  assert.throws(() => attention.scoreDot({ q: { dims: [2, -1], data: new Float32Array(0) }, keys: keys() }),
    { name: 'TypeError', message: /dims must be an array of non-negative integers/ });
  assert.throws(() => attention.scoreDot({ q: new Float32Array(4), keys: keys() }),
    { name: 'TypeError', message: /must be a tensor \{ dims: number\[\], data: Float32Array \}, got a Float32Array/ });
  assert.throws(() => attention.scoreDot(null), { name: 'TypeError', message: /inputs must be an object/ });
  assert.throws(() => attention.scoreDot({ q: q(), keys: keys() }, 'causal'), { name: 'TypeError', message: /params must be a plain object/ });
  assert.throws(() => attention.run(42, {}), { name: 'TypeError' });
});

test('unknown ops, inputs and params are errors, never silently ignored', () => {
  assert.throws(() => attention.run('score_dott', { q: q(), keys: keys() }), /unknown attention op 'score_dott'; known ops: score_dot/);
  assert.throws(() => attention.alignSoft({ scores: q() }, { causel: true }), /align_soft: unknown param 'causel'/);
  assert.throws(() => attention.alignSoft({ scores: q(), extra: q() }), /align_soft: unknown input 'extra'/);
  assert.throws(() => attention.alignSoft({ scores: q() }, { causal: 'yes' }), /param 'causal' must be true or false/);
  assert.throws(() => attention.alignSoft({ scores: q(), key_keep: tensor([1, 0.5]) }), /must hold only 0 \(masked\) and 1 \(attend\)/);
  assert.throws(() => attention.keyValueAttention({ q: q(), keys: keys(), values: keys() }, { score: 'cosine' }),
    /param 'score' is 'cosine', expected one of: dot, scaled_dot/);
  assert.throws(() => attention.hierarchicalAttention({ words: keys() }, { sentence_lengths: [1, 1] }),
    /'sentence_lengths' adds up to 2 words, but input 'words' has 3 rows/);
});

test('the module keeps working after an error (the C++ exception did not abort it)', () => {
  for (let i = 0; i < 50; i++) {
    assert.throws(() => attention.scoreDot({ q: q(), keys: tensor([1, 2, 3], [3, 1]) }));
  }
  const { scores } = attention.scoreDot({ q: q(), keys: keys() });
  assert.deepEqual(Array.from(scores.data), [1, 3, 5, 2, 4, 6]);
});

test('results are copies that stay valid when WASM memory grows', () => {
  const { scores } = attention.scoreDot({ q: q(), keys: keys() });
  assert.notEqual(scores.data.buffer.constructor.name, 'SharedArrayBuffer');
  const before = Array.from(scores.data);
  // ~64 MB of inputs forces the heap (16 MB initially) to grow, which detaches every view of the old buffer.
  const n = 4096;
  const d = 2048;
  const big = attention.scoreDot({ q: tensor(new Float32Array(d).fill(1), [1, d]), keys: tensor(new Float32Array(n * d).fill(0.5), [n, d]) });
  assert.equal(big.scores.data[n - 1], d * 0.5);
  assert.equal(scores.data.length, 6);
  assert.deepEqual(Array.from(scores.data), before);
});

function mhaCase() {
  const g = goldens.multi_head_attention;
  return g.cases.find((c) => c.params.causal && !c.inputs.key_keep && !c.inputs.keep);
}

test('MultiHeadKvCache: one position at a time reproduces the causal golden, then dispose() frees it', () => {
  const c = mhaCase();
  assert.ok(c, 'the goldens have a causal case without extra masks');
  const { query, key, value, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias } = c.inputs;
  const [nq, e] = query.dims;
  const heads = c.params.num_heads;
  const weights = { in_proj_weight, out_proj_weight };
  if (in_proj_bias) weights.in_proj_bias = in_proj_bias;
  if (out_proj_bias) weights.out_proj_bias = out_proj_bias;
  const cache = new MultiHeadKvCache(weights, { num_heads: heads, capacity: nq });
  const row = (t, i) => ({ dims: [1, e], data: t.data.slice(i * e, (i + 1) * e) });
  const out = new Float32Array(nq * e);
  const nk = c.outputs.weights.dims[2];
  const w = new Float32Array(heads * nq * nk);
  for (let t = 0; t < nq; t++) {
    cache.append(row(key, t), row(value, t));
    assert.equal(cache.length, t + 1);
    const step = cache.attend(row(query, t));
    assert.deepEqual(step.weights.dims, [heads, 1, t + 1]);
    out.set(step.out.data, t * e);
    for (let h = 0; h < heads; h++) {
      for (let j = 0; j <= t; j++) w[(h * nq + t) * nk + j] = step.weights.data[h * (t + 1) + j];
    }
  }
  assertTensorClose({ dims: [nq, e], data: out }, c.outputs.out, 'kv-cache out');
  assertTensorClose({ dims: [heads, nq, nk], data: w }, c.outputs.weights, 'kv-cache weights');
  assert.throws(() => cache.append(row(key, 0), row(value, 0)), /exceeds the capacity/);
  cache.clear();
  assert.equal(cache.length, 0);
  assert.throws(() => cache.attend(row(query, 0)), /the cache is empty/);
  cache.dispose();
  assert.ok(cache.disposed);
  cache.dispose(); // a second dispose is harmless
  assert.throws(() => cache.append(row(key, 0), row(value, 0)), { message: /MultiHeadKvCache.append: this cache was disposed/ });
  assert.throws(() => cache.attend(row(query, 0)), /this cache was disposed/);
  assert.throws(() => cache.length, /this cache was disposed/);
});

test('MultiHeadKvCache: bad weights and params are clear errors', () => {
  const c = mhaCase();
  const { in_proj_weight, out_proj_weight } = c.inputs;
  assert.throws(() => new MultiHeadKvCache({ in_proj_weight, out_proj_weight }, { num_heads: 3, capacity: 4 }),
    /num_heads = 3 must divide embed_dim = 8/);
  assert.throws(() => new MultiHeadKvCache({ in_proj_weight }, { num_heads: 2 }), /missing input 'out_proj_weight'/);
  assert.throws(() => new MultiHeadKvCache({ in_proj_weight, out_proj_weight }, { heads: 2 }), /unknown param 'heads'/);
  assert.throws(() => new MultiHeadKvCache({ in_proj_weight, out_proj_weight }, { num_heads: 2, capacity: 0 }),
    /capacity must be at least 1/);
  const cache = new MultiHeadKvCache({ in_proj_weight, out_proj_weight }, { num_heads: 2, capacity: 2 });
  assert.throws(() => cache.append(tensor(new Float32Array(7), [1, 7]), tensor(new Float32Array(7), [1, 7])),
    /key must be \[n, 8\] or \[8\], got \[1,7\]/);
  cache.dispose();
});

test('dispose() returns the memory of a cache: the heap does not grow over repeated create/dispose', () => {
  const c = mhaCase();
  const { in_proj_weight, out_proj_weight } = c.inputs;
  // Each cache holds 2 · capacity · E floats = 2 · 100000 · 8 · 4 bytes = 6.4 MB; 200 leaked caches would need
  // 1.28 GB of heap. With dispose() every cache reuses the memory of the one before.
  const make = () => new MultiHeadKvCache({ in_proj_weight, out_proj_weight }, { num_heads: 2, capacity: 100000 });
  make().dispose();
  const start = info().heapBytes;
  for (let i = 0; i < 200; i++) make().dispose();
  assert.ok(info().heapBytes - start < 32 << 20, `heap grew from ${start} to ${info().heapBytes} bytes`);
});

test('errors do not leak: 2000 failed calls with large inputs leave the heap as it was', () => {
  const big = tensor(new Float32Array(1 << 18), [1 << 9, 1 << 9]);
  assert.throws(() => attention.scoreDot({ q: big, keys: tensor([1, 2, 3], [3, 1]) }));
  const start = info().heapBytes;
  for (let i = 0; i < 2000; i++) assert.throws(() => attention.scoreDot({ q: big, keys: tensor([1, 2, 3], [3, 1]) }));
  // 2000 leaked 1 MB copies of q would be 2 GB.
  assert.ok(info().heapBytes - start < 32 << 20, `heap grew from ${start} to ${info().heapBytes} bytes`);
});

test('npm pack ships the entry, its types, the loader and the .wasm, and nothing from the build trees', async () => {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: new URL('../..', import.meta.url), encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const [{ files }] = JSON.parse(r.stdout);
  const paths = files.map((f) => f.path).sort();
  for (const needed of ['package.json', 'README.md', 'wasm/index.js', 'wasm/index.d.ts', 'wasm/core.js',
    'wasm/attention.js', 'wasm/text.js', 'wasm/dist/attnlens.js', 'wasm/dist/attnlens.wasm', 'wasm/dist-mt/attnlens-mt.mjs',
    'wasm/dist-mt/attnlens-mt.wasm', 'wasm/dist-mt/attnlens-mt.worker.js', 'wasm/dist-mt/package.json']) {
    assert.ok(paths.includes(needed), `${needed} is not in the package: ${paths.join(', ')}`);
  }
  assert.ok(!paths.some((p) => /^(build|src|tests|node_modules)\//.test(p)), paths.join(', '));
  // The bundled models travel with the package (config, weights, vocabularies, card), not their goldens or recipes.
  for (const needed of ['wasm/pipeline.js', 'wasm/models.js', 'models/sst2-selfattn/config.json',
    'models/sst2-selfattn/weights.safetensors', 'models/sst2-selfattn/vocab.txt',
    'models/de-en-general/bpe.vocab', 'models/de-en-general/bpe.merges']) {
    assert.ok(paths.includes(needed), `${needed} is not in the package`);
  }
  assert.ok(!paths.some((p) => /^models\/training\/|golden/.test(p)), paths.filter((p) => p.startsWith('models/')).join(', '));
});

test('each .wasm stays within its budget of 500 KB gzipped (issue 15, item 8; npm run budgets reports it)', async () => {
  const { gzipSync } = await import('node:zlib');
  const { readFileSync } = await import('node:fs');
  // The converted models' module too (initHf(): loaded only for a converted bundle, yet shipped in the package).
  for (const file of ['dist/attnlens.wasm', 'dist-mt/attnlens-mt.wasm', 'dist/attnlens-hf.wasm']) {
    const bytes = readFileSync(new URL(`../../wasm/${file}`, import.meta.url));
    const gz = gzipSync(bytes, { level: 9 }).length;
    assert.ok(gz <= 500 * 1024, `${file} is ${(gz / 1024).toFixed(0)} KB gzipped`);
  }
});

test('loading the engine leaves the host process alone: no process-wide handlers, an app keeps its own', async () => {
  // Emscripten's glue, by default, adds 'uncaughtException' / 'unhandledRejection' handlers in Node that rethrow:
  // an app that handles its own rejections or errors then crashed once it had called init(). Each module (one
  // thread, and the threaded one) is loaded in a child process that relies on its own handlers.
  const { spawnSync } = await import('node:child_process');
  const entry = new URL('../../wasm/index.js', import.meta.url).href;
  for (const threads of [1, 2]) {
    const child = `
      import { init, threads, listOps } from ${JSON.stringify(entry)};
      const count = () => [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')];
      const before = count();
      await init({ threads: ${threads} });
      const after = count();
      const seen = [];
      process.on('unhandledRejection', (r) => seen.push(r.message));
      process.on('uncaughtException', (e) => seen.push(e.message));
      Promise.reject(new Error('app rejection'));
      setTimeout(() => { throw new Error('app error'); }, 0);
      setTimeout(() => console.log(JSON.stringify({ before, after, seen, threads: threads(), ops: listOps().length })), 50);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, `threads ${threads}: the child exited ${r.status}: ${r.stderr.slice(-600)}`);
    const got = JSON.parse(r.stdout.trim().split('\n').pop());
    assert.deepEqual(got.after, got.before, `threads ${threads}: init() added process handlers`);
    assert.deepEqual(got.seen.sort(), ['app error', 'app rejection'], `threads ${threads}: the app's handlers`);
    assert.equal(got.threads, threads);
    assert.ok(got.ops > 0, 'the engine answers after the app handled its errors');
    assert.ok(r.stderr.length < 2000, `threads ${threads}: the child printed ${r.stderr.length} bytes on stderr`);
  }
});

test('a model that is not there is one error and nothing on stderr, as a user\'s process sees it', async () => {
  // A child process with the real console: a models folder without the translators the npm package leaves out (as
  // node_modules/attnlens/models/ is), a misspelt name and a folder with no bundle each give one error, no warning.
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const base = mkdtempSync(join(tmpdir(), 'attnlens-models-'));
  const entry = new URL('../../wasm/index.js', import.meta.url).href;
  const child = `
    import { pipeline, env } from ${JSON.stringify(entry)};
    env.modelBaseUrl = ${JSON.stringify(base)};
    for (const [task, model] of [['translation', 'de-en-transformer'], ['translation', 'de-en-rnn-general'],
        ['translation', 'de-en-genral'], ['sentiment-analysis', ${JSON.stringify(join(base, 'none'))}]]) {
      await pipeline(task, model).then(() => console.log('loaded'), (e) => console.log(e.message));
    }
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'nothing on stderr: no warning before the errors');
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 4, r.stdout);
  assert.match(lines[0], /^attnlens: model "de-en-transformer" is not shipped in the npm package.* copy models\/de-en-transformer\/ from the attnlens repository/);
  assert.match(lines[1], /^attnlens: model "de-en-rnn-general" is not shipped in the npm package/);
  assert.match(lines[2], /^attnlens: model "de-en-genral" not found in .*; did you mean "de-en-general"\?/);
  assert.match(lines[3], /^attnlens: cannot read model file .*\/none\/config\.json \(ENOENT\)$/);
});
