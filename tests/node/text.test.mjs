// The engine's tokenizers through the package: BPE learn/encode/decode round trips (umlauts, ß, invalid input),
// the SST-2 word tokenizer, clear errors, and dispose().
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, info, BpeTokenizer, tokenizeWords } from '../../wasm/index.js';

before(async () => {
  await init();
});

const CORPUS = [
  'Ein Hund rennt über die Wiese.',
  'Zwei Hunde spielen im Schnee.',
  'Die Straße ist groß und die Größe des Hundes überrascht.',
  'Ein Mann fährt Fahrrad auf der Straße.',
  'Männer und Frauen gehen über die Brücke.',
];

test('BPE: learn, encode, decode round-trips German text with umlauts and ß', () => {
  const bpe = BpeTokenizer.learn(CORPUS, { num_merges: 60 });
  try {
    assert.ok(bpe.vocabSize > 4 && bpe.numMerges > 0 && bpe.numMerges <= 60);
    for (const line of CORPUS) {
      const { ids, pieces } = bpe.encode(line);
      assert.ok(ids instanceof Int32Array);
      assert.equal(ids.length, pieces.length);
      assert.ok(!ids.includes(1), `no <unk> expected in a training line: ${pieces.join(' ')}`);
      assert.equal(bpe.decode(ids), line);
      assert.equal(bpe.decode(Array.from(ids)), line);
    }
    // Characters never seen become <unk> (id 1), visible in the pieces, and decoding shows "<unk>".
    const { ids, pieces } = bpe.encode('Hund 🐕');
    assert.ok(ids.includes(1));
    assert.ok(pieces.includes('<unk>'));
    assert.match(bpe.decode(ids), /<unk>/);
  } finally {
    bpe.dispose();
  }
});

test('BPE: the JSON form and the vocab/merges text form rebuild the same tokenizer', () => {
  const bpe = BpeTokenizer.learn(CORPUS, { num_merges: 40 });
  const json = bpe.toJSON();
  assert.equal(json.type, 'bpe');
  const again = BpeTokenizer.fromJSON(json);
  const fromText = BpeTokenizer.fromText(json.vocab.join('\n') + '\n', json.merges.join('\n') + '\n');
  const line = 'Die Hunde rennen über die Straße.';
  assert.deepEqual(again.encode(line).ids, bpe.encode(line).ids);
  assert.deepEqual(fromText.encode(line).ids, bpe.encode(line).ids);
  for (const t of [bpe, again, fromText]) t.dispose();
});

test('BPE: bad input is a clear Error, and a disposed tokenizer says so', () => {
  const bpe = BpeTokenizer.learn(CORPUS, { num_merges: 10 });
  assert.throws(() => bpe.decode([bpe.vocabSize + 5]), (err) => err instanceof Error && /\d/.test(err.message));
  assert.throws(() => bpe.decode('abc'), { name: 'TypeError' });
  assert.throws(() => bpe.encode(42), { name: 'TypeError', message: /text must be a string/ });
  assert.throws(() => BpeTokenizer.fromJSON('{"type": "bpe"'), /not valid JSON/);
  assert.throws(() => BpeTokenizer.fromJSON({ type: 'bpe', vocab: ['a'], merges: [] }), Error);
  assert.throws(() => BpeTokenizer.learn('not lines'), { name: 'TypeError' });
  // Lone surrogates (invalid UTF-16, so invalid UTF-8 once encoded) never crash the engine.
  const { ids } = bpe.encode('Hund \uD800 Wiese');
  assert.ok(ids.length > 0);
  bpe.dispose();
  assert.throws(() => bpe.encode('Hund'), /BpeTokenizer.encode: this tokenizer was disposed/);
  assert.throws(() => bpe.vocabSize, /this tokenizer was disposed/);
});

test('BPE: dispose() frees the tokenizer (the heap does not grow over 300 create/dispose cycles)', () => {
  const big = Array.from({ length: 200 }, (_, i) => `${CORPUS[i % CORPUS.length]} Satz ${i}`);
  BpeTokenizer.learn(big, { num_merges: 200 }).dispose();
  const start = info().heapBytes;
  for (let i = 0; i < 300; i++) BpeTokenizer.learn(big, { num_merges: 200 }).dispose();
  assert.ok(info().heapBytes - start < 16 << 20, `heap grew from ${start} to ${info().heapBytes}`);
});

test('tokenizeWords follows the SST-2 conventions', () => {
  assert.deepEqual(tokenizeWords("It's a charming and often affecting journey."),
    ['it', "'s", 'a', 'charming', 'and', 'often', 'affecting', 'journey', '.']);
  assert.deepEqual(tokenizeWords("Doesn't work, can't fail!"), ['does', "n't", 'work', ',', 'ca', "n't", 'fail', '!']);
  assert.deepEqual(tokenizeWords(''), []);
  assert.throws(() => tokenizeWords(null), { name: 'TypeError' });
});
