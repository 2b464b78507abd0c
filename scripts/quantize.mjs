#!/usr/bin/env node
// Writes the int8 variant of a model bundle (docs/DESIGN.md §4.3): every 2-D float weight with at least 1024 values
// (Linear, LSTM/GRU, embeddings) becomes int8 codes with one float32 scale per row, and so does every float
// convolution weight of a MobileNetV2 encoder bundle (one scale per output channel); everything else is copied. The
// rule is the engine's (io::kInt8MinValues, kernels::round_through_int8), so a float32 bundle loaded with
// "weight_precision": "int8" is the same model as its int8 bundle.
//
//   node scripts/quantize.mjs models/de-en-general /tmp/int8/de-en-general
//
// Per-output-row symmetric quantisation, as the engine's kernels::pack_rows(..., Precision::int8) does it:
// s = fround(max|w_row| / 127), q = round-half-even(w / s) clamped to [-127, 127]. Where the source bundle has an
// int8-codes.safetensors (models/training/captioning/quantize_calibrated.py: GPTQ rounding calibrated on training
// images, for the captioner and its encoder), each matrix it lists takes its codes from there instead, with the same
// scales: the format is the same, the codes are chosen so that each product's error is small rather than each
// weight's (the captioner's int8 captions match float32's more often; its MODEL_CARD.md). Such a bundle is then no
// longer the same model as its float32 bundle loaded with "weight_precision": "int8" (which rounds to nearest).
// The tensor NAME is stored as I8 [rows, cols] and NAME.qscale as F32 [rows]; io::Bundle::tensor reads back q·s.
// config.json gets "weight_precision": "int8" (so the engine keeps a decoding step's weights as int8) and the folder
// its own manifest.json. Vocabulary files, LICENSE and MODEL_CARD.md are copied; the float32 goldens and the codes
// file are not (int8 is tested against the goldens with a stated tolerance). No dependencies: `npm pack` runs it for
// the package's bundles.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeManifest } from './bundle-digests.mjs';
import { floatValues, parseSafetensors, writeSafetensors } from './safetensors.mjs';
import { MIN_VALUES, int8Config, int8Eligible, int8Entries, quantizeRows } from '../wasm/convert/int8.js';

export { MIN_VALUES, quantizeRows };
export const CODES_FILE = 'int8-codes.safetensors';

/** The calibrated codes beside a bundle's weights (CODES_FILE), or null: name -> { shape, q: Int8Array }. They must
 * have been made for these weights: their metadata's weights_sha256 is the weights file's. */
function readCodes(src, weightsBytes) {
  const file = path.join(src, CODES_FILE);
  if (!existsSync(file)) return null;
  const { header, metadata, data } = parseSafetensors(new Uint8Array(readFileSync(file)));
  const digest = createHash('sha256').update(weightsBytes).digest('hex');
  if (metadata.weights_sha256 !== digest) {
    throw new Error(`${file} was made for other weights (weights_sha256 ${metadata.weights_sha256 ?? 'missing'}, the ` +
      `weights file's is ${digest}): run models/training/captioning/quantize_calibrated.py again, or delete it`);
  }
  const codes = new Map();
  for (const [name, entry] of Object.entries(header)) {
    if (entry.dtype !== 'I8') throw new Error(`${file}: ${name} is ${entry.dtype}, expected I8 codes`);
    const [b, e] = entry.data_offsets;
    const q = new Int8Array(data.buffer, data.byteOffset + b, e - b);
    if (q.length !== entry.shape.reduce((x, y) => x * y, 1)) throw new Error(`${file}: ${name}'s bytes do not fit its shape`);
    if (q.some((v) => v === -128)) throw new Error(`${file}: ${name} has the code -128 (codes are in [-127, 127])`);
    codes.set(name, { shape: entry.shape, q });
  }
  return codes;
}

export function quantizeBundle(src, out) {
  const config = JSON.parse(readFileSync(path.join(src, 'config.json'), 'utf8'));
  if (config.weight_precision === 'int8') throw new Error(`${src} is already int8`);
  const weightsBytes = new Uint8Array(readFileSync(path.join(src, config.weights)));
  const { header, metadata, data } = parseSafetensors(weightsBytes);
  const codes = readCodes(src, weightsBytes);
  const entries = [];
  let int8Values = 0;
  let calibrated = 0;
  let keptValues = 0;
  for (const [name, entry] of Object.entries(header)) {
    const count = entry.shape.reduce((a, b) => a * b, 1);
    const [b, e] = entry.data_offsets;
    // (Keeping a MobileNetV2 encoder's depthwise and 3×3 convolutions float was measured too: test BLEU-4 21.24
    // against 21.39 with them int8.)
    if (int8Eligible(config, name, entry, header)) {
      const given = codes?.get(name);
      if (given) {
        if (given.shape.join('x') !== entry.shape.join('x')) {
          throw new Error(`${path.join(src, CODES_FILE)}: ${name} is [${given.shape}], the weights [${entry.shape}]`);
        }
        codes.delete(name);
        calibrated++;
      }
      entries.push(...int8Entries(name, entry.shape, floatValues(entry, data), given?.q));
      int8Values += count;
    } else {
      entries.push([name, entry.dtype, entry.shape, data.subarray(b, e)]);
      keptValues += count;
    }
  }
  if (codes?.size) throw new Error(`${path.join(src, CODES_FILE)}: no int8 matrix named ${[...codes.keys()][0]}`);
  mkdirSync(out, { recursive: true });
  const how = calibrated ? `, ${calibrated} matrices with the codes of ${CODES_FILE}` : '';
  const weights = writeSafetensors(entries, { ...metadata, quantization: `int8 per-row symmetric (scripts/quantize.mjs${how})` });
  writeFileSync(path.join(out, config.weights), weights);
  const outConfig = int8Config(config);
  writeFileSync(path.join(out, 'config.json'), `${JSON.stringify(outConfig, null, 2)}\n`);
  for (const f of readdirSync(src)) {
    if (f === 'config.json' || f === config.weights || f === 'manifest.json' || f === CODES_FILE || f.startsWith('golden')) continue;
    if (statSync(path.join(src, f)).isFile()) copyFileSync(path.join(src, f), path.join(out, f));
  }
  writeManifest(out);
  return { int8Values, keptValues, calibrated, bytesIn: statSync(path.join(src, config.weights)).size, bytesOut: weights.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const argv = process.argv.slice(2);
  if (argv.length !== 2 || !existsSync(path.join(argv[0], 'config.json'))) {
    console.error('usage: node scripts/quantize.mjs BUNDLE_DIR OUT_DIR');
    process.exit(2);
  }
  const r = quantizeBundle(argv[0], argv[1]);
  console.log(`${argv[0]} -> ${argv[1]}: ${r.int8Values} values int8${r.calibrated ? ` (${r.calibrated} matrices calibrated)` : ''}, ${r.keptValues} kept; weights ` +
    `${(r.bytesIn / 1e6).toFixed(1)} MB -> ${(r.bytesOut / 1e6).toFixed(1)} MB`);
}
