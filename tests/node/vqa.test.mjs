// The 'visual-question-answering' pipeline (wasm/pipelines/vqa.js over wasm/bindings_vqa.cpp) in the WASM engine,
// against the PyTorch goldens of both shipped bundles (models/shapes-vqa-coattn, models/shapes-vqa-aoa): the
// encoder's grid of each scene (encode), the VQA forward on PyTorch's grid (answerGrid: logits, count and every map
// within abs 1e-4 / rel 1e-3), the answer from the pixels; bad questions and images, options, and dispose().
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { pipeline, listTasks } from '../../wasm/index.js';
import { assertTensorClose, readSafetensors } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUNDLES = ['shapes-vqa-coattn', 'shapes-vqa-aoa'];
// written by models/training/vqa/export.py; a checkout without them skips the model tests
const skip = BUNDLES.every((b) => existsSync(`${ROOT}models/${b}/golden.json`)) ? false : 'shapes-vqa bundles not exported';

function readPpm(rel) {
  const buf = readFileSync(`${ROOT}${rel}`);
  const header = buf.subarray(0, 20).toString('latin1').split(/\s+/);
  const [w, h] = [Number(header[1]), Number(header[2])];
  return { data: new Uint8Array(buf.subarray(buf.length - w * h * 3)), width: w, height: h, channels: 3 };
}

test('listTasks names the visual-question-answering task and both models', () => {
  const t = listTasks().find((x) => x.task === 'visual-question-answering');
  assert.ok(t);
  assert.equal(t.defaultModel, 'shapes-vqa-coattn');
  assert.deepEqual(t.models, BUNDLES);
});

for (const name of BUNDLES) {
  test(`${name}: the pipeline matches the PyTorch goldens (logits, count, every map)`, { skip }, async () => {
    const dir = `${ROOT}models/${name}/`;
    const meta = JSON.parse(readFileSync(`${dir}golden.json`, 'utf8'));
    const g = readSafetensors(`${dir}golden.safetensors`);
    const vqa = await pipeline('visual-question-answering', name);
    assert.ok(meta.cases.length >= 8);
    for (const c of meta.cases) {
      const p = `${c.name}/`;
      const img = readPpm(c.scene);
      // the encoder: the engine's grid equals PyTorch's; the VQA forward on PyTorch's grid (the same input)
      const golden = g[c.grid];
      assertTensorClose({ dims: golden.dims, data: await vqa.encode(img) }, { dims: golden.dims, data: golden.data }, `${name} ${c.grid}`);
      const out = vqa.answerGrid(golden.data, c.question);
      assert.equal(out.answer, c.answer, `${name} ${c.name} answer`);
      assert.deepEqual(out.tokens, c.tokens);
      assert.deepEqual(Array.from(out.token_ids), c.token_ids);
      // end to end from the pixels: the same answer
      assert.equal((await vqa(img, c.question)).answer, c.answer, `${name} ${c.name} answer from the pixels`);
      assertTensorClose({ dims: [out.logits.length], data: out.logits }, g[`${p}logits`], `${name} ${c.name} logits`);
      assertTensorClose({ dims: [1], data: Float32Array.of(out.count) }, g[`${p}count`], `${name} ${c.name} count`);
      assert.equal(out.attentions.length, 2 * (c.maps.length - 1) + 1, `${name} ${c.name}: number of maps`);
      for (const m of out.attentions) {
        const key = `${p}${m.name}/${m.layer}`;
        assert.ok(g[key], `no golden for ${key}`);
        assertTensorClose({ dims: m.dims, data: m.data }, g[key], `${name} ${key}`);
      }
      // the relation readout's input is the question level's region-attention centroid minus the word level's,
      // in grid cells: recomputed here from the two returned maps
      const centre = (layer) => {
        const m = out.attentions.find((a) => a.name === 'region_attention' && a.layer === layer);
        let x = 0, y = 0;
        m.data.forEach((a, i) => { x += a * ((i % m.dims[1]) + 0.5); y += a * (Math.floor(i / m.dims[1]) + 0.5); });
        return [x, y];
      };
      const [sx, sy] = centre(1), [wx, wy] = centre(0);
      assert.ok(out.where instanceof Float32Array && out.where.length === 2, `${name} ${c.name}: where`);
      assert.ok(Math.abs(out.where[0] - (sx - wx)) < 1e-4 && Math.abs(out.where[1] - (sy - wy)) < 1e-4,
        `${name} ${c.name}: where ${out.where} against the maps' centroids ${[sx - wx, sy - wy]}`);
      const sum = out.scores.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5);
      assert.equal(out.answers[out.scores.indexOf(Math.max(...out.scores))], out.answer);
    }
    vqa.dispose();
  });
}

test('visual-question-answering: bad questions, images and options; the pipeline keeps working', { skip }, async () => {
  const vqa = await pipeline('vqa', 'shapes-vqa-aoa');
  const img = readPpm('tests/goldens/vqa/shapes-1.ppm');
  await assert.rejects(vqa(img, ''), /the question is empty/);
  await assert.rejects(vqa(img, '  ?? '.replace(/\?/g, ' ')), /the question is empty/);
  await assert.rejects(vqa(img, 'zebra giraffe quokka'), /none of the question's words/);
  await assert.rejects(vqa(img, 'circle '.repeat(200)), /more than 24 words/);
  await assert.rejects(vqa(img, 42), TypeError);
  await assert.rejects(vqa(img, null), TypeError);
  await assert.rejects(vqa(img, 'how many circles are there ?', { num_beams: 2 }), TypeError);
  await assert.rejects(vqa(img, 'how many circles are there ?', { output_attentions: 'yes' }), TypeError);
  await assert.rejects(vqa({ data: new Uint8Array(10), width: 2, height: 2 }, 'how many circles are there ?'), RangeError);
  await assert.rejects(vqa({ data: new Uint8Array(0), width: 0, height: 0 }, 'how many circles are there ?'), RangeError);
  await assert.rejects(vqa({ data: new Float32Array(16), width: 2, height: 2 }, 'how many circles are there ?'), TypeError);
  await assert.rejects(vqa({ data: new Uint8Array(4), width: NaN, height: 1 }, 'how many circles are there ?'), RangeError);
  const unknown = await vqa(img, 'what colour is the zebra square?');
  assert.deepEqual(unknown.unknown_words, [{ word: 'zebra', position: 4 }]);
  assert.equal(unknown.tokens[4], '<unk>');
  const off = await vqa(img, 'what colour is the square ?', { output_attentions: false });
  assert.equal(off.attentions.length, 0);
  const on = await vqa(img, 'what colour is the square ?');
  assert.deepEqual(Array.from(off.logits), Array.from(on.logits));
  vqa.dispose();
  assert.equal(vqa.disposed, true);
  await assert.rejects(vqa(img, 'what colour is the square ?'), /has been disposed/);
});
