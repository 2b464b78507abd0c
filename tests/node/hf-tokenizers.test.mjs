// The references of the Hugging Face tokenizer tests, recomputed live so that the committed fixture cannot go stale:
// tests/fixtures/tokenizers/<name>/reference.txt (read by tests/cpp/test_hf_tokenizer.cpp, natively and in WASM)
// must equal what Tokenizers.js (@huggingface/tokenizers, a devDependency) computes from the same tokenizer.json, and
// for MarianMT's unigram model what python3-sentencepiece computes (no skipping: CI installs it, scripts/toolchain.sh).
// unigram/tokenizer.json must be wasm/convert/sentencepiece.js's conversion of source.spm; bad .model bytes must be
// refused with an Error naming the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { HERE, NAMES, corpus, referenceLines, unigramTokenizerJson } from '../fixtures/tokenizers/reference.mjs';
import { sentencePieceToTokenizerJson } from '../../wasm/convert/sentencepiece.js';

const lines = corpus();

test('the corpus: at least 5,000 lines, several scripts, emoji, empty lines', () => {
  assert.ok(lines.length >= 5000, `${lines.length} lines`);
  for (const re of [/\p{Script=Han}/u, /\p{Script=Arabic}/u, /\p{Script=Hebrew}/u, /\p{Script=Cyrillic}/u,
    /\p{Script=Greek}/u, /\p{Script=Devanagari}/u, /\p{Script=Thai}/u, /\p{Script=Hangul}/u, /\u200D/u,
    /\p{Regional_Indicator}/u, /\p{Emoji_Presentation}/u, /\t/, /\u0301/u, /^$/]) {
    assert.ok(lines.some((l) => re.test(l)), `no line matches ${re}`);
  }
});

for (const name of NAMES) {
  test(`${name}: the committed reference ids equal the reference implementation's, line by line`, async () => {
    const live = await referenceLines(name, lines);
    const committed = readFileSync(join(HERE, name, 'reference.txt'), 'utf8').split('\n').slice(0, -1);
    assert.equal(committed.length, lines.length);
    const differ = live.map((l, i) => i).filter((i) => live[i] !== committed[i]);
    assert.deepEqual(differ.slice(0, 3).map((i) => [i + 1, lines[i], committed[i], live[i]]), [],
      `${differ.length} lines differ (run node tests/fixtures/tokenizers/reference.mjs to rewrite them)`);
  });
}

test('unigram/tokenizer.json is sentencepiece.js\'s conversion of source.spm', () => {
  assert.equal(readFileSync(join(HERE, 'unigram', 'tokenizer.json'), 'utf8'), unigramTokenizerJson());
  const json = JSON.parse(unigramTokenizerJson());
  assert.equal(json.model.type, 'Unigram');
  assert.deepEqual(json.added_tokens.map((t) => t.content), ['<unk>', '<s>', '</s>']);
  assert.equal(json.normalizer.normalizers[0].type, 'Precompiled');
  assert.equal(json.pre_tokenizer.type, 'Metaspace');
});

test('sentencepiece.js refuses bad model bytes with an Error naming the file', () => {
  const good = readFileSync(join(HERE, 'unigram', 'source.spm'));
  assert.throws(() => sentencePieceToTokenizerJson(good.subarray(0, 1000), 'x.spm'), /^Error: x\.spm: no normalizer_spec/);
  assert.throws(() => sentencePieceToTokenizerJson(good.subarray(0, good.length - 3), 'x.spm'), /^Error: x\.spm: field 3 runs past the end/);
  assert.throws(() => sentencePieceToTokenizerJson(new Uint8Array([0x0f]), 'x.spm'), /^Error: x\.spm: unsupported wire type 7/);
  assert.throws(() => sentencePieceToTokenizerJson(new Uint8Array([]), 'x.spm'), /^Error: x\.spm: no normalizer_spec/);
  // trainer_spec { model_type: BPE (2) } after the good model's fields: embedded messages merge, the last value wins.
  const bpe = new Uint8Array([...good, 0x12, 0x02, 0x18, 0x02]);
  assert.throws(() => sentencePieceToTokenizerJson(bpe, 'bpe.model'), /^Error: bpe\.model: model_type 2 is not supported/);
});
