// Tests of the SST-2 word tokenizer and the word vocabulary (src/text/words.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "text/utf8.h"
#include "text/words.h"

using attnlens::text::tokenize_words;
using attnlens::text::WordVocab;
using Tokens = std::vector<std::string>;

namespace {
std::string joined(const Tokens& t) {
  std::string s;
  for (const auto& x : t) s += (s.empty() ? "" : " ") + x;
  return s;
}
}  // namespace

TEST_SUITE("text.words") {
  TEST_CASE("raw sentences become the SST-2 form") {
    // Left: raw text a user types; right: how the same sentence appears in SST-2 (GLUE train/dev).
    const std::pair<std::string, std::string> cases[] = {
        {"It's a charming and often affecting journey.", "it 's a charming and often affecting journey ."},
        {"Doesn't work, can't fail, won't stop!", "does n't work , ca n't fail , wo n't stop !"},
        {"I'm sure they're good; you'll see, we've won, he'd say.",
         "i 'm sure they 're good ; you 'll see , we 've won , he 'd say ."},
        {"An old-fashioned, sci-fi B-movie -- and/or a 90-minute rip-off...",
         "an old-fashioned , sci-fi b-movie -- and/or a 90-minute rip-off ..."},
        {"Mr. Smith went to the U.S. in the '70s.", "mr. smith went to the u.s. in the '70s ."},
        {"The film's \"best\" moment (really) costs $10,000 at 2:30?!?",
         "the film 's `` best '' moment ( really ) costs $ 10,000 at 2:30 ?!?"},
        {"You cannot -- gonna wanna gotta.", "you can not -- gon na wan na got ta ."},
        {"The actors' work", "the actors ' work"},
        {"Let 'em go 'til dawn, ol' R&B fans", "let 'em go 'til dawn , ol' r&b fans"},
        {"\xE2\x80\x9CTypographic\xE2\x80\x9D quotes \xE2\x80\x94 and it\xE2\x80\x99s fine\xE2\x80\xA6",
         "`` typographic '' quotes -- and it 's fine ..."},
        {"GRÖSSE Über ÄPFEL", "grösse über äpfel"},
        {"the 1920's", "the 1920 's"},
        {"E.T. and j. crew", "e.t. and j. crew"},
    };
    for (const auto& test_case : cases) {  // no structured binding: em++'s clang 14 can't capture one in CAPTURE
      const auto& raw = test_case.first;
      const auto& expected = test_case.second;
      CAPTURE(raw);
      CHECK(joined(tokenize_words(raw)) == expected);
    }
  }

  TEST_CASE("already tokenized SST-2 text is a fixed point") {
    const std::string lines[] = {
        "it 's a charming and often affecting journey . ",
        "the film 's ending has a `` what was it all for ? '' ",
        "a sour little movie at its core ; an exploration of the emptiness",
        "hashiguchi covers this territory with wit -- the first to be released in the u.s. -- a major director",
        "( green is ) the comedy equivalent of saddam hussein , and i 'm just about ready",
        "does n't ca n't wo n't ai n't",
    };
    for (const auto& line : lines) {
      CAPTURE(line);
      std::vector<std::string> expected;
      std::size_t i = 0;
      while (i < line.size()) {
        std::size_t j = line.find(' ', i);
        if (j == std::string::npos) j = line.size();
        if (j > i) expected.push_back(line.substr(i, j - i));
        i = j + 1;
      }
      CHECK(tokenize_words(line) == expected);
    }
  }

  TEST_CASE("bad and odd input: empty, punctuation only, emoji, invalid UTF-8, very long") {
    CHECK(tokenize_words("").empty());
    CHECK(tokenize_words(" \t\n ").empty());
    CHECK(joined(tokenize_words("!!! ... ,;")) == "!!! ... , ;");
    CHECK(joined(tokenize_words("great \xF0\x9F\x98\x80\xF0\x9F\x98\x80 movie")) ==
          "great \xF0\x9F\x98\x80 \xF0\x9F\x98\x80 movie");
    const auto bad = tokenize_words("bad\xFF\xC0 movie \xED\xA0\x80");
    CHECK(joined(bad) == "bad \xEF\xBF\xBD \xEF\xBF\xBD movie \xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD");
    std::mt19937 rng(7);
    for (int t = 0; t < 500; ++t) {
      std::string s(rng() % 50, '\0');
      for (auto& ch : s) ch = static_cast<char>(rng() & 0xFF);
      for (const auto& tok : tokenize_words(s)) {
        CHECK(!tok.empty());
        CHECK(tok.find(' ') == std::string::npos);
        CHECK(attnlens::text::sanitize_utf8(tok) == tok);
      }
    }
    std::string many;
    for (int i = 0; i < 10000; ++i) many += "word, ";
    CHECK(tokenize_words(many).size() == 20000);
  }

  // Regression: a run of n apostrophes cost O(n²) (a run-length scan per apostrophe, then erasing the leading
  // apostrophes one at a time): 1M of them never finished. No timing assertion: a quadratic tokenizer hangs here.
  TEST_CASE("1 MB inputs of one character class tokenize in linear time") {
    const std::size_t n = std::size_t{1} << 20;
    // n apostrophes: n - 2 opening quotes ` (leading apostrophes) and the closing '' of the last two.
    const auto apostrophes = tokenize_words(std::string(n, '\''));
    REQUIRE(apostrophes.size() == n - 1);
    CHECK(apostrophes.front() == "`");
    CHECK(apostrophes[n - 3] == "`");
    CHECK(apostrophes.back() == "''");

    const auto letter = tokenize_words(std::string(n, 'a'));
    REQUIRE(letter.size() == 1);
    CHECK(letter[0].size() == n);

    std::string alternating;
    for (std::size_t i = 0; i < n / 2; ++i) alternating += "ab";
    CHECK(tokenize_words(alternating) == Tokens{alternating});

    std::string marks;  // U+0301 COMBINING ACUTE ACCENT, a word character: one word
    for (std::size_t i = 0; i < n / 2; ++i) marks += "\xCC\x81";
    CHECK(tokenize_words(marks) == Tokens{marks});

    std::string quoted;  // 'a'a'a… is one word: an opening quote, then the rest
    for (std::size_t i = 0; i < n / 2; ++i) quoted += "'a";
    CHECK(tokenize_words(quoted) == Tokens{"`", quoted.substr(1)});

    std::string mixed;  // each "--..x'''" is -- ..x ' ''
    for (std::size_t i = 0; i < n / 8; ++i) mixed += "--..x'''";
    const auto m = tokenize_words(mixed);
    REQUIRE(m.size() == n / 2);
    CHECK(Tokens(m.begin(), m.begin() + 4) == Tokens{"--", "..x", "'", "''"});
  }

  TEST_CASE("max_tokens stops early and returns exactly the first tokens") {
    const std::string text = "It's a charming, often affecting journey. Can't miss!";
    const Tokens all = tokenize_words(text);
    REQUIRE(all.size() == 13);
    for (std::size_t k = 0; k <= all.size() + 2; ++k) {
      CAPTURE(k);
      CHECK(tokenize_words(text, k) == Tokens(all.begin(), all.begin() + static_cast<long>(std::min(k, all.size()))));
    }
    std::string huge;
    for (int i = 0; i < 200000; ++i) huge += "good film, ";
    CHECK(tokenize_words(huge, 5) == Tokens{"good", "film", ",", "good", "film"});
  }

  TEST_CASE("lowercasing covers Latin, Greek and Cyrillic capitals") {
    using attnlens::text::to_lower;
    CHECK(to_lower(U'A') == U'a');
    CHECK(to_lower(0xC4) == 0xE4);    // Ä
    CHECK(to_lower(0xD7) == 0xD7);    // × is not a letter
    CHECK(to_lower(0x160) == 0x161);  // Š
    CHECK(to_lower(0x141) == 0x142);  // Ł
    CHECK(to_lower(0x178) == 0xFF);   // Ÿ
    CHECK(to_lower(0x393) == 0x3B3);  // Γ
    CHECK(to_lower(0x416) == 0x436);  // Ж
    CHECK(to_lower(0x401) == 0x451);  // Ё
    CHECK(to_lower(U'ß') == U'ß');
  }

  TEST_CASE("word vocabulary: ids, unknown words, files, JSON and errors") {
    const auto v = WordVocab::from_tokens({"<pad>", "<unk>", "the", "movie", "'s", "good"});
    CHECK(v.size() == 6);
    CHECK(v.unk_id() == 1);
    const auto toks = tokenize_words("The movie's zorgly good");
    CHECK(v.encode(toks) == std::vector<int>{2, 3, 4, 1, 5});
    CHECK(v.visible_tokens(toks) == std::vector<std::string>{"the", "movie", "'s", "<unk>", "good"});
    CHECK(v.token(3) == "movie");
    CHECK_THROWS_AS(v.token(6), attnlens::Error);
    const auto j = WordVocab::from_json(nlohmann::json::parse(v.to_json().dump()));
    CHECK(j.tokens() == v.tokens());
    CHECK(WordVocab::from_text("<unk>\r\na\nb").id_of("b") == 2);
    auto message = [](auto f) -> std::string {
      try {
        f();
      } catch (const attnlens::Error& e) {
        return e.what();
      }
      return "(no error)";
    };
    CHECK(message([] { WordVocab::from_tokens({"a", "b"}); }).find("the unknown token '<unk>' is missing") !=
          std::string::npos);
    CHECK(message([] { WordVocab::from_tokens({"<unk>", "a", "a"}); }).find("token 'a' appears twice") !=
          std::string::npos);
    CHECK(message([] { WordVocab::load("/tmp/attnlens_no_such_vocab.txt"); }).find("cannot open") !=
          std::string::npos);
  }
}
