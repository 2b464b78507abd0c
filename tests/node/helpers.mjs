// Shared by the package tests: golden files (tests/goldens/README.md) and the tolerance of every parity check.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

export const GOLDEN_DIR = fileURLToPath(new URL('../goldens/attention/', import.meta.url));

/** Every tests/goldens/attention/*.json, parsed, with tensors as {dims, data: Float32Array}. */
export function loadAttentionGoldens() {
  return readdirSync(GOLDEN_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const doc = JSON.parse(readFileSync(GOLDEN_DIR + file, 'utf8'));
      const toTensors = (obj) =>
        Object.fromEntries(Object.entries(obj).map(([k, t]) => [k, { dims: t.dims, data: Float32Array.from(t.data) }]));
      return {
        file,
        op: doc.op,
        cases: doc.cases.map((c) => ({ name: c.name, params: c.params, inputs: toTensors(c.inputs), outputs: toTensors(c.outputs) })),
      };
    });
}

/**
 * Asserts `actual` matches `expected` element-wise: |a − e| ≤ 1e-4 or |a − e| ≤ 1e-3·|e| (the project tolerance).
 * Reports the worst element.
 */
export function assertTensorClose(actual, expected, label) {
  assert.ok(actual, `${label}: missing output`);
  assert.deepEqual(actual.dims, expected.dims, `${label}: dims`);
  assert.ok(actual.data instanceof Float32Array, `${label}: data is not a Float32Array`);
  assert.equal(actual.data.length, expected.data.length, `${label}: length`);
  let worst = -1;
  let worstDiff = 0;
  for (let i = 0; i < expected.data.length; i++) {
    const a = actual.data[i];
    const e = expected.data[i];
    const diff = Math.abs(a - e);
    const ok = (Number.isNaN(a) && Number.isNaN(e)) || a === e || diff <= 1e-4 || diff <= 1e-3 * Math.abs(e);
    if (!ok && (worst < 0 || diff > worstDiff || Number.isNaN(diff))) {
      worst = i;
      worstDiff = diff;
    }
  }
  assert.ok(worst < 0,
    `${label}: element ${worst} is ${actual.data[worst]}, expected ${expected.data[worst]} (|diff| = ${worstDiff})`);
}

/**
 * A small safetensors reader for golden files: 8-byte little-endian header length, JSON header, raw data.
 * Returns { name: { dims, data } } with Float32Array for F32 and Int32Array / BigInt64Array for I32 / I64.
 */
export function readSafetensors(path) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const base = 8 + n;
  const out = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    const bytes = buf.subarray(base + begin, base + end);
    const copy = new Uint8Array(bytes).buffer; // aligned copy
    const Type = { F32: Float32Array, I32: Int32Array, I64: BigInt64Array }[info.dtype];
    if (!Type) throw new Error(`${path}: ${name}: dtype ${info.dtype} not supported by this reader`);
    out[name] = { dims: info.shape, data: new Type(copy) };
  }
  return out;
}
