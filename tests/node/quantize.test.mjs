// scripts/quantize.mjs (int8 bundles, docs/DESIGN.md §4.3): the per-row codes on a hand-computed case, then a real
// bundle quantised into a temporary folder, checked by its manifest and loaded by path: it translates as the float32
// bundle run with { precision: 'int8' } does (the engine rounds a float32 bundle's matrices through the same codes;
// re-packing may move a scale by its last bit).
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { pipeline } from '../../wasm/index.js';
import { CODES_FILE, quantizeBundle, quantizeRows } from '../../scripts/quantize.mjs';
import { checkManifest } from '../../scripts/bundle-digests.mjs';
import { floatValues, parseSafetensors, writeSafetensors } from '../../scripts/safetensors.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('quantizeRows: s = max|row| / 127, codes rounded half to even, an all-zero row has scale 0', () => {
  const { q, scale } = quantizeRows(new Float32Array([1, -0.5, 0.25, 0, 0, 0, 2.54, -1.27, 0.01]), 3, 3);
  assert.deepEqual(Array.from(scale), [Math.fround(1 / 127), 0, Math.fround(2.54 / 127)].map(Math.fround));
  // 1/s = 127: -0.5 → -63.5 → -64 (half to even), 0.25 → 31.75 → 32; row 3: 2.54 → 127, -1.27 → -63.5 → -64 or -63
  // depending on float rounding of the quotient, 0.01 → 0.5 → 0
  assert.deepEqual(Array.from(q.slice(0, 6)), [127, -64, 32, 0, 0, 0]);
  assert.equal(q[6], 127);
  assert.ok(q[7] === -64 || q[7] === -63);
  assert.equal(q[8], 0);
});

// Calibrated codes (int8-codes.safetensors beside the weights, models/training/captioning/quantize_calibrated.py):
// a made-up bundle with one 32×40 matrix; the codes given are taken as they are, with quantizeRows' scales, and a codes
// file that does not fit the weights is refused, naming the file and the tensor.
test('quantizeBundle takes the codes of int8-codes.safetensors and refuses codes that do not fit', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-int8-codes-'));
  const src = path.join(dir, 'src');
  const f32 = (a) => new Uint8Array(a.buffer);
  const w = Float32Array.from({ length: 32 * 40 }, (_, i) => Math.sin(i * 0.7) * (1 + (i % 40) / 10));
  const bias = new Float32Array(32).fill(0.5);
  let digest = '';
  const writeCodes = (entries, meta = { weights_sha256: digest }) => writeFileSync(path.join(src, CODES_FILE), writeSafetensors(entries, meta));
  try {
    mkdirSync(src);
    writeFileSync(path.join(src, 'config.json'), JSON.stringify({ architecture: 'test', weights: 'weights.safetensors' }));
    writeFileSync(path.join(src, 'weights.safetensors'), writeSafetensors([['m.weight', 'F32', [32, 40], f32(w)],
      ['m.bias', 'F32', [32], f32(bias)]], {}));
    digest = createHash('sha256').update(readFileSync(path.join(src, 'weights.safetensors'))).digest('hex');
    const nearest = quantizeRows(w, 32, 40);
    const given = Int8Array.from(nearest.q, (v, i) => (i % 3 === 0 ? Math.max(-127, Math.min(127, v + 1)) : v));
    writeCodes([['m.weight', 'I8', [32, 40], new Uint8Array(given.buffer)]]);
    const r = quantizeBundle(src, path.join(dir, 'out'));
    assert.equal(r.calibrated, 1);
    const { header, metadata, data } = parseSafetensors(new Uint8Array(readFileSync(path.join(dir, 'out', 'weights.safetensors'))));
    const [b, e] = header['m.weight'].data_offsets;
    assert.deepEqual(Array.from(new Int8Array(data.slice(b, e).buffer)), Array.from(given));
    assert.deepEqual(Array.from(floatValues(header['m.weight.qscale'], data)), Array.from(nearest.scale));
    assert.equal(header['m.bias'].dtype, 'F32');
    assert.match(metadata.quantization, /1 matrices with the codes of int8-codes\.safetensors/);
    assert.throws(() => statSync(path.join(dir, 'out', CODES_FILE)), /ENOENT/, 'the codes file is not copied');
    assert.deepEqual(checkManifest(path.join(dir, 'out')), []);

    writeCodes([['m.weight', 'I8', [40, 32], new Uint8Array(given.buffer)]]);
    assert.throws(() => quantizeBundle(src, path.join(dir, 'out2')), /int8-codes\.safetensors: m\.weight is \[40,32\], the weights \[32,40\]/);
    const low = Int8Array.from(given);
    low[5] = -128;
    writeCodes([['m.weight', 'I8', [32, 40], new Uint8Array(low.buffer)]]);
    assert.throws(() => quantizeBundle(src, path.join(dir, 'out3')), /m\.weight has the code -128/);
    writeCodes([['m.weight', 'I8', [32, 40], new Uint8Array(given.buffer)], ['n.weight', 'I8', [2], new Uint8Array(2)]]);
    assert.throws(() => quantizeBundle(src, path.join(dir, 'out4')), /no int8 matrix named n\.weight/);
    writeCodes([['m.weight', 'F32', [32, 40], f32(w)]]);
    assert.throws(() => quantizeBundle(src, path.join(dir, 'out5')), /m\.weight is F32, expected I8 codes/);
    // codes made for other weights (the bundle re-exported since): refused, naming both digests
    writeCodes([['m.weight', 'I8', [32, 40], new Uint8Array(given.buffer)]], { weights_sha256: '0'.repeat(64) });
    assert.throws(() => quantizeBundle(src, path.join(dir, 'out6')), new RegExp(`made for other weights \\(weights_sha256 0{64}, the weights file's is ${digest}\\)`));
    writeCodes([['m.weight', 'I8', [32, 40], new Uint8Array(given.buffer)]], {});
    assert.throws(() => quantizeBundle(src, path.join(dir, 'out7')), /weights_sha256 missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an int8 bundle written by scripts/quantize.mjs loads by path and translates like precision: int8', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-int8-'));
  const out = path.join(dir, 'de-en-general');
  const float = `${ROOT}models/de-en-general`;
  try {
    const r = quantizeBundle(float, out);
    assert.ok(r.bytesOut < 0.55 * r.bytesIn, `weights ${r.bytesIn} -> ${r.bytesOut} bytes`);
    assert.deepEqual(checkManifest(out), []);
    const config = JSON.parse(readFileSync(path.join(out, 'config.json'), 'utf8'));
    assert.equal(config.weight_precision, 'int8');
    assert.ok(statSync(path.join(out, 'bpe.vocab')).size > 0);
    const golden = JSON.parse(readFileSync(`${float}/golden.json`, 'utf8'));
    const a = await pipeline('translation', out);
    const b = await pipeline('translation', 'de-en-general', { precision: 'int8' });
    try {
      for (const c of golden.cases.slice(0, 4)) {
        const x = await a(c.source);
        const y = await b(c.source);
        assert.equal(x.text, y.text);
        assert.equal(x.attentions.length, y.attentions.length);
        let max = 0;
        for (let i = 0; i < x.attentions.length; i++) {
          for (let j = 0; j < x.attentions.at(i).data.length; j++) max = Math.max(max, Math.abs(x.attentions.at(i).data[j] - y.attentions.at(i).data[j]));
        }
        assert.ok(max <= 1e-5, `maps differ by ${max}`);
      }
    } finally {
      a.dispose();
      b.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The npm package's captioner (scripts/pack.mjs): flickr8k-mobilenet and its fine-tuned encoder bundle both int8
// (the encoder's convolutions one scale per output channel, io::Bundle reading I8 tensors of any rank), next to each
// other in a folder, load by path and caption like the float32 pair within a stated deviation of α.
test('the int8 captioner and its int8 encoder bundle load by path; alpha stays within 0.1 of float32', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-int8-cap-'));
  try {
    const enc = quantizeBundle(`${ROOT}models/flickr8k-mobilenet-encoder`, path.join(dir, 'flickr8k-mobilenet-encoder'));
    assert.ok(enc.int8Values > 2_000_000, `${enc.int8Values} encoder values int8`);
    assert.ok(enc.bytesOut < 0.6 * enc.bytesIn, `encoder weights ${enc.bytesIn} -> ${enc.bytesOut} bytes`);
    const dec = quantizeBundle(`${ROOT}models/flickr8k-mobilenet`, path.join(dir, 'flickr8k-mobilenet'));
    // both take the committed calibrated codes (quantize_calibrated.py): every int8 matrix of the decoder, every
    // convolution of the encoder of at least 1024 weights
    assert.equal(dec.calibrated, 9);
    assert.equal(enc.calibrated, 48);
    for (const b of ['flickr8k-mobilenet', 'flickr8k-mobilenet-encoder']) assert.deepEqual(checkManifest(path.join(dir, b)), []);
    const { header } = parseSafetensors(new Uint8Array(readFileSync(path.join(dir, 'flickr8k-mobilenet-encoder', 'weights.safetensors'))));
    assert.equal(header['features.18.0.weight'].dtype, 'I8');
    assert.deepEqual(header['features.18.0.weight.qscale'].shape, [1280]);
    assert.equal(header['features.18.1.running_var'].dtype, 'F32', 'BatchNorm stays float');
    const q = await pipeline('image-to-text', path.join(dir, 'flickr8k-mobilenet'));
    const f = await pipeline('image-to-text', 'flickr8k-mobilenet');
    try {
      const ppm = readFileSync(`${ROOT}tests/goldens/captioning/sanity/cat.ppm`);
      const head = ppm.subarray(0, 15).toString('latin1').split(/\s+/);
      const [w, h] = [Number(head[1]), Number(head[2])];
      const img = { data: new Uint8Array(ppm.subarray(ppm.length - w * h * 3)), width: w, height: h, channels: 3 };
      const caption = 'a cat is lying on a bed .';
      const a = await q.attend(img, caption);
      const b = await f.attend(img, caption);
      const x = a.attentions.at(0).data;
      const y = b.attentions.at(0).data;
      assert.equal(x.length, y.length);
      let max = 0;
      for (let i = 0; i < x.length; i++) max = Math.max(max, Math.abs(x[i] - y[i]));
      assert.ok(max <= 0.1, `alpha differs by ${max}`);
      const greedy = await q(img, { num_beams: 1 });
      assert.ok(greedy.text.split(' ').length >= 3, greedy.text);
    } finally {
      q.dispose();
      f.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
