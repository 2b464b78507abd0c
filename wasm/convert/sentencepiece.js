// A SentencePiece model (.model / MarianMT's source.spm: a ModelProto protobuf) → a Hugging Face tokenizer.json
// object, as Hugging Face's own conversion (SpmConverter) writes it for a unigram model: the Unigram model with the
// pieces and their scores, the Precompiled normaliser carrying the model's charsmap, right strip and runs of spaces
// → "▁", the Metaspace pre-tokenizer and decoder; control and unknown pieces are special added tokens. The engine
// (src/text/hf_tokenizer.h) runs it exactly as SentencePiece does (tests/node/hf-tokenizers.test.mjs).
//
// Refused with an Error naming the file and what is missing: a model that is not unigram (BPE, word, char), byte
// fallback pieces, a normaliser without the dummy prefix, without whitespace escaping or without the removal of
// extra white space, and any bytes that are not a well-formed ModelProto (truncated fields, lengths past the end).

const PIECE_TYPES = { 1: 'normal', 2: 'unknown', 3: 'control', 4: 'user-defined', 5: 'unused', 6: 'byte' };

/** Reads a protobuf message into { field number: [values] } (varint → Number, length-delimited → Uint8Array). */
function readMessage(bytes, where) {
  const fields = {};
  let pos = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (pos >= bytes.length) throw new Error(`${where}: truncated varint`);
      if (shift > 63) throw new Error(`${where}: varint longer than 10 bytes`);
      const b = bytes[pos++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
  };
  while (pos < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value;
    if (wire === 0) value = varint();
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (pos + n > bytes.length) throw new Error(`${where}: truncated fixed field ${field}`);
      value = bytes.subarray(pos, pos + n);
      pos += n;
    } else if (wire === 2) {
      const n = varint();
      if (pos + n > bytes.length) throw new Error(`${where}: field ${field} runs past the end`);
      value = bytes.subarray(pos, pos + n);
      pos += n;
    } else throw new Error(`${where}: unsupported wire type ${wire}`);
    (fields[field] ??= []).push(value);
  }
  return fields;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function last(fields, n, fallback) {
  return fields[n] ? fields[n][fields[n].length - 1] : fallback;
}

/** An embedded message that occurs several times is their merge: the concatenation of their bytes. */
function merged(fields, n, where) {
  const parts = fields[n] ?? [];
  const bytes = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return readMessage(bytes, where);
}

/**
 * @param {Uint8Array} bytes the .model file
 * @param {string} name the file's name, for messages
 * @returns {object} the tokenizer.json object
 */
export function sentencePieceToTokenizerJson(bytes, name = 'sentencepiece model') {
  const model = readMessage(bytes, name);
  if (!model[3]) throw new Error(`${name}: no normalizer_spec (not a SentencePiece model, or truncated)`);
  const trainer = merged(model, 2, `${name} trainer_spec`);
  const modelType = last(trainer, 3, 1);
  if (modelType !== 1) {
    throw new Error(`${name}: model_type ${modelType} is not supported (only unigram, 1, is)`);
  }
  const norm = merged(model, 3, `${name} normalizer_spec`);
  for (const [field, what] of [[3, 'add_dummy_prefix'], [4, 'remove_extra_whitespaces'], [5, 'escape_whitespaces']]) {
    if (last(norm, field, 1) !== 1) throw new Error(`${name}: normalizer_spec.${what} false is not supported`);
  }
  const vocab = [];
  const added = [];
  let unkId = null;
  for (const [i, raw] of (model[1] ?? []).entries()) {
    const p = readMessage(raw, `${name} piece ${i}`);
    if (!p[1]) throw new Error(`${name}: piece ${i} has no text`);
    const piece = utf8.decode(p[1][0]);
    const scoreBytes = last(p, 2, null);
    const score = scoreBytes ? new DataView(scoreBytes.buffer, scoreBytes.byteOffset, 4).getFloat32(0, true) : 0;
    const type = PIECE_TYPES[last(p, 3, 1)];
    if (type === undefined || type === 'byte') {
      throw new Error(`${name}: piece ${i} "${piece}" has type ${last(p, 3, 1)} (byte fallback is not supported)`);
    }
    if (type === 'unknown') unkId = i;
    if (type === 'unknown' || type === 'control') {
      added.push({ id: i, content: piece, single_word: false, lstrip: false, rstrip: false, normalized: false,
        special: true });
    }
    vocab.push([piece, score]);
  }
  if (unkId === null) throw new Error(`${name}: no unknown piece`);
  const charsmap = last(norm, 2, null);
  const normalizers = [];
  if (charsmap && charsmap.length) normalizers.push({ type: 'Precompiled', precompiled_charsmap: base64(charsmap) });
  normalizers.push({ type: 'Strip', strip_left: false, strip_right: true },
    { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '▁' });
  const metaspace = { replacement: '▁', prepend_scheme: 'always', split: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'Sequence', normalizers },
    pre_tokenizer: { type: 'Metaspace', ...metaspace },
    post_processor: null,
    decoder: { type: 'Metaspace', ...metaspace },
    model: { type: 'Unigram', unk_id: unkId, vocab, byte_fallback: false },
  };
}
