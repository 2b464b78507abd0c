// What api::Translator does around the model for text as people type it (api/translation.h, "Text as people type
// it"): the input normalised (text/normalize.h), split into sentences (text/sentences.h), each ALL-CAPS or
// all-lower-case sentence re-cased (text/recase.h), the sentences that fit the model's positions chosen, and the
// sentences' results placed in the caller's input and combined into the whole input's result. Internal to
// api/translation.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/translation.h"
#include "text/normalize.h"

namespace attnlens::api::detail {

// The BPE pieces a text takes (without </s>): the translator's own tokenizer.
using PieceCount = std::function<std::size_t(std::string_view)>;

// One sentence of an input, as the model gets it.
struct SentenceUnit {
  std::string text;                // the normalised sentence, re-cased unless restore_case is off (same bytes long)
  std::size_t begin = 0, end = 0;  // its bytes [begin, end) in the normalised input
  bool recased = false;
};

// A text as the engine sees it, and the way back to the caller's text.
struct PreparedInput {
  text::PreparedText prepared;         // the normalised text and its byte maps to the caller's bytes
  std::vector<std::uint32_t> units;    // UTF-16 string index of the caller's text at each of its bytes (size + 1)
  PreparedInput() = default;
  explicit PreparedInput(std::string_view input);
  // Words of a result over prepared.text[base, …): byte offsets moved into the caller's text, start/end its string
  // indices.
  void place_words(std::vector<WordSpan>& words, std::size_t base) const;
};

// An input's sentences (spans of the normalised text) and whether some were left out.
struct InputPlan {
  PreparedInput input;
  std::vector<SentenceUnit> sentences;  // none: an input without sentences (empty, white space)
  bool dropped = false;                 // sentences past the shared positions were left out (truncated)
};

// The sentences of `input` the model translates: whole sentences in order while their pieces (each with its </s>)
// add up to at most max_source_ids; a lone first sentence is always taken (the model cuts it).
InputPlan plan_input(std::string_view input, bool restore_case, std::size_t max_source_ids, const PieceCount& pieces);

// The whole input's result from its sentences' results (one per plan.sentences; for an input without sentences,
// the one result of translating ""): source words placed in the caller's input, source_start / source_end, and
// for several sentences everything concatenated and every map block-diagonal (see TranslationResult).
TranslationResult assemble_input(const InputPlan& plan, std::vector<TranslationResult> results);

// Each word's [start, end) as string indices of `text` (UTF-16 code units) from its byte offsets.
void set_string_indices(std::vector<WordSpan>& words, std::string_view text);

}  // namespace attnlens::api::detail
