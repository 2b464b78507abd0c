// Word alignments through the package: translate.align(source, target) — forced decoding — against PyTorch teacher
// forcing of the reference (models/<name>/golden.{json,safetensors}), words with string indices, links, options and
// bad input. The same checks run natively and in WASM in tests/cpp/test_word_alignment.cpp.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { pipeline } from '../../wasm/index.js';
import { qkError, readSafetensors } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODELS = ['de-en-transformer', 'de-en-rnn-general', 'de-en-rnn-additive'];

for (const name of MODELS) {
  test(`${name}: align() of the golden references equals PyTorch teacher forcing (every map ≤ 1e-4)`, async () => {
    const golden = JSON.parse(readFileSync(`${ROOT}models/${name}/golden.json`, 'utf8'));
    const st = readSafetensors(`${ROOT}models/${name}/golden.safetensors`);
    const translate = await pipeline('translation', name);
    try {
      let compared = 0;
      for (const c of golden.cases.slice(0, 5)) {
        const r = await translate.align(c.source, c.reference);
        assert.deepEqual([...r.target_ids], c.target_out_ids, c.name);
        assert.equal(r.token_logprobs.length, r.target_ids.length);
        assert.ok(r.score < 0 && Math.abs(r.score - r.token_logprobs.reduce((a, b) => a + b, 0)) < 1e-3);
        for (const a of c.attentions) {
          const g = st[a.key];
          const heads = g.dims.length === 3 ? g.dims[0] : 1;
          const cells = g.data.length / heads;
          for (let h = 0; h < heads; h++) {
            const m = r.attentions.find((x) => x.name === a.name && (heads === 1 || (x.layer === a.layer && x.head === h)));
            assert.ok(m, `${c.name}: no map ${a.name} layer ${a.layer} head ${h}`);
            assert.equal(m.data.length, cells);
            let worst = 0;
            for (let k = 0; k < cells; k++) worst = Math.max(worst, Math.abs(m.data[k] - g.data[h * cells + k]));
            assert.ok(worst <= 1e-4, `${c.name} ${a.key} head ${h}: max |diff| ${worst}`);
            compared++;
          }
        }
        // Words point into the two texts; the links name words that exist.
        for (const w of r.source_words) assert.equal(c.source.slice(w.start, w.end), w.text);
        for (const w of r.target_words) assert.equal(c.reference.slice(w.start, w.end), w.text);
        assert.ok(r.alignment.length > 0);
        for (const [s, t] of r.alignment) {
          assert.ok(s >= 0 && s < r.source_words.length && t >= 0 && t < r.target_words.length);
        }
        assert.deepEqual(r.alignment_map.dims, [r.target_words.length, r.source_words.length]);
      }
      assert.ok(compared >= 5);
    } finally {
      translate.dispose();
    }
  });
}

test('words: umlauts, hyphens, German quotes, an emoji outside the vocabulary — string indices into the input', async () => {
  const translate = await pipeline('translation', 'de-en-transformer');
  try {
    const source = '„Das T-Shirt 🐶 ist grün.“';
    const r = await translate.align(source, 'The T-shirt is green.', { alignment_extraction: 'argmax' });
    assert.deepEqual(r.source_words.map((w) => [w.text, w.start, w.end]), [
      ['„', 0, 1], ['Das', 1, 4], ['T', 5, 6], ['-', 6, 7], ['Shirt', 7, 12], ['<unk>', 13, 15], ['ist', 16, 19],
      ['grün', 20, 24], ['.', 24, 25], ['“', 25, 26]]);
    assert.deepEqual(r.target_words.map((w) => w.text), ['The', 'T', '-', 'shirt', 'is', 'green', '.']);
    assert.equal(r.alignment.length, r.target_words.length); // argmax: one link per target word
    // A translation carries words and links too, and word_maps merges every map.
    const t = await translate('Ein Mann fährt mit dem Fahrrad über eine Brücke.', { word_maps: true });
    assert.ok(t.alignment.length > 0);
    assert.equal(t.word_attentions.length, t.attentions.length);
    for (const w of t.target_words) assert.equal(t.text.slice(w.start, w.end), w.text);
    const cross = t.word_attentions.find((m) => m.name === 'cross');
    assert.deepEqual(cross.dims, [t.target_words.length, t.source_words.length]);
  } finally {
    translate.dispose();
  }
});

test('align(): bad input gives a clear Error and the pipeline keeps working', async () => {
  const translate = await pipeline('translation', 'de-en-transformer');
  try {
    await assert.rejects(translate.align('Ein Hund.', ''), /target text is empty/);
    await assert.rejects(translate.align('', 'A dog.'), /source text is empty/);
    await assert.rejects(translate.align('Ein Hund.', 'dog '.repeat(400)), /decoder takes at most/);
    await assert.rejects(translate.align('Ein Hund.', 42), TypeError);
    await assert.rejects(translate.align(null, 'A dog.'), TypeError);
    await assert.rejects(translate.align('Ein Hund.', 'A dog.', { alignment_method: 'best' }), TypeError);
    await assert.rejects(translate.align('Ein Hund.', 'A dog.', { alignment_layer: 9 }), /alignment layer/);
    await assert.rejects(translate.align('Ein Hund.', 'A dog.', { alignment_method: 'head' }), /no trained alignment head/);
    const ok = await translate.align('Ein Hund.', 'A dog.');
    assert.equal(ok.target_words.length, 3);
  } finally {
    translate.dispose();
  }
});

test('output_qk: the query/key vectors behind every map (neuron view), translate and align, in WASM', async () => {
  const translate = await pipeline('translation', 'de-en-transformer');
  try {
    const src = 'Ein Mann fährt mit dem Fahrrad über eine Brücke.';
    assert.equal((await translate(src)).qk, undefined); // off by default
    for (const num_beams of [1, 4]) {
      const r = await translate(src, { output_qk: true, num_beams });
      assert.equal(r.qk.length, 2 * r.attentions.length);
      assert.ok(qkError(r) < 1e-5, `beam ${num_beams}: ${qkError(r)}`);
    }
    const a = await translate.align(src, 'A man rides a bike over a bridge.', { output_qk: true });
    assert.ok(qkError(a) < 1e-5);
    // Several sentences: each sentence carries its own vectors.
    const two = await translate('Ein Hund rennt. Eine Frau lacht.', { output_qk: true });
    assert.equal(two.sentences.length, 2);
    for (const s of two.sentences) assert.ok(qkError(s) < 1e-5);
    await assert.rejects(translate(src, { output_qk: 'yes' }), TypeError);
  } finally {
    translate.dispose();
  }
  const rnn = await pipeline('translation', 'de-en-rnn-additive');
  try {
    await assert.rejects(rnn('Ein Hund.', { output_qk: true }), /output_qk/);
    assert.ok((await rnn('Ein Hund.')).text.length > 0); // and the pipeline keeps working
  } finally {
    rnn.dispose();
  }
});
