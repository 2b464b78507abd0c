// The 'translation' pipeline: de→en translators (de-en-transformer, de-en-rnn-general, de-en-rnn-additive) that
// return every attention map they compute. pipeline.js calls createTranslationPipeline(bundle, options) after
// `await init()`.
//
//   const translate = await pipeline('translation', 'de-en-transformer');
//   const out = await translate('Ein Hund rennt über die Wiese.', { num_beams: 4 });
//   // { text: 'A dog runs across the grass.',
//   //   source_tokens: ['▁Ein', '▁Hund', …, '</s>'], target_tokens: ['▁A', '▁dog', …, '</s>'],
//   //   attentions: AttentionMaps (wasm/trace.js) of [{ name: 'cross', layer: 0, head: 0, dims: [T, S], data: Float32Array }, …],
//   //   truncated: false, source_ids: Int32Array, target_ids: Int32Array, score: -2.9, num_beams: 4 }
//   const outs = await translate(['Danke!', 'Wie geht es dir?']);   // a list: one result per text, in order; every
//   // sentence of every text goes to the engine in one call (shared among its threads in the threaded module)
//
// Options (at creation they become this pipeline's defaults; per call they override them):
//   num_beams          1 = greedy, up to 64 (default: the bundle's decoding.num_beams, 4 for the shipped models)
//   max_new_tokens     at most this many target tokens (default: 2·|source ids| + 10, within the model's positions)
//   output_attentions  true (default): every map; false: attentions = [] (faster); a list of kinds
//                      (['cross'], ['encoder_self', 'decoder_self'], …): only those maps
//   head_mean          true: each layer's mean over its heads (head −1), computed in the engine, instead of every
//                      head (default false)
//   alpha              GNMT length penalty exponent of beam search (default: the bundle's, 0.6)
//   coverage_beta      GNMT coverage penalty weight (default: the bundle's, 0 = off)
//   alignment_method   'head' (a trained alignment head) | 'layer-mean' (mean of one decoder layer's cross heads);
//                      default: the bundle's ('head' for de-en-general, 'layer-mean' for the others)
//   alignment_extraction 'argmax' (one link per target word) | 'gdfa' (grow-diag-final-and of both directions)
//   alignment_layer, alignment_head   which decoder layer / head (default: the bundle's)
//   word_maps          true: also `word_attentions`, every map merged to words (default false)
//   copy_numbers       true (default): numbers the model wrote differently from the source number its alignment
//                      links them to are replaced by that number in English notation ("2,50" → "2.50"), listed in
//                      `number_copies` (api/translation.h); false: the model's own text
//   output_qk          true: also `qk`, the query/key vectors behind every map (neuron view; Transformer only;
//                      with several sentences in each of `sentences` only)
// Words and alignment (every result): source_words / target_words [{ text, start, end }] — the pieces merged into
// the words a person sees (a piece starting with '▁', a punctuation piece and the piece after punctuation start a
// word; "T-Shirt" → T | - | Shirt), with [start, end) string indices into the input / the translation;
// alignment [[source word, target word], …] from the word-level cross map `alignment_map` ({dims: [target words,
// source words], data}: SUM over a source word's pieces, MEAN over a target word's pieces); alignment_method says
// which attention and extraction made them. Without output_attentions there are no maps and no links.
//
// translate.align(source, target, options): forced decoding — the model runs over the given translation instead
// of searching; same result shape, plus token_logprobs (each target piece's log-probability; score = their sum).
// Attention maps: Transformer — 'encoder_self' [S,S], 'decoder_self' [T,T] (causal), 'cross' [T,S] for every layer
// and head; RNNs — one 'cross' [T,S] (layer −1, head −1). Row t belongs to target_tokens[t], column s to
// source_tokens[s]; every row sums to 1.
// Input: a string (or an array of strings → an array of results). Empty text gives an empty translation; text
// longer than the model's positions is cut (`truncated: true`); unknown characters appear as '<unk>' tokens.
//
// Text as people type it (wasm/pipelines/input.js):
//   - Normalisation: lone surrogates → U+FFFD, no-break spaces (U+00A0, U+2007, U+202F) → ' ', then Unicode NFC
//     ("u\u0308" → "ü"). The engine sees the normalised text, but every source_words start/end (and source_start /
//     source_end) is a string index into the CALLER'S ORIGINAL input, so a UI can highlight what the user typed;
//     target_words index the translation `text`. align() normalises both texts the same way.
//   - Sentences: the input is split into sentences (the rule is written at splitSentences() in input.js: . ! ? …
//     followed by white space and an upper-case letter or an opening quote; abbreviations such as "z. B.", "usw.",
//     "Dr.", "Nr.", ordinals "1." and numbers "3.5" do not split; a blank line always does), and each is
//     translated on its own. The result:
//       sentences   one full result per sentence (text, tokens, maps, words, alignment, truncated, …) plus
//                   source_start / source_end, the sentence's [start, end) in the input (white space trimmed);
//       text        the sentences' translations joined with one space;
//       the rest    one sentence: exactly that sentence's result (so callers that ignore `sentences` see what
//                   they always saw). Several: the whole input as one sequence — tokens, ids and words
//                   concatenated (word pieces and links re-indexed, target words indexing the joined text), score
//                   summed, and every attention map (and alignment_map, word_attentions) block-diagonal, since
//                   each sentence attended only to itself; rows still sum to 1.
//     An input without sentences (empty, white space) gives text '' and sentences [].
//   - Length: the sentences share the model's positions (translate.maxSourceTokens pieces, each sentence's '</s>'
//     included): whole sentences are translated in order while they fit, the rest are dropped, and `truncated`
//     is true. A first sentence longer than that is cut by the engine, as before. So 200,000 characters cost no
//     more than one full-length sentence.
//   - Case: a sentence typed in ALL CAPS or all in lower case is re-cased before the engine sees it (restoreCase()
//     in input.js: first word capitalised; a word capitalised where the model's BPE knows it better that way, so
//     "ich habe morgen keine zeit" → "Ich habe morgen keine Zeit", "WIE GEHT ES DIR?" → "Wie geht es dir?"); the
//     result's source_text then holds the text the engine saw (indices unchanged), and source_tokens/words show
//     it. Mixed-case input is passed as typed. restore_case: false turns this off. Punctuation is passed as typed.
//   - Names are pieces like any other. Numbers: de-en-general was trained with numbers swapped at random
//     (augment.py), yet writes some wrongly ("2,50 Euro" → "250", "1985" → "1958"); copy_numbers (default) puts the
//     aligned source number back in English notation: "Tom kauft 3 Äpfel für 2,50 Euro." → "Tom is buying 3 apples
//     for 2.50." A number the model dropped stays dropped.
// Errors: a non-string input is a TypeError; an option of the wrong type a TypeError; a number option that is NaN,
// ±Infinity, not an integer or out of its range a RangeError; each message names the option (input.js).
import { getModule } from '../core.js';
import {
  describe, prepareSource, restoreCase, splitSentences, toWellFormed,
} from './input.js';
import { bundleFile, bundleWeights, configText, createPipeline } from './base.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'translation';
// The options, as src/api/translation.cpp declares them (contract.js): the engine reads the declared engine
// options (api::translation_params); restore_case is applied here, and align() takes only the map options (the
// search options given to it, or to the pipeline, are accepted and do not apply).
const contract = () => contractOf(TASK);
const alignContract = () => contractOf(TASK, 'align');
function engineOptions(o, search) {
  return engineJson(search ? contract() : alignContract(), o);
}

function checkTranslationOptions(options, where) {
  return checkContractOptions(contract(), options, 'call', where);
}

// UTF-8 byte offsets (the engine's) → string indices of `text`, as Embind encodes a JS string: a lone surrogate
// takes 3 bytes, a pair 4.
function byteToIndex(text) {
  const map = new Map([[0, 0]]);
  let bytes = 0;
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i);
    const units = cp > 0xffff ? 2 : 1;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += units;
    map.set(bytes, i);
  }
  return (b) => map.get(b) ?? text.length;
}

function wordsOf(raw, text) {
  const at = byteToIndex(text);
  return raw.map((w) => ({ text: w.text, start: at(w.begin), end: at(w.end), pieces: [w.firstPiece, w.endPiece] }));
}

const identity = (text) => ({ text, start: (i) => i, end: (i) => i });

// A word of the text the engine saw → indices of the caller's text (+ base, where the sentence starts).
function mapWord(w, map, base) {
  return { ...w, start: base + map.start(w.start), end: base + map.end(w.end) };
}

// Maps of the same kind from consecutive sentences → one block-diagonal map: dims [..., ΣR, ΣC] (leading dims
// equal), block i at rows ΣR<i, columns ΣC<i, zeros elsewhere. Every row still sums to what it summed to.
function blockDiagonal(maps) {
  const rank = maps[0].dims.length;
  const lead = maps[0].dims.slice(0, rank - 2);
  const leadSize = lead.reduce((a, b) => a * b, 1);
  const rows = maps.reduce((n, m) => n + m.dims[rank - 2], 0);
  const cols = maps.reduce((n, m) => n + m.dims[rank - 1], 0);
  const data = new Float32Array(leadSize * rows * cols);
  let r0 = 0;
  let c0 = 0;
  for (const m of maps) {
    const [R, C] = m.dims.slice(rank - 2);
    for (let l = 0; l < leadSize; l++) {
      for (let r = 0; r < R; r++) {
        data.set(m.data.subarray((l * R + r) * C, (l * R + r + 1) * C), (l * rows + r0 + r) * cols + c0);
      }
    }
    r0 += R;
    c0 += C;
  }
  return { dims: [...lead, rows, cols], data };
}

// Sentences' AttentionMaps → one AttentionMaps of block-diagonal maps (empty if the sentences' maps differ).
function combineMaps(traces) {
  const lists = traces.map((t) => t.toArray());
  const n = lists[0].length;
  const sameShape = lists.every((l) => l.length === n && l.every((m, i) =>
    m.name === lists[0][i].name && m.layer === lists[0][i].layer && m.head === lists[0][i].head &&
    m.dims.length === lists[0][i].dims.length && m.dims.length >= 2));
  if (!sameShape) return new AttentionMaps();
  return AttentionMaps.from(lists[0].map((m0, i) => ({ ...m0, ...blockDiagonal(lists.map((l) => l[i])) })));
}

function concatInt32(arrays) {
  const out = new Int32Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

// Several sentence results → the whole input's result: text joined with ' ', tokens / ids / words / links
// concatenated (word pieces and links re-indexed; target word indices into the joined text), every map
// block-diagonal (sentence i's tokens attend only within sentence i, as they were computed).
function combine(sentences, dropped) {
  const out = {
    text: sentences.map((s) => s.text).join(' '),
    source_tokens: [], target_tokens: [], source_words: [], target_words: [], alignment: [],
  };
  let srcTok = 0;
  let tgtTok = 0;
  let srcWords = 0;
  let tgtWords = 0;
  let tgtChar = 0;
  for (const s of sentences) {
    for (const t of s.source_tokens) out.source_tokens.push(t);
    for (const t of s.target_tokens) out.target_tokens.push(t);
    for (const w of s.source_words) out.source_words.push({ ...w, pieces: [w.pieces[0] + srcTok, w.pieces[1] + srcTok] });
    for (const w of s.target_words) {
      out.target_words.push({ ...w, start: w.start + tgtChar, end: w.end + tgtChar,
        pieces: [w.pieces[0] + tgtTok, w.pieces[1] + tgtTok] });
    }
    for (const [a, b] of s.alignment) out.alignment.push([a + srcWords, b + tgtWords]);
    srcTok += s.source_tokens.length;
    tgtTok += s.target_tokens.length;
    srcWords += s.source_words.length;
    tgtWords += s.target_words.length;
    tgtChar += s.text.length + 1;
  }
  out.attentions = combineMaps(sentences.map((s) => s.attentions));
  // Number copies: target words re-indexed into the whole input (source_number stays per sentence).
  let words = 0;
  const copies = [];
  for (const s of sentences) {
    for (const c of s.number_copies ?? []) copies.push({ ...c, target_word: c.target_word + words, sentence: sentences.indexOf(s) });
    words += s.target_words.length;
  }
  if (copies.length > 0) out.number_copies = copies;
  out.alignment_method = sentences[0].alignment_method;
  out.alignment_map = blockDiagonal(sentences.map((s) => s.alignment_map));
  out.truncated = dropped || sentences.some((s) => s.truncated);
  out.source_ids = concatInt32(sentences.map((s) => s.source_ids));
  out.target_ids = concatInt32(sentences.map((s) => s.target_ids));
  out.score = sentences.reduce((n, s) => n + s.score, 0);
  out.num_beams = sentences[0].num_beams;
  if (sentences.every((s) => s.word_attentions)) out.word_attentions = combineMaps(sentences.map((s) => s.word_attentions));
  out.source_start = sentences[0].source_start;
  out.source_end = sentences.at(-1).source_end;
  out.sentences = sentences;
  return out;
}

// The engine's result as the package's object. src / tgt: prepareSource() maps of the texts the engine saw;
// srcBase / tgtBase are added to the mapped word indices.
function shape(r, src, srcBase, tgt, tgtBase, extra = {}) {
  const out = {
    text: r.text,
    source_tokens: r.sourceTokens,
    target_tokens: r.targetTokens,
    attentions: new AttentionMaps(r.attentions),
    source_words: wordsOf(r.sourceWords, src.text).map((w) => mapWord(w, src, srcBase)),
    target_words: wordsOf(r.targetWords, tgt.text).map((w) => mapWord(w, tgt, tgtBase)),
    alignment: r.alignment,
    alignment_method: r.alignmentMethod,
    alignment_map: { dims: [r.targetWords.length, r.sourceWords.length], data: r.alignmentMap },
    truncated: r.truncated,
    source_ids: r.sourceIds,
    target_ids: r.targetIds,
    score: r.score,
    num_beams: r.numBeams,
    ...extra,
  };
  if (r.wordAttentions.index.length > 0) out.word_attentions = new AttentionMaps(r.wordAttentions);
  if (r.tokenLogprobs.length > 0) out.token_logprobs = r.tokenLogprobs;
  if (r.qk.index.length > 0) out.qk = new AttentionMaps(r.qk);
  if (r.numberCopies?.length > 0) {
    out.number_copies = r.numberCopies.map((c) => ({ source_number: c.sourceNumber, target_word: c.targetWord,
      model: c.model, text: c.text, weight: c.weight }));
  }
  return out;
}

/**
 * @param {{ name: string, config: object, configText?: string, files: Record<string, Uint8Array> }} bundle
 * @param {{ num_beams?: number, max_new_tokens?: number, output_attentions?: boolean, alpha?: number,
 *           coverage_beta?: number }} [options]
 */
export async function createTranslationPipeline(bundle, options = {}) {
  const defaults = { ...checkTranslationOptions(options, `${TASK} pipeline`) };
  const vocabName = bundle.config.tokenizer?.vocab;
  const mergesName = bundle.config.tokenizer?.merges;
  if (typeof vocabName !== 'string' || typeof mergesName !== 'string') {
    throw new Error(`attnlens: translation model ${bundle.name}: config.json has no tokenizer.vocab/merges files`);
  }
  const weights = bundleWeights(bundle, TASK);
  const files = {
    [vocabName]: bundleFile(bundle, vocabName, TASK, { text: true }),
    [mergesName]: bundleFile(bundle, mergesName, TASK, { text: true }),
  };
  let counter = null; // a tokenizer of the same vocabulary: sentence budgets and case restoration (made on first need)
  const tokenizer = () => (counter ??= getModule().BpeTokenizer.fromText(files[vocabName], files[mergesName]));
  const engine = getModule().Translator.fromBundle(configText(bundle), weights, files, String(bundle.name ?? ''));
  const maxSource = engine.maxSourceTokens();
  const pieceCounts = new Map();
  const pieces = (word) => {
    let n = pieceCounts.get(word);
    if (n === undefined) {
      n = tokenizer().encode(word).ids.length;
      if (pieceCounts.size < 65536) pieceCounts.set(word, n);
    }
    return n;
  };
  // The sentence the engine sees: normalised (prepareSource), then, unless restore_case is false, ALL-CAPS and
  // all-lower-case sentences re-cased (restoreCase in input.js; indices do not move).
  const sourceOf = (text, o) => {
    const src = prepareSource(text);
    if (o.restore_case === false) return { src, recased: false };
    const cased = restoreCase(src.text, pieces);
    return { src: cased === src.text ? src : { ...src, text: cased }, recased: cased !== src.text };
  };

  // Which sentences of one input the engine translates. Several sentences share the model's positions: whole
  // sentences are taken, in order, while their source pieces (each with its '</s>') add up to at most
  // maxSourceTokens; the rest is dropped (truncated: true). A lone sentence goes whole (the engine truncates it).
  const planOne = (input, o, what) => {
    if (typeof input !== 'string') throw new TypeError(`attnlens: ${what} must be a string, got ${describe(input)}`);
    const prepared = toWellFormed(input); // same length as input
    const spans = splitSentences(prepared);
    if (spans.length === 0) return { units: [{ text: '' }], empty: true, dropped: false }; // empty or white space
    const units = [];
    let used = 0;
    let dropped = false;
    for (const span of spans) {
      const { src, recased } = sourceOf(prepared.slice(span.start, span.end), o);
      if (spans.length > 1) {
        const need = tokenizer().encode(src.text).ids.length + 1;
        if (units.length > 0 && used + need > maxSource) {
          dropped = true;
          break;
        }
        used += Math.min(need, maxSource);
      }
      units.push({ text: src.text, src, recased, span });
    }
    return { units, empty: false, dropped };
  };
  // The engine's results for a plan's units → the input's result (source word indices are the caller's).
  const assemble = (plan, results) => {
    if (plan.empty) {
      const r = results[0];
      return { ...shape(r, identity(''), 0, identity(r.text), 0, { source_start: 0, source_end: 0 }), sentences: [] };
    }
    const sentences = plan.units.map((u, k) => shape(results[k], u.src, u.span.start, identity(results[k].text), 0,
      { source_start: u.span.start, source_end: u.span.end, ...(u.recased ? { source_text: u.src.text } : {}) }));
    if (sentences.length === 1 && !plan.dropped) return { ...sentences[0], sentences };
    return combine(sentences, plan.dropped);
  };
  // Every sentence of every input goes to the engine in one call: a list is shared among the engine's threads
  // (the threaded module; one thread: in order), and gives exactly what one call per sentence would.
  const translateAll = (translator, inputs, o, what) => {
    const plans = inputs.map((x, i) => planOne(x, o, what(i)));
    const texts = plans.flatMap((p) => p.units.map((u) => u.text));
    const options = engineOptions(o, true);
    const results = texts.length === 1 ? [translator.translate(texts[0], options)] : translator.translateMany(texts, options);
    let at = 0;
    return plans.map((p) => {
      const mine = results.slice(at, at + p.units.length);
      at += p.units.length;
      return assemble(p, mine);
    });
  };
  const call = async (live, input, runOptions = {}) => {
    const o = { ...defaults, ...checkTranslationOptions(runOptions, TASK) };
    if (Array.isArray(input)) return translateAll(live(), input, o, (i) => `translation input [${i}]`);
    return translateAll(live(), [input], o, () => 'translation input')[0];
  };
  const methods = {
    /** Forced decoding of a given translation (see the header). */
    align: async (live, source, target, alignOptions = {}) => {
      for (const [what, v] of [['source', source], ['target', target]]) {
        if (typeof v !== 'string') {
          throw new TypeError(`attnlens: align() ${what} must be a string, got ${describe(v)}`);
        }
      }
      const o = { ...defaults, ...checkTranslationOptions(alignOptions, `${TASK} align`) };
      const { src, recased } = sourceOf(source, o);
      const tgt = prepareSource(target);
      const r = live().align(src.text, tgt.text, engineOptions(o, false));
      return shape(r, src, 0, tgt, 0, recased ? { source_text: src.text } : {});
    },
  };
  return createPipeline({
    task: TASK, bundle, engine, call, methods,
    fields: (e) => ({ architecture: e.architecture(), maxSourceTokens: maxSource }),
    release: () => {
      counter?.delete();
      counter = null;
    },
  });
}
