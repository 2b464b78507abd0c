// Tests of src/text: UTF-8 validation and the BPE tokenizer (learn, encode, decode, files, bad input).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "text/bpe.h"
#include "text/utf8.h"
#include "test_support.h"

using attnlens::text::BpeLearnOptions;
using attnlens::text::BpeTokenizer;
using attnlens::text::decode_utf8;
using attnlens::text::sanitize_utf8;

namespace {

// A small German/English corpus in the style of Multi30k (and the umlaut sentence the round trip checks).
const std::vector<std::string>& corpus() {
  static const std::vector<std::string> lines = {
      "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
      "Two young, White males are outside near many bushes.",
      "Mehrere Männer mit Schutzhelmen bedienen ein Antriebsradsystem.",
      "Several men in hard hats are operating a giant pulley system.",
      "Ein kleines Mädchen klettert in ein Spielhaus aus Holz.",
      "A little girl climbing into a wooden playhouse.",
      "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt ein Fenster.",
      "A man in a blue shirt is standing on a ladder cleaning a window.",
      "Zwei Männer stehen am Herd und bereiten Essen zu.",
      "Two men are at the stove preparing food.",
      "Ein Mädchen läuft über die Straße, die Größe der Äpfel ist beeindruckend.",
      "A girl runs across the street; the size of the apples is impressive.",
      "Ein Hund rennt über die große Wiese und fängt einen Ball.",
      "A dog runs across the big meadow and catches a ball.",
      "Kinder spielen auf der Straße vor einem Geschäft mit Äpfeln.",
      "Children play in the street in front of a shop with apples.",
  };
  return lines;
}

BpeTokenizer small_model(int merges = 200) {
  BpeLearnOptions o;
  o.num_merges = merges;
  return BpeTokenizer::learn(corpus(), o);
}

std::string temp_path(const std::string& name) {
  // Tests run natively and under Node (NODERAWFS); /tmp exists in both.
  return "/tmp/attnlens_test_text_" + name;
}

using attnlens::testing::error_of;

}  // namespace

TEST_SUITE("text.utf8") {
  TEST_CASE("valid input decodes to its code points and re-encodes unchanged") {
    const std::string s = "a\xC3\xA4\xE2\x82\xAC\xF0\x9F\x98\x80";  // a ä € 😀
    CHECK(decode_utf8(s) == std::u32string{U'a', 0xE4, 0x20AC, 0x1F600});
    CHECK(sanitize_utf8(s) == s);
    CHECK(decode_utf8("").empty());
  }

  TEST_CASE("ill-formed sequences become U+FFFD per maximal subpart") {
    const char32_t R = attnlens::text::kReplacementChar;
    struct Case {
      std::string bytes;
      std::u32string expected;
    };
    const Case cases[] = {
        {"\x80", {R}},                                      // lone continuation byte
        {"a\xBF" "b", {U'a', R, U'b'}},                     // lone continuation between letters
        {"a\xC3", {U'a', R}},                               // truncated 2-byte sequence at the end
        {"\xE2\x82", {R}},                                  // truncated 3-byte sequence: one replacement
        {"\xE2\x82" "A", {R, U'A'}},                        // cut short by an ASCII byte, which survives
        {"\xF0\x9F\x98", {R}},                              // truncated 4-byte sequence
        {"\xC0\xAF", {R, R}},                               // overlong '/' (C0 is never valid)
        {"\xC1\x81", {R, R}},                               // overlong 'A'
        {"\xE0\x80\xAF", {R, R, R}},                        // overlong 3-byte form
        {"\xF0\x80\x80\xAF", {R, R, R, R}},                 // overlong 4-byte form
        {"\xED\xA0\x80", {R, R, R}},                        // encoded high surrogate U+D800
        {"\xED\xBF\xBF", {R, R, R}},                        // encoded low surrogate U+DFFF
        {"\xF4\x90\x80\x80", {R, R, R, R}},                 // above U+10FFFF
        {"\xF5\xFF\xFE", {R, R, R}},                        // bytes that never occur in UTF-8
        {"\xC3\xC3\xA4", {R, 0xE4}},                        // a lead byte interrupts another sequence
        {std::string("\x00", 1), {0}},                      // NUL is a valid (control) character
    };
    for (const auto& c : cases) {
      CAPTURE(c.bytes.size());
      CHECK(decode_utf8(c.bytes) == c.expected);
      CHECK(decode_utf8(sanitize_utf8(c.bytes)) == c.expected);
    }
  }

  TEST_CASE("random bytes never crash and always give valid UTF-8") {
    std::mt19937 rng(1234);
    for (int t = 0; t < 2000; ++t) {
      std::string s(rng() % 40, '\0');
      for (auto& ch : s) ch = static_cast<char>(rng() & 0xFF);
      const std::string clean = sanitize_utf8(s);
      CHECK(sanitize_utf8(clean) == clean);
    }
  }
}

TEST_SUITE("text.bpe") {
  TEST_CASE("pre-tokenisation: words, one pre-token per punctuation character, markers after spaces") {
    using attnlens::text::bpe_pretokenize;
    CHECK(bpe_pretokenize("Hallo, Welt!") == std::vector<std::string>{"▁Hallo", ",", "▁Welt", "!"});
    CHECK(bpe_pretokenize("(Größe)") == std::vector<std::string>{"▁(", "Größe", ")"});
    CHECK(bpe_pretokenize("3.5 kg") == std::vector<std::string>{"▁3", ".", "5", "▁kg"});
    CHECK(bpe_pretokenize("  Ein \t\n Hund  ") == std::vector<std::string>{"▁Ein", "▁Hund"});
    CHECK(bpe_pretokenize("«Ja»—nein…") == std::vector<std::string>{"▁«", "Ja", "»", "—", "nein", "…"});
    CHECK(bpe_pretokenize("a▁b") == std::vector<std::string>{"▁a", "_", "b"});  // the marker is reserved
    CHECK(bpe_pretokenize("").empty());
    CHECK(bpe_pretokenize(" \t\r\n ").empty());
  }

  TEST_CASE("learning on a hand-checkable corpus gives the expected merges, vocabulary and tie-break") {
    // Pre-tokens: "▁ab" ×3, "▁abc" ×1. Pair counts (▁,a)=4, (a,b)=4, (b,c)=1. The tie at 4 goes to the
    // lexicographically smaller pair: "a" (0x61) < "▁" (0xE2...), so (a,b) first, then (▁,ab)=4; (▁ab,c) occurs once
    // and is not merged. Characters are ordered by frequency, then code point: a, b, ▁ (4 each), c (1).
    BpeLearnOptions o;
    o.num_merges = 10;
    const auto tok = BpeTokenizer::learn(std::vector<std::string>{"ab ab", "ab abc"}, o);
    CHECK(tok.vocab() == std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "a", "b", "▁", "c", "ab", "▁ab"});
    CHECK(tok.merges() == std::vector<std::pair<std::string, std::string>>{{"a", "b"}, {"▁", "ab"}});
    CHECK(tok.encode_pieces("abc ab") == std::vector<std::string>{"▁ab", "c", "▁ab"});
    CHECK(tok.encode("abc ab") == std::vector<int>{9, 7, 9});
  }

  TEST_CASE("learning respects the merge budget, is deterministic, and puts the specials first") {
    const auto a = small_model(50);
    const auto b = small_model(50);
    CHECK(a.num_merges() == 50);
    CHECK(a.vocab() == b.vocab());
    CHECK(a.merges() == b.merges());
    for (int i = 0; i < attnlens::text::kNumSpecialTokens; ++i) CHECK(a.piece(i) == attnlens::text::kSpecialTokens[i]);
    CHECK(small_model(0).num_merges() == 0);
    // The corpus is small: learning stops when no pair occurs twice, well before 100000 merges.
    const auto big = small_model(100000);
    CHECK(big.num_merges() > 50);
    CHECK(big.num_merges() < 2000);
    // Learning from a stream equals learning from lines.
    std::string joined;
    for (const auto& l : corpus()) joined += l + "\n";
    std::istringstream in(joined);
    BpeLearnOptions o;
    o.num_merges = 50;
    CHECK(BpeTokenizer::learn(std::vector<std::istream*>{&in}, o).merges() == a.merges());
  }

  TEST_CASE("German umlauts and ß round-trip exactly") {
    const auto tok = small_model();
    const std::string s = "Größe, Straße, Mädchen über Äpfel.";
    const auto ids = tok.encode(s);
    CHECK(tok.decode(ids) == s);
    const auto pieces = tok.encode_pieces(s);
    CHECK(tok.decode_pieces(pieces) == s);
    for (const auto& p : pieces) CHECK(p != "<unk>");
    CHECK(pieces.front().rfind("▁", 0) == 0);
    // Every corpus line (already normalised) round-trips too.
    for (const auto& line : corpus()) CHECK(tok.decode(tok.encode(line)) == line);
  }

  TEST_CASE("white space is normalised and decode restores single spaces") {
    const auto tok = small_model();
    CHECK(tok.decode(tok.encode("  Ein   Hund\t rennt \n über  die Straße . ")) == "Ein Hund rennt über die Straße .");
  }

  TEST_CASE("characters outside the vocabulary become <unk> and stay visible") {
    const auto tok = small_model();
    const auto pieces = tok.encode_pieces("Ein Hund 你好 rennt");
    const auto ids = tok.encode("Ein Hund 你好 rennt");
    int unk = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == attnlens::text::kUnkId) {
        ++unk;
        CHECK(pieces[i] == "<unk>");
      }
    }
    CHECK(unk == 2);
    CHECK(tok.decode(ids) == "Ein Hund <unk><unk> rennt");
    // min_frequency leaves rare characters out: 'q' does not occur, 'k' and 'z' do but rarely.
    BpeLearnOptions o;
    o.num_merges = 20;
    o.min_frequency = 1000;
    const auto strict = BpeTokenizer::learn(corpus(), o);
    CHECK(strict.vocab_size() == attnlens::text::kNumSpecialTokens);  // no character is that frequent
    CHECK(strict.encode("ab") == std::vector<int>{1, 1, 1});         // ▁, a, b are all unknown
  }

  TEST_CASE("invalid UTF-8 input is encoded as U+FFFD or <unk>, never a crash") {
    const auto tok = small_model();
    const std::string bad[] = {"\x80", "Ein \xC3", "\xC0\xAF", "\xED\xA0\x80 Hund", "\xF4\x90\x80\x80",
                               "M\xE4nner", std::string("a\0b", 3)};
    for (const auto& s : bad) {
      const auto ids = tok.encode(s);
      const std::string text = tok.decode(ids);
      CHECK(sanitize_utf8(text) == text);
    }
    // With U+FFFD in the training data it becomes a character of the vocabulary and round-trips.
    BpeLearnOptions o;
    o.num_merges = 5;
    const auto with_fffd = BpeTokenizer::learn(std::vector<std::string>{"M\xE4nner \xFF"}, o);
    CHECK(with_fffd.decode(with_fffd.encode("M\xE4nner")) == "M\xEF\xBF\xBDnner");
    std::mt19937 rng(99);
    for (int t = 0; t < 500; ++t) {
      std::string s(rng() % 64, '\0');
      for (auto& ch : s) ch = static_cast<char>(rng() & 0xFF);
      const std::string text = tok.decode(tok.encode(s));
      CHECK(sanitize_utf8(text) == text);
    }
  }

  TEST_CASE("empty input") {
    const auto tok = small_model();
    CHECK(tok.encode("").empty());
    CHECK(tok.encode("   ").empty());
    CHECK(tok.decode({}).empty());
    CHECK(tok.decode_pieces({}).empty());
    BpeLearnOptions o;
    const auto empty = BpeTokenizer::learn(std::vector<std::string>{}, o);
    CHECK(empty.vocab_size() == attnlens::text::kNumSpecialTokens);
    CHECK(empty.num_merges() == 0);
    CHECK(empty.encode("x") == std::vector<int>{1, 1});
  }

  TEST_CASE("very long input: one 300000-character word and a 20000-word text") {
    const auto tok = small_model();
    std::string word;
    for (int i = 0; i < 100000; ++i) word += "enä";
    const auto ids = tok.encode(word);
    CHECK(!ids.empty());
    CHECK(ids.size() <= 300001);
    CHECK(tok.decode(ids) == word);
    std::string text;
    for (int i = 0; i < 2000; ++i) text += (i ? " " : "") + std::string("Ein Mädchen läuft über die Straße.");
    const auto ids2 = tok.encode(text);
    CHECK(tok.decode(ids2) == text);
  }

  TEST_CASE("special ids decode to nothing; ids outside the vocabulary are errors") {
    const auto tok = small_model();
    auto ids = tok.encode("Ein Hund");
    ids.insert(ids.begin(), attnlens::text::kBosId);
    ids.push_back(attnlens::text::kEosId);
    ids.push_back(attnlens::text::kPadId);
    CHECK(tok.decode(ids) == "Ein Hund");
    const int n = static_cast<int>(tok.vocab_size());
    CHECK(error_of([&] { tok.decode({n}); }).find("token id " + std::to_string(n) + " is outside the vocabulary") !=
          std::string::npos);
    CHECK_THROWS_AS(tok.decode({-1}), attnlens::Error);
  }

  // Regression: an empty bpe.merges with a full vocabulary loaded silently; every word then encoded into single
  // characters (pieces the model never saw as input) and translated into gibberish.
  TEST_CASE("the merges must fit the vocabulary: every longer piece is made by some merge") {
    const std::string vocab = "<pad>\n<unk>\n<s>\n</s>\na\nb\nab\n";
    CHECK(error_of([&] { BpeTokenizer::from_text(vocab, "", "x.vocab", "x.merges"); }) ==
          "x.merges: no merge produces vocabulary piece 6 ('ab') of x.vocab (0 merges for 7 pieces): the merges do "
          "not fit the vocabulary (an empty or truncated merges file, or one from another training run?)");
    CHECK(BpeTokenizer::from_text(vocab, "a b\n").encode("ab").back() == 6);  // after <unk> for the marker
    // Specials and single characters need no merge (a character-level model has no merges at all).
    CHECK(BpeTokenizer::from_text("<pad>\n<unk>\n<s>\n</s>\n\xE2\x96\x81\na\n\xC3\xA4\n", "").vocab_size() == 7);
    // A learned model with its last merge dropped, or with no merges, is refused.
    const auto tok = small_model();
    REQUIRE(tok.num_merges() > 1);
    std::string vocab_text;
    for (const auto& p : tok.vocab()) vocab_text += p + "\n";
    const std::string merges = tok.merges_text();
    const std::string truncated = merges.substr(0, merges.rfind('\n', merges.size() - 2) + 1);
    CHECK(BpeTokenizer::from_text(vocab_text, merges).vocab() == tok.vocab());
    CHECK(error_of([&] { BpeTokenizer::from_text(vocab_text, truncated, "v", "m"); }).find("m: no merge produces") == 0);
    CHECK(error_of([&] { BpeTokenizer::from_text(vocab_text, "", "v", "m"); }).find("m: no merge produces") == 0);
    // PREFIX.merges is named when loading files.
    const std::string prefix = temp_path("nomerges");
    tok.save(prefix);
    { std::ofstream(prefix + ".merges", std::ios::trunc); }
    CHECK(error_of([&] { BpeTokenizer::load(prefix); }).find("'" + prefix + ".merges': no merge produces") == 0);
    std::remove((prefix + ".vocab").c_str());
    std::remove((prefix + ".merges").c_str());
  }

  TEST_CASE("files and JSON round-trip; corrupt models give clear errors") {
    const auto tok = small_model();
    const std::string prefix = temp_path("model");
    tok.save(prefix);
    const auto loaded = BpeTokenizer::load(prefix);
    CHECK(loaded.vocab() == tok.vocab());
    CHECK(loaded.merges() == tok.merges());
    const std::string s = "Zwei Männer laufen über die Straße.";
    CHECK(loaded.encode(s) == tok.encode(s));
    const auto from_json = BpeTokenizer::from_json(nlohmann::json::parse(tok.to_json().dump()));
    CHECK(from_json.encode(s) == tok.encode(s));
    // CRLF files and a missing final newline are accepted.
    std::string crlf_vocab;
    for (const auto& p : tok.vocab()) crlf_vocab += p + "\r\n";
    std::string merges = tok.merges_text();
    merges.pop_back();
    CHECK(BpeTokenizer::from_text(crlf_vocab, merges).encode(s) == tok.encode(s));

    CHECK(error_of([] { BpeTokenizer::load("/tmp/attnlens_no_such_model"); })
              .find("cannot open '/tmp/attnlens_no_such_model.vocab'") != std::string::npos);
    // vocabulary text, merges text, a part of the error message
    const char* const bad_text[][3] = {
        {"<pad>\n<s>\n<unk>\n</s>\n", "", "vocabulary entry 1 is '<s>' but must be '<unk>'"},
        {"<pad>\n<unk>\n<s>\n</s>\na\nb\n", "a b\n", "merge 1 ('a b'): the merged piece is not in the vocabulary"},
        {"<pad>\n<unk>\n<s>\n</s>\na\nab\n", "a b\n", "right part is not a vocabulary piece"},
        {"<pad>\n<unk>\n<s>\n</s>\na\nb\nab\n", "ab\n", "merges line 1 must be 'left right'"},
        {"<pad>\n<unk>\n<s>\n</s>\na\na\n", "", "piece 'a' appears twice"},
        {"<pad>\n<unk>\n<s>\n</s>\n\xFF\n", "", "is not valid UTF-8"},
    };
    for (const auto& c : bad_text) {
      CAPTURE(c[2]);
      CHECK(error_of([&] { BpeTokenizer::from_text(c[0], c[1]); }).find(c[2]) != std::string::npos);
    }
    CHECK(error_of([] { BpeTokenizer::from_json(nlohmann::json{{"type", "wordpiece"}}); })
              .find("\"type\" must be \"bpe\"") != std::string::npos);
    std::remove((prefix + ".vocab").c_str());
    std::remove((prefix + ".merges").c_str());
  }
}
