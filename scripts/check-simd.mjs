#!/usr/bin/env node
// Counts the SIMD128 float arithmetic in a .wasm by disassembling it with binaryen's wasm-dis (Debian package
// `binaryen`). The WASM build is only worth shipping if the kernels really became f32x4 code: xsimd 8.1 has no
// wasm backend, and a wrong flag (e.g. -msimd128 without -msse2) silently falls back to scalar code.
//
//   node scripts/check-simd.mjs [path/to.wasm]     prints the counts, exits 1 when f32x4.mul or f32x4.add is absent
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const DEFAULT_WASM = fileURLToPath(new URL('../wasm/dist/attnlens.wasm', import.meta.url));

/** Returns { 'f32x4.mul': n, 'f32x4.add': n, ... } for every f32x4 instruction in the module. */
export function countSimdInstructions(wasmPath = DEFAULT_WASM) {
  if (!existsSync(wasmPath)) throw new Error(`${wasmPath} does not exist: build it with \`npm run build:wasm\``);
  const r = spawnSync('wasm-dis', [wasmPath], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) {
    throw new Error(r.error.code === 'ENOENT'
      ? 'wasm-dis was not found: install binaryen (apt-get install binaryen)'
      : `wasm-dis failed: ${r.error.message}`);
  }
  if (r.status !== 0) throw new Error(`wasm-dis ${wasmPath} exited with status ${r.status}: ${r.stderr.slice(0, 500)}`);
  const counts = {};
  for (const m of r.stdout.matchAll(/\(f32x4\.([a-z_0-9]+)/g)) {
    const name = `f32x4.${m[1]}`;
    counts[name] = (counts[name] || 0) + 1;
  }
  return counts;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ? path.resolve(process.argv[2]) : DEFAULT_WASM;
  try {
    const counts = countSimdInstructions(file);
    console.log(`${path.relative(process.cwd(), file)}: ${JSON.stringify(counts)}`);
    const missing = ['f32x4.mul', 'f32x4.add'].filter((op) => !counts[op]);
    if (missing.length) {
      console.error(`no ${missing.join(' / ')} in ${file}: the kernels were not compiled to WASM SIMD128`);
      process.exit(1);
    }
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
