// The tokenizer of a converted bundle: tokenizer.json as Hugging Face's `tokenizers` reads it. A folder's own
// tokenizer.json is kept byte for byte; otherwise the slow tokenizer's files are turned into the tokenizer.json that
// Hugging Face's convert_slow_tokenizer writes for them: vocab.txt (BertTokenizer, DistilBertTokenizer) → WordPiece
// with BertNormalizer and BertPreTokenizer; vocab.json + merges.txt (GPT2Tokenizer) → byte-level BPE;
// source.spm + vocab.json (MarianTokenizer) → the SentencePiece model as tokenizer.json (sentencepiece.js), with
// vocab.json beside it mapping pieces to the model's ids as MarianTokenizer does. Every token id must be below the
// model's vocabulary size, so the engine never looks up a row the embedding does not have.
import { ConvertError } from './errors.js';
import { sentencePieceToTokenizerJson } from './sentencepiece.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const utf8 = (bytes, file) => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ConvertError(`${file} is not valid UTF-8`);
  }
};
const encode = (obj) => new TextEncoder().encode(`${JSON.stringify(obj, null, 2)}\n`);

/** A JSON file's object; errors name the file. */
export function parseJsonFile(bytes, file) {
  let doc;
  try {
    doc = JSON.parse(utf8(bytes, file));
  } catch (err) {
    if (err instanceof ConvertError) throw err;
    throw new ConvertError(`${file} is not valid JSON (${err.message})`);
  }
  if (!isObject(doc)) throw new ConvertError(`${file} must hold a JSON object`);
  return doc;
}

function checkId(id, vocabSize, file, key) {
  if (!Number.isSafeInteger(id) || id < 0) throw new ConvertError(`${file}: ${key} has id ${JSON.stringify(id)}, not a non-negative integer`);
  if (id >= vocabSize) {
    throw new ConvertError(`${file}: ${key} has id ${id}, outside the model's vocabulary of ${vocabSize} (config.json vocab_size)`);
  }
}

/** Checks a tokenizer.json object: a model the engine's tokenizer reads, every id inside the vocabulary. */
export function checkTokenizerJson(doc, vocabSize, file = 'tokenizer.json') {
  const model = doc.model;
  if (!isObject(model)) throw new ConvertError(`${file}: "model" must be an object`);
  const types = ['WordPiece', 'BPE', 'Unigram'];
  if (!types.includes(model.type)) {
    throw new ConvertError(`${file}: model.type ${JSON.stringify(model.type)} is not supported (supported: ${types.join(', ')})`);
  }
  if (model.type === 'Unigram') {
    if (!Array.isArray(model.vocab)) throw new ConvertError(`${file}: model.vocab must be an array of [piece, score]`);
    model.vocab.forEach((e, i) => {
      if (!Array.isArray(e) || typeof e[0] !== 'string' || typeof e[1] !== 'number') {
        throw new ConvertError(`${file}: model.vocab[${i}] must be [piece, score]`);
      }
    });
  } else {
    if (!isObject(model.vocab)) throw new ConvertError(`${file}: model.vocab must be an object of token → id`);
    for (const [tok, id] of Object.entries(model.vocab)) checkId(id, vocabSize, file, `model.vocab[${JSON.stringify(tok)}]`);
  }
  if (model.type === 'BPE' && !Array.isArray(model.merges)) throw new ConvertError(`${file}: model.merges must be an array`);
  if (doc.added_tokens !== undefined && doc.added_tokens !== null) {
    if (!Array.isArray(doc.added_tokens)) throw new ConvertError(`${file}: "added_tokens" must be an array`);
    doc.added_tokens.forEach((t, i) => {
      if (!isObject(t) || typeof t.content !== 'string') throw new ConvertError(`${file}: added_tokens[${i}] must have a "content" string`);
      checkId(t.id, vocabSize, file, `added_tokens[${i}] (${JSON.stringify(t.content)})`);
    });
  }
}

/** A vocabulary file's token → id object (vocab.json), checked. */
function readVocabJson(bytes, file, vocabSize) {
  const doc = parseJsonFile(bytes, file);
  const vocab = Object.create(null);
  for (const [tok, id] of Object.entries(doc)) {
    checkId(id, vocabSize, file, JSON.stringify(tok));
    vocab[tok] = id;
  }
  return vocab;
}

const special = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });

/** A special token's text from tokenizer_config.json / special_tokens_map.json (a string or {content}). */
function specialText(settings, key, fallback) {
  const v = settings[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.content === 'string') return v.content;
  throw new ConvertError(`tokenizer_config.json: "${key}" must be a string or {"content": ...}`);
}

/** vocab.txt (one token a line, the line number its id) → WordPiece tokenizer.json, as BertConverter writes it. */
function wordpieceFromVocabTxt(bytes, settings, vocabSize) {
  const lines = utf8(bytes, 'vocab.txt').split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (!lines.length) throw new ConvertError('vocab.txt is empty');
  const vocab = Object.create(null);
  lines.forEach((tok, id) => {
    vocab[tok] = id;
  });
  checkId(lines.length - 1, vocabSize, 'vocab.txt', `line ${lines.length}`);
  const names = { unk: specialText(settings, 'unk_token', '[UNK]'), sep: specialText(settings, 'sep_token', '[SEP]'),
    pad: specialText(settings, 'pad_token', '[PAD]'), cls: specialText(settings, 'cls_token', '[CLS]'),
    mask: specialText(settings, 'mask_token', '[MASK]') };
  for (const [what, tok] of Object.entries(names)) {
    if (!(tok in vocab)) throw new ConvertError(`vocab.txt has no ${JSON.stringify(tok)} (the ${what} token)`);
  }
  const specials = [...new Set(Object.values(names))].map((t) => special(t, vocab[t])).sort((a, b) => a.id - b.id);
  const lower = settings.do_lower_case ?? true;
  const seq = (id, type) => ({ Sequence: { id, type_id: type } });
  const tok = (id, type) => ({ SpecialToken: { id, type_id: type } });
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: specials,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: settings.tokenize_chinese_chars ?? true,
      strip_accents: settings.strip_accents ?? null, lowercase: lower },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'TemplateProcessing', single: [tok(names.cls, 0), seq('A', 0), tok(names.sep, 0)],
      pair: [tok(names.cls, 0), seq('A', 0), tok(names.sep, 0), seq('B', 1), tok(names.sep, 1)],
      special_tokens: { [names.cls]: { id: names.cls, ids: [vocab[names.cls]], tokens: [names.cls] },
        [names.sep]: { id: names.sep, ids: [vocab[names.sep]], tokens: [names.sep] } } },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: names.unk, continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/** vocab.json + merges.txt → byte-level BPE tokenizer.json, as GPT2Converter writes it. merges.txt is read as
 * GPT2Tokenizer reads it: its first line (the "#version" header) and its last (empty) line are skipped. */
function bpeFromVocabMerges(vocabBytes, mergesBytes, settings, vocabSize) {
  const vocab = readVocabJson(vocabBytes, 'vocab.json', vocabSize);
  const lines = utf8(mergesBytes, 'merges.txt').split('\n').slice(1, -1);
  const merges = lines.map((line, i) => {
    const parts = line.split(/\s+/).filter(Boolean);
    if (parts.length !== 2) throw new ConvertError(`merges.txt line ${i + 2}: expected two symbols, got ${JSON.stringify(line)}`);
    return `${parts[0]} ${parts[1]}`;
  });
  const texts = [...new Set(['unk_token', 'bos_token', 'eos_token'].map((k) => specialText(settings, k, '<|endoftext|>')))];
  const added = texts.filter((t) => t in vocab).map((t) => special(t, vocab[t])).sort((a, b) => a.id - b.id);
  const aps = settings.add_prefix_space ?? false;
  const byteLevel = (prefix, trim) => ({ type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: trim, use_regex: true });
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: byteLevel(aps, true), post_processor: byteLevel(true, false), decoder: byteLevel(true, true),
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

/** MarianTokenizer's files: source.spm → tokenizer.json (helper module ./sentencepiece.js), vocab.json kept. */
async function marianFromSpm(read, names, settings, vocabSize) {
  if (settings.separate_vocabs === true) {
    throw new ConvertError('tokenizer_config.json: "separate_vocabs": true (separate source and target vocabularies) is not supported');
  }
  for (const f of ['source.spm', 'vocab.json']) {
    if (!names.includes(f)) throw new ConvertError(`no tokenizer: a Marian folder needs tokenizer.json + vocab.json, or source.spm + target.spm + vocab.json (${f} is missing)`);
  }
  const vocabBytes = await read('vocab.json');
  readVocabJson(vocabBytes, 'vocab.json', vocabSize);
  let doc;
  try {
    doc = sentencePieceToTokenizerJson(await read('source.spm'), 'source.spm');
  } catch (err) {
    throw new ConvertError(err.message);
  }
  return { doc, vocabBytes };
}

/**
 * The bundle's tokenizer files and config entry for a model of this kind ('wordpiece', 'bpe', 'marian').
 * @returns {{ entry: object, files: Record<string, Uint8Array>, from: string[] }}
 */
export async function convertTokenizer(kind, read, names, vocabSize) {
  const settings = {};
  for (const f of ['special_tokens_map.json', 'tokenizer_config.json']) {
    if (names.includes(f)) Object.assign(settings, parseJsonFile(await read(f), f));
  }
  const from = ['tokenizer_config.json', 'special_tokens_map.json'].filter((f) => names.includes(f));
  const entry = { type: 'hf', file: 'tokenizer.json' };
  const files = {};
  if (kind === 'marian' && names.includes('vocab.json')) {
    files['vocab.json'] = await read('vocab.json');
    readVocabJson(files['vocab.json'], 'vocab.json', vocabSize);
    entry.vocab = 'vocab.json';
  }
  if (names.includes('tokenizer.json')) {
    const bytes = await read('tokenizer.json');
    checkTokenizerJson(parseJsonFile(bytes, 'tokenizer.json'), vocabSize);
    if (kind === 'marian' && !entry.vocab) throw new ConvertError('no tokenizer: a Marian folder with tokenizer.json needs vocab.json too');
    files['tokenizer.json'] = bytes;
    return { entry, files, from: [...from, 'tokenizer.json', ...(entry.vocab ? ['vocab.json'] : [])] };
  }
  let doc;
  if (kind === 'wordpiece') {
    if (added(names)) throw added(names);
    if (!names.includes('vocab.txt')) throw new ConvertError('no tokenizer: expected tokenizer.json or vocab.txt');
    doc = wordpieceFromVocabTxt(await read('vocab.txt'), settings, vocabSize);
    from.push('vocab.txt');
  } else if (kind === 'bpe') {
    if (added(names)) throw added(names);
    if (!names.includes('vocab.json') || !names.includes('merges.txt')) {
      throw new ConvertError('no tokenizer: expected tokenizer.json, or vocab.json and merges.txt');
    }
    doc = bpeFromVocabMerges(await read('vocab.json'), await read('merges.txt'), settings, vocabSize);
    from.push('vocab.json', 'merges.txt');
  } else {
    const m = await marianFromSpm(read, names, settings, vocabSize);
    doc = m.doc;
    from.push('source.spm', 'vocab.json');
  }
  checkTokenizerJson(doc, kind === 'marian' ? Infinity : vocabSize);
  files['tokenizer.json'] = encode(doc);
  return { entry, files, from };
}

function added(names) {
  return names.includes('added_tokens.json')
    ? new ConvertError('added_tokens.json is not supported without tokenizer.json (save the tokenizer with a fast tokenizer to get one)')
    : null;
}

/** ViT's preprocessor_config.json → the bundle's "image" entry {size: [h, w], mean, std, rescale_factor, resample}. */
export function convertImageConfig(bytes, hp) {
  const file = 'preprocessor_config.json';
  const p = parseJsonFile(bytes, file);
  const [ih, iw] = hp.image_size_hw;
  let size = [ih, iw];
  if (p.do_resize !== false && p.size !== undefined) {
    if (Number.isSafeInteger(p.size)) size = [p.size, p.size];
    else if (isObject(p.size) && Number.isSafeInteger(p.size.height) && Number.isSafeInteger(p.size.width)) size = [p.size.height, p.size.width];
    else throw new ConvertError(`${file}: "size" ${JSON.stringify(p.size)} is not supported (expected a number or {"height", "width"})`);
  }
  if (size[0] !== ih || size[1] !== iw) {
    throw new ConvertError(`${file}: "size" ${size.join('x')} differs from config.json "image_size" ${ih}x${iw}`);
  }
  const triple = (key, fallback) => {
    const v = p[key] ?? fallback;
    const list = typeof v === 'number' ? [v, v, v] : v;
    if (!Array.isArray(list) || list.length !== 3 || !list.every((x) => Number.isFinite(x))) {
      throw new ConvertError(`${file}: "${key}" must be three numbers, got ${JSON.stringify(v)}`);
    }
    if (key === 'image_std' && list.some((x) => x <= 0)) throw new ConvertError(`${file}: "image_std" must be positive`);
    return list;
  };
  const normalize = p.do_normalize !== false;
  const rescale = p.do_rescale !== false ? p.rescale_factor ?? 1 / 255 : 1;
  if (!Number.isFinite(rescale) || rescale <= 0) throw new ConvertError(`${file}: "rescale_factor" must be a positive number`);
  const resample = p.resample ?? 2;
  if (![0, 1, 2, 3].includes(resample)) {
    throw new ConvertError(`${file}: "resample" ${JSON.stringify(resample)} is not supported (0 nearest, 1 Lanczos, 2 bilinear, 3 bicubic)`);
  }
  return { size, mean: normalize ? triple('image_mean', [0.5, 0.5, 0.5]) : [0, 0, 0],
    std: normalize ? triple('image_std', [0.5, 0.5, 0.5]) : [1, 1, 1], rescale_factor: rescale, resample };
}
