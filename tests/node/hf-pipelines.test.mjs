// Converted Hugging Face bundles through pipeline(): the committed fixtures tests/fixtures/hf/<fixture>/bundle (the
// converter's output) give the goldens tests/goldens/hf/<fixture>.{json,safetensors} (PyTorch references,
// models/training/hf/): GPT-2's greedy generations id for id; BERT's and DistilBERT's logits or last hidden state;
// every attention map (every layer × head, as AttentionMaps) within the goldens' tolerance (MarianMT and ViT: see
// their tests below). Runs on the converted models' module
// (wasm/dist/attnlens-hf.*, initHf()), which pipeline() loads for any bundle whose architecture starts with "hf-".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pipeline } from '../../wasm/index.js';
import { floatValues, parseSafetensors } from '../../wasm/convert/safetensors.js';
import { qkError } from './helpers.mjs';

const root = new URL('../../', import.meta.url);
const bundleDir = (name) => fileURLToPath(new URL(`tests/fixtures/hf/${name}/bundle/`, root));

function golden(name) {
  const json = JSON.parse(readFileSync(new URL(`tests/goldens/hf/${name}.json`, root), 'utf8'));
  const st = parseSafetensors(new Uint8Array(readFileSync(new URL(`tests/goldens/hf/${name}.safetensors`, root))));
  const tensor = (key) => {
    const entry = st.header[key];
    assert.ok(entry, `golden ${name} lacks ${key}`);
    return { shape: entry.shape, data: floatValues(entry, st.data) };
  };
  return { json, tensor };
}

// Every head of golden `key` ([heads, rows, cols]) against the pipeline's map `kind` of that layer, within `tol`.
function assertLayerMaps(maps, kind, layer, g, tol, what) {
  const [heads, rows, cols] = g.shape;
  for (let h = 0; h < heads; h++) {
    const m = maps.get(kind, { layer, head: h });
    assert.ok(m, `${what}: no ${kind} map for layer ${layer} head ${h}`);
    assert.deepEqual(m.dims, [rows, cols], `${what}: ${kind} layer ${layer} head ${h} dims`);
    let worst = 0;
    for (let i = 0; i < rows * cols; i++) worst = Math.max(worst, Math.abs(m.data[i] - g.data[h * rows * cols + i]));
    assert.ok(worst <= tol, `${what}: ${kind} layer ${layer} head ${h} differs by ${worst} (tolerance ${tol})`);
  }
}

for (const name of ['gpt2-tiny', 'gpt2-small']) {
  test(`text-generation ${name}: greedy ids and every attention map equal the PyTorch goldens`, async () => {
    const { json, tensor } = golden(name);
    const generate = await pipeline('text-generation', bundleDir(name));
    try {
      const hf = generate.config.hf_config;
      assert.equal(generate.task, 'text-generation');
      for (const g of json.generations) {
        const out = await generate(Int32Array.from(g.prompt_ids), { max_new_tokens: g.max_new_tokens });
        assert.deepEqual(Array.from(out.prompt_ids), g.prompt_ids);
        assert.deepEqual(Array.from(out.new_ids), g.output_ids, `${name}: greedy ids after ${g.prompt_ids}`);
        assert.equal(typeof out.generated_text, 'string');
      }
      for (const [c, kase] of json.cases.entries()) {
        // One new id: the maps cover exactly the prompt, as the goldens' full forward of the same ids.
        const out = await generate({ input_ids: kase.input_ids }, { max_new_tokens: 1 });
        assert.equal(out.attentions.length, hf.n_layer * hf.n_head, `${name}: one map per layer × head`);
        for (let l = 0; l < hf.n_layer; l++) {
          assertLayerMaps(out.attentions, 'self-attention', l, tensor(`case${c}/attention.${l}`), json.tolerance.abs,
            `${name} case ${c}`);
        }
        const quiet = await generate({ input_ids: kase.input_ids }, { max_new_tokens: 1, output_attentions: false });
        assert.equal(quiet.attentions.length, 0);
      }
      // Text in: the bundle's byte-level BPE; the generated text starts with the prompt.
      const text = await generate('hello world', { max_new_tokens: 3 });
      assert.ok(text.generated_text.startsWith('hello world'), text.generated_text);
      assert.ok(text.new_ids.length >= 1 && text.new_ids.length <= 3);
      await assert.rejects(generate('x', { max_new_tokens: 0 }), RangeError);
      await assert.rejects(generate('x', { temperature: 1 }), TypeError);
      await assert.rejects(generate(42), TypeError);
      await assert.rejects(generate('x', { do_sample: true }), /do_sample/);
    } finally {
      generate.dispose();
    }
  });
}

// MarianMT: the goldens are on random ids, which do not come back from any text through the tokenizer (a piece
// without ▁ at a word start, …), so the pipeline, which takes text, is checked here for what text allows: the
// translation module's contract over the converted bundle — every map of every layer × head with its dims, rows
// summing to 1, causal decoder maps, greedy decoding equal to forced decoding of its own output. Id and map parity
// with PyTorch is tests/cpp/test_model_hf_decoders.cpp's (the same engine code, natively and in the WASM ctest).
for (const name of ['marian-tiny', 'marian-small']) {
  test(`translation ${name} (converted MarianMT): every map of every layer × head, greedy = forced decoding`, async () => {
    const translate = await pipeline('translation', bundleDir(name));
    try {
      const hf = translate.config.hf_config;
      const out = await translate('▁Spiel outdoor stand who old Holz', { num_beams: 1, max_new_tokens: 12 });
      const S = out.source_ids.length;
      const T = out.target_ids.length;
      assert.ok(S > 1 && T >= 1 && T <= 12, `${name}: ${S} source, ${T} target ids`);
      assert.equal(out.attentions.length, hf.encoder_layers * hf.encoder_attention_heads +
        2 * hf.decoder_layers * hf.decoder_attention_heads);
      const dims = { encoder_self: [S, S], decoder_self: [T, T], cross: [T, S] };
      for (const m of out.attentions) {
        assert.deepEqual(m.dims, dims[m.name], `${name}: ${m.name} ${m.layer}/${m.head}`);
        for (let r = 0; r < m.dims[0]; r++) {
          const row = m.data.subarray(r * m.dims[1], (r + 1) * m.dims[1]);
          assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-4, `${name}: ${m.name} row ${r} sums to 1`);
          if (m.name === 'decoder_self') assert.ok(row.subarray(r + 1).every((v) => v === 0), 'causal');
        }
      }
      // Forced decoding of the greedy output's own ids (through its pieces) gives the same maps.
      const forced = await translate.align('▁Spiel outdoor stand who old Holz', out.text);
      if (forced.target_ids.join() === out.target_ids.join()) {
        for (const m of out.attentions) {
          const f = forced.attentions.get(m.name, { layer: m.layer, head: m.head });
          const worst = m.data.reduce((w, v, i) => Math.max(w, Math.abs(v - f.data[i])), 0);
          assert.ok(worst < 1e-4, `${name}: ${m.name} ${m.layer}/${m.head} greedy vs forced differ by ${worst}`);
        }
      }
    } finally {
      translate.dispose();
    }
  });
}

test('converted bundles: the wrong task, and tasks not run yet, are clear errors', async () => {
  await assert.rejects(pipeline('translation', bundleDir('gpt2-tiny')), /is a text-generation model, not translation/);
  await assert.rejects(pipeline('text-generation', bundleDir('marian-tiny')), /is a translation model, not text-generation/);
  await assert.rejects(pipeline('text-generation'), /no bundled model/);
});

// Largest |a − b| over two equal-length arrays.
const maxDiff = (a, b) => {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
};
const layersOf = (hf) => hf.num_hidden_layers ?? hf.n_layers;
const headsOf = (hf) => hf.num_attention_heads ?? hf.n_heads;

// BERT and DistilBERT: the goldens' ids in, logits (classifiers) or the last hidden state (base models) and every
// layer × head map out, equal to PyTorch's within the goldens' tolerance.
for (const name of ['bert-tiny', 'bert-small', 'distilbert-tiny', 'distilbert-small']) {
  test(`${name}: the encoder pipeline's outputs and every attention map equal the PyTorch goldens`, async () => {
    const { json, tensor } = golden(name);
    const classifier = Array.isArray(json.labels);
    const run = await pipeline(classifier ? 'text-classification' : 'feature-extraction', bundleDir(name));
    try {
      const hf = run.config.hf_config;
      if (classifier) assert.deepEqual(run.labels, json.labels);
      for (const [c, kase] of json.cases.entries()) {
        const out = await run({ input_ids: kase.input_ids });
        assert.deepEqual(Array.from(out.ids), kase.input_ids);
        if (classifier) {
          const logits = tensor(`case${c}/logits`).data;
          assert.ok(maxDiff(out.logits, logits) <= json.tolerance.abs, `${name} case ${c}: logits`);
          const best = logits.indexOf(Math.max(...logits));
          assert.equal(out.label, json.labels[best]);
          assert.equal(out.scores.length, json.labels.length);
          assert.ok(Math.abs(out.scores.reduce((s, x) => s + x.score, 0) - 1) < 1e-6);
        } else {
          const g = tensor(`case${c}/last_hidden_state`);
          assert.deepEqual(Array.from(out.dims), g.shape);
          assert.ok(maxDiff(out.features, g.data) <= json.tolerance.abs, `${name} case ${c}: last hidden state`);
        }
        assert.equal(out.attentions.length, layersOf(hf) * headsOf(hf), `${name}: one map per layer × head`);
        for (let l = 0; l < layersOf(hf); l++) {
          assertLayerMaps(out.attentions, 'self-attention', l, tensor(`case${c}/attention.${l}`), json.tolerance.abs,
            `${name} case ${c}`);
        }
      }
      // Text in: the bundle's WordPiece tokenizer ([CLS] … [SEP]); output_attentions false leaves the maps out.
      const text = await run('a fine film', { output_attentions: false });
      assert.ok(text.tokens.length >= 3 && text.ids.length === text.tokens.length, text.tokens.join(' '));
      assert.equal(text.attentions.length, 0);
      const both = await run(['a fine film', { input_ids: Array.from(text.ids) }]);
      assert.equal(both.length, 2);
      assert.deepEqual(Array.from(both[1].ids), Array.from(text.ids));
      await assert.rejects(run(42), TypeError);
      await assert.rejects(run('x', { num_beams: 2 }), TypeError);
    } finally {
      run.dispose();
    }
  });
}

// ViT: the goldens start from pixel values, which no 8-bit image reproduces exactly, so the pipeline is checked
// for what an image allows (the engine's parity with PyTorch is tests/cpp/test_model_hf_encoders.cpp): one map per
// layer × head of [N + 1, N + 1] whose rows sum to 1, probabilities that sum to 1 with the label of the largest
// logit, the same logits on a second call.
test('vit-tiny: image-classification over an image, every layer × head map', async () => {
  const classify = await pipeline('image-classification', bundleDir('vit-tiny'));
  try {
    const hf = classify.config.hf_config;
    const side = hf.image_size;
    const patches = (side / hf.patch_size) ** 2;
    const data = new Uint8Array(side * side * 4);
    for (let i = 0; i < data.length; i++) data[i] = (i * 37 + 11) % 256;
    for (let i = 3; i < data.length; i += 4) data[i] = 255;
    const out = await classify({ data, width: side, height: side, channels: 4 });
    assert.deepEqual(classify.labels, classify.config.labels);
    assert.equal(out.logits.length, classify.labels.length);
    assert.equal(out.label, classify.labels[out.logits.indexOf(Math.max(...out.logits))]);
    assert.ok(Math.abs(out.scores.reduce((s, x) => s + x.score, 0) - 1) < 1e-6);
    assert.equal(out.attentions.length, layersOf(hf) * headsOf(hf));
    for (const m of out.attentions) {
      assert.deepEqual(m.dims, [patches + 1, patches + 1]);
      for (let r = 0; r < patches + 1; r++) {
        let sum = 0;
        for (let j = 0; j < patches + 1; j++) sum += m.data[r * (patches + 1) + j];
        assert.ok(Math.abs(sum - 1) < 1e-5, `row ${r} sums to ${sum}`);
      }
    }
    const again = await classify({ data, width: side, height: side, channels: 4 }, { output_attentions: false });
    assert.deepEqual(Array.from(again.logits), Array.from(out.logits));
    assert.equal(again.attentions.length, 0);
    await assert.rejects(classify('no such file.png'), /image-classification/);
  } finally {
    classify.dispose();
  }
  // A base ViT (no head) is not an image classifier; features of ViT are not a pipeline yet.
  await assert.rejects(pipeline('image-classification', bundleDir('vit-small')), /feature-extraction model/);
  await assert.rejects(pipeline('feature-extraction', bundleDir('vit-small')), /hf-bert, hf-distilbert/);
});

// output_qk through pipeline() for every task of the converted models: `qk` holds '<kind>.query' / '<kind>.key' per
// layer and head of every map, and the maps are softmax(q·kᵀ/√d_head) of them (GPT-2's and Marian's decoder rows
// causal); without the option there is no `qk`; with output_attentions false the vectors still come.
test('converted bundles: output_qk gives the query/key vectors behind every map, for every task', async () => {
  const image = { data: new Uint8Array(16 * 16 * 3).map((_, i) => (i * 37 + 11) % 256), width: 16, height: 16, channels: 3 };
  const runs = [
    ['text-generation', 'gpt2-tiny', 'hello world', { max_new_tokens: 5 }, ['self-attention']],
    ['text-generation', 'gpt2-small', { input_ids: [349, 946, 757, 841] }, { max_new_tokens: 6 }, ['self-attention']],
    ['translation', 'marian-tiny', '▁Spiel outdoor stand who old Holz', { num_beams: 1, max_new_tokens: 8 }, ['decoder_self']],
    ['translation', 'marian-small', '▁Spiel outdoor stand who old Holz', { num_beams: 3, max_new_tokens: 8 }, ['decoder_self']],
    ['text-classification', 'bert-tiny', 'a fine film', {}, []],
    ['text-classification', 'distilbert-tiny', 'a fine film', {}, []],
    ['feature-extraction', 'bert-small', 'a fine film', {}, []],
    ['feature-extraction', 'distilbert-small', 'a fine film', {}, []],
    ['image-classification', 'vit-tiny', image, {}, []],
  ];
  for (const [task, name, input, options, causal] of runs) {
    const run = await pipeline(task, bundleDir(name));
    try {
      assert.equal((await run(input, options)).qk, undefined, `${name}: no qk unless asked`);
      const out = await run(input, { ...options, output_qk: true });
      assert.ok(out.attentions.length > 0);
      assert.equal(out.qk.length, 2 * out.attentions.length, `${name}: a query and a key set per map`);
      const kinds = new Set(out.attentions.map((m) => m.name));
      for (const kind of kinds) assert.ok(out.qk.find((m) => m.name === `${kind}.query`), `${name}: ${kind}.query`);
      const err = qkError(out, causal);
      assert.ok(err < 1e-5, `${name} (${task}): maps from qk differ by ${err}`);
      if (task !== 'translation') {
        const bare = await run(input, { ...options, output_qk: true, output_attentions: false });
        assert.equal(bare.attentions.length, 0);
        assert.equal(bare.qk.length, out.qk.length, `${name}: qk without the maps`);
      }
      await assert.rejects(run(input, { ...options, output_qk: 'yes' }), TypeError);
    } finally {
      run.dispose();
    }
  }
});
