// Translation through the C++ API (included by api.h): a bundle in, text and every attention weight out.
//
//   auto tr = attnlens::api::Translator::load("models/de-en-transformer");
//   auto out = tr->translate("Ein Hund rennt über die Wiese.", {});   // bundle defaults: beam 4, alpha 0.6
//   out.text; out.source_tokens; out.target_tokens; out.attentions;    // maps {name, layer, head, dims, data}
//
// Bundles: "transformer-seq2seq" (models/transformer_seq2seq.h) and "rnn-seq2seq" with additive or general
// attention (models/rnn_seq2seq.h), tokenized by the project's BPE (config "tokenizer": bpe.vocab, bpe.merges).
// Source = bpe(text) + </s>; decoding starts from <s> (models/training/translation/decoding.py). Architectures come
// from a registry (api/translation_models.h): api::register_hf_architectures() adds "hf-marian" (converted MarianMT:
// MarianTokenizer's pieces + </s>, decoding from decoder_start_token_id, maps under the names above).
//
// Text as people type it (api/translation_input.h; the package's documentation is wasm/pipelines/translation.js):
// translate() normalises the input (text/normalize.h), splits it into sentences (text/sentences.h), re-cases an
// ALL-CAPS or all-lower-case sentence (text/recase.h, restore_case), translates each sentence on its own (whole
// sentences while they fit the model's positions together) and returns `sentences` plus the whole input's result:
// one sentence's own, or for several the sentences as one sequence — tokens, ids and words concatenated (pieces,
// links and number copies re-indexed), every map block-diagonal, score summed. Source word offsets point into
// the caller's input (bytes, and start/end as UTF-16 string indices). align() normalises both texts the same way.
//
// Inputs that are not ordinary sentences:
//   - empty (or all white space) text → an empty translation: no tokens, no maps, no sentences;
//   - characters outside the vocabulary → "<unk>" pieces, visible in source_tokens;
//   - a source longer than the model takes (max_source_tokens(), ids with </s>) keeps its first
//     max_source_tokens() − 1 pieces plus </s>, and the result says `truncated`; decoding is capped at
//     max_len_a·|source ids| + max_len_b tokens (and at the model's positions), so any input ends in bounded time
//     and memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/number_copy.h"
#include "api/contract.h"
#include "analysis/word_alignment.h"
#include "common.h"
#include "text/word_spans.h"
#include "trace/trace.h"

namespace attnlens::api {

// A word of a text: its pieces and byte offsets (text/word_spans.h).
using WordSpan = text::WordSpan;

struct TranslationParams {
  int num_beams = 0;                     // 0: the bundle's default (decoding.num_beams); 1: greedy; at most 64
  int max_new_tokens = 0;                // 0: max_len_a·|source ids| + max_len_b (bundle); else this many at most
  std::optional<double> alpha;           // GNMT length penalty exponent; default: the bundle's decoding.alpha
  std::optional<double> coverage_beta;   // GNMT coverage penalty weight; default: the bundle's (0 = off)
  int candidates_per_beam = 0;           // finished hypotheses per beam for the final choice (1 … 8); 0: the bundle's
  bool output_attentions = true;         // false: `attentions` stays empty (faster), and so do the alignments
  // Which maps come back (trace/trace.h): kinds by name ("encoder_self", "decoder_self", "cross"; empty: all) and,
  // with head_mean, the mean of each layer's heads (head −1) instead of every head. The alignment and the number
  // copy still use the full maps; `attentions` and `word_attentions` hold the selection. An unknown kind is an error.
  MapSelection attention_selection;
  // Word alignment (analysis/word_alignment.h), computed whenever maps are: which attention gives the links —
  //   "head":       one cross-attention head (default layer/head: the bundle's trained "alignment_head");
  //   "layer-mean": the mean of one decoder layer's cross heads (default layer: the bundle's, else the last but one);
  //   ""            the bundle's "alignment" default ("head" when it has an alignment head, else "layer-mean").
  // RNN translators have one cross map: every method uses it. extraction: "argmax" | "gdfa" ("" = the bundle's
  // default: argmax for a trained head, gdfa for a layer mean). layer/head −1 = the default.
  std::string alignment_method;
  std::string alignment_extraction;
  int alignment_layer = -1;
  int alignment_head = -1;
  bool word_maps = false;                // also every map merged to words (word_attentions)
  // The neuron view's data: the query and key vectors behind every map (`qk`), by teacher forcing of the result's
  // tokens after the search (one more decoder run, only when asked). Transformer and hf-marian translators only;
  // an error for the RNN translators (additive/bilinear attention has no query·key product to show).
  bool output_qk = false;
  // Numbers copied by alignment (analysis/number_copy.h): a number the model wrote that differs from the source
  // number its word alignment links it to is replaced by that number in English notation ("2,50" → "2.50",
  // "250.000" → "250,000"); `number_copies` lists every replacement. The maps, tokens and ids stay the model's own;
  // `text` and `target_words` show the copy. Needs the alignment: with output_attentions false the maps are still
  // computed for a source with digits, then dropped. false: the model's text as it wrote it.
  bool copy_numbers = true;
  // translate() and align(): an ALL-CAPS or all-lower-case sentence is re-cased before the model sees it
  // (text/recase.h; `source_text` shows it); false: every sentence as typed.
  bool restore_case = true;
};

// The options as the JS pipeline names them, in a JSON object (api/options.h; unknown keys are an error): num_beams
// (0 … 64), max_new_tokens (0 … 65536), alpha, coverage_beta, candidates_per_beam (1 … 8), output_attentions (true,
// false or a list of kinds), head_mean, copy_numbers, alignment_method, alignment_extraction, alignment_layer /
// alignment_head (−1 …), word_maps, output_qk, restore_case. Absent keys keep the defaults above; translate()/align()
// check the values against the model.
// The contracts (api/contract.h) of translate() and of align() (forced decoding of a given translation): their
// options and result fields. translation_params reads the options of either as declared (align() ignores the
// search options).
const Contract& translation_contract();
const Contract& align_contract();
TranslationParams translation_params(const std::string& params_json);

struct TranslationResult {
  std::string text;                        // detokenized translation (without </s>)
  std::vector<std::string> source_tokens;  // BPE pieces of the source, "</s>" last (the columns of cross maps)
  std::vector<int> source_ids;
  std::vector<std::string> target_tokens;  // generated pieces, "</s>" last when produced (the rows of maps)
  std::vector<int> target_ids;
  // Transformer: "encoder_self" [S,S], "decoder_self" [T,T] (causal, zero above the diagonal), "cross" [T,S] per
  // layer and head; RNNs: one "cross" [T,S] (layer −1, head −1). Row t belongs to target token t; every row sums
  // to 1.
  AttentionTrace attentions;
  // Words (text/word_spans.h): pieces merged into the words a person sees, with byte offsets into the caller's
  // source text and into `text` (align(): the caller's target), and the same spans as string indices (UTF-16 code
  // units: start, end). Filled on every call.
  std::vector<WordSpan> source_words;
  std::vector<WordSpan> target_words;
  // Hard word alignment (source word, target word), sorted; the word-level map it came from
  // [target words, source words]; and how: e.g. "head 1.0, argmax" or "layer-mean 1, gdfa". Empty without maps.
  std::vector<analysis::Link> alignment;
  std::vector<float> alignment_map;
  std::string alignment_method;
  // With word_maps: every map of `attentions` at word level (rows/columns are words; </s> dropped).
  AttentionTrace word_attentions;
  // With output_qk: per kind (encoder_self, decoder_self, cross), layer and head, "<kind>.query" [rows, d_head]
  // and "<kind>.key" [columns, d_head]: row i of that map is softmax_j(query[i]·key[j] / √d_head), j ≤ i for
  // decoder_self. Empty otherwise, and for an empty translation.
  AttentionTrace qk;
  // With copy_numbers: the numbers replaced in `text` (source number index into the numbers of the source text,
  // target word, what the model wrote, what replaced it, the alignment weight of the match).
  std::vector<analysis::NumberCopy> number_copies;
  // align() only: log-probability of each target piece (</s> last) under the model.
  std::vector<float> token_logprobs;
  bool truncated = false;           // the source was cut to max_source_tokens()
  std::size_t source_pieces = 0;    // BPE pieces of the whole input before any truncation
  float score = 0;                  // sum of log-probabilities of the output
  int num_beams = 1;                // what was used
  // The text the model saw when it was re-cased (restore_case), else empty: same length, same offsets.
  std::string source_text;
  // translate() and its sentences (`placed`): [source_start, source_end), where the translated text is in the
  // caller's input, as string indices (UTF-16 code units), white space trimmed.
  bool placed = false;
  std::size_t source_start = 0, source_end = 0;
  // translate() (`split`): one full result per sentence of the input (each placed; source words index the whole
  // input), none for an input without sentences. One sentence: the result is that sentence's. Several: the whole
  // input as one sequence (see the header).
  bool split = false;
  std::vector<TranslationResult> sentences;
  // One sentence: `sentences` holds one copy of this result (the converters publish it without converting it twice).
  bool sentence_is_self = false;

  // The fields as the package publishes them (the contract's result, api/contract.h); the optional ones only when
  // they hold something.
  template <class F>
  void fields(F&& f) const {
    f("text", text), f("source_tokens", source_tokens), f("target_tokens", target_tokens);
    f("source_ids", source_ids), f("target_ids", target_ids), f("attentions", attentions);
    f("source_words", source_words), f("target_words", target_words), f("alignment", alignment);
    f("alignment_method", alignment_method);
    f("alignment_map", MatrixField{{target_words.size(), source_words.size()}, alignment_map});
    f("word_attentions", present_if(!word_attentions.empty(), word_attentions));
    f("qk", present_if(!qk.empty(), qk));
    f("number_copies", present_if(!number_copies.empty(), number_copies));
    f("token_logprobs", present_if(!token_logprobs.empty(), token_logprobs));
    f("truncated", truncated), f("score", score), f("num_beams", num_beams);
    f("source_text", present_if(!source_text.empty(), source_text));
    f("source_start", present_if(placed, source_start)), f("source_end", present_if(placed, source_end));
    const ListOrSelf<TranslationResult> listed{sentences, sentence_is_self};
    f("sentences", present_if(split, listed));
  }
};

class Translator {
 public:
  static std::unique_ptr<Translator> load(const std::string& dir);
  // The files of a bundle as bytes (the WASM build): config.json text, weights.safetensors, and the tokenizer's
  // files by name ({"bpe.vocab": ..., "bpe.merges": ...}).
  static std::unique_ptr<Translator> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                 std::map<std::string, std::string> files,
                                                 const std::string& name = "<memory>");
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  TranslationResult translate(const std::string& text, const TranslationParams& params = {}) const;
  // A list of texts: translate() of each, bit for bit, for any thread count. Greedy lists (num_beams 1) are
  // decoded in batches — one decoder row per text, every layer of a step taking all the rows at once — one batch
  // per thread (kernels/parallel.h); other lists share the texts among the threads. The first error thrown for any
  // text is rethrown (the texts after it may not have been translated).
  std::vector<TranslationResult> translate_many(const std::vector<std::string>& texts,
                                                const TranslationParams& params = {}) const;
  // Forced decoding: runs the model over the given translation (teacher forcing, exactly as decoding would have
  // produced it) instead of searching, and returns the same maps, words and alignment for that pair, plus each
  // target piece's log-probability (`score` is their sum). num_beams/alpha/coverage/max_new_tokens do not apply.
  // Errors: an empty (or all white space) target, or a target longer than the decoder's positions.
  TranslationResult align(const std::string& source, const std::string& target,
                          const TranslationParams& params = {}) const;

  const std::string& name() const;          // config "name"
  const std::string& architecture() const;  // "transformer-seq2seq" | "rnn-seq2seq"
  std::size_t vocab_size() const;
  std::size_t max_source_tokens() const;    // source ids, </s> included
  int default_num_beams() const;

 private:
  struct Impl;
  explicit Translator(std::unique_ptr<Impl> impl);
  void check_params(const TranslationParams& params) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
