// Tests of the translator's text handling (src/text/normalize.h, sentences.h, recase.h, unicode.h, utf16_units):
// the cases of tests/node/translation-input.test.mjs about these rules, byte-offset maps, and a differential check
// against the JavaScript functions of wasm/pipelines/input.js (tests/cpp/text_input_cases.json, written by
// scripts/gen_text_cases.mjs).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "text/normalize.h"
#include "text/recase.h"
#include "text/sentences.h"
#include "text/unicode.h"
#include "text/utf8.h"

using attnlens::text::prepare_text;
using attnlens::text::restore_case;
using attnlens::text::split_sentences;
using attnlens::text::utf16_units;
using attnlens::testing::read_json;
using attnlens::testing::source_path;

namespace {

std::vector<std::string> cut(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& s : split_sentences(text)) out.push_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

// The caller's bytes that text bytes [b, e) of prepare_text(input) came from.
std::string source_of(const std::string& input, const attnlens::text::PreparedText& p, std::size_t b, std::size_t e) {
  const std::size_t from = p.to_input_begin.at(b), to = p.to_input_end.at(e);
  REQUIRE(from <= to);
  REQUIRE(to <= input.size());
  return input.substr(from, to - from);
}

void check_maps(const std::string& input, const attnlens::text::PreparedText& p) {
  REQUIRE(p.to_input_begin.size() == p.text.size() + 1);
  REQUIRE(p.to_input_end.size() == p.text.size() + 1);
  CHECK(p.to_input_begin.front() == 0);
  CHECK(p.to_input_end.front() == 0);
  CHECK(p.to_input_begin.back() == input.size());
  CHECK(p.to_input_end.back() == input.size());
  for (std::size_t i = 0; i <= p.text.size(); ++i) {
    CHECK(p.to_input_begin[i] <= p.to_input_end[i]);  // a begin never lies after the end at the same place
    if (i > 0) {
      CHECK(p.to_input_begin[i - 1] <= p.to_input_begin[i]);
      CHECK(p.to_input_end[i - 1] <= p.to_input_end[i]);
    }
  }
  CHECK(attnlens::text::sanitize_utf8(p.text) == p.text);
}

}  // namespace

TEST_SUITE("text.input") {
  TEST_CASE("the sentence rule: . ! ? … before an upper-case letter or a quote; abbreviations, ordinals, numbers stay") {
    using V = std::vector<std::string>;
    CHECK(cut("Ein Hund rennt. Eine Katze schläft! Wer lacht? „Ich“, sagt er… Dann geht er.") ==
          V{"Ein Hund rennt.", "Eine Katze schläft!", "Wer lacht?", "„Ich“, sagt er…", "Dann geht er."});
    CHECK(cut("Ich kaufe z. B. Äpfel usw. und gehe zu Dr. Müller in Nr. 5. Es kostet 3.5 Euro. Am 1. Mai nicht.") ==
          V{"Ich kaufe z. B. Äpfel usw. und gehe zu Dr. Müller in Nr. 5. Es kostet 3.5 Euro.", "Am 1. Mai nicht."});
    CHECK(cut("Er sagte: „Komm!“ Dann ging er. Das ist z.B. gut.") ==
          V{"Er sagte: „Komm!“", "Dann ging er.", "Das ist z.B. gut."});
    CHECK(cut("wie geht es dir? mir geht es gut") == V{"wie geht es dir? mir geht es gut"});
    CHECK(cut("Zeile eins ohne Punkt\n\nZeile zwei") == V{"Zeile eins ohne Punkt", "Zeile zwei"});
    CHECK(cut("  Ein Satz.\u00A0Noch einer.  ") == V{"Ein Satz.", "Noch einer."});
    CHECK(cut(" \n\t ").empty());
    CHECK(cut("").empty());
    // Every abbreviation of the list, upper-case too; a word that is not one ends the sentence.
    for (const char* a : {"abb", "abs", "bd", "bspw", "bzw", "ca", "dr", "etc", "evtl", "fr", "frl", "geb", "gest",
                          "ggf", "hr", "hrn", "inkl", "jh", "jhd", "jr", "kap", "max", "min", "mio", "mr", "mrd",
                          "mrs", "ms", "nr", "prof", "sr", "st", "std", "str", "tel", "usw", "vgl", "vs", "zzgl",
                          "jan", "feb", "aug", "sep", "sept", "okt", "nov", "dez", "DR", "Prof"}) {
      CHECK_MESSAGE(cut(std::string("Sie kam ") + a + ". Dann ging sie.").size() == 1, a);
    }
    CHECK(cut("Sie kam heim. Dann ging sie.").size() == 2);
    CHECK(cut("Er ist 30. Sie ist 25.").size() == 1);
    CHECK(cut("Er ist (30. Sie ist 25.").size() == 1);  // opening punctuation before the word is not part of it
    CHECK(cut("Blank\r\n \r\nlines").size() == 2);
    CHECK(cut("Not\n \r blank\nlines").size() == 1);
    CHECK(cut("Er rief „Ja.“ „Gut“, sagte sie.") == V{"Er rief „Ja.“", "„Gut“, sagte sie."});
  }

  TEST_CASE("restore_case: ALL CAPS and all lower case re-cased by piece counts, mixed case kept, lengths kept") {
    const std::set<std::string> one = {"Zeit", "Uhr", "ich", "Ich", "habe", "Habe", "keine", "Keine", "dir", "Dir"};
    const auto pieces = [&](std::string_view w) -> std::size_t { return one.count(std::string(w)) ? 1 : 2; };
    const std::pair<std::string, std::string> cases[] = {
        {"ich habe keine zeit", "Ich habe keine Zeit"},
        {"ICH HABE KEINE ZEIT!", "Ich habe keine Zeit!"},
        {"„ICH HABE ZEIT“, SAGT ER.", "„Ich habe Zeit“, sagt er."},
        {"12 UHR", "12 Uhr"},
        {"STRASSE", "Strasse"},
        {"Ich habe keine zeit", "Ich habe keine zeit"},  // mixed case: as typed
        {"A", "A"},                                      // one cased letter: not ALL CAPS
        {"ß", "ß"},                                      // would change length if upper-cased
        {"123 !?", "123 !?"},
        {"ÄPFEL UND ÖL", "Äpfel und öl"},
        {"ıi", "ıi"},  // ı → I would change the UTF-8 length: left alone (JavaScript, counting UTF-16, maps it)
        {"ΑΘΗΝΑ ΚΑΙ ΜΟΣΚΒΑ", "Αθηνα και μοσκβα"},
        {"zeit\xFFuhr zeit", "Zeit\xFFuhr Zeit"},  // ill-formed bytes kept; "uhr" does not start after white space
    };
    for (const auto& c : cases) {
      const std::string& input = c.first;
      const std::string& want = c.second;
      const std::string got = restore_case(input, pieces);
      CHECK_MESSAGE(got == want, input);
      CHECK_MESSAGE(got.size() == input.size(), input);
    }
    int calls = 0;
    restore_case("Mixed Case zeit", [&](std::string_view) -> std::size_t { return ++calls; });
    CHECK(calls == 0);  // a mixed-case sentence never asks the vocabulary
  }

  TEST_CASE("prepare_text: NFC with the caller's bytes behind every word") {
    const std::string composed = "Ein Hund rennt \xC3\xBC" "ber die gr\xC3\xBCne Wiese.";
    const std::string decomposed = "Ein Hund rennt u\xCC\x88" "ber die gru\xCC\x88ne Wiese.";
    const auto a = prepare_text(composed);
    const auto b = prepare_text(decomposed);
    CHECK(a.text == composed);
    CHECK(b.text == composed);
    check_maps(composed, a);
    check_maps(decomposed, b);
    const std::size_t uber = b.text.find("\xC3\xBC" "ber");
    CHECK(source_of(decomposed, b, uber, uber + 5) == "u\xCC\x88" "ber");
    const std::size_t grune = b.text.find("gr\xC3\xBCne");
    CHECK(source_of(decomposed, b, grune, grune + 6) == "gru\xCC\x88ne");
    CHECK(source_of(decomposed, b, uber, uber + 1) == "u\xCC\x88");  // inside the merged ü: all of it
    CHECK(source_of(decomposed, b, uber + 2, uber + 5) == "ber");
    CHECK(source_of(composed, a, 0, a.text.size()) == composed);
  }

  TEST_CASE("prepare_text: no-break spaces become spaces; their bytes map back") {
    const std::string input = "Ein\xC2\xA0Hund rennt\xE2\x80\xAF\xC3\xBC" "ber\xE2\x80\x87" "die Wiese.";
    const auto p = prepare_text(input);
    CHECK(p.text == "Ein Hund rennt \xC3\xBC" "ber die Wiese.");
    check_maps(input, p);
    CHECK(source_of(input, p, 3, 4) == "\xC2\xA0");
    CHECK(source_of(input, p, 4, 8) == "Hund");
    const std::size_t uber = p.text.find("\xC3\xBC");
    CHECK(source_of(input, p, uber, uber + 5) == "\xC3\xBC" "ber");
  }

  TEST_CASE("prepare_text: surrogate bytes, ill-formed bytes and a mix") {
    // A lone surrogate as 3 bytes (ED A0..BF xx): one U+FFFD, one UTF-16 unit.
    const std::string lone = "a\xED\xA0\x80" "b\xED\xBF\xBF";
    const auto p = prepare_text(lone);
    CHECK(p.text == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
    check_maps(lone, p);
    CHECK(source_of(lone, p, 1, 4) == "\xED\xA0\x80");
    CHECK(source_of(lone, p, 2, 3) == "\xED\xA0\x80");  // inside the replacement: all of what it replaces
    CHECK(utf16_units(lone) == 4);
    // Ill-formed: a lone continuation byte, a cut-short sequence, an overlong form, a byte never valid.
    const std::string bad = "x\x80y\xE2\x82z\xC0\xAF\xFF";
    const auto q = prepare_text(bad);
    CHECK(q.text == "x\xEF\xBF\xBDy\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    check_maps(bad, q);
    CHECK(source_of(bad, q, 5, 8) == "\xE2\x82");
    CHECK(utf16_units(bad) == 8);  // x FFFD y FFFD z FFFD FFFD FFFD
    // A mix: a decomposed umlaut after a surrogate and before a 4-byte emoji and a no-break space.
    const std::string mix = "\xED\xB0\x80u\xCC\x88\xF0\x9F\x98\x80\xC2\xA0" "e\xCC\x81\x80";
    const auto r = prepare_text(mix);
    CHECK(r.text == "\xEF\xBF\xBD\xC3\xBC\xF0\x9F\x98\x80 \xC3\xA9\xEF\xBF\xBD");
    check_maps(mix, r);
    CHECK(source_of(mix, r, 3, 5) == "u\xCC\x88");
    CHECK(source_of(mix, r, 5, 9) == "\xF0\x9F\x98\x80");
    CHECK(source_of(mix, r, 10, 12) == "e\xCC\x81");
    CHECK(utf16_units(mix) == 1 + 2 + 2 + 1 + 2 + 1);
    CHECK(utf16_units("") == 0);
    CHECK(utf16_units("\xF0\x9F\x98") == 1);  // a 4-byte sequence cut short: one U+FFFD
  }

  TEST_CASE("prepare_text: NFC orders and composes marks; Hangul; marks the tables leave alone") {
    // Canonical ordering: dot below (220) before circumflex (230), whichever order they come in.
    CHECK(prepare_text("e\xCC\xA3\xCC\x82").text == "\xE1\xBB\x87");  // ệ
    CHECK(prepare_text("e\xCC\x82\xCC\xA3").text == "\xE1\xBB\x87");
    CHECK(prepare_text("\xC3\xAA\xCC\xA3").text == "\xE1\xBB\x87");
    // Blocked: two marks of the same class; only the first composes.
    CHECK(prepare_text("a\xCC\x81\xCC\x80").text == "\xC3\xA1\xCC\x80");
    // Singletons and exclusions: Å (U+212B) is outside the tables and stays; U+0344 → U+0308 U+0301.
    CHECK(prepare_text("\xCD\x84").text == "\xCC\x88\xCC\x81");
    CHECK(prepare_text("\xE1\xBD\xB1").text == "\xCE\xAC");  // U+1F71 → U+03AC
    // Hangul: L V T jamo → one syllable; LV + T → LVT.
    CHECK(prepare_text("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8").text == "\xEA\xB0\x81");
    CHECK(prepare_text("\xEA\xB0\x80\xE1\x86\xA8").text == "\xEA\xB0\x81");
    // Greek and Cyrillic.
    CHECK(prepare_text("\xCE\xB1\xCC\x81").text == "\xCE\xAC");
    CHECK(prepare_text("\xD0\xB8\xCC\x86").text == "\xD0\xB9");
    // A group NFC keeps as it is maps character by character.
    const std::string q = "q\xCC\x87 u\xCC\x88";
    const auto p = prepare_text(q);
    CHECK(p.text == "q\xCC\x87 \xC3\xBC");
    CHECK(p.to_input_begin[1] == 1);
    CHECK(p.to_input_end[1] == 1);
  }

  TEST_CASE("unicode: classes and case mapping of the covered scripts") {
    namespace u = attnlens::text::unicode;
    CHECK(u::info('A').cat == u::Cat::kUpper);
    CHECK(u::info(0xE4).cat == u::Cat::kLower);     // ä
    CHECK(u::info(0x100).cat == u::Cat::kUpper);    // Ā (an alternating run)
    CHECK(u::info(0x101).cat == u::Cat::kLower);
    CHECK(u::info(0x308).cat == u::Cat::kMark);
    CHECK(u::info('7').cat == u::Cat::kNumber);
    CHECK(u::info(0x201E).cat == u::Cat::kOpen);    // „
    CHECK(u::info(0x201C).cat == u::Cat::kInitial);  // “
    CHECK(u::info(0x201D).cat == u::Cat::kFinal);
    CHECK(u::info(0x4E2D).cat == u::Cat::kLetter);  // 中, outside the tables: a word character
    CHECK(u::info(0x1F600).cat == u::Cat::kOther);
    CHECK(u::info(0xDF).case_kind == u::Case::kLower);  // ß: cased, no same-length upper case
    CHECK(u::to_upper(0xDF) == 0xDF);
    CHECK(u::to_upper(0xE4) == 0xC4);
    CHECK(u::to_lower(0x1E9E) == 0x1E9E);  // ẞ → ß: 3 bytes → 2, left alone
    CHECK(u::to_lower(0x3A3) == 0x3C3);    // Σ → σ
    CHECK(u::to_lower(0x416) == 0x436);    // Ж → ж
    CHECK(u::to_upper(0xFF41) == 0xFF21);  // full-width a
    CHECK(u::to_upper(0x131) == 0x131);    // ı → I changes the length
    CHECK(u::info(0x1C5).case_kind == u::Case::kLower);  // ǅ: JavaScript counts it lower (not its upper case)
    // Every covered character: a mapping keeps the UTF-8 length and maps back (or is left alone).
    for (char32_t c = 0; c < 0x2100; ++c) {
      std::string a, b;
      attnlens::text::append_utf8(a, c);
      attnlens::text::append_utf8(b, u::to_upper(c));
      CHECK(a.size() == b.size());
      attnlens::text::append_utf8(b = "", u::to_lower(c));
      CHECK(a.size() == b.size());
    }
  }

  TEST_CASE("differential: the C++ rules against wasm/pipelines/input.js (tests/cpp/text_input_cases.json)") {
    const auto fixture = read_json(source_path("tests/cpp/text_input_cases.json"));
    std::set<std::string> one;
    for (const auto& w : fixture.at("one_piece_words")) one.insert(w.get<std::string>());
    const auto pieces = [&](std::string_view w) -> std::size_t { return one.count(std::string(w)) ? 1 : 2; };
    REQUIRE(fixture.at("cases").size() >= 40);
    int kept_marks = 0;
    for (const auto& c : fixture.at("cases")) {
      const std::string input = c.at("input").get<std::string>();
      CAPTURE(input);
      const auto p = prepare_text(input);
      CHECK(p.text == c.at("text").get<std::string>());
      check_maps(input, p);
      // The maps at every character boundary of the text, as string indices of the input.
      std::vector<std::size_t> at;
      attnlens::text::decode_utf8(p.text, &at);
      const auto& start = c.at("start");
      const auto& end = c.at("end");
      REQUIRE(start.size() == at.size());
      std::vector<std::size_t> in_at;
      const std::u32string in_cps = attnlens::text::decode_utf8(input, &in_at);
      for (std::size_t k = 0; k < at.size(); ++k) {
        const std::size_t b = p.to_input_begin[at[k]], e = p.to_input_end[at[k]];
        const std::size_t js_b = start[k].get<std::size_t>(), js_e = end[k].get<std::size_t>();
        const std::size_t cb = utf16_units(input.substr(0, b)), ce = utf16_units(input.substr(0, e));
        // The one planned difference: when the text changed anywhere, JavaScript maps every group (a character
        // with its marks) as a whole; here a group NFC keeps maps character by character, so at a kept mark the
        // begin and the end are the mark's own place, where JavaScript says the group's start and end.
        const auto j = static_cast<std::size_t>(std::find(in_at.begin(), in_at.end(), b) - in_at.begin());
        const bool kept_mark = j < in_cps.size() && attnlens::text::unicode::info(in_cps[j]).cat ==
                                                        attnlens::text::unicode::Cat::kMark;
        if (kept_mark && (cb != js_b || ce != js_e)) {
          CHECK(js_b < cb);
          CHECK(js_e > ce);
          ++kept_marks;
          continue;
        }
        CHECK_MESSAGE(cb == js_b, "begin at character ", k);
        CHECK_MESSAGE(ce == js_e, "end at character ", k);
      }
      std::vector<std::pair<std::size_t, std::size_t>> spans;
      for (const auto& s : split_sentences(input))
        spans.emplace_back(utf16_units(input.substr(0, s.begin)), utf16_units(input.substr(0, s.end)));
      CHECK(spans == c.at("sentences").get<std::vector<std::pair<std::size_t, std::size_t>>>());
      CHECK(restore_case(input, pieces) == c.at("recased").get<std::string>());
    }
    CHECK(kept_marks == 1);  // "q\u0307 und u\u0308": the dot above q
  }
}
