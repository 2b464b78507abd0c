#!/usr/bin/env node
// `npm run bench`: SGEMM 256×256×256 and SGEMV 1×512 · 512×2048 in GFLOP/s, in one run:
//   - our kernels natively (build/bench_kernels, every backend the CPU offers: avx2+fma, sse2),
//   - the same benchmark compiled with em++ to WASM SIMD128, under this Node (build-wasm/bench_kernels.js),
//   - @tensorflow/tfjs-backend-wasm's matMul on the same shapes (its SIMD build; single-threaded in Node, like ours).
// Method, the same on every side: warm-up, then `reps` samples of ≥ 20 ms of back-to-back calls each; the median
// sample is the headline number and the fastest sample is shown beside it (on a shared, loaded machine the fastest
// is the closer estimate of the uncontended speed). tfjs timings include dataSync(), i.e. the result is read back.
// FLOPs: 2·m·n·k per call.
//
//   node bench/run.mjs [--reps N] [--json FILE] [--no-build]
// Speed numbers come from here, never from timed unit tests (DESIGN.md section 6).
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
  mkdirSync(path.dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, JSON.stringify({ date: new Date().toISOString(), node: process.version, reps: REPS, native, wasm, tfjs, summary }, null, 2));
  console.error(`raw results: ${path.relative(process.cwd(), JSON_OUT)}`);
}

main().catch((err) => {
  console.error(`bench failed: ${err.message}`);
  process.exit(1);
});
