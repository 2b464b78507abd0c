// scripts/quantize.mjs (int8 bundles, docs/DESIGN.md §4.3): the per-row codes on a hand-computed case, then a real
// bundle quantised into a temporary folder, checked by its manifest and loaded by path: it translates as the float32
// bundle run with { precision: 'int8' } does (the engine rounds a float32 bundle's matrices through the same codes;
// re-packing may move a scale by its last bit).
import test from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { pipeline } from '../../wasm/index.js';
import { CODES_FILE, quantizeBundle, quantizeRows } from '../../scripts/quantize.mjs';
import { checkManifest } from '../../scripts/bundle-digests.mjs';
import { featuresOnly } from '../../scripts/pack.mjs';
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

/** Max |x - y| over every map of two results (same maps in the same order), and the map where it is largest. */
function mapDeviation(x, y, label) {
  assert.equal(x.attentions.length, y.attentions.length, `${label}: number of maps`);
  let max = 0;
  let where = '';
  for (let i = 0; i < x.attentions.length; i++) {
    const a = x.attentions.at(i);
    const b = y.attentions.at(i);
    assert.equal(a.name, b.name);
    assert.equal(a.data.length, b.data.length, `${label}: ${a.name} size`);
    for (let j = 0; j < a.data.length; j++) {
      const d = Math.abs(a.data[j] - b.data[j]);
      if (!(d <= max)) [max, where] = [d, `${a.name}/${a.layer ?? ''}`];
    }
  }
  return { max, where };
}

/**
 * The three ways to run a model's int8 weights and its float32 reference: the int8 bundle at `dir`, the float32
 * bundle `name` run with { precision: 'int8' }, and the float32 bundle as it is. `each(run)` calls run(q, viaOption,
 * f) with the three pipelines and disposes them after; `same(a, b, label)` asserts the int8 bundle's result equals
 * precision int8's (maps within 1e-5).
 */
async function int8Trio(task, dir, name, each) {
  const q = await pipeline(task, dir);
  const viaOption = await pipeline(task, name, { precision: 'int8' });
  const f = await pipeline(task, name);
  try {
    await each(q, viaOption, f);
  } finally {
    q.dispose();
    viaOption.dispose();
    f.dispose();
  }
}

function assertSameAsOption(a, b, label) {
  const same = mapDeviation(a, b, label);
  assert.ok(same.max <= 1e-5, `${label}: int8 bundle and precision int8 differ by ${same.max} (${same.where})`);
}

function readPpm(rel) {
  const buf = readFileSync(`${ROOT}${rel}`);
  const head = buf.subarray(0, 20).toString('latin1').split(/\s+/);
  const [w, h] = [Number(head[1]), Number(head[2])];
  return { data: new Uint8Array(buf.subarray(buf.length - w * h * 3)), width: w, height: h, channels: 3 };
}

// The npm package ships both VQA models int8 (scripts/pack.mjs INT8_IN_PACKAGE; held-out accuracy and grounding of
// both precisions over the whole test set in their MODEL_CARD.md), beside the features-only F16 encoder bundle as the
// package stages it; the VQA model's precision also keeps the encoder's convolutions int8 (api/vqa.cpp). Here: the
// int8 bundle is the float32 bundle run with { precision: 'int8' } (every tensor the VQA model reads goes through
// io::Bundle::tensor, which rounds as quantize.mjs stores), and against float32 on the golden scenes and questions,
// from the pixels: the maps a user reads (region and word attention) stay within 0.1 of float32 (measured 0.076
// coattn, 0.058 aoa), the answer scores within 0.25 (measured 0.21, 0.11), and the answer is float32's on at least
// 9 of the 10 questions (aoa's count question case5 answers 1 for 2 in int8). The score maps before a softmax
// (affinity, aoa_matching) move more (a saturated tanh can flip): what that does to answers is the cards' figure.
test('the int8 VQA bundles load by path, equal precision: int8 and stay within 0.1 of float32', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-int8-vqa-'));
  try {
    cpSync(`${ROOT}models/mobilenet-v2-imagenet`, path.join(dir, 'mobilenet-v2-imagenet'), { recursive: true });
    featuresOnly(path.join(dir, 'mobilenet-v2-imagenet'));
    for (const name of ['shapes-vqa-coattn', 'shapes-vqa-aoa']) {
      const r = quantizeBundle(`${ROOT}models/${name}`, path.join(dir, name));
      assert.ok(r.bytesOut < 0.6 * r.bytesIn, `${name}: weights ${r.bytesIn} -> ${r.bytesOut} bytes`);
      assert.deepEqual(checkManifest(path.join(dir, name)), []);
      const { header } = parseSafetensors(new Uint8Array(readFileSync(path.join(dir, name, 'weights.safetensors'))));
      assert.equal(header['region.weight'].dtype, 'I8');
      assert.equal(header['lstm.weight_hh_l0'].dtype, 'I8');
      assert.notEqual(header['out.bias'].dtype, 'I8', 'biases stay float');
      const golden = JSON.parse(readFileSync(`${ROOT}models/${name}/golden.json`, 'utf8'));
      await int8Trio('visual-question-answering', path.join(dir, name), name, async (q, viaOption, f) => {
        let worst = { max: 0 };
        let scores = 0;
        let agree = 0;
        for (const c of golden.cases) {
          const img = readPpm(c.scene);
          const [a, b, x] = [await q(img, c.question), await viaOption(img, c.question), await f(img, c.question)];
          assert.equal(a.answer, b.answer, `${name} ${c.name}`);
          assertSameAsOption(a, b, `${name} ${c.name}`);
          agree += Number(a.answer === x.answer);
          for (let i = 0; i < a.scores.length; i++) scores = Math.max(scores, Math.abs(a.scores[i] - x.scores[i]));
          const shown = (res) => ({ attentions: res.attentions.filter((m) => /^(region|word)_attention$/.test(m.name)) });
          const d = mapDeviation(shown(a), shown(x), `${name} ${c.name}`);
          if (d.max > worst.max) worst = { ...d, at: c.name };
        }
        assert.ok(golden.cases.length >= 10);
        assert.ok(agree >= golden.cases.length - 1, `${name}: int8 answers as float32 on ${agree} of ${golden.cases.length}`);
        assert.ok(worst.max <= 0.1, `${name}: int8 maps differ from float32 by ${worst.max} (${worst.where}, ${worst.at})`);
        assert.ok(scores <= 0.25, `${name}: int8 answer scores differ from float32 by ${scores}`);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// pointer-sort ships int8 too (its MODEL_CARD.md: exact-order accuracy of both precisions): the int8 bundle is
// precision: 'int8', sorts every golden list (ties, one number, ±1e308, 15 and 20 numbers) as float32 does, and its
// pointer and encoder maps stay within 0.02 of float32 (measured 0.0069).
test('the int8 pointer-sort bundle equals precision: int8 and sorts the golden lists as float32 does', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-int8-pointer-'));
  try {
    const out = path.join(dir, 'pointer-sort');
    const r = quantizeBundle(`${ROOT}models/pointer-sort`, out);
    assert.ok(r.bytesOut < 0.4 * r.bytesIn, `weights ${r.bytesIn} -> ${r.bytesOut} bytes`);
    assert.deepEqual(checkManifest(out), []);
    const golden = JSON.parse(readFileSync(`${ROOT}models/pointer-sort/golden.json`, 'utf8'));
    await int8Trio('number-sorting', out, 'pointer-sort', async (q, viaOption, f) => {
      let worst = { max: 0 };
      for (const [i, c] of golden.cases.entries()) {
        const [a, b, x] = [await q(c.values), await viaOption(c.values), await f(c.values)];
        assert.deepEqual(a.order, b.order, `case ${i}`);
        assertSameAsOption(a, b, `case ${i}`);
        assert.deepEqual(a.order, x.order, `case ${i}: int8 sorts as float32`);
        assert.deepEqual(a.order, c.order, `case ${i}: the golden order`);
        const d = mapDeviation(a, x, `case ${i}`);
        if (d.max > worst.max) worst = { ...d, at: i };
      }
      assert.ok(worst.max <= 0.02, `int8 maps differ from float32 by ${worst.max} (${worst.where}, case ${worst.at})`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
