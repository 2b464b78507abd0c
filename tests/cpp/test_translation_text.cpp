// Text as people type it through api::Translator (api/translation_input.h): sentences, their shared positions,
// re-casing, offsets into the caller's text (UTF-16 string indices and bytes) and the combined result of several
// sentences (concatenated, block-diagonal maps, re-indexed links and number copies), on the shipped de-en-general.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "api.h"

namespace {

namespace api = attnlens::api;

std::string source_path(const std::string& relative) { return std::string(ATTNLENS_SOURCE_DIR) + "/" + relative; }

const api::Translator& translator() {
  static const std::unique_ptr<api::Translator> tr = api::Translator::load(source_path("models/de-en-general"));
  return *tr;
}

api::TranslationParams greedy() {
  api::TranslationParams p;
  p.num_beams = 1;
  return p;
}

// The map of `trace` named (name, layer, head) and its dims (none: empty).
std::vector<float> map_of(const attnlens::AttentionTrace& trace, const std::string& name, int layer, int head,
                          std::vector<std::size_t>& dims) {
  for (const attnlens::MapView m : trace)
    if (m.name == name && m.layer == layer && m.head == head) {
      dims = m.dims;
      return m.data.to_vector();
    }
  dims.clear();
  return {};
}

}  // namespace

TEST_CASE("translation text: several sentences are translated alone and combined into one sequence") {
  const std::string input = "  Ein Hund rennt. Die Katze spielt im Garten.\n";
  const api::TranslationResult out = translator().translate(input, greedy());
  REQUIRE(out.sentences.size() == 2);
  const auto& a = out.sentences[0];
  const auto& b = out.sentences[1];
  // Each sentence alone gives the same as translating it by itself.
  const auto alone = translator().translate("Die Katze spielt im Garten.", greedy());
  CHECK(b.text == alone.text);
  CHECK(b.target_ids == alone.target_ids);
  // Where each sentence is in the caller's input (ASCII: string indices are bytes), white space trimmed.
  CHECK(input.substr(a.source_start, a.source_end - a.source_start) == "Ein Hund rennt.");
  CHECK(input.substr(b.source_start, b.source_end - b.source_start) == "Die Katze spielt im Garten.");
  CHECK(out.source_start == a.source_start);
  CHECK(out.source_end == b.source_end);
  CHECK(out.split);
  CHECK_FALSE(a.split);
  // The whole: text joined, tokens and ids concatenated, score summed.
  CHECK(out.text == a.text + " " + b.text);
  CHECK(out.source_tokens.size() == a.source_tokens.size() + b.source_tokens.size());
  CHECK(out.target_ids.size() == a.target_ids.size() + b.target_ids.size());
  CHECK(out.score == doctest::Approx(a.score + b.score));
  // Words: source words index the caller's input; target words the joined text; pieces re-indexed.
  REQUIRE(out.source_words.size() == a.source_words.size() + b.source_words.size());
  for (const auto& w : out.source_words) CHECK(input.substr(w.start, w.end - w.start) == w.text);
  for (const auto& w : out.target_words) CHECK(out.text.substr(w.start, w.end - w.start) == w.text);
  const auto& w0 = out.source_words[a.source_words.size()];
  CHECK(w0.first_piece == b.source_words[0].first_piece + a.source_tokens.size());
  // Links re-indexed into the whole.
  REQUIRE(out.alignment.size() == a.alignment.size() + b.alignment.size());
  const auto& l = out.alignment[a.alignment.size()];
  CHECK(l.source == b.alignment[0].source + static_cast<int>(a.source_words.size()));
  CHECK(l.target == b.alignment[0].target + static_cast<int>(a.target_words.size()));
  // Every map block-diagonal: sentence i's rows attend only to sentence i's columns, with its own values.
  CHECK(out.attentions.size() == a.attentions.size());
  for (const attnlens::MapView m : out.attentions) {
    std::vector<std::size_t> da, db;
    const auto ma = map_of(a.attentions, m.name, m.layer, m.head, da);
    const auto mb = map_of(b.attentions, m.name, m.layer, m.head, db);
    REQUIRE(da.size() == 2);
    REQUIRE(m.dims == std::vector<std::size_t>{da[0] + db[0], da[1] + db[1]});
    const std::size_t cols = m.dims[1];
    for (std::size_t r = 0; r < m.dims[0]; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        const float v = m.data[r * cols + c];
        if (r < da[0] && c < da[1]) {
          CHECK(v == ma[r * da[1] + c]);
        } else if (r >= da[0] && c >= da[1]) {
          CHECK(v == mb[(r - da[0]) * db[1] + (c - da[1])]);
        } else {
          CHECK(v == 0.0f);
        }
      }
  }
  const std::size_t nt = out.target_words.size(), ns = out.source_words.size();
  REQUIRE(out.alignment_map.size() == nt * ns);
  CHECK(out.alignment_map[(nt - 1) * ns] == 0.0f);  // the last target word (sentence 2) never reads sentence 1
}

TEST_CASE("translation text: one sentence is its own result; empty input has none") {
  const auto one = translator().translate("Ein Hund rennt.", greedy());
  REQUIRE(one.sentences.size() == 1);
  CHECK(one.sentences[0].text == one.text);
  CHECK(one.sentences[0].target_ids == one.target_ids);
  CHECK(one.source_start == 0);
  CHECK(one.source_end == 15);
  for (const char* blank : {"", "   ", "\n\n"}) {
    const auto out = translator().translate(blank, greedy());
    CHECK(out.text.empty());
    CHECK(out.sentences.empty());
    CHECK(out.split);
    CHECK(out.source_tokens.empty());
  }
}

TEST_CASE("translation text: offsets are string indices of the caller's text, before normalisation") {
  // A decomposed umlaut (u + U+0308: NFC makes it one character) and an emoji (two UTF-16 code units).
  const std::string input = "Der Mu\xCC\x88ller sieht \xF0\x9F\x98\x80 einen Hund.";
  const auto out = translator().translate(input, greedy());
  REQUIRE(out.sentences.size() == 1);
  REQUIRE(out.source_words.size() >= 3);
  const auto& w = out.source_words[1];
  CHECK(w.text == "M\xC3\xBCller");  // the engine saw the composed form
  CHECK(w.start == 4);
  CHECK(w.end == 11);  // M u ̈ l l e r: seven code units of the caller's string
  CHECK(w.byte_begin == 4);
  CHECK(w.byte_end == 12);
  // 35 bytes, 32 code units: the decomposed ü (3 bytes, 2 units), the emoji (4 bytes, 2 units).
  const auto& last = out.source_words.back();
  CHECK(last.byte_end == input.size());
  CHECK(last.end == 32);
  CHECK(out.source_end == 32);
}

TEST_CASE("translation text: ALL CAPS and all-lower-case sentences are re-cased unless restore_case is false") {
  auto p = greedy();
  const auto out = translator().translate("WIE GEHT ES DIR?", p);
  CHECK(out.source_text == "Wie geht es dir?");
  CHECK(out.sentences.at(0).source_text == "Wie geht es dir?");
  CHECK(out.text == translator().translate("Wie geht es dir?", p).text);
  p.restore_case = false;
  const auto typed = translator().translate("WIE GEHT ES DIR?", p);
  CHECK(typed.source_text.empty());
  CHECK(translator().translate("Wie geht es dir?", greedy()).source_text.empty());  // mixed case: as typed
  // align() re-cases its source the same way and places words in the caller's texts.
  const auto forced = translator().align("WIE GEHT ES DIR?", "How are you?", greedy());
  CHECK(forced.source_text == "Wie geht es dir?");
  CHECK_FALSE(forced.placed);
  CHECK_FALSE(forced.split);
}

TEST_CASE("translation text: sentences share the model's positions; the rest are dropped whole") {
  std::string input;
  for (int i = 0; i < 80; ++i) input += "Ein Hund rennt schnell über die grüne Wiese. ";
  const auto out = translator().translate(input, greedy());
  CHECK(out.truncated);
  REQUIRE(out.sentences.size() > 1);
  CHECK(out.sentences.size() < 80);
  CHECK(out.source_tokens.size() <= translator().max_source_tokens());
  for (const auto& s : out.sentences) CHECK_FALSE(s.truncated);
  // A list gives each text what it gives alone.
  const auto many = translator().translate_many({input, "Ein Hund rennt. Die Katze spielt."}, greedy());
  REQUIRE(many.size() == 2);
  CHECK(many[0].target_ids == out.target_ids);
  CHECK(many[1].sentences.size() == 2);
}

TEST_CASE("translation text: number copies are re-indexed into the whole and name their sentence") {
  auto p = greedy();
  p.num_beams = 4;
  const auto out = translator().translate("Ein Hund rennt. Tom kauft 3 Äpfel für 2,50 Euro.", p);
  REQUIRE(out.sentences.size() == 2);
  const auto& second = out.sentences[1];
  REQUIRE_FALSE(out.number_copies.empty());  // "2,50" → the model's garbled number is replaced
  REQUIRE(second.number_copies.size() == out.number_copies.size());
  for (std::size_t i = 0; i < out.number_copies.size(); ++i) {
    const auto& c = out.number_copies[i];
    CHECK(c.sentence == 1);
    CHECK(second.number_copies[i].sentence == -1);
    CHECK(c.target_word == second.number_copies[i].target_word + static_cast<int>(out.sentences[0].target_words.size()));
    CHECK(out.target_words.at(static_cast<std::size_t>(c.target_word)).text == c.text);
  }
}
