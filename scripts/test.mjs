#!/usr/bin/env node
// `npm test`: everything, in the order a failure is cheapest to read.
//   1. build what is missing (native build/, WASM build-wasm/ + wasm/dist/)
//   2. C++ doctest suites natively (ctest in build/)
//   3. the same doctest binary compiled to WASM, under Node (ctest in build-wasm/)
//   4. the WASM SIMD check (the package's .wasm must hold f32x4.mul / f32x4.add)
//   5. package tests: tests/node/*.test.mjs with `node --test`, through the public ESM entry
//   6. browser end-to-end tests, tests/e2e/*.test.mjs, when that folder has any
//   7. the doctest binary again under AddressSanitizer + UBSan (build-asan/): bundle parsing and the tokenizer
//      take untrusted bytes
//   8. every libFuzzer harness of tests/fuzz (clang, ASan + UBSan; build-fuzz/) for a fixed budget on its seed corpus
//      and its regression inputs (tests/fuzz/README.md); skipped, with a message, where clang or libFuzzer is absent
// Every step runs even when an earlier one failed (unless it depends on a failed build); the summary lists each
// with its time, and the exit status is non-zero when any failed.
//
//   node scripts/test.mjs [--no-asan] [--no-fuzz] [--only=native,wasm,simd,node,e2e,asan,fuzz]
//   ATTNLENS_FUZZ_SECONDS=n   seconds per harness in the fuzz step (default 30)
//   ATTNLENS_JOBS=n           processes side by side in each step: ctest -j, node --test files, fuzz harnesses
//                             (and the build's -j; default 2)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JOBS, ROOT, buildTree, run } from './build.mjs';

const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const skipAsan = args.includes('--no-asan') || process.env.ATTNLENS_NO_ASAN === '1';
const skipFuzz = args.includes('--no-fuzz') || process.env.ATTNLENS_NO_FUZZ === '1';
const wanted = (step) => (!only || only.includes(step)) && !(step === 'asan' && skipAsan) && !(step === 'fuzz' && skipFuzz);

const results = [];

// The package and browser tests need the dev dependencies (playwright-core, typescript): install them from the
// committed lock file when they are missing, so `npm test` alone works on a fresh clone.
if (!existsSync(path.join(ROOT, 'node_modules', '.package-lock.json'))) {
  console.log('node_modules is missing: running npm ci');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

async function step(name, fn) {
  const t0 = Date.now();
  console.log(`\n=== ${name} ===`);
  let ok = true;
  let note = '';
  try {
    note = (await fn()) || '';
  } catch (err) {
    ok = false;
    note = err.message;
    console.error(`FAILED: ${err.message}`);
  }
  results.push({ name, ok, seconds: (Date.now() - t0) / 1000, note });
  return ok;
}

function testFiles(dir, exclude = []) {
  const abs = path.join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .filter((f) => f.endsWith('.test.mjs') && !exclude.includes(f))
    .sort()
    .map((f) => path.join(dir, f));
}

const needNative = wanted('native');
const needWasm = wanted('wasm') || wanted('simd') || wanted('node') || wanted('e2e');

let nativeBuilt = false;
let wasmBuilt = false;
if (needNative) nativeBuilt = await step('build native (build/)', () => void buildTree('native'));
if (needWasm) wasmBuilt = await step('build WASM (build-wasm/, wasm/dist/)', () => void buildTree('wasm'));

if (wanted('native')) {
  await step('C++ tests, native (ctest)', () => {
    if (!nativeBuilt) throw new Error('skipped: the native build failed');
    run('ctest', ['--test-dir', 'build', '--output-on-failure', '-j', JOBS]);
  });
}
if (wanted('wasm')) {
  await step('C++ tests, WASM under Node (ctest)', () => {
    if (!wasmBuilt) throw new Error('skipped: the WASM build failed');
    run('ctest', ['--test-dir', 'build-wasm', '--output-on-failure', '-j', JOBS]);
  });
}
if (wanted('simd')) {
  await step('WASM SIMD check (wasm-dis)', () => {
    if (!wasmBuilt) throw new Error('skipped: the WASM build failed');
    run(process.execPath, ['scripts/check-simd.mjs']);
  });
}
if (wanted('node')) {
  await step('package tests (node --test tests/node)', () => {
    if (!wasmBuilt) throw new Error('skipped: the WASM build failed');
    const files = testFiles('tests/node');
    if (!files.length) throw new Error('no tests/node/*.test.mjs found');
    // Each file is its own process; JOBS of them at a time (Node's default is one fewer than the cores).
    run(process.execPath, ['--test', `--test-concurrency=${JOBS}`, ...files]);
    return `${files.length} files, ${JOBS} at a time`;
  });
}
if (wanted('e2e')) {
  const files = testFiles('tests/e2e');
  if (files.length) {
    await step('browser end-to-end tests (node --test tests/e2e)', () => {
      if (!wasmBuilt) throw new Error('skipped: the WASM build failed');
      // page.test.mjs (the page, screenshots in tests/e2e/artifacts/) and consumers.test.mjs (npm pack → fresh
      // Node, Vite and TypeScript projects from tests/consumers/, and every example of the docs run as written)
      run(process.execPath, ['--test', '--test-concurrency=1', ...files]);
      return `${files.length} files; screenshots in tests/e2e/artifacts/`;
    });
  }
}
if (wanted('asan')) {
  await step('C++ tests, native under ASan + UBSan (build-asan/)', () => {
    buildTree('asan', { targets: ['attnlens_tests'] });
    run('ctest', ['--test-dir', 'build-asan', '--output-on-failure', '-j', JOBS]);
  });
}

if (wanted('fuzz')) {
  await step('libFuzzer harnesses, ASan + UBSan (build-fuzz/, tests/fuzz)', async () => {
    const missing = fuzzToolchainMissing();
    if (missing) {
      console.log(`skipped: ${missing}; scripts/toolchain.sh ci installs clang and libclang-rt-14-dev`);
      return `skipped: ${missing}`;
    }
    buildTree('fuzz', { targets: ['fuzzers'] });
    const seconds = String(Number(process.env.ATTNLENS_FUZZ_SECONDS) || 30);
    const harnesses = readdirSync(path.join(ROOT, 'tests/fuzz'))
      .filter((f) => /^fuzz_.*\.cpp$/.test(f))
      .map((f) => f.slice('fuzz_'.length, -'.cpp'.length))
      .sort();
    // JOBS harnesses side by side (each one process on one core); each one's output is printed whole when it ends.
    const failures = [];
    const queue = [...harnesses];
    const runOne = (h) => new Promise((resolve) => {
      // New inputs go to a scratch folder (the first corpus argument); the committed seeds and regressions are
      // only read. A crash, leak, sanitizer report, timeout or OOM makes libFuzzer exit non-zero and leaves the
      // input in build-fuzz/artifacts/.
      const scratch = path.join(ROOT, 'build-fuzz', 'corpus', h);
      const artifacts = path.join(ROOT, 'build-fuzz', 'artifacts');
      mkdirSync(scratch, { recursive: true });
      mkdirSync(artifacts, { recursive: true });
      const dirs = [scratch, `tests/fuzz/corpus/${h}`, `tests/fuzz/regressions/${h}`].filter((d) => existsSync(path.resolve(ROOT, d))); // resolve: scratch is absolute
      const dict = `tests/fuzz/${h}.dict`;
      const cmd = `build-fuzz/tests/fuzz/fuzz_${h}`;
      const args = [
        `-max_total_time=${seconds}`, '-timeout=25', '-rss_limit_mb=2560', '-max_len=65536', '-print_final_stats=1',
        `-artifact_prefix=${artifacts}/${h}-`, ...(existsSync(path.join(ROOT, dict)) ? [`-dict=${dict}`] : []), ...dirs,
      ];
      const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => { output += d; });
      child.stderr.on('data', (d) => { output += d; });
      child.on('error', (err) => { output += `${err.message}\n`; });
      child.on('close', (code, signal) => {
        console.log(`--- ${h}: $ ${[cmd, ...args].join(' ')}\n${output}--- ${h}: exit ${code ?? signal}`);
        if (code !== 0) failures.push(`${h}: exited with status ${code ?? signal}`);
        resolve();
      });
    });
    const worker = async () => { while (queue.length) await runOne(queue.shift()); };
    await Promise.all(Array.from({ length: Math.max(1, Number(JOBS) || 1) }, worker));
    if (failures.length) throw new Error(`${failures.length} of ${harnesses.length} harnesses failed: ${failures.join('; ')}`);
    return `${harnesses.length} harnesses, ${seconds} s each, ${JOBS} at a time`;
  });
}

// Why the fuzz step cannot run here ('' when it can): clang++ must link a program with -fsanitize=fuzzer.
function fuzzToolchainMissing() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-fuzz-probe-'));
  try {
    const src = path.join(dir, 'probe.cpp');
    writeFileSync(src, 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n');
    const r = spawnSync('clang++', ['-fsanitize=fuzzer,address,undefined', src, '-o', path.join(dir, 'probe')], { encoding: 'utf8' });
    if (r.error) return 'clang++ was not found';
    if (r.status !== 0) return `clang++ cannot link with -fsanitize=fuzzer (libFuzzer runtime missing?): ${(r.stderr || '').trim().split('\n')[0]}`;
    return '';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log('\n=== summary ===');
for (const r of results) {
  const note = r.note ? `  (${r.note.split('\n')[0].slice(0, 160)})` : '';
  console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  ${r.seconds.toFixed(1)} s${note}`);
}
const failed = results.filter((r) => !r.ok).length;
console.log(failed ? `\n${failed} of ${results.length} steps failed` : `\nall ${results.length} steps passed`);
process.exit(failed ? 1 : 0);
