// Input checks and text preparation shared by the task modules (wasm/pipelines/*.js); not a task itself.
//
// Errors: a value of the wrong JS type is a TypeError; a number that is NaN, ±Infinity, not an integer or outside
// its range, or an image whose byte count does not match its size, is a RangeError; both name the option or
// argument. Everything is checked in JS before the engine is called, so bad input never reaches WebAssembly.
//
// Strings: lone UTF-16 surrogates (an unpaired \uD800–\uDFFF) are replaced by U+FFFD, as TextEncoder does — one
// code unit for one, so string indices are unchanged. (Without this, Embind's UTF-8 conversion would pair a lone
// surrogate with the character after it.)

/**
 * The options object of a pipeline or a call: undefined/null → {}; anything but a plain object → TypeError; a key
 * not in `known` → TypeError naming it and the known ones (a typo must never silently fall back to a default).
 */
export function checkOptions(options, known, where) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`attnlens: ${where} options must be an object`);
  }
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length > 0) {
    throw new TypeError(`attnlens: unknown ${where} option${unknown.length > 1 ? 's' : ''} ` +
      `${unknown.map((k) => `"${k}"`).join(', ')} (known: ${known.length > 0 ? known.join(', ') : 'none'})`);
  }
  return options;
}

/** Throws a TypeError / RangeError naming `name` unless `value` is undefined or an integer in [lo, hi]. */
export function checkInt(value, name, lo, hi) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') {
    throw new TypeError(`attnlens: ${name} must be an integer in [${lo}, ${hi}], got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < lo || value > hi) {
    throw new RangeError(`attnlens: ${name} must be an integer in [${lo}, ${hi}], got ${String(value)}`);
  }
  return value;
}

/** Throws unless `value` is undefined or a finite number. */
export function checkFinite(value, name) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') throw new TypeError(`attnlens: ${name} must be a finite number, got ${describe(value)}`);
  if (!Number.isFinite(value)) throw new RangeError(`attnlens: ${name} must be a finite number, got ${String(value)}`);
  return value;
}

/** Throws unless `value` is undefined or a boolean. */
export function checkBool(value, name) {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`attnlens: ${name} must be a boolean, got ${describe(value)}`);
  }
  return value;
}

export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `a string`;
  if (typeof value === 'symbol' || typeof value === 'function') return typeof value;
  if (typeof value === 'bigint') return `${String(value)}n (a BigInt)`;
  return `${String(value)} (${typeof value})`;
}

/** True when the ArrayBuffer under `view` was detached (transferred with postMessage/structuredClone). */
export function isDetached(view) {
  const buffer = view.buffer;
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  if (buffer.byteLength !== 0 || view.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer); // eslint-disable-line no-new
    return false;
  } catch {
    return true;
  }
}

const isShared = (view) => typeof SharedArrayBuffer === 'function' && view.buffer instanceof SharedArrayBuffer;

/**
 * Bytes the engine can read: a detached buffer is a TypeError naming `what`; a SharedArrayBuffer-backed view is
 * copied first when `copyShared` (TextDecoder and Embind's std::string refuse or race on shared memory).
 */
export function checkBytes(view, what, { copyShared = true } = {}) {
  if (isDetached(view)) {
    throw new TypeError(`attnlens: ${what} is a view of a detached ArrayBuffer (it was transferred, e.g. with ` +
      'postMessage or structuredClone); pass a copy that this thread still owns');
  }
  if (copyShared && isShared(view)) return new Uint8Array(view); // a copy into an ordinary ArrayBuffer
  return view;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The string with every lone surrogate replaced by U+FFFD (same length). */
export function toWellFormed(text) {
  if (typeof text.isWellFormed === 'function') return text.isWellFormed() ? text : text.toWellFormed();
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

// ---- translation source text -----------------------------------------------------------------------------------
// The translator's engine applies these rules itself (src/text/normalize.h, sentences.h, recase.h, called by
// api::Translator), so the CLI, Node and the browser agree; the functions below are their JavaScript statement,
// exported for tests/node/translation-input.test.mjs and scripts/gen_text_cases.mjs (the C++ tests' fixture).

/**
 * What the translator's engine gets for a piece of the caller's text, and how to map indices back.
 * Steps, each keeping the caller's string indices recoverable:
 *   1. lone surrogates → U+FFFD; U+00A0, U+2007, U+202F (no-break spaces) → ' ' (all length-preserving);
 *   2. Unicode NFC (a decomposed "u\u0308" becomes "ü", one code unit shorter), applied to each character with its
 *      combining marks (and Hangul jamo) — which is NFC for all text in practice, and gives an exact index map;
 *   3. `caseFold` (optional): a function applied to the normalised text that must keep its length.
 * Returns { text, start(i), end(i) }: text is what the engine sees; start/end map a [start, end) index pair of it
 * to indices of the input string (a start inside a merged character maps to its start, an end to its end).
 */
export function prepareSource(input) {
  const spaced = toWellFormed(input).replace(/[\u00A0\u2007\u202F]/g, ' ');
  const nfc = spaced.normalize('NFC');
  if (nfc === spaced) return { text: spaced, start: (i) => i, end: (i) => i };
  const starts = [];
  const ends = [];
  let out = '';
  let o = 0;
  for (const seg of spaced.match(/[\s\S][\p{M}\u1160-\u11FF]*/gu)) {
    const n = seg.normalize('NFC');
    for (let k = 0; k < n.length; k++) {
      starts.push(o);
      ends.push(k === 0 ? o : o + seg.length);
    }
    out += n;
    o += seg.length;
  }
  starts.push(o);
  ends.push(o);
  return {
    text: out,
    start: (i) => starts[Math.max(0, Math.min(i, starts.length - 1))],
    end: (i) => ends[Math.max(0, Math.min(i, ends.length - 1))],
  };
}

// ---- case ------------------------------------------------------------------------------------------------------

const sameLength = (c, f) => {
  const m = f(c);
  return m.length === c.length ? m : c;
};
const lower = (w) => Array.from(w, (c) => sameLength(c, (x) => x.toLowerCase())).join('');
const capitalise = (w) => {
  const [first, ...rest] = Array.from(w);
  return sameLength(first, (x) => x.toUpperCase()) + rest.join('');
};

/**
 * Case restoration for a sentence typed in ALL CAPS or all lower case (a mixed-case sentence is returned as it is:
 * the person chose its case). ALL CAPS (at least two cased letters, none lower-case) is lower-cased first. Then the
 * sentence's first word is capitalised, and so is every other word that starts after white space (or after
 * opening punctuation) whose capitalised form the model's BPE splits into fewer pieces than its lower-case form
 * ("zeit" → "Zeit", one piece against two; "ich" and "morgen" stay: both forms are one piece). Every character
 * keeps its UTF-16 length (one that would not — "ß" → "SS" — is left alone), so string indices do not move.
 * @param {string} text one sentence
 * @param {(word: string) => number} pieces how many BPE pieces a word (as a whole, space-initial word) takes
 * @returns {string}
 */
export function restoreCase(text, pieces) {
  let upper = 0;
  let lowerCount = 0;
  for (const c of text) {
    if (c.toLowerCase() === c.toUpperCase()) continue;
    if (c === c.toUpperCase()) upper++;
    else lowerCount++;
  }
  const allCaps = upper >= 2 && lowerCount === 0;
  if (!allCaps && !(upper === 0 && lowerCount > 0)) return text;
  const base = allCaps ? lower(text) : text;
  let first = true;
  return base.replace(/(^|[\s\p{Ps}\p{Pi}\p{Pf}"'„‚«»¿¡-]*)([\p{L}\p{M}]+)/gu, (all, before, word, offset) => {
    const initial = offset === 0 || /[\s\p{Ps}\p{Pi}\p{Pf}"'„‚«»¿¡]$/u.test(base.slice(0, offset + before.length)) ||
      offset + before.length === 0;
    let w = word;
    if (first) w = capitalise(word);
    else if (initial && word === lower(word) && pieces(capitalise(word)) < pieces(word)) {
      w = capitalise(word);
    }
    first = false;
    return before + w;
  });
}

// ---- sentences ---------------------------------------------------------------------------------------------------

// Words that end with a full stop without ending a sentence (compared lower-case, without the stop).
const ABBREVIATIONS = new Set([
  'abb', 'abs', 'bd', 'bspw', 'bzw', 'ca', 'dr', 'etc', 'evtl', 'fr', 'frl', 'geb', 'gest', 'ggf', 'hr', 'hrn',
  'inkl', 'jh', 'jhd', 'jr', 'kap', 'max', 'min', 'mio', 'mr', 'mrd', 'mrs', 'ms', 'nr', 'prof', 'sr', 'st', 'std',
  'str', 'tel', 'usw', 'vgl', 'vs', 'zzgl', 'jan', 'feb', 'aug', 'sep', 'sept', 'okt', 'nov', 'dez',
]);

/**
 * Sentence spans of `text` as [{ start, end }] string indices (trimmed of white space; empty sentences dropped).
 *
 * The rule. A sentence ends after a run of . ! ? … (e.g. "?!", "..."), plus any closing quotes or brackets right
 * after it (" ' “ ” ‘ ’ » « ) ]), when white space follows and the next sentence starts with an upper-case letter
 * or an opening quote („ “ " ‚ ‘ ' « »). A run that is a single "." does NOT end a sentence when the word before it
 *   - is a number: ordinals and dates ("am 3. Mai", "1. Platz") — so "Er ist 30. Sie ist 25." stays one sentence;
 *   - is a single letter: "z. B.", "d. h.", "u. a.", initials ("A. Merkel");
 *   - contains a full stop itself: "z.B.", "u.a.", "U.S.";
 *   - is in ABBREVIATIONS ("Dr.", "Nr.", "usw.", "bzw.", "ca.", "Prof.", "Str.", …) — so "…, Birnen usw. Dann …"
 *     stays one sentence too.
 * A number such as "3.5" or "2,50" never splits (no space after the stop); lower-case after a stop does not start
 * a sentence ("… geht es dir? mir auch" is one). A blank line (two line breaks) always ends a sentence.
 */
export function splitSentences(text) {
  const cuts = []; // [end of the sentence before, start of the next]
  const stop = /([.!?\u2026]+)(["'\u201C\u201D\u2018\u2019\u00BB\u00AB)\]]*)(\s+)(?=[\p{Lu}\u201E\u201C"\u201A\u2018'\u00AB\u00BB])/gu;
  for (let m; (m = stop.exec(text)) !== null;) {
    if (m[1] === '.') {
      let w = m.index;
      while (w > 0 && !/\s/.test(text[w - 1])) w--;
      const word = text.slice(w, m.index).replace(/^[\p{Ps}\p{Pi}"'\u201E\u201A]+/u, '');
      if (/^\p{N}+$/u.test(word) || /^\p{L}$/u.test(word) || word.includes('.') ||
          ABBREVIATIONS.has(word.toLowerCase())) {
        continue;
      }
    }
    cuts.push([m.index + m[1].length + m[2].length, m.index + m[0].length]);
  }
  for (const m of text.matchAll(/\r?\n[^\S\r\n]*\r?\n/g)) cuts.push([m.index, m.index + m[0].length]);
  cuts.sort((a, b) => a[0] - b[0]);
  const spans = [];
  let from = 0;
  const push = (a, b) => {
    while (a < b && /\s/.test(text[a])) a++;
    while (b > a && /\s/.test(text[b - 1])) b--;
    if (b > a) spans.push({ start: a, end: b });
  };
  for (const [end, next] of cuts) {
    if (end < from) continue;
    push(from, end);
    from = next;
  }
  push(from, text.length);
  return spans;
}
