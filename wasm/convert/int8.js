// The int8 rule (docs/DESIGN.md §4.3), shared by scripts/quantize.mjs and the converter's --int8: every 2-D float
// weight with at least MIN_VALUES values (Linear, LSTM/GRU, embeddings) — and every float convolution weight of a
// MobileNetV2 encoder bundle — becomes int8 codes with one float32 scale per row. It is the engine's rule
// (io::kInt8MinValues, kernels::pack_rows(..., Precision::int8)): s = fround(max|w_row| / 127), q = round-half-even(w / s)
// clamped to [-127, 127]. The tensor NAME is stored as I8 [rows, cols...] and NAME.qscale as F32 [rows].
import { FLOAT_DTYPES } from './safetensors.js';

export const MIN_VALUES = 1024; // io::kInt8MinValues

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

/** Whether the tensor `name` (a safetensors header entry) of a bundle with this config.json is stored as int8.
 * A MobileNetV2 encoder's convolution weights [out, in, kh, kw] too, except published integer codes (a
 * "<name>_scale" beside them). */
export function int8Eligible(config, name, entry, header) {
  const count = entry.shape.reduce((a, b) => a * b, 1);
  const conv = config.architecture === 'mobilenet-v2' && entry.shape.length === 4 && !(`${name}_scale` in header);
  return (entry.shape.length === 2 || conv) && FLOAT_DTYPES.includes(entry.dtype) && count >= MIN_VALUES;
}

/** [name, 'I8', shape, codes] and [name.qscale, 'F32', [rows], scales] safetensors entries for float32 values w,
 * with the given codes instead of the nearest ones when `codes` is set (same shape). */
export function int8Entries(name, shape, w, codes) {
  const rows = shape[0];
  const { q: nearest, scale } = quantizeRows(w, rows, w.length / rows);
  const q = codes ?? nearest;
  return [[name, 'I8', shape, new Uint8Array(q.buffer, q.byteOffset, q.byteLength)],
    [`${name}.qscale`, 'F32', [rows], new Uint8Array(scale.buffer)]];
}

/** config.json of the int8 variant of a bundle. */
export function int8Config(config) {
  return { ...config, weight_precision: 'int8',
    weights_dtype: `I8 (weights, F32 scale per row / output channel) + ${config.weights_dtype ?? 'F32'}` };
}
