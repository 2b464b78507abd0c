// The Hugging Face converter (wasm/convert/, `npx attnlens convert`; docs/DESIGN.md §5 "Converted bundles"), on the
// tiny folders of tests/fixtures/convert/ (make_folders.py: random weights, written by Python/torch here):
// - each converts; the bundle holds exactly the tensors of expected/<name>.safetensors (canonical names, float32,
//   written by the Python script by its own rules) with the same values; config, tokenizer, manifest and card as
//   DESIGN §5 defines them; a folder path and a map of files give the same bytes;
// - --int8 is scripts/quantize.mjs's rule: the same tensors as quantizing the float bundle;
// - every error path (config, options, weights files, pickle, tokenizer files, ViT preprocessing) rejects with a
//   message naming the file and key, and the CLI leaves no folder behind;
// - the committed tests/fixtures/hf/*/bundle/ are the converter's output, byte for byte (scripts/convert-fixtures.mjs).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { convert } from '../../wasm/index.js';
import { ConvertError } from '../../wasm/convert/index.js';
import { floatValues, parseSafetensors, writeSafetensors } from '../../wasm/convert/safetensors.js';
import { parseManifest } from '../../wasm/models.js';
import { quantizeBundle } from '../../scripts/quantize.mjs';
import { sentencePieceToTokenizerJson } from '../../wasm/convert/sentencepiece.js';
import { convertTokenizer } from '../../wasm/convert/tokenizer.js';
import { checkFixture, fixtureNames } from '../../scripts/convert-fixtures.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIX = path.join(ROOT, 'tests', 'fixtures', 'convert');
const CLI = path.join(ROOT, 'wasm', 'cli.js');
const CASES = { 'bert-cls': ['hf-bert', 'text-classification'], 'bert-base': ['hf-bert', 'feature-extraction'],
  'distilbert-cls': ['hf-distilbert', 'text-classification'], 'gpt2-lm': ['hf-gpt2', 'text-generation'],
  'vit-cls': ['hf-vit', 'image-classification'], marian: ['hf-marian', 'translation'] };
const present = (name) => existsSync(path.join(FIX, name, 'config.json'));

/** The fixture folder as a map of file name → bytes (what a page's file picker gives convert()). */
function filesOf(name) {
  const read = (dir) => Object.fromEntries(readdirSync(dir).map((f) => [f, new Uint8Array(readFileSync(path.join(dir, f)))]));
  const files = read(path.join(FIX, name));
  if (name !== 'marian') return files;
  const tok = read(path.join(ROOT, 'tests', 'fixtures', 'tokenizers', 'unigram')); // MarianTokenizer's files
  for (const f of ['source.spm', 'target.spm', 'vocab.json', 'tokenizer_config.json']) files[f] = tok[f];
  return files;
}
const json = (bytes) => JSON.parse(new TextDecoder().decode(bytes));
const text = (s) => new TextEncoder().encode(typeof s === 'string' ? s : JSON.stringify(s));
const tensors = (bytes) => {
  const { header, data } = parseSafetensors(bytes);
  return Object.fromEntries(Object.entries(header).map(([k, e]) => [k, { ...e, values: e.dtype === 'I8' ? null : floatValues(e, data),
    bytes: data.subarray(...e.data_offsets) }]));
};

for (const [name, [architecture, task]] of Object.entries(CASES)) {
  test(`${name}: converts to an ${architecture} bundle holding exactly the expected tensors`, { skip: !present(name) && 'fixture not written yet' }, async () => {
    const { files, config } = await convert(filesOf(name), { name });
    assert.equal(config.architecture, architecture);
    assert.equal(config.task, task);
    assert.equal(config.version, 1);
    assert.deepEqual(config.hf_config, json(filesOf(name)['config.json']), 'hf_config is the checkpoint config, verbatim');
    assert.equal(config.weights, 'weights.safetensors');
    assert.equal(config.weights_dtype, 'float32');
    const got = tensors(files['weights.safetensors']);
    const want = tensors(new Uint8Array(readFileSync(path.join(FIX, 'expected', `${name}.safetensors`))));
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), 'tensor names');
    for (const [k, t] of Object.entries(want)) {
      assert.equal(got[k].dtype, 'F32', `${k} dtype`);
      assert.deepEqual(got[k].shape, t.shape, `${k} shape`);
      assert.deepEqual(got[k].values, t.values, `${k} values`);
    }
    const manifest = parseManifest(files['manifest.json'], name);
    assert.deepEqual(Object.keys(manifest.files), ['config.json', 'weights.safetensors', ...(config.tokenizer ? ['tokenizer.json'] : []),
      ...(config.tokenizer?.vocab ? ['vocab.json'] : [])]);
    for (const [f, e] of Object.entries(manifest.files)) {
      assert.equal(e.bytes, files[f].length, `${f} length in the manifest`);
      assert.equal(e.sha256, (await import('node:crypto')).createHash('sha256').update(files[f]).digest('hex'), `${f} digest`);
    }
    const card = new TextDecoder().decode(files['MODEL_CARD.md']);
    for (const [f, e] of Object.entries(config.source.files)) {
      assert.ok(card.includes(e.sha256), `the card gives ${f}'s digest`);
      assert.equal(e.sha256, (await import('node:crypto')).createHash('sha256').update(filesOf(name)[f]).digest('hex'));
    }
    assert.match(card, new RegExp(`\`${architecture}\``));
  });
}

test('a folder path and the same files as a map give the same bytes; the CLI writes them', { skip: !present('bert-cls') }, async () => {
  const a = await convert(path.join(FIX, 'bert-cls'));
  const b = await convert(filesOf('bert-cls'), { name: 'bert-cls' });
  assert.deepEqual(Object.keys(a.files), Object.keys(b.files));
  for (const f of Object.keys(a.files)) assert.deepEqual(a.files[f], b.files[f], f);
  const tmp = mkdtempSync(path.join(tmpdir(), 'attnlens-convert-'));
  try {
    const out = path.join(tmp, 'bundle');
    const r = spawnSync(process.execPath, [CLI, 'convert', path.join(FIX, 'bert-cls'), out], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readdirSync(out).sort(), Object.keys(a.files).sort());
    for (const f of Object.keys(a.files)) assert.deepEqual(new Uint8Array(readFileSync(path.join(out, f))), a.files[f], f);
    const again = spawnSync(process.execPath, [CLI, 'convert', path.join(FIX, 'bert-cls'), out], { encoding: 'utf8' });
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already exists/);
    const bad = spawnSync(process.execPath, [CLI, 'convert', path.join(FIX, 'bin-legacy'), path.join(tmp, 'legacy')], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /legacy \(pre-1\.6, non-zip\) format/);
    assert.deepEqual(readdirSync(tmp), ['bundle'], 'a failed conversion leaves nothing behind');
    const usage = spawnSync(process.execPath, [CLI, 'convert', 'only-one'], { encoding: 'utf8' });
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /usage: attnlens convert/);
    const unknown = spawnSync(process.execPath, [CLI, 'convert', 'a', 'b', '--fp8'], { encoding: 'utf8' });
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown option --fp8/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('config, tokenizer and labels of the converted bundles', { skip: !present('gpt2-lm') }, async () => {
  const bert = await convert(filesOf('bert-cls'), { name: 'x' });
  assert.deepEqual(bert.config.labels, ['NEGATIVE', 'POSITIVE']);
  assert.deepEqual(bert.config.tokenizer, { type: 'hf', file: 'tokenizer.json' });
  const wp = json(bert.files['tokenizer.json']);
  assert.equal(wp.model.type, 'WordPiece');
  assert.equal(wp.model.vocab['##s'], 10);
  assert.equal(wp.normalizer.lowercase, true);
  assert.deepEqual(wp.post_processor.special_tokens['[CLS]'].ids, [2]);
  assert.match(new TextDecoder().decode(bert.files['MODEL_CARD.md']), /\| licence \| apache-2\.0 \|/);
  const base = await convert(filesOf('bert-base'), { name: 'x' });
  assert.equal(base.config.labels, undefined, 'no head, no labels');
  assert.deepEqual(base.files['tokenizer.json'], filesOf('bert-base')['tokenizer.json'], 'a tokenizer.json is kept byte for byte');
  const gpt2 = await convert(filesOf('gpt2-lm'), { name: 'x' });
  const bpe = json(gpt2.files['tokenizer.json']);
  assert.equal(bpe.model.type, 'BPE');
  assert.deepEqual(bpe.model.merges, ['Ġ a', 'a b', 'Ġa b', 'c d']);
  assert.deepEqual(bpe.added_tokens.map((t) => [t.id, t.content]), [[9, '<|endoftext|>']]);
  assert.equal(bpe.pre_tokenizer.type, 'ByteLevel');
  const vit = await convert(filesOf('vit-cls'), { name: 'x' });
  assert.deepEqual(vit.config.image, { size: [8, 8], mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], rescale_factor: 1 / 255, resample: 2 });
  assert.deepEqual(vit.config.labels, ['cat', 'dog']);
  assert.equal(vit.config.tokenizer, undefined);
  const fe = await convert(filesOf('bert-cls'), { name: 'x', task: 'feature-extraction' });
  assert.equal(fe.config.task, 'feature-extraction');
});

test('--int8 stores the tensors scripts/quantize.mjs makes of the float32 bundle', { skip: !present('gpt2-lm') }, async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'attnlens-convert-'));
  try {
    for (const name of ['bert-cls', 'gpt2-lm']) {
      const float = await convert(path.join(FIX, name), { out: path.join(tmp, name) });
      quantizeBundle(path.join(tmp, name), path.join(tmp, `${name}-q`));
      const q = tensors(new Uint8Array(readFileSync(path.join(tmp, `${name}-q`, 'weights.safetensors'))));
      const { files, config } = await convert(path.join(FIX, name), { int8: true });
      assert.equal(config.weight_precision, 'int8');
      assert.deepEqual(files['config.json'], new Uint8Array(readFileSync(path.join(tmp, `${name}-q`, 'config.json'))), `${name}: config.json`);
      const got = tensors(files['weights.safetensors']);
      assert.deepEqual(Object.keys(got), Object.keys(q), `${name}: tensor names`);
      let int8 = 0;
      for (const [k, t] of Object.entries(q)) {
        assert.equal(got[k].dtype, t.dtype, `${name}: ${k} dtype`);
        assert.deepEqual(got[k].bytes, t.bytes, `${name}: ${k} bytes`);
        if (t.dtype === 'I8') int8++;
      }
      assert.ok(int8 >= 1, `${name}: at least one int8 matrix (the word embeddings)`);
      assert.ok(float.files['weights.safetensors'].length > files['weights.safetensors'].length);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('an lm_head.weight that differs from the embeddings is kept; one equal to them is dropped', { skip: !present('gpt2-lm') }, async () => {
  const tied = await convert(filesOf('gpt2-lm'), { name: 'x' });
  assert.ok(!('lm_head.weight' in tensors(tied.files['weights.safetensors'])));
  assert.match(new TextDecoder().decode(tied.files['MODEL_CARD.md']), /`lm_head\.weight`: a tied copy of transformer\.wte\.weight \(checked equal\)/);
  const files = filesOf('gpt2-lm');
  swapSafetensors('model-00002-of-00002.safetensors', (e) => {
    const head = e.find(([k]) => k === 'lm_head.weight');
    head[3] = head[3].slice();
    head[3][0] ^= 1; // one bit of one F16 value
  })(files);
  const untied = tensors((await convert(files, { name: 'x' })).files['weights.safetensors']);
  assert.deepEqual(untied['lm_head.weight'].shape, [10, 16]);
  assert.notDeepEqual(untied['lm_head.weight'].values, untied['transformer.wte.weight'].values);
});

test('BF16 and F16 weights are widened to F32 exactly', { skip: !present('bert-base') }, async () => {
  const files = filesOf('bert-base');
  let want;
  swapSafetensors('model.safetensors', (e) => {
    const t = e.find(([k]) => k === 'pooler.dense.weight');
    const f32 = new Uint32Array(t[3].slice().buffer);
    const bf16 = Uint16Array.from(f32, (bits) => bits >>> 16);
    want = new Float32Array(Uint32Array.from(bf16, (h) => h << 16).buffer);
    t[1] = 'BF16';
    t[3] = new Uint8Array(bf16.buffer);
  })(files);
  const got = tensors((await convert(files, { name: 'x' })).files['weights.safetensors']);
  assert.equal(got['bert.pooler.dense.weight'].dtype, 'F32');
  assert.deepEqual(got['bert.pooler.dense.weight'].values, want);
});

test('Marian: tokenizer.json from source.spm (sentencepiece.js), vocab.json kept, tied copies and positions checked', { skip: !present('marian') }, async () => {
  const { files, config } = await convert(filesOf('marian'), { name: 'x' });
  assert.deepEqual(config.tokenizer, { type: 'hf', file: 'tokenizer.json', vocab: 'vocab.json' });
  assert.deepEqual(files['vocab.json'], filesOf('marian')['vocab.json']);
  assert.deepEqual(json(files['tokenizer.json']), sentencePieceToTokenizerJson(filesOf('marian')['source.spm'], 'source.spm'));
  assert.deepEqual(Object.keys(parseManifest(files['manifest.json']).files), ['config.json', 'weights.safetensors', 'tokenizer.json', 'vocab.json']);
});

/** The marian folder with model.safetensors holding expected/marian.safetensors plus `extra` [name, Float32Array] tensors. */
function marianWith(extra) {
  const files = filesOf('marian');
  delete files['pytorch_model.bin'];
  const { header, data } = parseSafetensors(new Uint8Array(readFileSync(path.join(FIX, 'expected', 'marian.safetensors'))));
  const entries = Object.entries(header).map(([k, e]) => [k, e.dtype, e.shape, data.subarray(...e.data_offsets)]);
  const shared = entries.find(([k]) => k === 'model.shared.weight');
  for (const [name, values, shape] of extra(floatValues(header['model.shared.weight'], data))) {
    entries.push([name, 'F32', shape ?? shared[2], new Uint8Array(values.buffer)]);
  }
  files['model.safetensors'] = writeSafetensors(entries);
  return files;
}

test('Marian: embeddings that are not tied, or positions that are not the sinusoidal table, are refused', { skip: !present('marian') }, async () => {
  const ok = await convert(marianWith((shared) => [['model.encoder.embed_tokens.weight', shared]]), { name: 'x' });
  assert.ok(!('model.encoder.embed_tokens.weight' in tensors(ok.files['weights.safetensors'])));
  await assert.rejects(convert(marianWith((shared) => [['model.decoder.embed_tokens.weight', shared.map((v, i) => (i ? v : v + 1))]])),
    /model\.safetensors: model\.decoder\.embed_tokens\.weight differs from model\.shared\.weight; untied embeddings are not supported/);
  await assert.rejects(convert(marianWith(() => [['model.encoder.embed_positions.weight', new Float32Array(16 * 8).fill(0.5), [16, 8]]])),
    /model\.encoder\.embed_positions\.weight is not Marian's sinusoidal position table; learned positions are not supported/);
  const moved = marianWith((shared) => [['model.encoder.embed_tokens.weight', shared]]);
  swapSafetensors('model.safetensors', (e) => e.filter(([k]) => k !== 'model.shared.weight'))(moved);
  const promoted = tensors((await convert(moved, { name: 'x' })).files['weights.safetensors']);
  assert.ok('model.shared.weight' in promoted, 'a tied copy saved in place of model.shared.weight takes its name');
});

test('vocab.txt and vocab.json + merges.txt become a tokenizer.json giving the fast tokenizer\'s ids on the 5,400-line corpus', async (t) => {
  let Tokenizer;
  try {
    ({ Tokenizer } = await import(process.env.ATTNLENS_TOKENIZERS_JS ? pathToFileURL(process.env.ATTNLENS_TOKENIZERS_JS).href : '@huggingface/tokenizers'));
  } catch {
    return t.skip('Tokenizers.js (@huggingface/tokenizers, a devDependency) is not installed');
  }
  const dir = path.join(ROOT, 'tests', 'fixtures', 'tokenizers');
  const lines = readFileSync(path.join(dir, 'corpus.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  for (const name of ['wordpiece', 'wordpiece-cased', 'bytelevel-bpe']) {
    const fast = JSON.parse(readFileSync(path.join(dir, name, 'tokenizer.json'), 'utf8'));
    const byId = Object.entries(fast.model.vocab).sort((a, b) => a[1] - b[1]).map(([tok]) => tok);
    const slow = fast.model.type === 'WordPiece'
      ? { 'vocab.txt': text(`${byId.join('\n')}\n`), 'tokenizer_config.json': text({ do_lower_case: fast.normalizer.lowercase,
        strip_accents: fast.normalizer.strip_accents, tokenize_chinese_chars: fast.normalizer.handle_chinese_chars }) }
      : { 'vocab.json': text(fast.model.vocab), 'merges.txt': text(`#version: 0.2\n${fast.model.merges.join('\n')}\n`),
        'tokenizer_config.json': text({ add_prefix_space: fast.pre_tokenizer.add_prefix_space }) };
    const kind = fast.model.type === 'WordPiece' ? 'wordpiece' : 'bpe';
    const { files } = await convertTokenizer(kind, async (f) => slow[f], Object.keys(slow), byId.length);
    const ours = new Tokenizer(json(files['tokenizer.json']), {});
    const theirs = new Tokenizer(fast, {});
    const differ = lines.filter((l) => ours.encode(l).ids.join(' ') !== theirs.encode(l).ids.join(' '));
    assert.deepEqual(differ.slice(0, 3), [], `${name}: ${differ.length} of ${lines.length} lines get other ids`);
    const ids = theirs.encode(lines[7]).ids;
    assert.equal(ours.decode(ids, { skip_special_tokens: true }), theirs.decode(ids, { skip_special_tokens: true }), `${name}: decode`);
  }
});

// [fixture, what to change (files map → void), the error it must give]
const setConfig = (edit) => (f) => {
  const c = json(f['config.json']);
  edit(c);
  f['config.json'] = text(c);
};
const swapSafetensors = (file, edit) => (f) => {
  const { header, metadata, data } = parseSafetensors(f[file]);
  const entries = Object.entries(header).map(([k, e]) => [k, e.dtype, e.shape, data.subarray(...e.data_offsets)]);
  f[file] = writeSafetensors(edit(entries) ?? entries, metadata);
};
const ERRORS = [
  ['bert-cls', 'no config.json', (f) => delete f['config.json'], /config\.json is missing/],
  ['bert-cls', 'config.json not JSON', (f) => { f['config.json'] = text('{"model_type": "bert",'); }, /config\.json is not valid JSON/],
  ['bert-cls', 'config.json an array', (f) => { f['config.json'] = text('[]'); }, /config\.json must hold a JSON object/],
  ['bert-cls', 'another model_type', setConfig((c) => { c.model_type = 'llama'; }), /"model_type": "llama" is not supported \(supported: bert, distilbert, gpt2, marian, vit\)/],
  ['bert-cls', 'a model_type naming an Object property', setConfig((c) => { c.model_type = '__proto__'; }), /"model_type": "__proto__" is not supported/],
  ['bert-cls', 'a class naming an Object property', setConfig((c) => { c.architectures = ['constructor']; }), /"architectures": constructor is not supported/],
  ['bert-cls', 'relative positions', setConfig((c) => { c.position_embedding_type = 'relative_key'; }), /"position_embedding_type": "relative_key" \(only "absolute"\) is not supported/],
  ['bert-cls', 'a BERT decoder', setConfig((c) => { c.is_decoder = true; }), /"is_decoder": true/],
  ['bert-cls', 'cross-attention', setConfig((c) => { c.add_cross_attention = true; }), /"add_cross_attention": true/],
  ['bert-cls', 'an unknown activation', setConfig((c) => { c.hidden_act = 'mish'; }), /"hidden_act": "mish" \(supported:/],
  ['bert-cls', 'heads not dividing the width', setConfig((c) => { c.num_attention_heads = 3; }), /"hidden_size" \(16\) is not a multiple of "num_attention_heads" \(3\)/],
  ['bert-cls', 'a size that is not an integer', setConfig((c) => { c.hidden_size = '8'; }), /"hidden_size" must be an integer from 1 to 16777216, got "8"/],
  ['bert-cls', 'a layer-norm epsilon that is not a number', setConfig((c) => { c.layer_norm_eps = '1e-12'; }), /"layer_norm_eps" must be a number between 0 and 1, got "1e-12"/],
  ['bert-cls', 'a special token outside the vocabulary', setConfig((c) => { c.pad_token_id = 15; }), /"pad_token_id" 15 is not a token id below "vocab_size" \(15\)/],
  ['gpt2-lm', 'an eos list with an id outside the vocabulary', setConfig((c) => { c.eos_token_id = [9, -1]; }), /"eos_token_id" \[9,-1\] is not a token id/],
  ['bert-base', 'a weight that is not finite', swapSafetensors('model.safetensors', (e) => {
    const t = e.find(([k]) => k === 'encoder.layer.0.output.dense.bias');
    t[3] = t[3].slice();
    new DataView(t[3].buffer).setFloat32(4 * 3, NaN, true);
  }), /model\.safetensors: encoder\.layer\.0\.output\.dense\.bias has the value NaN at index 3; weights must be finite/],
  ['bert-cls', 'more layers than the converter builds', setConfig((c) => { c.num_hidden_layers = 5000; }), /"num_hidden_layers" must be an integer from 1 to 1024, got 5000/],
  ['bert-cls', 'an unsupported head class', setConfig((c) => { c.architectures = ['BertForTokenClassification']; }), /BertForTokenClassification is not supported \(for bert: BertModel, BertForSequenceClassification/],
  ['bert-cls', 'shapes that disagree with the config', setConfig((c) => { c.intermediate_size = 32; }), /pytorch_model\.bin: bert\.encoder\.layer\.0\.intermediate\.dense\.weight has shape \[64,16\], config\.json implies \[32,16\]/],
  ['bert-cls', 'labels that disagree with the head', setConfig((c) => { c.id2label = { 0: 'A', 1: 'B', 2: 'C' }; }), /"id2label" has 3 labels, classifier\.weight has 2 rows/],
  ['bert-cls', 'a task the model cannot do', (f) => { f.__task = 'translation'; }, /task translation needs another model; this BertForSequenceClassification does text-classification, feature-extraction/],
  ['bert-base', 'a classification task without a head', (f) => { f.__task = 'text-classification'; }, /task text-classification needs a classification head/],
  ['bert-cls', 'no weights', (f) => delete f['pytorch_model.bin'], /no weights: expected model\.safetensors, model\.safetensors\.index\.json or pytorch_model\.bin/],
  ['bert-cls', 'TensorFlow weights only', (f) => { delete f['pytorch_model.bin']; f['tf_model.h5'] = text('x'); }, /tf_model\.h5 is not read/],
  ['bert-cls', 'a truncated .bin', (f) => { f['pytorch_model.bin'] = f['pytorch_model.bin'].subarray(0, 5000); }, /pytorch_model\.bin: no end of central directory/],
  ['bert-cls', 'not a zip', (f) => { f['pytorch_model.bin'] = text('hello, not a checkpoint'); }, /pytorch_model\.bin is not a torch\.save zip archive/],
  ['bin-legacy', 'the legacy .bin format', () => {}, /legacy \(pre-1\.6, non-zip\) format/],
  ['bin-deflated', 'a .bin with compressed zip entries', () => {}, /pytorch_model\.bin: plain\/data\.pkl is compressed \(method 8\); torch\.save stores entries uncompressed$/],
  ['bert-cls', 'a .bin whose storage file is missing', (f) => {
    const b = f['pytorch_model.bin'].slice();
    const name = new TextEncoder().encode('/data/0');
    for (let i = 0; i + name.length <= b.length; i++) {
      const digitAfter = b[i + name.length] >= 0x30 && b[i + name.length] <= 0x39;
      if (name.every((c, j) => b[i + j] === c) && !digitAfter) b[i + 6] = 0x5a; // the entry data/0 becomes data/Z
    }
    f['pytorch_model.bin'] = b;
  }, /pytorch_model\.bin: storage data\/0 is missing from the archive/],
  ['bin-evil', 'a pickle naming os.system', () => {}, /data\.pkl names the global posix\.system, which the converter refuses/],
  ['bert-base', 'a truncated safetensors file', (f) => {
    const b = f['model.safetensors'];
    f['model.safetensors'] = b.subarray(0, 8 + Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true)) + 100);
  }, /model\.safetensors: tensor "[^"]+" ends at byte \d+ of the data, which has \d+ bytes \(truncated\?\)/],
  ['bert-base', 'a safetensors file of 4 bytes', (f) => { f['model.safetensors'] = new Uint8Array(4); }, /model\.safetensors: 4 bytes, too short/],
  ['bert-base', 'a header length past the end', (f) => { f['model.safetensors'] = f['model.safetensors'].slice(); f['model.safetensors'][5] = 1; }, /model\.safetensors: the header length \d+ runs past the file/],
  ['bert-base', 'a header that is not JSON', (f) => { const b = f['model.safetensors'].slice(); b[8] = 0x5b; f['model.safetensors'] = b; }, /model\.safetensors: the header is not valid UTF-8 JSON/],
  ['bert-base', 'an unknown dtype', swapSafetensors('model.safetensors', (e) => { e[0][1] = 'F8'; }), /model\.safetensors: tensor "[^"]+" has dtype "F8"/],
  ['bert-base', 'integer weights', swapSafetensors('model.safetensors', (e) => { const i = e.findIndex(([k]) => k === 'pooler.dense.bias'); e[i][1] = 'I32'; }), /model\.safetensors: pooler\.dense\.bias is I32; weights must be F32, F16 or BF16/],
  ['bert-base', 'a missing tensor', swapSafetensors('model.safetensors', (e) => e.filter(([k]) => k !== 'encoder.layer.1.output.dense.bias')), /tensor bert\.encoder\.layer\.1\.output\.dense\.bias \[16\] is missing/],
  ['bert-base', 'an unexpected tensor', swapSafetensors('model.safetensors', (e) => [...e, ['qa_outputs.weight', 'F32', [2, 16], new Uint8Array(128)]]), /model\.safetensors: tensor qa_outputs\.weight is not part of BertModel/],
  ['bert-base', 'a tensor named twice', swapSafetensors('model.safetensors', (e) => [...e, ['bert.pooler.dense.bias', 'F32', [16], new Uint8Array(64)]]), /tensors pooler\.dense\.bias and bert\.pooler\.dense\.bias are both bert\.pooler\.dense\.bias/],
  ['bert-base', 'a shape with bytes that do not fit', (f) => {
    const b = f['model.safetensors'];
    const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
    const head = new TextDecoder().decode(b.subarray(8, 8 + n)).replace('"shape":[15,16]', '"shape":[16,16]');
    const out = b.slice();
    out.set(new TextEncoder().encode(head), 8);
    f['model.safetensors'] = out;
  }, /model\.safetensors: tensor "embeddings\.word_embeddings\.weight" has 960 bytes, its shape \[16,16\] of F32 needs 1024/],
  ['bert-base', 'overlapping tensors', (f) => {
    const b = f['model.safetensors'];
    const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
    const h = JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + n)));
    const [w0] = h['pooler.dense.weight'].data_offsets;
    h['pooler.dense.bias'].data_offsets = [w0, w0 + 64];
    const head = new TextEncoder().encode(JSON.stringify(h).padEnd(n));
    const out = b.slice();
    out.set(head.subarray(0, n), 8);
    f['model.safetensors'] = out;
  }, /model\.safetensors: tensors "[^"]+" and "[^"]+" overlap/],
  ['gpt2-lm', 'an index.json that is not JSON', (f) => { f['model.safetensors.index.json'] = text('{'); }, /model\.safetensors\.index\.json is not valid JSON/],
  ['gpt2-lm', 'an index.json without weight_map', (f) => { f['model.safetensors.index.json'] = text({ metadata: {} }); }, /"weight_map" must be an object/],
  ['gpt2-lm', 'a missing shard', (f) => delete f['model-00002-of-00002.safetensors'], /names the shard model-00002-of-00002\.safetensors, which is missing/],
  ['gpt2-lm', 'a shard name outside the folder', (f) => {
    const idx = json(f['model.safetensors.index.json']);
    idx.weight_map['transformer.ln_f.bias'] = '../x.safetensors';
    f['model.safetensors.index.json'] = text(idx);
  }, /shard "\.\.\/x\.safetensors" is not a weights file name/],
  ['gpt2-lm', 'a tensor in another shard than listed', (f) => {
    const idx = json(f['model.safetensors.index.json']);
    idx.weight_map['transformer.ln_f.bias'] = 'model-00001-of-00002.safetensors';
    f['model.safetensors.index.json'] = text(idx);
  }, /model-00002-of-00002\.safetensors: tensor transformer\.ln_f\.bias is listed under model-00001-of-00002\.safetensors/],
  ['gpt2-lm', 'an index listing a tensor no shard holds', (f) => {
    const idx = json(f['model.safetensors.index.json']);
    idx.weight_map['transformer.extra'] = 'model-00001-of-00002.safetensors';
    f['model.safetensors.index.json'] = text(idx);
  }, /lists tensor transformer\.extra in model-00001-of-00002\.safetensors, which does not hold it/],
  ['gpt2-lm', 'an attention-scaling flag that is not a boolean', setConfig((c) => { c.scale_attn_by_inverse_layer_idx = 1; }), /"scale_attn_by_inverse_layer_idx" must be true or false, got 1/],
  ['gpt2-lm', 'reordered, upcast attention', setConfig((c) => { c.reorder_and_upcast_attn = true; }), /"reorder_and_upcast_attn": true/],
  ['gpt2-lm', 'GPT-2 cross-attention', setConfig((c) => { c.add_cross_attention = true; }), /"add_cross_attention": true/],
  ['gpt2-lm', 'untied embeddings without lm_head', setConfig((c) => { c.tie_word_embeddings = false; }), /"tie_word_embeddings": false but the checkpoint has no lm_head\.weight/],
  ['gpt2-lm', 'GPT2DoubleHeadsModel', setConfig((c) => { c.architectures = ['GPT2DoubleHeadsModel']; }), /GPT2DoubleHeadsModel is not supported/],
  ['gpt2-lm', 'no tokenizer', (f) => delete f['merges.txt'], /no tokenizer: expected tokenizer\.json, or vocab\.json and merges\.txt/],
  ['gpt2-lm', 'a bad merges line', (f) => { f['merges.txt'] = text('#version: 0.2\nab\n'); }, /merges\.txt line 2: expected two symbols/],
  ['gpt2-lm', 'vocab.json not JSON', (f) => { f['vocab.json'] = text('{"a": 0'); }, /vocab\.json is not valid JSON/],
  ['gpt2-lm', 'a token id past the vocabulary', (f) => { f['vocab.json'] = text({ a: 0, b: 10 }); }, /vocab\.json: "b" has id 10, outside the model's vocabulary of 10/],
  ['bert-cls', 'vocab.txt without [CLS]', (f) => { f['vocab.txt'] = text('[PAD]\n[UNK]\n[SEP]\n[MASK]\n'); }, /vocab\.txt has no "\[CLS\]" \(the cls token\)/],
  ['bert-cls', 'vocab.txt longer than the embedding', (f) => { f['vocab.txt'] = text(`${new TextDecoder().decode(f['vocab.txt'])}extra\n`); }, /vocab\.txt: line 16 has id 15, outside the model's vocabulary of 15/],
  ['bert-cls', 'vocab.txt not UTF-8', (f) => { f['vocab.txt'] = new Uint8Array([0xff, 0x0a]); }, /vocab\.txt is not valid UTF-8/],
  ['bert-cls', 'tokenizer_config.json not JSON', (f) => { f['tokenizer_config.json'] = text('nope'); }, /tokenizer_config\.json is not valid JSON/],
  ['bert-cls', 'added_tokens.json without tokenizer.json', (f) => { f['added_tokens.json'] = text({ x: 15 }); }, /added_tokens\.json is not supported without tokenizer\.json/],
  ['bert-base', 'tokenizer.json not JSON', (f) => { f['tokenizer.json'] = text('{"model":'); }, /tokenizer\.json is not valid JSON/],
  ['bert-base', 'tokenizer.json of another model type', (f) => { f['tokenizer.json'] = text({ model: { type: 'WordLevel', vocab: {} } }); }, /tokenizer\.json: model\.type "WordLevel" is not supported/],
  ['bert-base', 'tokenizer.json ids past the vocabulary', (f) => { f['tokenizer.json'] = text({ model: { type: 'WordPiece', vocab: { a: 0, b: 99 } } }); }, /tokenizer\.json: model\.vocab\["b"\] has id 99, outside the model's vocabulary of 15/],
  ['bert-base', 'tokenizer.json added token past the vocabulary', (f) => { f['tokenizer.json'] = text({ added_tokens: [{ id: 15, content: 'x' }], model: { type: 'WordPiece', vocab: { a: 0 } } }); }, /added_tokens\[0\] \("x"\) has id 15, outside/],
  ['marian', 'separate source and target vocabularies', setConfig((c) => { c.share_encoder_decoder_embeddings = false; }), /"share_encoder_decoder_embeddings": false \(separate source and target vocabularies\)/],
  ['marian', 'a decoder vocabulary of another size', setConfig((c) => { c.decoder_vocab_size = 7; }), /"decoder_vocab_size": 7 different from "vocab_size"/],
  ['marian', 'MarianModel without the LM head', setConfig((c) => { c.architectures = ['MarianModel']; }), /MarianModel is not supported \(for marian: MarianMTModel\)/],
  ['marian', 'separate_vocabs in tokenizer_config.json', (f) => { f['tokenizer_config.json'] = text({ separate_vocabs: true }); }, /"separate_vocabs": true/],
  ['marian', 'no source.spm', (f) => delete f['source.spm'], /no tokenizer: a Marian folder needs .*\(source\.spm is missing\)/],
  ['marian', 'a truncated source.spm', (f) => { f['source.spm'] = f['source.spm'].subarray(0, 1000); }, /source\.spm/],
  ['marian', 'vocab.json ids past the vocabulary', (f) => { f['vocab.json'] = text({ '</s>': 0, x: 100000 }); }, /vocab\.json: "x" has id 100000, outside the model's vocabulary/],
  ['vit-cls', 'ViT without query/key/value biases', setConfig((c) => { c.qkv_bias = false; }), /"qkv_bias": false/],
  ['vit-cls', 'ViT for masked image modelling', setConfig((c) => { c.architectures = ['ViTForMaskedImageModeling']; }), /ViTForMaskedImageModeling is not supported/],
  ['vit-cls', 'one image channel', setConfig((c) => { c.num_channels = 1; }), /"num_channels": 1 \(only 3, RGB\)/],
  ['vit-cls', 'an image that is not whole patches', setConfig((c) => { c.image_size = 10; }), /"image_size" 10x10 is not a whole number of 4x4 patches/],
  ['vit-cls', 'no preprocessor_config.json', (f) => delete f['preprocessor_config.json'], /preprocessor_config\.json is missing/],
  ['vit-cls', 'a preprocessing size that is not the model\'s', (f) => { f['preprocessor_config.json'] = text({ size: { height: 16, width: 16 } }); }, /preprocessor_config\.json: "size" 16x16 differs from config\.json "image_size" 8x8/],
  ['vit-cls', 'a bad image mean', (f) => { f['preprocessor_config.json'] = text({ image_mean: [0.5, 0.5] }); }, /preprocessor_config\.json: "image_mean" must be three numbers/],
  ['vit-cls', 'an unsupported resampling filter', (f) => { f['preprocessor_config.json'] = text({ resample: 9 }); }, /"resample" 9 is not supported/],
];

for (const [fixture, what, change, message] of ERRORS) {
  test(`refused with a clear error: ${what}`, { skip: !present(fixture) }, async () => {
    const files = filesOf(fixture);
    change(files);
    const task = files.__task;
    delete files.__task;
    await assert.rejects(convert(files, { name: fixture, ...(task ? { task } : {}) }), (err) => {
      assert.ok(err instanceof ConvertError, `a ConvertError, got ${err.constructor.name}: ${err.message}`);
      assert.match(err.message, message);
      return true;
    });
  });
}

test('a map of Blobs and ArrayBuffers converts like bytes', { skip: !present('vit-cls') }, async () => {
  const files = filesOf('vit-cls');
  const mixed = new Map(Object.entries(files).map(([f, b], i) => [`picked/vit-cls/${f}`, i % 2 ? new Blob([b]) : b.slice().buffer]));
  const a = await convert(mixed, { name: 'vit' });
  const b = await convert(files, { name: 'vit' });
  for (const f of Object.keys(b.files)) assert.deepEqual(a.files[f], b.files[f], f);
});

test('in headless Chromium, convert() on dropped files (Blobs) gives the bytes Node gives', { timeout: 120_000 }, async (t) => {
  const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (process.env.ATTNLENS_SKIP_BROWSER === '1' || !existsSync(chromiumPath)) return t.skip('no browser (ATTNLENS_SKIP_BROWSER=1 or no Chromium)');
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../../scripts/serve.mjs');
  const { server, url } = await serve(ROOT.replace(/\/$/, ''), { port: 0 });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${url}/web/`);
    const files = Object.fromEntries(Object.entries(filesOf('gpt2-lm')).map(([f, b]) => [f, [...b]]));
    const got = await page.evaluate(async (input) => {
      const { convert: inPage } = await import('/wasm/index.js');
      const dropped = Object.fromEntries(Object.entries(input).map(([f, b]) => [f, new Blob([new Uint8Array(b)])]));
      const r = await inPage(dropped, { name: 'gpt2-lm', int8: true });
      return Object.fromEntries(Object.entries(r.files).map(([f, b]) => [f, [...b]]));
    }, files);
    const node = await convert(path.join(FIX, 'gpt2-lm'), { int8: true });
    assert.deepEqual(Object.keys(got), Object.keys(node.files));
    for (const f of Object.keys(node.files)) assert.deepEqual(Uint8Array.from(got[f]), node.files[f], f);
  } finally {
    await browser.close();
    server.close();
  }
});

test('bad convert() arguments are refused', async () => {
  await assert.rejects(convert(42), /the input must be a folder path/);
  await assert.rejects(convert({}, { fp16: true }), /unknown option fp16/);
  await assert.rejects(convert({}, { task: 'summarization' }), /task "summarization" is not one of/);
  await assert.rejects(convert({ 'config.json': 'text' }), /input file config\.json must be bytes/);
  await assert.rejects(convert(path.join(FIX, 'no-such-folder')), /cannot read the folder/);
});

test('the committed tests/fixtures/hf/*/bundle/ are the converter\'s output, byte for byte', async (t) => {
  const names = fixtureNames();
  if (!names.length) t.skip('no tests/fixtures/hf fixtures yet');
  for (const name of names) assert.deepEqual(await checkFixture(name), [], name);
});
