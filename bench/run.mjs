#!/usr/bin/env node
// `npm run bench`: SGEMM 256×256×256 and SGEMV 1×512 · 512×2048 in GFLOP/s, in one run:
//   - our kernels natively (build/bench_kernels, every backend the CPU offers: avx2+fma, sse2),
//   - the same benchmark compiled with em++ to WASM SIMD128, under this Node (build-wasm/bench_kernels.js),
//   - @tensorflow/tfjs-backend-wasm's matMul on the same shapes (its SIMD build; single-threaded in Node, like ours).
// Method, the same on every side: warm-up, then `reps` samples of ≥ 20 ms of back-to-back calls each; the median
// sample is the headline number and the fastest sample is shown beside it (on a shared, loaded machine the fastest
// is the closer estimate of the uncontended speed). tfjs timings include dataSync(), i.e. the result is read back.
// FLOPs: 2·m·n·k per call.
// Sentiment (bench_sentiment): sentences/s over SST-2 dev for each SST-2 bundle, natively and in WASM (--no-sentiment).
// Captioning (bench_captioning): images/s, encoder and decoder separately, natively and in WASM (--no-captioning).
//
//   node bench/run.mjs [--reps N] [--json FILE] [--no-build]
// Speed numbers come from here, never from timed unit tests (docs/DESIGN.md §12).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, buildTree } from '../scripts/build.mjs';

const args = process.argv.slice(2);
const argValue = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const REPS = Number(argValue('--reps', 15));
const JSON_OUT = argValue('--json', path.join(ROOT, 'out', 'bench.json'));
const MIN_SAMPLE_MS = 20;

const SHAPES = [
  { bench: 'gemm', m: 256, n: 256, k: 256, label: 'GEMM 256×256×256' },
  { bench: 'gemv', m: 1, n: 2048, k: 512, label: 'GEMV 1×512 · 512×2048' },
];

function parseJsonLines(text) {
  return text.split('\n').filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l));
}

function runBenchBinary(cmd, argv, what) {
  console.error(`running ${what}: ${[cmd, ...argv].join(' ')}`);
  const r = spawnSync(cmd, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.error || r.status !== 0) {
    throw new Error(`${what} failed (${r.error?.message ?? `status ${r.status}`}): ${(r.stderr || '').slice(0, 400)}`);
  }
  return parseJsonLines(r.stdout);
}

function pick(rows, shape, backend) {
  return rows.find((r) => r.bench === shape.bench && r.m === shape.m && r.n === shape.n && r.k === shape.k &&
    (!backend || r.backend === backend));
}

async function benchTfjs() {
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-wasm');
  await tf.setBackend('wasm');
  await tf.ready();
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
  const rows = [];
  for (const shape of SHAPES) {
    const a = tf.randomUniform([shape.m, shape.k], -1, 1);
    const b = tf.randomUniform([shape.k, shape.n], -1, 1);
    const call = () => {
      const c = tf.matMul(a, b);
      c.dataSync();
      c.dispose();
    };
    // Warm-up, then calibrate how many calls fill one sample.
    let calls = 0;
    let t0 = performance.now();
    while (performance.now() - t0 < 50 || calls < 3) {
      call();
      calls++;
    }
    const perCall = (performance.now() - t0) / calls;
    const callsPerSample = Math.max(1, Math.ceil(MIN_SAMPLE_MS / perCall));
    const samples = [];
    for (let r = 0; r < REPS; r++) {
      t0 = performance.now();
      for (let i = 0; i < callsPerSample; i++) call();
      samples.push((performance.now() - t0) / callsPerSample);
    }
    samples.sort((x, y) => x - y);
    const median = samples[Math.floor(samples.length / 2)];
    const flops = 2 * shape.m * shape.n * shape.k;
    rows.push({ bench: shape.bench, m: shape.m, n: shape.n, k: shape.k, gflops: flops / median / 1e6,
      gflops_best: flops / samples[0] / 1e6, ms: median, backend: `tfjs-wasm${simd ? '-simd' : ''}${threads ? '-threads' : ''}`,
      reps: REPS });
    a.dispose();
    b.dispose();
  }
  return rows;
}

const fmt = (x) => (x === undefined || Number.isNaN(x) ? '—' : x.toFixed(1));
const both = (row) => (row ? `${fmt(row.gflops)} (${fmt(row.gflops_best ?? row.gflops)})` : '—');

// ---- translation: sentences per second over test_2016_flickr, greedy and beam 4, native and WASM, per bundle ----
// (bench/cpp/bench_translation.cpp). Input: ../shared/data/multi30k/test_2016_flickr.de.gz when present, else the
// committed golden sentences of models/de-en-transformer. --translation-limit N translates the first N only;
// --no-translation skips this part, --no-kernels the GEMM part.
const TRANSLATION_MODELS = ['de-en-general', 'de-en-transformer', 'de-en-rnn-general', 'de-en-rnn-additive'];

async function translationInput() {
  const { gunzipSync } = await import('node:zlib');
  const { readFileSync } = await import('node:fs');
  const gz = path.join(ROOT, '..', 'shared', 'data', 'multi30k', 'test_2016_flickr.de.gz');
  const outDir = path.join(ROOT, 'out');
  mkdirSync(outDir, { recursive: true });
  if (existsSync(gz)) {
    const file = path.join(outDir, 'bench-translation-test_2016_flickr.de.txt');
    writeFileSync(file, gunzipSync(readFileSync(gz)));
    return { file, source: 'test_2016_flickr (1,000 sentences)' };
  }
  const golden = JSON.parse(readFileSync(path.join(ROOT, 'models', 'de-en-transformer', 'golden.json'), 'utf8'));
  const file = path.join(outDir, 'bench-translation-golden.de.txt');
  writeFileSync(file, golden.cases.map((c) => c.source).join('\n') + '\n');
  return { file, source: `the ${golden.cases.length} golden sentences of de-en-transformer (../shared/data missing)` };
}

async function benchTranslation() {
  const models = TRANSLATION_MODELS.filter((m) => existsSync(path.join(ROOT, 'models', m, 'config.json')));
  const input = await translationInput();
  const { file } = input;
  const limit = argValue('--translation-limit', null);
  const source = limit ? `the first ${limit} sentences of ${input.source}` : input.source;
  const common = ['--input', file, '--beams', '1,4', ...(limit ? ['--limit', limit] : [])];
  // --native-build DIR / --wasm-build DIR: other build trees than build/ and build-wasm/ (with --no-build).
  const nativeBin = path.join(ROOT, argValue('--native-build', 'build'), 'bench_translation');
  const wasmJs = path.join(ROOT, argValue('--wasm-build', 'build-wasm'), 'bench_translation.js');
  const rows = [];
  for (const model of models) {
    const dir = path.join(ROOT, 'models', model);
    const native = runBenchBinary(nativeBin, ['--model', dir, ...common], `native translation ${model}`);
    const wasm = runBenchBinary(process.execPath, [wasmJs, '--model', dir, ...common], `WASM translation ${model}`);
    for (const beams of [1, 4]) {
      rows.push({ model, beams, native: native.find((r) => r.beams === beams), wasm: wasm.find((r) => r.beams === beams) });
    }
  }
  console.log(`\nTranslation, sentences/s over ${source}, one thread, no attention maps; higher is better`);
  console.log('| model | decoding | native | WASM SIMD (Node) |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(`| ${r.model} | ${r.beams === 1 ? 'greedy' : `beam ${r.beams}`} | ${fmt(r.native?.sentences_per_second)} ` +
      `(${r.native?.backend ?? '—'}) | ${fmt(r.wasm?.sentences_per_second)} |`);
  }
  return { source, rows };
}

// ---- sentiment: sentences per second over SST-2 dev (872 sentences), raw text → label + attention map, per bundle,
// native and WASM (bench/cpp/bench_sentiment.cpp). Without ../shared/data the bundles' golden sentences are timed.
// --no-sentiment skips this part.
const SENTIMENT_MODELS = ['sst2-selfattn', 'sst2-relation'];

function benchSentiment() {
  const models = SENTIMENT_MODELS.filter((m) => existsSync(path.join(ROOT, 'models', m, 'config.json')));
  const common = ['--models', 'models', '--data', path.join('..', 'shared', 'data', 'sst2', 'dev.tsv'), '--reps', '5',
    ...models.flatMap((m) => ['--model', m])];
  const native = runBenchBinary(path.join(ROOT, 'build', 'bench_sentiment'), common, 'native sentiment');
  const wasm = runBenchBinary(process.execPath, [path.join(ROOT, 'build-wasm', 'bench_sentiment.js'), ...common],
    'WASM sentiment');
  const rows = models.map((model) => ({ model, native: native.find((r) => r.model === model), wasm: wasm.find((r) => r.model === model) }));
  const data = rows[0]?.native?.data === 'sst2-dev' ? 'SST-2 dev (872 sentences)' : 'the golden sentences (../shared/data missing)';
  console.log(`\nSentiment, sentences/s over ${data}, one thread, with the attention map; median of 5 passes (fastest in parentheses)`);
  console.log('| model | native | WASM SIMD (Node) | load ms native / WASM | dev accuracy native / WASM |');
  console.log('| --- | --- | --- | --- | --- |');
  const acc = (row) => (row && row.accuracy >= 0 ? `${(100 * row.accuracy).toFixed(2)}%` : '—');
  for (const r of rows) {
    console.log(`| ${r.model} | ${fmt(r.native?.sentences_per_s)} (${fmt(r.native?.sentences_per_s_best)}, ${r.native?.backend ?? '—'}) ` +
      `| ${fmt(r.wasm?.sentences_per_s)} (${fmt(r.wasm?.sentences_per_s_best)}) | ${fmt(r.native?.load_ms)} / ${fmt(r.wasm?.load_ms)} ` +
      `| ${acc(r.native)} / ${acc(r.wasm)} |`);
  }
  return { data, rows };
}

// ---- captioning: images per second, encoder (pixels → preprocessing → MobileNetV2 grid) and decoder (grid →
// caption + attention, greedy, beam 3 and beam 5) separately, native and WASM (bench/cpp/bench_captioning.cpp), over the four
// committed 224×224 sanity images. Without an exported models/flickr8k-mobilenet the tiny test decoder is timed.
// --no-captioning skips this part.
function benchCaptioning() {
  const common = ['--model', path.join('models', 'flickr8k-mobilenet'), '--reps', '5'];
  const native = runBenchBinary(path.join(ROOT, 'build', 'bench_captioning'), common, 'native captioning');
  const wasm = runBenchBinary(process.execPath, [path.join(ROOT, 'build-wasm', 'bench_captioning.js'), ...common],
    'WASM captioning');
  const key = (r) => `${r.part}${r.beams ? ` (${r.beams === 1 ? 'greedy' : `beam ${r.beams}`})` : ''}`;
  const rows = native.map((n) => ({ part: key(n), native: n, wasm: wasm.find((w) => key(w) === key(n)) }));
  console.log(`
Captioning (${native[0]?.model ?? '—'}), images/s over 4 images of 224×224, one thread; median of 5 passes (fastest in parentheses)`);
  console.log('| part | native | WASM SIMD (Node) |');
  console.log('| --- | --- | --- |');
  for (const r of rows) {
    console.log(`| ${r.part} | ${fmt(r.native?.images_per_s)} (${fmt(r.native?.images_per_s_best)}, ${r.native?.backend ?? '—'}) ` +
      `| ${fmt(r.wasm?.images_per_s)} (${fmt(r.wasm?.images_per_s_best)}) |`);
  }
  return { model: native[0]?.model, rows };
}

// ---- int8 weights: the packed one-row product (a decoding step's) with float32 panels against int8 codes
// (kernels.h, Precision::int8), timed sample by sample in alternation inside each binary.
function benchInt8(nativeBin, wasmJs, reps) {
  const native = runBenchBinary(nativeBin, [...reps, '--only', 'gemv_int8'], 'native int8 GEMV');
  const wasm = runBenchBinary(process.execPath, [wasmJs, ...reps, '--only', 'gemv_int8'], 'WASM int8 GEMV');
  const shapes = [...new Set(wasm.map((r) => `${r.n}x${r.k}`))];
  console.log('\nPacked one-row GEMV y = W·x (a decoding step), float32 against int8 weights, GFLOP/s (median; fastest)');
  console.log('| shape (out × in) | build | float32 | int8 | int8 / float32 |');
  console.log('| --- | --- | --- | --- | --- |');
  const rows = [];
  for (const shape of shapes) {
    for (const [build, list] of [['WASM SIMD', wasm], ...[...new Set(native.map((r) => r.backend))].map((b) => [`native ${b}`, native.filter((r) => r.backend === b)])]) {
      const f = list.find((r) => `${r.n}x${r.k}` === shape && r.bench === 'gemv_packed_f32');
      const q = list.find((r) => `${r.n}x${r.k}` === shape && r.bench === 'gemv_packed_int8');
      if (!f || !q) continue;
      rows.push({ shape, build, f32: f, int8: q, ratio: q.gflops / f.gflops });
      console.log(`| ${shape.replace('x', ' × ')} | ${build} | ${both(f)} | ${both(q)} | ${(q.gflops / f.gflops).toFixed(2)}× |`);
    }
  }
  return rows;
}

async function main() {
  if (!args.includes('--no-build')) {
    buildTree('native');
    buildTree('wasm');
  }
  const nativeBin = path.join(ROOT, 'build', 'bench_kernels');
  const wasmJs = path.join(ROOT, 'build-wasm', 'bench_kernels.js');
  for (const f of [nativeBin, wasmJs]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: bench/cpp/bench_kernels.cpp did not build`);
  }
  if (args.includes('--no-kernels')) {
    const translation = args.includes('--no-translation') ? null : await benchTranslation();
    const sentiment = args.includes('--no-sentiment') ? null : benchSentiment();
    const captioning = args.includes('--no-captioning') ? null : benchCaptioning();
    mkdirSync(path.dirname(JSON_OUT), { recursive: true });
    writeFileSync(JSON_OUT, JSON.stringify({ date: new Date().toISOString(), node: process.version, translation, sentiment, captioning }, null, 2));
    return;
  }
  const reps = ['--reps', String(REPS)];
  const native = [];
  const wasm = [];
  for (const shape of SHAPES) {
    native.push(...runBenchBinary(nativeBin, [...reps, '--only', shape.bench], `native ${shape.bench}`));
    wasm.push(...runBenchBinary(process.execPath, [wasmJs, ...reps, '--only', shape.bench], `WASM ${shape.bench}`));
  }
  console.error('running @tensorflow/tfjs-backend-wasm matMul');
  const tfjs = await benchTfjs();

  const backends = [...new Set(native.map((r) => r.backend))];
  const header = ['shape', ...backends.map((b) => `native ${b}`), 'WASM SIMD (ours)', tfjs[0].backend, 'ours/tfjs'];
  const lines = [header, header.map(() => '---')];
  const summary = [];
  for (const shape of SHAPES) {
    const ours = pick(wasm, shape);
    const theirs = pick(tfjs, shape);
    const ratio = ours && theirs ? ours.gflops / theirs.gflops : NaN;
    const ratioBest = ours && theirs ? (ours.gflops_best ?? ours.gflops) / theirs.gflops_best : NaN;
    lines.push([shape.label, ...backends.map((b) => both(pick(native, shape, b))), both(ours), both(theirs),
      `${Number.isNaN(ratio) ? '—' : ratio.toFixed(2)}× (${Number.isNaN(ratioBest) ? '—' : ratioBest.toFixed(2)}×)`]);
    summary.push({ shape: shape.label, native: backends.map((b) => pick(native, shape, b)), wasm: ours, tfjs: theirs, ratio, ratio_best: ratioBest });
  }
  console.log('\nGFLOP/s, median of samples (fastest sample in parentheses); higher is better');
  for (const row of lines) console.log(`| ${row.join(' | ')} |`);
  console.log(`\nnode ${process.version}, ${REPS} samples of ≥ ${MIN_SAMPLE_MS} ms each; goal: WASM GEMM ≥ 1.2× tfjs-backend-wasm`);
  const int8 = benchInt8(nativeBin, wasmJs, reps);
  const translation = args.includes('--no-translation') ? null : await benchTranslation();
  const sentiment = args.includes('--no-sentiment') ? null : benchSentiment();
  const captioning = args.includes('--no-captioning') ? null : benchCaptioning();
  mkdirSync(path.dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, JSON.stringify({ date: new Date().toISOString(), node: process.version, reps: REPS, native, wasm, tfjs, summary, int8, translation, sentiment, captioning }, null, 2));
  console.error(`raw results: ${path.relative(process.cwd(), JSON_OUT)}`);
}

main().catch((err) => {
  console.error(`bench failed: ${err.message}`);
  process.exit(1);
});
