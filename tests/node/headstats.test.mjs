// The page's head statistics (web/headstats.js, after Clark et al. 2019) on small matrices computed by hand: entropy
// in bits, mean attention distance, shares on the token itself, the previous token, '</s>' and punctuation, and what
// does not apply (null). Pure functions: no browser, no WASM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headStats, statBars, formatStats, isEos, isPunct, STAT_KEYS } from '../../web/headstats.js';

const close = (actual, expected, msg) => {
  if (expected === null) return assert.equal(actual, null, msg);
  assert.ok(Math.abs(actual - expected) < 1e-12, `${msg}: ${actual} ≠ ${expected}`);
};
const check = (stats, expected) => {
  assert.deepEqual(Object.keys(stats).sort(), [...STAT_KEYS].sort());
  for (const k of STAT_KEYS) close(stats[k], expected[k], k);
};

test('identity self-attention: no entropy, no distance, all on the diagonal', () => {
  const data = Float32Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  check(headStats({ rows: 3, cols: 3, data }, { self: true }),
    { entropy: 0, distance: 0, diagonal: 1, previous: 0, eos: null, punct: null });
});

test('uniform 2 × 2: one bit, distance 1/2, half on itself, half on the previous token', () => {
  const data = Float32Array.from([0.5, 0.5, 0.5, 0.5]);
  check(headStats({ rows: 2, cols: 2, data }, { self: true }),
    { entropy: 1, distance: 0.5, diagonal: 0.5, previous: 0.5, eos: null, punct: null });
});

test('3 × 3 with a comma and </s> among the keys', () => {
  // rows: [.5 .25 .25]  [0 1 0]  [.25 .25 .5]
  // entropy: 1.5, 0, 1.5 bits → 1;  distance: .75, 0, .75 → .5;  diagonal: .5, 1, .5 → 2/3;
  // previous (rows 1 and 2 only): 0 and .25 → .125;  '</s>' (column 2): .25, 0, .5 → .25;  ',' (column 1): .25, 1, .25 → .5
  const data = Float32Array.from([0.5, 0.25, 0.25, 0, 1, 0, 0.25, 0.25, 0.5]);
  check(headStats({ rows: 3, cols: 3, data }, { self: true, keys: ['▁Hallo', '▁,', '</s>'] }),
    { entropy: 1, distance: 0.5, diagonal: 2 / 3, previous: 0.125, eos: 0.25, punct: 0.5 });
});

test('cross attention (not self): positions do not apply; shares over the keys still do', () => {
  // rows: [.5 .5 0]  [0 0 1];  entropy 1 and 0 → .5;  '.' is column 2: 0 and 1 → .5
  const data = Float32Array.from([0.5, 0.5, 0, 0, 0, 1]);
  check(headStats({ rows: 2, cols: 3, data }, { self: false, keys: ['a', 'b', '.'] }),
    { entropy: 0.5, distance: null, diagonal: null, previous: null, eos: null, punct: 0.5 });
  // A square map is self-attention only when the caller says so; a hop (1 × T) never is.
  const hop = headStats({ rows: 1, cols: 4, data: Float32Array.from([0.25, 0.25, 0.25, 0.25]) }, { self: true });
  check(hop, { entropy: 2, distance: null, diagonal: null, previous: null, eos: null, punct: null });
});

test('rows are normalised first; an all-zero row is left out', () => {
  const data = Float32Array.from([2, 2, 0, 0]); // row 0 sums to 4 → [.5 .5]; row 1 is empty
  check(headStats({ rows: 2, cols: 2, data }, { self: true }),
    { entropy: 1, distance: 0.5, diagonal: 0.5, previous: null, eos: null, punct: null });
  check(headStats({ rows: 1, cols: 2, data: new Float32Array(2) }),
    { entropy: null, distance: null, diagonal: null, previous: null, eos: null, punct: null });
  assert.throws(() => headStats({ rows: 2, cols: 2, data: new Float32Array(3) }), RangeError);
});

test('token classes: end tokens and punctuation (BPE word marks ignored)', () => {
  assert.ok(isEos('</s>') && isEos('▁</s>') && isEos('[SEP]') && isEos('<|endoftext|>') && !isEos('s') && !isEos('[CLS]'));
  for (const t of ['.', ',', '▁,', '?', '!', '...', '«', '-', '"']) assert.ok(isPunct(t), t);
  for (const t of ['</s>', "'s", 'Hund', '▁', '', 'U-Bahn']) assert.ok(!isPunct(t), t);
});

test('bars scale each statistic to [0, 1]; the read-out names units', () => {
  const s = { entropy: 1, distance: 0.5, diagonal: 0.25, previous: null, eos: 0, punct: 1 };
  assert.deepEqual(statBars(s, 4), { entropy: 0.5, distance: 0.5 / 3, diagonal: 0.25, previous: null, eos: 0, punct: 1 });
  assert.equal(formatStats(s), 'entropy 1.00 bits · mean distance 0.50 · on itself (j = i) 25% · on the previous token — · ' +
    'on the end token 0% · on punctuation 100%');
});

test('the read-out can leave out what does not apply (an image grid: entropy only)', () => {
  // A 2 × 2 image grid as one distribution over its 4 cells: [.5 .5 0 0] → 1 bit.
  const s = headStats({ rows: 1, cols: 4, data: Float32Array.from([0.5, 0.5, 0, 0]) });
  assert.equal(formatStats(s, { applicable: true }), 'entropy 1.00 bits');
  assert.equal(formatStats({ entropy: 0, distance: null, diagonal: 0.5, previous: null, eos: null, punct: 0 }, { applicable: true }),
    'entropy 0.00 bits · on itself (j = i) 50% · on punctuation 0%');
});
