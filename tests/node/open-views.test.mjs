// "Your model" without a browser: what the worker makes of a set of files (web/open-worker.js detect(): a converted
// bundle, a Hugging Face folder, or an error naming what is missing) and the pure functions from a result to the
// views (web/open-views.js): token labels per attention kind, the model view's blocks, the output lines (feature norms
// computed by hand) and the head statistics averaged per layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detect } from '../../web/open-worker.js';
import { labelsOf, layerStats, openBlocks, outputLines, showToken, tokenLists } from '../../web/open-views.js';

test('detect(): a converted bundle, a Hugging Face folder, and every other folder with its reason', () => {
  assert.equal(detect(['config.json', 'weights.safetensors'], '{"architecture": "hf-bert"}').kind, 'bundle');
  assert.equal(detect(['config.json', 'model.safetensors'], '{"model_type": "bert"}').kind, 'hf');
  assert.equal(detect(['config.json', 'pytorch_model.bin'], '{"model_type": "gpt2"}').kind, 'hf');
  const error = (names, text) => {
    const r = detect(names, text);
    assert.ok(r instanceof Error, `${names}: an error`);
    return r.message;
  };
  assert.match(error(['a.txt', 'b.txt'], ''), /^no config\.json among the 2 files \(a\.txt, b\.txt\)/);
  assert.match(error(['config.json'], '{oops'), /^config\.json is not valid JSON/);
  assert.match(error(['config.json'], '[1]'), /does not hold a JSON object/);
  assert.match(error(['config.json'], '{"architecture": "transformer-seq2seq"}'), /"transformer-seq2seq": this section opens converted/);
  assert.match(error(['config.json', 'tokenizer.json'], '{"model_type": "bert"}'), /without weights: it needs model\.safetensors/);
  assert.match(error(['config.json'], '{"name": "x"}'), /neither "architecture".*nor "model_type"/);
});

test('token labels: word pieces shown, each attention kind on its own sequences, ViT patches', () => {
  assert.deepEqual(['Ġthe', '▁Hund', '##ing', '[CLS]'].map(showToken), ['the', 'Hund', '-ing', '[CLS]']);
  const mt = tokenLists({ source_tokens: ['▁Ein', '</s>'], target_tokens: ['▁A', '</s>'] });
  assert.deepEqual(mt, { src: ['Ein', '</s>'], tgt: ['A', '</s>'] });
  assert.deepEqual(labelsOf('cross', 2, 2, mt), { rowLabels: ['A', '</s>'], colLabels: ['Ein', '</s>'] });
  assert.deepEqual(labelsOf('decoder_self', 2, 2, mt), { rowLabels: ['A', '</s>'], colLabels: ['A', '</s>'] });
  assert.deepEqual(labelsOf('encoder_self', 2, 2, mt), { rowLabels: ['Ein', '</s>'], colLabels: ['Ein', '</s>'] });
  assert.deepEqual(labelsOf('self-attention', 3, 3, { src: [], tgt: [] }).colLabels, ['[CLS]', 'patch 1', 'patch 2']);
});

test('openBlocks(): one block per kind, layers in order, one map per head with its labels', () => {
  const map = (name, layer, head) => ({ name, layer, head, dims: [2, 2], data: Float32Array.of(1, 0, 0.5, 0.5) });
  const out = { tokens: ['[CLS]', 'hi'], attentions: [map('self-attention', 1, 0), map('self-attention', 0, 1), map('self-attention', 0, 0)] };
  const [b, ...rest] = openBlocks(out);
  assert.equal(rest.length, 0);
  assert.equal(b.self, true);
  assert.deepEqual(b.layers.map((l) => [l.layer, l.maps.length]), [[0, 2], [1, 1]]);
  assert.deepEqual(b.layers[0].maps[0].rowLabels, ['[CLS]', 'hi']);
});

test('outputLines(): labels with scores, generated text, and each token\'s feature norm', () => {
  assert.deepEqual(outputLines('text-classification', { label: 'POS', score: 0.75, scores: [{ label: 'POS', score: 0.75 }, { label: 'NEG', score: 0.25 }] }),
    ['POS (75.0%)', 'POS: 75.0%', 'NEG: 25.0%']);
  const f = outputLines('feature-extraction', { tokens: ['a', 'b'], dims: Int32Array.of(2, 2), features: Float32Array.of(3, 4, 0, 1) });
  assert.deepEqual(f, ['2 × 2 features; the norm of each token\'s vector:', 'a 5.00 · b 1.00']);
  assert.equal(outputLines('text-generation', { generated_text: 'Hi there', new_ids: Int32Array.of(7), stopped: 'eos' })[0], 'Hi there');
});

test('layerStats(): each statistic averaged over a layer\'s heads, what does not apply stays null', () => {
  const stats = (entropy, eos) => ({ entropy, distance: 1, diagonal: 0.5, previous: 0, eos, punct: null });
  const rows = layerStats([
    { name: 'self-attention', layer: 0, stats: stats(1, null) }, { name: 'self-attention', layer: 0, stats: stats(2, null) },
    { name: 'self-attention', layer: 1, stats: stats(4, 0.5) },
  ]);
  assert.equal(rows.length, 1);
  assert.deepEqual(rows[0].rows.map((r) => [r.layer, r.stats.entropy, r.stats.eos, r.stats.punct]), [[0, 1.5, null, null], [1, 4, 0.5, null]]);
});
