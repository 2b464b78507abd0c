// onnxruntime's dynamic int8 quantisation of an exported float32 graph, for the peer harness (issue 15.1/15.5).
//
// onnxruntime.quantization.quantize_dynamic (Python) needs the `onnx` package, which cannot be installed on the
// team machine; this file performs the same rewrite it makes for the node types it quantises by default, in Node,
// reading and writing the graph with the ONNX protobuf schema that onnxruntime-web itself ships
// (lib/onnxjs/ort-schema/protobuf/onnx.js):
//
//   MatMul(X, W)          → DynamicQuantizeLinear(X) → X_q (uint8), X_s, X_zp
//                           MatMulInteger(X_q, W_q, X_zp) → Cast(float) → Mul(·, X_s·W_s)
//   Gemm(X, W, B)         → the same (W transposed when transB), then Add(B)
//   Conv(X, W, B)         → ConvInteger(X_q, W_q, X_zp) with Conv's attributes → Cast → Mul(X_s·W_s) → Add(B)
//
// Weights: int8, symmetric, one scale per output channel, W_s = max|W_channel| / 127, W_q = round(W / W_s)
// (quantize_dynamic(..., weight_type=QInt8, per_channel=True); with one scale per tensor, its default, MobileNetV2's
// BN-folded depthwise weights lose everything: its grid came out with a mean error of 0.83 on values of mean 0.47);
// activations: uint8 with a per-call scale and zero point (DynamicQuantizeLinear). An input quantised for several nodes is quantised once. onnxruntime's graph optimiser
// then fuses the patterns into its own int8 kernels (DynamicQuantizeMatMul, MatMulIntegerToFloat). Only MatMul /
// Gemm / Conv whose weight is a constant initializer are rewritten; LSTM (quantize_dynamic's
// DynamicQuantizeLSTM, a contrib op) and Gather stay float32 — noted beside every table that uses these graphs.
//
//   node bench/peers/quantize-onnx.mjs IN.onnx OUT.onnx
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
let onnx;
function schema() {
  if (!onnx) {
    const file = path.join(HERE, '..', '..', 'node_modules', 'onnxruntime-web', 'lib', 'onnxjs', 'ort-schema', 'protobuf', 'onnx.js');
    ({ onnx } = require(file));
  }
  return onnx;
}

const FLOAT = 1;
const INT8 = 3;

function floatsOf(t) {
  if (t.dataType !== FLOAT) return null;
  if (t.rawData?.length) return new Float32Array(t.rawData.buffer.slice(t.rawData.byteOffset, t.rawData.byteOffset + t.rawData.length));
  return Float32Array.from(t.floatData);
}
const dimsOf = (t) => t.dims.map(Number);

function tensor(name, dataType, dims, bytes) {
  return schema().TensorProto.create({ name, dataType, dims, rawData: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
}

/**
 * W → int8 codes and symmetric scales, one per output channel: `channels` of them, channel of element i =
 * channelOf(i) (Conv: axis 0, W [O, I/g, kh, kw]; MatMul: the last axis, W [K, N]).
 */
export function quantizeWeight(w, channels, channelOf) {
  const amax = new Float32Array(channels);
  for (let i = 0; i < w.length; i++) amax[channelOf(i)] = Math.max(amax[channelOf(i)], Math.abs(w[i]));
  const scale = Float32Array.from(amax, (a) => a / 127 || 1);
  const q = new Int8Array(w.length);
  for (let i = 0; i < w.length; i++) q[i] = Math.max(-127, Math.min(127, Math.round(w[i] / scale[channelOf(i)])));
  return { q, scale };
}

/** Rewrites a ModelProto's bytes; returns { bytes, rewritten: { MatMul, Gemm, Conv } }. */
export function quantizeDynamic(bytes) {
  const { ModelProto, NodeProto, AttributeProto } = schema();
  const model = ModelProto.decode(bytes);
  const g = model.graph;
  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  const uses = new Map();
  for (const n of g.node) for (const i of n.input) uses.set(i, (uses.get(i) ?? 0) + 1);
  const node = (opType, input, output, attribute = []) => NodeProto.create({ opType, input, output, attribute, name: `${output[0]}_node` });
  const intAttr = (name, i) => AttributeProto.create({ name, type: AttributeProto.AttributeType.INT, i });
  const quantised = new Map(); // input name → [X_q, X_s, X_zp]
  const added = [];
  const rewritten = { MatMul: 0, Gemm: 0, Conv: 0 };
  let serial = 0;
  const out = [];
  const quantiseInput = (x) => {
    if (!quantised.has(x)) {
      const names = [`${x}_quantized`, `${x}_scale`, `${x}_zero_point`];
      out.push(node('DynamicQuantizeLinear', [x], names));
      quantised.set(x, names);
    }
    return quantised.get(x);
  };
  const dropInit = (name) => {
    uses.set(name, uses.get(name) - 1);
    if (uses.get(name) === 0) inits.delete(name);
  };
  for (const n of g.node) {
    const w = inits.get(n.input[1]);
    const wf = w ? floatsOf(w) : null;
    const attr = Object.fromEntries(n.attribute.map((a) => [a.name, a]));
    let ok = wf !== null && ['MatMul', 'Gemm', 'Conv'].includes(n.opType) && n.domain === '';
    if (ok && n.opType === 'MatMul') ok = dimsOf(w).length === 2;
    if (ok && n.opType === 'Gemm') {
      ok = dimsOf(w).length === 2 && !(attr.transA?.i > 0) && (attr.alpha?.f ?? 1) === 1 && (attr.beta?.f ?? 1) === 1;
    }
    if (!ok) {
      out.push(n);
      continue;
    }
    const id = `q${serial++}`;
    let dims = dimsOf(w);
    let values = wf;
    if (n.opType === 'Gemm' && attr.transB?.i > 0) { // W [N × K] → [K × N]
      const [N, K] = dims;
      values = new Float32Array(N * K);
      for (let r = 0; r < N; r++) for (let c = 0; c < K; c++) values[c * N + r] = wf[r * K + c];
      dims = [K, N];
    }
    const conv = n.opType === 'Conv';
    const channels = conv ? dims[0] : dims[1];
    const perOut = conv ? values.length / dims[0] : 0;
    const { q, scale } = quantizeWeight(values, channels, conv ? (i) => Math.floor(i / perOut) : (i) => i % channels);
    const wq = `${id}_W_quantized`;
    const ws = `${id}_W_scale`;
    // The scales broadcast over the output: [1, O, 1, 1] for NCHW, [N] for the last axis of a product.
    added.push(tensor(wq, INT8, dims, q), tensor(ws, FLOAT, conv ? [1, channels, 1, 1] : [channels], scale));
    dropInit(n.input[1]);
    const [xq, xs, xzp] = quantiseInput(n.input[0]);
    const acc = `${id}_int32`;
    if (n.opType === 'Conv') {
      out.push(node('ConvInteger', [xq, wq, xzp], [acc], n.attribute));
    } else {
      out.push(node('MatMulInteger', [xq, wq, xzp], [acc]));
    }
    const scaleName = `${id}_scale`;
    out.push(node('Mul', [xs, ws], [scaleName]));
    out.push(node('Cast', [acc], [`${id}_float`], [intAttr('to', FLOAT)]));
    const bias = n.input[2];
    const product = bias ? `${id}_product` : n.output[0];
    out.push(node('Mul', [`${id}_float`, scaleName], [product]));
    if (bias) {
      let b = bias;
      if (n.opType === 'Conv') { // [O] → [1, O, 1, 1] to broadcast over NCHW
        const bt = inits.get(bias);
        b = `${id}_bias`;
        added.push(tensor(b, FLOAT, [1, bt.dims.map(Number)[0], 1, 1], floatsOf(bt)));
        dropInit(bias);
      }
      out.push(node('Add', [product, b], [n.output[0]]));
    }
    rewritten[n.opType]++;
  }
  g.node = out;
  g.initializer = [...inits.values(), ...added];
  return { bytes: ModelProto.encode(model).finish(), rewritten };
}

// The harness reads every peer graph through readGraph: the float32 file, or (after usePeerInt8(true), from
// `--peer-precision int8`) its rewrite above, kept beside it as NAME.int8.onnx and redone when the float32 file is
// newer.
let peerInt8 = false;
export function usePeerInt8(on) {
  peerInt8 = on;
}
export function readGraph(dir, file) {
  const src = path.join(dir, file);
  if (!peerInt8) return readFileSync(src);
  const dst = path.join(dir, file.replace(/\.onnx$/, '.int8.onnx'));
  if (!existsSync(dst) || statSync(dst).mtimeMs < statSync(src).mtimeMs) {
    const { bytes, rewritten } = quantizeDynamic(readFileSync(src));
    writeFileSync(dst, bytes);
    console.error(`  ${file} → ${path.basename(dst)} (onnxruntime dynamic int8: ${JSON.stringify(rewritten)})`);
  }
  return readFileSync(dst);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: node bench/peers/quantize-onnx.mjs IN.onnx OUT.onnx');
    process.exit(2);
  }
  const { bytes, rewritten } = quantizeDynamic(readFileSync(input));
  writeFileSync(output, bytes);
  console.log(`${output}: ${JSON.stringify(rewritten)}`);
}
