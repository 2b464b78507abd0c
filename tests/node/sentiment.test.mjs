// The 'sentiment-analysis' pipeline (wasm/pipelines/sentiment.js over wasm/bindings_sentiment.cpp): the golden
// sentences of both SST-2 bundles through the WASM engine against PyTorch (models/sst2-*/golden.{json,safetensors}:
// tokens, label, score, probabilities and the attention map within abs 1e-4), attention dims and row sums, raw text
// tokenization with visible <unk>, bad input, options and dispose().
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { pipeline } from '../../wasm/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODELS = ['sst2-selfattn', 'sst2-relation'];
const TOL = 1e-4;

// Minimal safetensors reader for the goldens (F32 tensors only): 8-byte LE header length, JSON header, data.
function readSafetensors(path) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const start = 8 + n;
  const out = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    assert.equal(info.dtype, 'F32', `${path}: ${name} is not F32`);
    const [b, e] = info.data_offsets;
    const bytes = buf.subarray(start + b, start + e);
    const data = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(data.buffer).set(bytes);
    out[name] = { dims: info.shape, data };
  }
  return out;
}

function loadGolden(name) {
  return {
    json: JSON.parse(readFileSync(`${ROOT}models/${name}/golden.json`, 'utf8')),
    tensors: readSafetensors(`${ROOT}models/${name}/golden.safetensors`),
  };
}

function assertClose(actual, expected, label) {
  assert.equal(actual.length, expected.length, `${label}: length`);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  assert.ok(worst <= TOL, `${label}: max |diff| ${worst} at ${at} (got ${actual[at]}, golden ${expected[at]})`);
}

function assertAttentionMap(map, tokens, name) {
  assert.equal(map.name, name);
  assert.equal(map.dims.length, 2);
  assert.equal(map.dims[1], tokens.length, 'columns = tokens');
  if (name === 'pair-attention') assert.equal(map.dims[0], tokens.length, 'T × T');
  assert.ok(map.data instanceof Float32Array);
  const [rows, cols] = map.dims;
  assert.equal(map.data.length, rows * cols);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let c = 0; c < cols; c++) {
      const v = map.data[r * cols + c];
      assert.ok(v >= 0 && v <= 1, `weight ${v} outside [0, 1]`);
      sum += v;
    }
    assert.ok(Math.abs(sum - 1) < 1e-5, `row ${r} sums to ${sum}`);
  }
}

const classifiers = {};
test.before(async () => {
  for (const name of MODELS) classifiers[name] = await pipeline('sentiment-analysis', name);
});
test.after(() => {
  for (const c of Object.values(classifiers)) c.dispose();
});

for (const name of MODELS) {
  test(`${name}: the 8 golden sentences match PyTorch (tokens, label, score, probabilities, attention)`, async () => {
    const clf = classifiers[name];
    assert.equal(clf.task, 'sentiment-analysis');
    assert.equal(clf.model, name);
    assert.deepEqual(clf.labels, ['NEGATIVE', 'POSITIVE']);
    const { json, tensors } = loadGolden(name);
    assert.equal(json.cases.length, 8);
    for (const [i, c] of json.cases.entries()) {
      const out = await clf(c.text);
      assert.deepEqual(out.tokens, c.tokens, `case ${i} tokens`);
      assert.deepEqual([...out.ids], c.ids, `case ${i} ids`);
      assert.equal(out.label, c.label_name, `case ${i} label`);
      assert.ok(Math.abs(out.score - c.score) <= TOL, `case ${i} score ${out.score} vs ${c.score}`);
      assertClose(out.probabilities, tensors[`case${i}/probabilities`].data, `case ${i} probabilities`);
      assert.equal(out.attentions.length, 1);
      const map = out.attentions.at(0);
      assert.deepEqual(map.dims, c.attention_dims, `case ${i} attention dims`);
      assert.deepEqual(map.dims, tensors[`case${i}/attention`].dims);
      assertAttentionMap(map, out.tokens, c.attention_name);
      assertClose(map.data, tensors[`case${i}/attention`].data, `case ${i} attention`);
      assert.equal(out.truncated, false);
    }
  });
}

test('default model is sst2-selfattn; raw text is tokenized the SST-2 way and unknown words show as <unk>', async () => {
  const clf = await pipeline('sentiment-analysis');
  try {
    assert.equal(clf.model, 'sst2-selfattn');
    const { json, tensors } = loadGolden('sst2-selfattn');
    const out = await clf('It\u2019s a charming and often affecting journey.');
    assert.deepEqual(out.tokens, json.cases[0].tokens);
    assertClose(out.probabilities, tensors['case0/probabilities'].data, 'raw case 0');
    const unk = await clf("The plot is zorblaxian and the acting isn't quxotic at all.");
    assert.deepEqual(unk.tokens, json.cases[7].tokens);
    assert.equal(unk.tokens[3], '<unk>');
    assert.equal(unk.label, 'NEGATIVE');
    // Arrays in, arrays out.
    const many = await clf(['terrific', 'unflinchingly bleak and desperate']);
    assert.equal(many.length, 2);
    assert.equal(many[0].label, 'POSITIVE');
    assert.equal(many[1].label, 'NEGATIVE');
  } finally {
    clf.dispose();
  }
});

test('bad input: empty text is a clear Error; punctuation, emoji, invalid UTF-8, 10,000 words give results', async () => {
  for (const name of MODELS) {
    const clf = classifiers[name];
    for (const empty of ['', '   ', '\n\t']) {
      await assert.rejects(clf(empty), /empty input/, `${name}: ${JSON.stringify(empty)}`);
    }
    const check = (out, label) => {
      assert.ok(out.label === 'POSITIVE' || out.label === 'NEGATIVE', label);
      assert.ok(out.score >= 0.5 && out.score <= 1, label);
      assert.ok(Math.abs(out.probabilities[0] + out.probabilities[1] - 1) < 1e-5, label);
      assert.ok(out.tokens.length > 0, label);
      assertAttentionMap(out.attentions.at(0), out.tokens, name === 'sst2-selfattn' ? 'self-attention' : 'pair-attention');
    };
    const punct = await clf('...!!!');
    check(punct, 'punctuation');
    assert.equal(punct.tokens[0], '...');
    const emoji = await clf('😀🎬 great movie 👍');
    check(emoji, 'emoji');
    assert.equal(emoji.tokens[0], '<unk>');
    assert.ok(emoji.tokens.includes('great'));
    check(await clf('lone surrogate \uD800 here'), 'lone surrogate');
    // Ill-formed UTF-8 bytes (a stray continuation byte, a cut sequence, an encoded surrogate, 0xFF).
    const bytes = new Uint8Array([0xff, 0x20, 0x67, 0x6f, 0x6f, 0x64, 0x20, 0xc3, 0x20, 0x80, 0xed, 0xa0, 0x80, 0x20, 0x2e]);
    const inv = await clf(bytes);
    check(inv, 'invalid UTF-8');
    assert.ok(inv.tokens.includes('good'));
    assert.equal(inv.tokens[0], '<unk>');
    const long = await clf(Array.from({ length: 10000 }, (_, i) => ['good', 'bad', 'film'][i % 3]).join(' '));
    check(long, '10,000 words');
    assert.equal(long.truncated, true);
    assert.equal(long.num_input_tokens, 257);  // tokenization stops one token past max_tokens
    assert.equal(long.tokens.length, 256);
    assert.equal(long.attentions.at(0).dims[1], 256);
    await assert.rejects(clf(42), TypeError);
    await assert.rejects(clf(null), TypeError);
  }
});

test('options: output_attentions, max_tokens, unknown names are TypeErrors', async () => {
  const clf = classifiers['sst2-relation'];
  const quiet = await clf('a fine film', { output_attentions: false });
  assert.equal(quiet.attentions.length, 0);
  await assert.rejects(clf('a fine film', { num_beams: 2 }), (e) => e instanceof TypeError && /num_beams/.test(e.message));
  await assert.rejects(clf('a fine film', { output_attentions: 'yes' }), TypeError);
  const short = await pipeline('sentiment-analysis', 'sst2-relation', { max_tokens: 4 });
  try {
    const out = await short('one two three four five six');
    assert.equal(out.truncated, true);
    assert.deepEqual(out.attentions.at(0).dims, [4, 4]);
    assert.equal(short.maxTokens, 4);
  } finally {
    short.dispose();
  }
  await assert.rejects(pipeline('sentiment-analysis', 'sst2-relation', { max_tokens: 0 }), RangeError);
  await assert.rejects(pipeline('sentiment-analysis', 'sst2-relation', { top_k: 2 }),
    (e) => e instanceof TypeError && /top_k/.test(e.message));
});

test('a corrupt bundle is a clear Error, not a crash', async () => {
  const config = JSON.parse(readFileSync(`${ROOT}models/sst2-selfattn/config.json`, 'utf8'));
  const weights = readFileSync(`${ROOT}models/sst2-selfattn/weights.safetensors`);
  const vocab = readFileSync(`${ROOT}models/sst2-selfattn/vocab.txt`);
  const bundle = (w, cfg = config) => ({
    name: 'broken', config: cfg, configText: JSON.stringify(cfg),
    files: { 'weights.safetensors': new Uint8Array(w), 'vocab.txt': new Uint8Array(vocab) },
  });
  await assert.rejects(pipeline('sentiment-analysis', bundle(weights.subarray(0, weights.length >> 1))), Error);
  await assert.rejects(pipeline('sentiment-analysis', bundle(weights, { ...config, hops: 5 })), /ws2\.weight|fc\.weight/);
  // The intact bundle object works.
  const ok = await pipeline('sentiment-analysis', bundle(weights));
  assert.equal((await ok('terrific')).label, 'POSITIVE');
  ok.dispose();
});

test('dispose() frees the engine; later calls throw a clear Error', async () => {
  const clf = await pipeline('sentiment-analysis', 'sst2-relation');
  assert.equal((await clf('terrific')).label, 'POSITIVE');
  clf.dispose();
  assert.equal(clf.disposed, true);
  await assert.rejects(clf('terrific'), /disposed/);
  clf.dispose(); // a second dispose is harmless
});
