// Text processing from the engine (src/text), the same code the training recipes run through attnlens-cli:
//   BpeTokenizer  byte-safe BPE (Sennrich 2016) with SentencePiece's "▁" word marker; holds WASM memory → dispose()
//   tokenizeWords the sentiment models' tokenizer: lowercased, Penn Treebank conventions as in SST-2
import { getModule } from './core.js';

function requireString(value, what) {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string, got ${value === null ? 'null' : typeof value}`);
}

export class BpeTokenizer {
  /** Use the static constructors: fromText, fromJSON, learn. */
  constructor(handle) {
    if (!handle || typeof handle.encode !== 'function') {
      throw new TypeError('BpeTokenizer: use BpeTokenizer.fromText(), BpeTokenizer.fromJSON() or BpeTokenizer.learn()');
    }
    this._handle = handle;
  }

  /** From the contents of PREFIX.vocab (one piece per line) and PREFIX.merges (one "left right" per line). */
  static fromText(vocabText, mergesText) {
    requireString(vocabText, 'BpeTokenizer.fromText: vocabText');
    requireString(mergesText, 'BpeTokenizer.fromText: mergesText');
    return new BpeTokenizer(getModule().BpeTokenizer.fromText(vocabText, mergesText));
  }

  /** From the bundle form {type: "bpe", vocab: [...], merges: ["left right", ...]} (an object or its JSON text). */
  static fromJSON(json) {
    const text = typeof json === 'string' ? json : JSON.stringify(json);
    return new BpeTokenizer(getModule().BpeTokenizer.fromJson(text));
  }

  /** Learns merges from lines of text. */
  static learn(lines, { num_merges = 10000, min_frequency = 1 } = {}) {
    if (!Array.isArray(lines) || !lines.every((l) => typeof l === 'string')) {
      throw new TypeError('BpeTokenizer.learn: lines must be an array of strings');
    }
    for (const [name, v] of [['num_merges', num_merges], ['min_frequency', min_frequency]]) {
      if (!Number.isSafeInteger(v) || v < 0 || v > 0x7fffffff) throw new RangeError(`BpeTokenizer.learn: ${name} must be a non-negative integer`);
    }
    return new BpeTokenizer(getModule().BpeTokenizer.learn(lines, num_merges, min_frequency));
  }

  _live(method) {
    if (!this._handle) throw new Error(`BpeTokenizer.${method}: this tokenizer was disposed`);
    return this._handle;
  }

  /** text → { ids: Int32Array, pieces: string[] } */
  encode(text) {
    requireString(text, 'BpeTokenizer.encode: text');
    return this._live('encode').encode(text);
  }

  /** ids → text; an id outside the vocabulary is an Error. */
  decode(ids) {
    const handle = this._live('decode');
    if (!(ids instanceof Int32Array) && !(Array.isArray(ids) && ids.every((i) => Number.isSafeInteger(i)))) {
      throw new TypeError('BpeTokenizer.decode: ids must be an Int32Array or an array of integers');
    }
    if (Array.isArray(ids) && ids.some((i) => i < -0x80000000 || i > 0x7fffffff)) {
      throw new RangeError('BpeTokenizer.decode: ids must fit in 32 bits');
    }
    return handle.decode(ids);
  }

  get vocabSize() {
    return this._live('vocabSize').vocabSize();
  }

  get numMerges() {
    return this._live('numMerges').numMerges();
  }

  /** The bundle form {type: "bpe", vocab, merges}. */
  toJSON() {
    return JSON.parse(this._live('toJSON').toJson());
  }

  get disposed() {
    return !this._handle;
  }

  /** Frees the tokenizer's WASM memory now. Safe to call twice. */
  dispose() {
    if (this._handle) {
      this._handle.delete();
      this._handle = null;
    }
  }
}

/** SST-2 style words: tokenizeWords("It's fine.") → ["it", "'s", "fine", "."] */
export function tokenizeWords(text) {
  requireString(text, 'tokenizeWords: text');
  return getModule().tokenizeWords(text);
}
