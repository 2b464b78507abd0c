#!/usr/bin/env node
// Writes the int8 variant of a model bundle (docs/DESIGN.md §4.3): every 2-D float weight with at least 1024 values
// (Linear, LSTM/GRU, embeddings) becomes int8 codes with one float32 scale per row; everything else is copied. The
// rule is the engine's (io::kInt8MinValues, kernels::round_through_int8), so a float32 bundle loaded with
// "weight_precision": "int8" is the same model as its int8 bundle.
//
//   node scripts/quantize.mjs models/de-en-general /tmp/int8/de-en-general
//
// Per-output-row symmetric quantisation, as the engine's kernels::pack_rows(..., Precision::int8) does it:
// s = fround(max|w_row| / 127), q = round-half-even(w / s) clamped to [-127, 127]. The tensor NAME is stored as I8
// [rows, cols] and NAME.qscale as F32 [rows]; io::Bundle::tensor reads back q·s. config.json gets
// "weight_precision": "int8" (so the engine keeps a decoding step's weights as int8) and the folder its own
// manifest.json. Vocabulary files, LICENSE and MODEL_CARD.md are copied; the float32 goldens are not (int8 is
// tested against them with a stated tolerance). No dependencies: `npm pack` runs it for the package's bundles.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeManifest } from './bundle-digests.mjs';

const SIZES = { F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, I8: 1, U8: 1 };

/** { header, metadata, data (Uint8Array of the tensor bytes) } of a safetensors file. */
export function readSafetensors(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  return { header, metadata, data: bytes.subarray(8 + n) };
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** The values of a float tensor (F32, F16, BF16) as a Float32Array. */
export function floatValues(entry, data) {
  const [b, e] = entry.data_offsets;
  const raw = data.slice(b, e); // a copy: aligned
  const dv = new DataView(raw.buffer);
  const count = (e - b) / SIZES[entry.dtype];
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    if (entry.dtype === 'F32') out[i] = dv.getFloat32(4 * i, true);
    else if (entry.dtype === 'F16') out[i] = halfToFloat(dv.getUint16(2 * i, true));
    else if (entry.dtype === 'BF16') out[i] = new Float32Array(new Uint32Array([dv.getUint16(2 * i, true) << 16]).buffer)[0];
    else throw new Error(`not a float tensor: ${entry.dtype}`);
  }
  return out;
}

const roundHalfEven = (x) => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};

/** w [rows × cols] → { q: Int8Array, scale: Float32Array [rows] }. */
export function quantizeRows(w, rows, cols) {
  const q = new Int8Array(rows * cols);
  const scale = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let amax = 0;
    for (let c = 0; c < cols; c++) amax = Math.max(amax, Math.abs(w[r * cols + c]));
    const s = Math.fround(Math.fround(amax) / 127);
    scale[r] = s;
    if (s === 0) continue;
    for (let c = 0; c < cols; c++) {
      q[r * cols + c] = Math.max(-127, Math.min(127, roundHalfEven(Math.fround(w[r * cols + c] / s))));
    }
  }
  return { q, scale };
}

/** Safetensors bytes from [name, dtype, shape, Uint8Array] entries and metadata (header padded to 8 bytes). */
export function writeSafetensors(entries, metadata) {
  const header = {};
  let offset = 0;
  for (const [name, dtype, shape, bytes] of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  if (metadata && Object.keys(metadata).length) header.__metadata__ = metadata;
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const head = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let pos = 8 + head.length;
  for (const [, , , bytes] of entries) {
    out.set(bytes, pos);
    pos += bytes.length;
  }
  return out;
}

export const MIN_VALUES = 1024; // io::kInt8MinValues

export function quantizeBundle(src, out) {
  const config = JSON.parse(readFileSync(path.join(src, 'config.json'), 'utf8'));
  if (config.weight_precision === 'int8') throw new Error(`${src} is already int8`);
  const { header, metadata, data } = readSafetensors(new Uint8Array(readFileSync(path.join(src, config.weights))));
  const entries = [];
  let int8Values = 0;
  let keptValues = 0;
  for (const [name, entry] of Object.entries(header)) {
    const count = entry.shape.reduce((a, b) => a * b, 1);
    const [b, e] = entry.data_offsets;
    if (entry.shape.length === 2 && ['F32', 'F16', 'BF16'].includes(entry.dtype) && count >= MIN_VALUES) {
      const { q, scale } = quantizeRows(floatValues(entry, data), entry.shape[0], entry.shape[1]);
      entries.push([name, 'I8', entry.shape, new Uint8Array(q.buffer)]);
      entries.push([`${name}.qscale`, 'F32', [entry.shape[0]], new Uint8Array(scale.buffer)]);
      int8Values += count;
    } else {
      entries.push([name, entry.dtype, entry.shape, data.subarray(b, e)]);
      keptValues += count;
    }
  }
  mkdirSync(out, { recursive: true });
  const weights = writeSafetensors(entries, { ...metadata, quantization: 'int8 per-row symmetric (scripts/quantize.mjs)' });
  writeFileSync(path.join(out, config.weights), weights);
  const outConfig = { ...config, weight_precision: 'int8',
    weights_dtype: `I8 (2-D weights, per-row F32 scales) + ${config.weights_dtype ?? 'F32'}` };
  writeFileSync(path.join(out, 'config.json'), `${JSON.stringify(outConfig, null, 2)}\n`);
  for (const f of readdirSync(src)) {
    if (f === 'config.json' || f === config.weights || f === 'manifest.json' || f.startsWith('golden')) continue;
    if (statSync(path.join(src, f)).isFile()) copyFileSync(path.join(src, f), path.join(out, f));
  }
  writeManifest(out);
  return { int8Values, keptValues, bytesIn: statSync(path.join(src, config.weights)).size, bytesOut: weights.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const argv = process.argv.slice(2);
  if (argv.length !== 2 || !existsSync(path.join(argv[0], 'config.json'))) {
    console.error('usage: node scripts/quantize.mjs BUNDLE_DIR OUT_DIR');
    process.exit(2);
  }
  const r = quantizeBundle(argv[0], argv[1]);
  console.log(`${argv[0]} -> ${argv[1]}: ${r.int8Values} values int8, ${r.keptValues} kept; weights ` +
    `${(r.bytesIn / 1e6).toFixed(1)} MB -> ${(r.bytesOut / 1e6).toFixed(1)} MB`);
}
