// Numbers copied by alignment (analysis/number_copy.h): number spans, English notation, the matching rule on
// hand-made alignment maps, the splice of the translation, and the default translator end to end.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/number_copy.h"
#include "api.h"
#include "common.h"
#include "text/word_spans.h"

namespace {

using attnlens::analysis::english_number;
using attnlens::analysis::find_numbers;
using attnlens::text::WordSpan;

std::string source_path(const std::string& relative) { return std::string(ATTNLENS_SOURCE_DIR) + "/" + relative; }

// Words of `text` split at spaces and around . , : ? (enough for these tests; pieces are not needed).
std::vector<WordSpan> words_of(const std::string& text) {
  std::vector<WordSpan> out;
  std::size_t i = 0;
  auto punct = [](char c) { return c == '.' || c == ',' || c == ':' || c == '?'; };
  while (i < text.size()) {
    if (text[i] == ' ') { ++i; continue; }
    const std::size_t b = i;
    if (punct(text[i])) ++i;
    else while (i < text.size() && text[i] != ' ' && !punct(text[i])) ++i;
    WordSpan w;
    w.text = text.substr(b, i - b);
    w.byte_begin = b;
    w.byte_end = i;
    out.push_back(w);
  }
  return out;
}

}  // namespace

TEST_CASE("number copy: number spans and the words they cover") {
  const std::string s = "Tom kauft 3 Äpfel für 2,50 Euro um 14:30, am 1.1.2020.";
  const auto words = words_of(s);
  const auto n = find_numbers(s, words);
  REQUIRE(n.size() == 4);
  CHECK(n[0].text == "3");
  CHECK(n[1].text == "2,50");
  CHECK(n[2].text == "14:30");
  CHECK(n[3].text == "1.1.2020");  // the final "." is not part of it
  CHECK(s.substr(n[1].byte_begin, n[1].byte_end - n[1].byte_begin) == "2,50");
  CHECK(n[1].end_word - n[1].first_word == 3);  // "2" "," "50"
  CHECK(words[static_cast<std::size_t>(n[0].first_word)].text == "3");
  CHECK(find_numbers("keine Zahl. 3.", words_of("keine Zahl. 3."))[0].text == "3");
  CHECK(find_numbers("", {}).empty());
}

TEST_CASE("number copy: English notation") {
  CHECK(english_number("2,50") == "2.50");
  CHECK(english_number("37,5") == "37.5");
  CHECK(english_number("250.000") == "250,000");
  CHECK(english_number("1.000.000") == "1,000,000");
  CHECK(english_number("1.000,50") == "1,000.50");
  CHECK(english_number("2019") == "2019");
  CHECK(english_number("14:30") == "14:30");
  CHECK(english_number("1.1.2020") == "1.1.2020");  // a date: as written
  CHECK(english_number("1.5") == "1.5");            // not thousands: as written
  CHECK(english_number("1,2,3") == "1,2,3");
  CHECK(english_number("1234.000") == "1234.000");  // a first group of four digits is no thousands grouping
}

TEST_CASE("number copy: the alignment decides which source number a target number stands for") {
  const std::string src = "Ich kaufe 3 Äpfel für 2,50 Euro.";   // numbers "3" (word 2) and "2,50" (words 5-7)
  const std::string tgt = "I buy 3 apples for 250 euros.";       // "3" (word 2), "250" (word 5)
  const auto sw = words_of(src);
  auto tw = words_of(tgt);
  REQUIRE(sw.size() == 10);
  REQUIRE(tw.size() == 8);
  std::vector<float> map(tw.size() * sw.size(), 0.0f);
  auto at = [&](std::size_t t, std::size_t s) -> float& { return map[t * sw.size() + s]; };
  at(2, 2) = 0.9f;                                  // 3 ← 3
  at(5, 5) = 0.3f; at(5, 6) = 0.1f; at(5, 7) = 0.4f;  // 250 ← 2 , 50
  auto copies = attnlens::analysis::plan_number_copies(src, sw, tgt, tw, map);
  REQUIRE(copies.size() == 1);
  CHECK(copies[0].target_word == 5);
  CHECK(copies[0].source_number == 1);
  CHECK(copies[0].model_text == "250");
  CHECK(copies[0].text == "2.50");
  CHECK(copies[0].weight == doctest::Approx(0.8f));
  std::string text = tgt;
  attnlens::analysis::apply_number_copies(copies, text, tw);
  CHECK(text == "I buy 3 apples for 2.50 euros.");
  for (const auto& w : tw) CHECK(text.substr(w.byte_begin, w.byte_end - w.byte_begin) == w.text);  // offsets follow

  // Too little weight on any source number: left as the model wrote it.
  at(5, 5) = 0.05f; at(5, 6) = 0.05f; at(5, 7) = 0.05f;
  CHECK(attnlens::analysis::plan_number_copies(src, sw, tgt, tw, map).empty());
  // A target number already equal to a source number is never changed, even if it aligns elsewhere.
  const std::string tgt2 = "I buy 2.50 apples for 3 euros.";
  auto tw2 = words_of(tgt2);
  std::vector<float> map2(tw2.size() * sw.size(), 0.0f);
  map2[7 * sw.size() + 5] = 1.0f;  // "3" (word 7) aligned to "2,50"
  CHECK(attnlens::analysis::plan_number_copies(src, sw, tgt2, tw2, map2).empty());
  // A map that does not fit the words is an error, not a read outside it.
  CHECK_THROWS_AS(attnlens::analysis::plan_number_copies(src, sw, tgt, tw, std::vector<float>(3)), attnlens::Error);
}

TEST_CASE("number copy: a number the model wrote as several words is replaced part for part") {
  const std::string src = "Es sind 37,5 Grad.";       // "37,5": words 2-4
  const std::string tgt = "It's 375,5 degrees.";      // "375,5": words 1-3 ("375" "," "5")
  const auto sw = words_of(src);
  auto tw = words_of(tgt);
  REQUIRE(sw.size() == 7);
  REQUIRE(tw.size() == 6);
  std::vector<float> map(tw.size() * sw.size(), 0.0f);
  auto at = [&](std::size_t t, std::size_t s) -> float& { return map[t * sw.size() + s]; };
  at(1, 2) = 0.9f; at(2, 3) = 0.6f; at(2, 5) = 0.4f; at(3, 4) = 0.3f;  // mean weight on "37,5": (0.9+0.6+0.3)/3
  auto copies = attnlens::analysis::plan_number_copies(src, sw, tgt, tw, map);
  REQUIRE(copies.size() == 1);
  CHECK(copies[0].target_word == 1);
  CHECK(copies[0].model_text == "375,5");
  CHECK(copies[0].text == "37.5");
  CHECK(copies[0].weight == doctest::Approx(0.6f));
  std::string text = tgt;
  attnlens::analysis::apply_number_copies(copies, text, tw);
  CHECK(text == "It's 37.5 degrees.");
  REQUIRE(tw.size() == 6);  // as many words as the maps have rows
  CHECK(tw[1].text == "37");
  CHECK(tw[2].text == ".");
  CHECK(tw[3].text == "5");
  for (const auto& w : tw) CHECK(text.substr(w.byte_begin, w.byte_end - w.byte_begin) == w.text);

  // A notation with another number of parts cannot be written word for word: left as the model wrote it.
  const std::string src2 = "Es kostet 1.000,50 Euro.";  // English "1,000.50": five parts against the model's three
  const std::string tgt2 = "It costs 100,5 euros.";
  const auto sw2 = words_of(src2);
  const auto tw2 = words_of(tgt2);
  std::vector<float> map2(tw2.size() * sw2.size(), 1.0f);
  CHECK(attnlens::analysis::plan_number_copies(src2, sw2, tgt2, tw2, map2).empty());
  // The same digit groups in another notation are the model's choice: "2:30" for "2.30 Uhr" stays.
  const std::string src3 = "Er ging um 2.30 Uhr.";
  const std::string tgt3 = "He left at 2:30.";
  const auto sw3 = words_of(src3);
  const auto tw3 = words_of(tgt3);
  CHECK(attnlens::analysis::plan_number_copies(src3, sw3, tgt3, tw3, std::vector<float>(tw3.size() * sw3.size(), 1.0f)).empty());
  // Too little weight on average: left alone.
  at(1, 2) = 0.2f; at(2, 3) = 0.1f; at(3, 4) = 0.1f;
  CHECK(attnlens::analysis::plan_number_copies(src, sw, tgt, words_of(tgt), map).empty());
}

TEST_CASE("number copy: the default translator copies numbers it would garble; copy_numbers false keeps its text") {
  const auto tr = attnlens::api::Translator::load(source_path("models/de-en-general"));
  attnlens::api::TranslationParams p;
  p.num_beams = 4;
  p.output_attentions = false;  // the copy still works: the maps are computed for it and dropped
  const std::string src = "Tom kauft 3 Äpfel für 2,50 Euro.";
  const auto out = tr->translate(src, p);
  CHECK(out.attentions.empty());
  CHECK(out.text.find("2.50") != std::string::npos);
  // Every number of the translation is now one of the source's, in English notation.
  for (const auto& n : find_numbers(out.text, out.target_words)) CHECK((n.text == "3" || n.text == "2.50"));
  for (const auto& w : out.target_words) CHECK(out.text.substr(w.byte_begin, w.byte_end - w.byte_begin) == w.text);
  p.copy_numbers = false;
  const auto raw = tr->translate(src, p);
  CHECK(raw.number_copies.empty());
  CHECK(raw.target_ids == out.target_ids);  // the same search: only the text differs
  REQUIRE(!out.number_copies.empty());
  for (const auto& c : out.number_copies) CHECK(raw.text.find(c.model_text) != std::string::npos);
  // No digits: nothing to copy, and no maps are computed when none are asked for.
  p.copy_numbers = true;
  const auto plain = tr->translate("Ein Hund rennt.", p);
  CHECK(plain.number_copies.empty());
  CHECK(plain.attentions.empty());
}
