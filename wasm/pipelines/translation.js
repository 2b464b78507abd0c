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
//   candidates_per_beam finished hypotheses the beam collects for its final choice, per beam, 1..8 (default: the
//                      bundle's decoding.candidates_per_beam, else 1)
//   alignment_method   'head' (a trained alignment head) | 'layer-mean' (mean of one decoder layer's cross heads);
//                      default: the bundle's ('head' for de-en-general, 'layer-mean' for the others)
//   alignment_extraction 'argmax' (one link per target word) | 'gdfa' (grow-diag-final-and of both directions)
//   alignment_layer, alignment_head   which decoder layer / head (default: the bundle's)
//   word_maps          true: also `word_attentions`, every map merged to words (default false)
//   copy_numbers       true (default): numbers the model wrote differently from the source number its alignment
//                      links them to are replaced by that number in English notation ("2,50" → "2.50"), listed in
//                      `number_copies` (api/translation.h); false: the model's own text
//   output_qk          true: also `qk`, the query/key vectors behind every map (neuron view; Transformer, Marian;
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
// Text as people type it — handled by the engine (api::Translator, src/api/translation_input.h), so the CLI, Node
// and the browser agree:
//   - Normalisation (src/text/normalize.h): lone surrogates → U+FFFD, no-break spaces (U+00A0, U+2007, U+202F) →
//     ' ', then Unicode NFC ("u\u0308" → "ü"). The engine sees the normalised text, but every source_words
//     start/end (and source_start / source_end) is a string index into the CALLER'S ORIGINAL input, so a UI can
//     highlight what the user typed;
//     target_words index the translation `text`. align() normalises both texts the same way.
//   - Sentences: the input is split into sentences (the rule is written in src/text/sentences.h: . ! ? …
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
//     is true. A first sentence longer than that is cut to the model's positions. So 200,000 characters cost no
//     more than one full-length sentence.
//   - Case: a sentence typed in ALL CAPS or all in lower case is re-cased before the engine sees it (src/text/
//     recase.h: first word capitalised; a word capitalised where the model's BPE knows it better that way, so
//     "ich habe morgen keine zeit" → "Ich habe morgen keine Zeit", "WIE GEHT ES DIR?" → "Wie geht es dir?"); the
//     result's source_text then holds the text the engine saw (indices unchanged), and source_tokens/words show
//     it. Mixed-case input is passed as typed. restore_case: false turns this off. Punctuation is passed as typed.
//   - Names are pieces like any other. Numbers: de-en-general was trained with numbers swapped at random
//     (augment.py), yet writes some wrongly ("2,50 Euro" → "250", "1985" → "1958"); copy_numbers (default) puts the
//     aligned source number back in English notation: "Tom kauft 3 Äpfel für 2,50 Euro." → "Tom is buying 3 apples
//     for 2.50." A number the model dropped stays dropped.
// Errors: a non-string input is a TypeError; an option of the wrong type a TypeError; a number option that is NaN,
// ±Infinity, not an integer or out of its range a RangeError; each message names the option (input.js, contract.js).
import { getModule } from '../core.js';
import { describe, toWellFormed } from './input.js';
import { bundleFile, bundleWeights, configText, createPipeline } from './base.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'translation';
// The options, as src/api/translation.cpp declares them (contract.js): the engine reads the declared engine
// options (api::translation_params), and align() takes only the map options (the search options given to it, or
// to the pipeline, are accepted and do not apply).
const contract = () => contractOf(TASK);
const alignContract = () => contractOf(TASK, 'align');
function engineOptions(o, search) {
  return engineJson(search ? contract() : alignContract(), o);
}

function checkTranslationOptions(options, where) {
  return checkContractOptions(contract(), options, 'call', where);
}

// The engine's result (its fields as the contract names them, the text handling done: api::Translator) with its
// maps, and its sentences' maps, wrapped in AttentionMaps.
function wrapMaps(r) {
  for (const k of ['attentions', 'word_attentions', 'qk']) if (r[k]) r[k] = new AttentionMaps(r[k]);
  for (const s of r.sentences ?? []) wrapMaps(s);
  return r;
}

// A caller's string as the engine takes it: lone surrogates replaced (same length; Embind would pair one with the
// next character), anything but a string a TypeError.
function inputText(input, what) {
  if (typeof input !== 'string') throw new TypeError(`attnlens: ${what} must be a string, got ${describe(input)}`);
  return toWellFormed(input);
}

// The tokenizer files the engine reads, by name: the project's BPE (tokenizer.vocab + merges), or a converted
// MarianMT bundle's (config "tokenizer": {"type": "hf", "file": "tokenizer.json", "vocab": "vocab.json"}).
function tokenizerFiles(bundle) {
  const tok = bundle.config.tokenizer ?? {};
  const names = tok.type === 'hf' ? [tok.file, tok.vocab] : [tok.vocab, tok.merges];
  if (!names.every((n) => typeof n === 'string')) {
    throw new Error(`attnlens: translation model ${bundle.name}: config.json has no ` +
      `${tok.type === 'hf' ? 'tokenizer.file/vocab' : 'tokenizer.vocab/merges'} files`);
  }
  return Object.fromEntries(names.map((n) => [n, bundleFile(bundle, n, TASK, { text: true })]));
}

/**
 * @param {{ name: string, config: object, configText?: string, files: Record<string, Uint8Array> }} bundle
 * @param {{ num_beams?: number, max_new_tokens?: number, output_attentions?: boolean, alpha?: number,
 *           coverage_beta?: number, candidates_per_beam?: number }} [options]
 * @param {object} [module] the Embind module whose Translator runs it (initHf()'s for converted MarianMT bundles)
 */
export async function createTranslationPipeline(bundle, options = {}, module = getModule()) {
  const defaults = { ...checkTranslationOptions(options, `${TASK} pipeline`) };
  const weights = bundleWeights(bundle, TASK);
  const files = tokenizerFiles(bundle);
  const engine = module.Translator.fromBundle(configText(bundle), weights, files, String(bundle.name ?? ''));
  const maxSource = engine.maxSourceTokens();
  // Every sentence of every input goes to the engine in one call: a list is shared among the engine's threads
  // (the threaded module; one thread: in order), and gives exactly what one call per input would.
  const call = async (live, input, runOptions = {}) => {
    const o = { ...defaults, ...checkTranslationOptions(runOptions, TASK) };
    const json = engineOptions(o, true);
    if (!Array.isArray(input)) return wrapMaps(live().translate(inputText(input, 'translation input'), json));
    const texts = input.map((x, i) => inputText(x, `translation input [${i}]`));
    return live().translateMany(texts, json).map(wrapMaps);
  };
  const methods = {
    /** Forced decoding of a given translation (see the header). */
    align: async (live, source, target, alignOptions = {}) => {
      const texts = [['source', source], ['target', target]].map(([what, v]) => inputText(v, `align() ${what}`));
      const o = { ...defaults, ...checkTranslationOptions(alignOptions, `${TASK} align`) };
      return wrapMaps(live().align(texts[0], texts[1], engineOptions(o, false)));
    },
  };
  return createPipeline({
    task: TASK, bundle, engine, call, methods,
    fields: (e) => ({ architecture: e.architecture(), maxSourceTokens: maxSource }),
  });
}
