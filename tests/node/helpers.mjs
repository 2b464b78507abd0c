// Shared by the package tests: golden files (tests/goldens/README.md) and the tolerance of every parity check.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { floatValues, parseSafetensors } from '../../scripts/safetensors.mjs';
import { pipeline } from '../../wasm/index.js';

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
 * Golden files as { name: { dims, data } } (scripts/safetensors.mjs): Float32Array for F32 / F16 / BF16,
 * Int32Array / BigInt64Array for I32 / I64.
 */
export function readSafetensors(path) {
  const { header, data } = parseSafetensors(new Uint8Array(readFileSync(path)));
  const out = {};
  for (const [name, info] of Object.entries(header)) {
    const Type = { I32: Int32Array, I64: BigInt64Array }[info.dtype];
    if (Type) {
      const [begin, end] = info.data_offsets;
      out[name] = { dims: info.shape, data: new Type(data.slice(begin, end).buffer) }; // an aligned copy
    } else if (['F32', 'F16', 'BF16'].includes(info.dtype)) {
      out[name] = { dims: info.shape, data: floatValues(info, data) };
    } else {
      throw new Error(`${path}: ${name}: dtype ${info.dtype} not supported by this reader`);
    }
  }
  return out;
}

// The tiny test captioner of tests/goldens/captioning (a seeded decoder over the real MobileNetV2 encoder).
export function tinyCaptioner() {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const dir = `${root}tests/goldens/captioning/tiny-sat/`;
  const configText = readFileSync(`${dir}config.json`, 'utf8');
  return pipeline('image-to-text', {
    name: 'tiny-sat', config: JSON.parse(configText), configText,
    files: {
      'weights.safetensors': new Uint8Array(readFileSync(`${dir}weights.safetensors`)),
      'vocab.txt': new Uint8Array(readFileSync(`${dir}vocab.txt`)),
    },
    encoder: `${root}models/mobilenet-v2-imagenet`,
  });
}

/** A seeded random number generator (mulberry32): () → a number in [0, 1). The fuzz tests' mutations use it. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Largest |softmax_j(q_i·k_j/√d_head) − map[i][j]| over every map of `r` (a result with `attentions` and `qk`, the
 * neuron view's vectors), over j ≤ i for the kinds in `causal`; throws when a map has no vectors.
 */
export function qkError(r, causal = ['decoder_self']) {
  let worst = 0;
  for (const m of r.attentions) {
    const q = r.qk.find((x) => x.name === `${m.name}.query` && x.layer === m.layer && x.head === m.head);
    const k = r.qk.find((x) => x.name === `${m.name}.key` && x.layer === m.layer && x.head === m.head);
    assert.ok(q && k, `no vectors for ${m.name} ${m.layer}.${m.head}`);
    const [rows, cols] = m.dims;
    const dh = q.dims[1];
    assert.deepEqual(q.dims, [rows, dh]);
    assert.deepEqual(k.dims, [cols, dh]);
    for (let i = 0; i < rows; i++) {
      const n = causal.includes(m.name) ? i + 1 : cols;
      const s = [];
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < dh; c++) dot += q.data[i * dh + c] * k.data[j * dh + c];
        s.push(dot / Math.sqrt(dh));
      }
      const mx = Math.max(...s);
      const e = s.map((v) => Math.exp(v - mx));
      const sum = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < cols; j++) worst = Math.max(worst, Math.abs((j < n ? e[j] / sum : 0) - m.data[i * cols + j]));
    }
  }
  return worst;
}
