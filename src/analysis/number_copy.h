// Numbers through a translator, guided by its word alignment. A small Transformer writes digits it has seen in
// training patterns: de-en-general turns "2,50 Euro" into "250", "1985" into "1958", "37,5" into "375". A number is
// to be copied, not translated, so after the search every number the model wrote is checked against the source
// number its alignment links it to, and replaced by that number in English notation when they differ — the
// translator's own attention decides which source number a target number stands for, as bergamot transfers markup
// by alignment.
//
// Rules (documented for users in api/translation.h, TranslationParams::copy_numbers):
//   - a number is a maximal run of ASCII digits joined by single '.', ',' or ':' between digits: "3", "2,50",
//     "250.000", "14:30", "1.1.2020" (so "3." at a sentence end is "3");
//   - English notation (english_number): a German decimal comma becomes a point ("2,50" → "2.50", "37,5" → "37.5");
//     dots that group thousands ("250.000", "1.000.000": every group after the first has three digits) become commas;
//     anything else ("14:30", "1.1.2020", "2019") is kept as written;
//   - target numbers with the same digit groups as a source number ("37.5" or "37,5" for "37,5"; "2:30" for "2.30
//     Uhr": the model chose the notation; not "250" for "2,50") are left alone and use that source number up;
//   - every other target number made of whole words (text/word_spans.h: one word "250", or one word per part
//     "375" "," "5", not "3rd") is matched to the remaining source number with the most
//     alignment weight (the word-level cross map summed over the source number's words, averaged over the target
//     number's words), greedily by weight, each source number at most once, and only when that weight is at least
//     kMinNumberWeight; matched, it is replaced by the source number's English notation — a one-word number by one
//     word, a number of several words part for part (so only by a notation with as many parts: "375,5" → "37.5").
// A source number the model dropped is not inserted: the copy never invents a position the model did not write.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "text/word_spans.h"

namespace attnlens::analysis {

constexpr float kMinNumberWeight = 0.2f;

struct NumberSpan {
  std::string text;               // as written
  std::size_t byte_begin = 0;     // [byte_begin, byte_end) in the text
  std::size_t byte_end = 0;
  int first_word = -1;            // words [first_word, end_word) that overlap the span (-1: none)
  int end_word = -1;
};

// The numbers of `text` and the words (spans of the same text) they overlap.
std::vector<NumberSpan> find_numbers(std::string_view text, const std::vector<text::WordSpan>& words);

// A German number in English notation (see the rules above).
std::string english_number(std::string_view german);

struct NumberCopy {
  int source_number = 0;    // index into find_numbers(source text)
  int target_word = 0;      // the target word that was replaced (the first, when the number is several words)
  std::string model_text;   // what the model wrote
  std::string text;         // what replaced it
  float weight = 0;         // the alignment weight of the match
  int sentence = -1;        // in a translation of several sentences: which one (target_word indexes the whole)

  // As results publish it (api/contract.h); `sentence` only when there are several.
  template <class F>
  void fields(F&& f) const {
    f("source_number", source_number), f("target_word", target_word), f("model", model_text), f("text", text);
    f("weight", weight);
    if (sentence >= 0) f("sentence", sentence);
  }
};

// Which target numbers to replace. `alignment_map`: the word-level cross map [target words, source words] of the
// translation (api TranslationResult::alignment_map).
std::vector<NumberCopy> plan_number_copies(std::string_view source_text, const std::vector<text::WordSpan>& source_words,
                                           std::string_view target_text, const std::vector<text::WordSpan>& target_words,
                                           const std::vector<float>& alignment_map);

// Applies the copies to the translation: each replaced word's text and byte span change, the words after it shift.
void apply_number_copies(const std::vector<NumberCopy>& copies, std::string& target_text,
                         std::vector<text::WordSpan>& target_words);

}  // namespace attnlens::analysis
