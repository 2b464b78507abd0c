// Toy word vectors for the lab's sentence panels, derived from the word itself so that the same word always gets the
// same vector (and two equal words match perfectly): FNV-1a of the lower-cased word seeds mulberry32, which gives
// five numbers, scaled to length 1.6; a sixth coordinate is always 1 (a bias the toy weights can read).
import { toyNumbers } from './ui.js';

export const DIM = 6;

/** Lower-cased words of `text` (letters, digits, apostrophes), at most `max`. */
export function words(text, max = 12) {
  return (text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []).slice(0, max);
}

export function fnv1a(word) {
  let h = 2166136261;
  for (const ch of word) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

/** The toy vector of one word: DIM numbers. */
export function wordVector(word) {
  const v = toyNumbers(DIM - 1, fnv1a(word.toLowerCase()));
  const norm = Math.hypot(...v) || 1;
  return [...v.map((x) => (1.6 * x) / norm), 1];
}

/** The toy vectors of `list` as one row-major array [list.length × DIM]. */
export function vectors(list) {
  return list.flatMap(wordVector);
}
