// Bad input through every pipeline (issue 19 item 5): wrong types, NaN / Infinity / negative / huge options,
// images whose bytes do not match their size, detached and SharedArrayBuffer-backed arrays, lone surrogates and
// 200,000-character inputs. Each is a TypeError / RangeError naming the option or argument (never a WebAssembly
// trap), or a documented result; after every error the pipeline still works.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { pipeline } from '../../wasm/index.js';
import { tinyCaptioner } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** assert.rejects for `Type` (exactly, and not a WebAssembly.RuntimeError) with a message matching `re`. */
async function rejects(promise, Type, re) {
  await assert.rejects(promise, (e) => {
    assert.ok(!(e instanceof WebAssembly.RuntimeError), `a WebAssembly trap: ${e.message}`);
    assert.equal(e.constructor, Type, `${e.constructor.name}: ${e.message}`);
    assert.match(e.message, re);
    return true;
  });
}

function detachedCopy(bytes) {
  const view = new Uint8Array(bytes);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  assert.equal(view.byteLength, 0);
  return view;
}

function sharedCopy(bytes, Type = Uint8Array) {
  const view = new Type(new SharedArrayBuffer(bytes.length));
  view.set(bytes);
  return view;
}

test('translation: wrong types, NaN / Infinity / negative / huge options', async () => {
  const translate = await pipeline('translation');
  try {
    const ok = async () => assert.ok((await translate('Ein Hund.', { num_beams: 1 })).text.length > 0);
    await rejects(translate(42), TypeError, /translation input must be a string, got 42 \(number\)/);
    await rejects(translate(null), TypeError, /input must be a string, got null/);
    await rejects(translate(Symbol('x')), TypeError, /input must be a string, got symbol/);
    await rejects(translate(new String('Ein Hund.')), TypeError, /must be a string, got String/);
    await rejects(translate(['Ein Hund.', 5]), TypeError, /input \[1\] must be a string/);
    await rejects(translate('Ein Hund.', 'fast'), TypeError, /options must be an object/);
    await ok();
    for (const [name, value, Type] of [
      ['num_beams', NaN, RangeError], ['num_beams', Infinity, RangeError], ['num_beams', -1, RangeError],
      ['num_beams', 0, RangeError], ['num_beams', 1e9, RangeError], ['num_beams', 2.5, RangeError],
      ['num_beams', '4', TypeError], ['num_beams', 4n, TypeError],
      ['max_new_tokens', NaN, RangeError], ['max_new_tokens', -Infinity, RangeError], ['max_new_tokens', -5, RangeError],
      ['max_new_tokens', 2 ** 31, RangeError], ['max_new_tokens', null, TypeError],
      ['alpha', NaN, RangeError], ['alpha', Infinity, RangeError], ['alpha', 'x', TypeError],
      ['coverage_beta', -Infinity, RangeError], ['alignment_layer', -1, RangeError], ['alignment_head', NaN, RangeError],
      ['output_attentions', 1, TypeError], ['word_maps', 'yes', TypeError],
    ]) {
      await rejects(translate('Ein Hund.', { [name]: value }), Type, new RegExp(`\\b${name}\\b`));
      await rejects(translate.align('Ein Hund.', 'A dog.', { [name]: value }), Type, new RegExp(`\\b${name}\\b`));
    }
    // One kind as a bare string: the error says how to ask for it (a list), not just "must be a boolean".
    await rejects(translate('Ein Hund.', { output_attentions: 'cross' }), TypeError,
      /output_attentions must be true, false or a non-empty list of .*got the string "cross" \(for only those maps: \['cross'\]\)/);
    await rejects(translate('Ein Hund.', { output_attentions: 'all' }), TypeError, /non-empty list of .*got the string "all"$/);
    await rejects(pipeline('translation', 'de-en-transformer', { num_beams: NaN }), RangeError, /num_beams/);
    await rejects(pipeline('translation', 'de-en-transformer', { max_new_tokens: -1 }), RangeError, /max_new_tokens/);
    await rejects(translate.align(42, 'A dog.'), TypeError, /align\(\) source must be a string/);
    await ok();
  } finally {
    translate.dispose();
  }
});

test('translation: lone surrogates become U+FFFD (indices unchanged); 200,000 characters are cut quickly', async () => {
  const translate = await pipeline('translation');
  try {
    for (const [bad, good] of [
      ['Ein Hund \uD800 rennt im Park.', 'Ein Hund \uFFFD rennt im Park.'],
      ['\uDC00Ein Hund rennt im Park.', '\uFFFDEin Hund rennt im Park.'],
      ['Ein Hund rennt im Park \uD83D', 'Ein Hund rennt im Park \uFFFD'],
    ]) {
      const a = await translate(bad, { num_beams: 1 });
      const b = await translate(good, { num_beams: 1 });
      assert.deepEqual(a.source_tokens, b.source_tokens, JSON.stringify(bad));
      assert.equal(a.text, b.text);
      const rennt = a.source_words.find((w) => w.text === 'rennt');
      assert.equal(bad.slice(rennt.start, rennt.end), 'rennt');
    }
    const al = await translate.align('Ein Hund \uD800 rennt.', 'A dog \uDFFF runs.');
    assert.ok(al.target_words.some((w) => w.text === 'runs'));

    // One 200,000-character "sentence": the engine cuts it to the model's positions.
    const run = 'ein Mann mit einem roten Hut sitzt auf einer Bank und '.repeat(4000).slice(0, 200_000);
    let t0 = Date.now();
    const one = await translate(run, { num_beams: 1 });
    const tOne = Date.now() - t0;
    assert.equal(one.truncated, true);
    assert.equal(one.sentences.length, 1);
    assert.equal(one.source_tokens.length, translate.maxSourceTokens);
    assert.ok(one.text.length > 0);
    // 200,000 characters of sentences: whole sentences while they fit in the model's positions, the rest dropped.
    const many = 'Ein Mann mit einem roten Hut sitzt auf einer Bank. '.repeat(4000).slice(0, 200_000);
    t0 = Date.now();
    const out = await translate(many);
    const tMany = Date.now() - t0;
    assert.equal(out.truncated, true);
    assert.ok(out.source_tokens.length <= translate.maxSourceTokens);
    assert.ok(out.sentences.length > 1 && out.sentences.length < 40, `${out.sentences.length} sentences`);
    for (const s of out.sentences) assert.equal(many.slice(s.source_start, s.source_end), 'Ein Mann mit einem roten Hut sitzt auf einer Bank.');
    assert.ok(tOne < 60_000 && tMany < 120_000, `bounded time: ${tOne} ms, ${tMany} ms`);
    assert.ok((await translate('Ein Hund.', { num_beams: 1 })).text.length > 0);
  } finally {
    translate.dispose();
  }
});

test('sentiment-analysis: wrong types, bad max_tokens, detached / shared bytes, lone surrogates, 200,000 characters', async () => {
  const clf = await pipeline('sentiment-analysis');
  try {
    await rejects(clf(42), TypeError, /sentiment-analysis input must be a string/);
    await rejects(clf({ text: 'good' }), TypeError, /must be a string .*got Object/);
    await rejects(clf(['good', 3]), TypeError, /input \[1\] must be a string/);
    await rejects(clf(new Int8Array(3)), TypeError, /got Int8Array/);
    await rejects(clf('good', { output_attentions: 'yes' }), TypeError, /output_attentions/);
    await rejects(clf('good', { max_tokens: 4 }), TypeError, /unknown sentiment-analysis option "max_tokens"/);
    for (const [value, Type] of [[NaN, RangeError], [Infinity, RangeError], [-1, RangeError], [0, RangeError],
      [1e6, RangeError], [1.5, RangeError], ['5', TypeError]]) {
      await rejects(pipeline('sentiment-analysis', 'sst2-selfattn', { max_tokens: value }), Type, /max_tokens/);
    }
    const bytes = new TextEncoder().encode('a charming and often affecting journey');
    const ref = await clf('a charming and often affecting journey');
    await rejects(clf(detachedCopy(bytes)), TypeError, /detached ArrayBuffer/);
    const shared = await clf(sharedCopy(bytes));
    assert.deepEqual(shared.tokens, ref.tokens);
    assert.equal(shared.score, ref.score);
    // Lone surrogates are U+FFFD, like TextEncoder would make them.
    const lone = await clf('a charming \uD800journey \uDC00');
    const fffd = await clf('a charming \uFFFDjourney \uFFFD');
    assert.deepEqual(lone.tokens, fffd.tokens);
    assert.equal(lone.score, fffd.score);
    // 200,000 characters: the first max_tokens (256) tokens, quickly.
    const t0 = Date.now();
    const long = await clf('a charming and often affecting journey . '.repeat(5000).slice(0, 200_000));
    assert.ok(Date.now() - t0 < 10_000, `${Date.now() - t0} ms`);
    assert.equal(long.truncated, true);
    assert.equal(long.tokens.length, 256);
    assert.equal((await clf('terrific')).label, 'POSITIVE');
  } finally {
    clf.dispose();
  }
});


test('image-to-text: sizes that do not match the bytes, bad numbers, detached and shared pixels', async () => {
  const caption = await tinyCaptioner();
  try {
    const opts = { num_beams: 1, max_new_tokens: 3 };
    const px = new Uint8ClampedArray(10 * 10 * 4).map((_, i) => (i * 31) & 255);
    const img = (over = {}) => ({ data: px, width: 10, height: 10, ...over });
    const ref = await caption(img(), opts);
    await rejects(caption(img({ width: 11 }), opts), RangeError, /has 400 bytes; a 11x10 image with 4 channels needs exactly 440/);
    await rejects(caption(img({ channels: 3 }), opts), RangeError, /needs exactly 300/);
    await rejects(caption(img({ data: px.subarray(0, 399) }), opts), RangeError, /needs exactly 400/);
    await rejects(caption(img({ width: NaN }), opts), RangeError, /width and height/);
    await rejects(caption(img({ height: Infinity }), opts), RangeError, /width and height|too large/);
    await rejects(caption(img({ width: -10 }), opts), RangeError, /width and height/);
    await rejects(caption(img({ width: 1e9, height: 1e9 }), opts), RangeError, /too large/);
    await rejects(caption(img({ width: '10' }), opts), TypeError, /width must be a number/);
    await rejects(caption(img({ channels: 2 }), opts), RangeError, /channels/);
    await rejects(caption(img({ channels: '4' }), opts), TypeError, /channels/);
    await rejects(caption(img({ data: Array.from(px) }), opts), TypeError, /Uint8ClampedArray or Uint8Array/);
    await rejects(caption(img({ data: detachedCopy(px) }), opts), TypeError, /detached ArrayBuffer/);
    for (const [name, value, Type] of [['num_beams', NaN, RangeError], ['num_beams', -1, RangeError],
      ['num_beams', 1e6, RangeError], ['max_new_tokens', Infinity, RangeError], ['max_new_tokens', 0, RangeError],
      ['max_new_tokens', '3', TypeError], ['output_attentions', 0, TypeError]]) {
      await rejects(caption(img(), { [name]: value }), Type, new RegExp(name));
    }
    assert.throws(() => caption.encode(img({ width: 9 })), RangeError);
    assert.throws(() => caption.encode({ data: [1, 2, 3] }), TypeError);
    // SharedArrayBuffer-backed pixels are read in place.
    const shared = await caption(img({ data: sharedCopy(px, Uint8ClampedArray) }), opts);
    assert.equal(shared.text, ref.text);
    assert.deepEqual([...shared.attentions.at(0).data], [...ref.attentions.at(0).data]);
    assert.equal((await caption(img(), opts)).text, ref.text); // still works
  } finally {
    caption.dispose();
  }
});

test('detached model bytes are refused with a clear Error when a pipeline is made', async () => {
  const dir = `${ROOT}models/sst2-relation/`;
  const configText = readFileSync(`${dir}config.json`, 'utf8');
  const bundle = (weights) => ({
    name: 'sst2-relation', config: JSON.parse(configText), configText,
    files: { 'weights.safetensors': weights, 'vocab.txt': new Uint8Array(readFileSync(`${dir}vocab.txt`)) },
  });
  await rejects(pipeline('sentiment-analysis', bundle(detachedCopy(readFileSync(`${dir}weights.safetensors`)))),
    TypeError, /weights\.safetensors is a view of a detached ArrayBuffer/);
  const ok = await pipeline('sentiment-analysis', bundle(new Uint8Array(readFileSync(`${dir}weights.safetensors`))));
  assert.equal((await ok('terrific')).label, 'POSITIVE');
  ok.dispose();
});
