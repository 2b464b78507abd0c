// Head statistics after Clark et al. 2019, "What does BERT look at?": what one attention map (one head) does on
// average over its query rows. Pure functions, no DOM: the page (modelview.js) and the tests (tests/node/
// headstats.test.mjs, tests/e2e/views.test.mjs) import the same code.
//
// A map is { rows, cols, data } with data row-major (row i = query i, column j = key j). Each row is normalised to sum 1
// first (softmax rows already do; a row of zeros is left out). Then, per head:
//   entropy  — mean over rows of −Σ_j a_ij log₂ a_ij, in bits (0: each row on one key; log₂ cols: uniform);
//   distance — mean over rows of Σ_j a_ij·|i − j| (self-attention only: queries and keys are the same positions);
//   diagonal — mean over rows of a_ii (self-attention only);
//   previous — mean over rows i ≥ 1 of a_i,i−1 (self-attention only; row 0 has no previous token);
//   eos      — mean over rows of the attention on end-of-sequence keys: '</s>' (our models, Marian), BERT's '[SEP]',
//              GPT-2's '<|endoftext|>' (null when no key is one);
//   punct    — mean over rows of the attention on punctuation keys (null when no key is punctuation).
// A statistic that does not apply is null (distance, diagonal and previous of cross attention or of a hop).

export const STAT_KEYS = ['entropy', 'distance', 'diagonal', 'previous', 'eos', 'punct'];

/** Short names and units, for legends and read-outs. */
export const STAT_INFO = {
  entropy: { short: 'H', label: 'entropy', unit: 'bits' },
  distance: { short: 'D', label: 'mean distance', unit: 'tokens' },
  diagonal: { short: '=', label: 'on itself (j = i)', unit: 'share' },
  previous: { short: '←', label: 'on the previous token', unit: 'share' },
  eos: { short: 'e', label: 'on the end token', unit: 'share' },
  punct: { short: 'p', label: 'on punctuation', unit: 'share' },
};

/** A token without its BPE word marker: '▁Hund' → 'Hund'. */
const bare = (t) => String(t ?? '').replace(/^▁/, '');

const END_TOKENS = new Set(['</s>', '[SEP]', '<|endoftext|>']);

/** True for an end-of-sequence (or BERT's separator) token. */
export function isEos(token) {
  return END_TOKENS.has(bare(token));
}

/** True for a token made only of punctuation ('.', '?', ',', '▁,', '...', '«'). */
export function isPunct(token) {
  const s = bare(token);
  return s.length > 0 && /^[\p{P}]+$/u.test(s);
}

/**
 * Statistics of one head. `keys`: the column tokens (for eos and punct; without them both are null); `self`: the map
 * is self-attention over one sequence (rows and columns are the same positions), which distance, diagonal and
 * previous need. Returns { entropy, distance, diagonal, previous, eos, punct } (numbers or null).
 */
export function headStats({ rows, cols, data }, { keys = null, self = false } = {}) {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1 || data.length < rows * cols) {
    throw new RangeError(`headStats: a map of ${rows} × ${cols} needs ${rows * cols} values, got ${data?.length}`);
  }
  const isSelf = Boolean(self) && rows === cols;
  const eosCols = [];
  const punctCols = [];
  if (Array.isArray(keys)) {
    for (let j = 0; j < cols; j++) {
      if (isEos(keys[j])) eosCols.push(j);
      else if (isPunct(keys[j])) punctCols.push(j);
    }
  }
  let n = 0;
  let nPrev = 0;
  let entropy = 0;
  let distance = 0;
  let diagonal = 0;
  let previous = 0;
  let eos = 0;
  let punct = 0;
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += Math.max(0, data[row + j]);
    if (!(sum > 0)) continue;
    n++;
    let h = 0;
    let d = 0;
    for (let j = 0; j < cols; j++) {
      const a = Math.max(0, data[row + j]) / sum;
      if (a > 0) h -= a * Math.log2(a);
      d += a * Math.abs(i - j);
    }
    entropy += h;
    if (isSelf) {
      distance += d;
      diagonal += Math.max(0, data[row + i]) / sum;
      if (i >= 1) {
        previous += Math.max(0, data[row + i - 1]) / sum;
        nPrev++;
      }
    }
    for (const j of eosCols) eos += Math.max(0, data[row + j]) / sum;
    for (const j of punctCols) punct += Math.max(0, data[row + j]) / sum;
  }
  if (n === 0) return { entropy: null, distance: null, diagonal: null, previous: null, eos: null, punct: null };
  return {
    entropy: entropy / n,
    distance: isSelf ? distance / n : null,
    diagonal: isSelf ? diagonal / n : null,
    previous: isSelf && nPrev > 0 ? previous / nPrev : null,
    eos: eosCols.length ? eos / n : null,
    punct: punctCols.length ? punct / n : null,
  };
}

/**
 * Each statistic scaled to [0, 1] for a bar: entropy ÷ log₂ cols (1 = uniform), distance ÷ (cols − 1), shares as they
 * are; null stays null.
 */
export function statBars(stats, cols) {
  const out = {};
  for (const k of STAT_KEYS) {
    const v = stats[k];
    if (v === null || v === undefined || !Number.isFinite(v)) { out[k] = null; continue; }
    const scale = k === 'entropy' ? (cols > 1 ? Math.log2(cols) : 1) : k === 'distance' ? Math.max(1, cols - 1) : 1;
    out[k] = Math.max(0, Math.min(1, v / scale));
  }
  return out;
}

/**
 * 'entropy 1.23 bits · distance 0.91 · on itself 12% · …' ('—' for a statistic that does not apply, or, with
 * `applicable`, only the statistics that apply).
 */
export function formatStats(stats, { applicable = false } = {}) {
  const pct = (v) => `${(100 * v).toFixed(0)}%`;
  const keys = applicable ? STAT_KEYS.filter((k) => stats[k] !== null && stats[k] !== undefined) : STAT_KEYS;
  return keys.map((k) => {
    const v = stats[k];
    const text = v === null || v === undefined ? '—' : k === 'entropy' ? `${v.toFixed(2)} bits` : k === 'distance' ? v.toFixed(2) : pct(v);
    return `${STAT_INFO[k].label} ${text}`;
  }).join(' · ');
}
