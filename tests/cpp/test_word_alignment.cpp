// Word alignments: pieces → words with offsets (text/word_spans.h), word-level maps and link extraction
// (analysis/word_alignment.h), and Translator::align — forced decoding — against PyTorch teacher forcing on the
// shipped translators' golden cases (make_goldens.py: every case is the teacher-forced reference).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/word_alignment.h"
#include "api.h"
#include "common.h"
#include "golden.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "text/bpe.h"
#include "text/word_spans.h"
#include "test_support.h"

namespace {

using attnlens::analysis::Link;
using attnlens::text::WordSpan;

using attnlens::testing::read_json;
using attnlens::testing::source_path;

using attnlens::testing::read_file;

attnlens::text::BpeTokenizer transformer_bpe() {
  const std::string dir = source_path("models/de-en-transformer/");
  return attnlens::text::BpeTokenizer::from_text(read_file(dir + "bpe.vocab"), read_file(dir + "bpe.merges"), "bpe");
}

std::vector<std::string> pieces_of(const attnlens::text::BpeTokenizer& bpe, const std::string& text) {
  std::vector<std::string> out;
  for (int id : bpe.encode(text)) out.push_back(bpe.piece(id));
  return out;
}

// "word@begin-end ..." for compact comparisons.
std::string describe(const std::vector<WordSpan>& words) {
  std::string s;
  for (const auto& w : words)
    s += (s.empty() ? "" : " ") + w.text + "@" + std::to_string(w.byte_begin) + "-" + std::to_string(w.byte_end);
  return s;
}

}  // namespace

TEST_CASE("word spans: pieces merge into the words of \\w+|[^\\w\\s], with byte offsets into the input") {
  const auto bpe = transformer_bpe();
  SUBCASE("umlauts, hyphen, final punctuation") {
    const std::string text = "Das T-Shirt ist grün.";
    const auto words = attnlens::text::words_of_pieces(pieces_of(bpe, text), text);
    CHECK(describe(words) == "Das@0-3 T@4-5 -@5-6 Shirt@6-11 ist@12-15 grün@16-21 .@21-22");
    for (const auto& w : words) CHECK(text.substr(w.byte_begin, w.byte_end - w.byte_begin) == w.text);
  }
  SUBCASE("a word split into several pieces is one word; German quotes are punctuation") {
    const std::string text = "„Wie geht es dir?“";
    const auto pieces = pieces_of(bpe, text);
    REQUIRE(pieces.size() > 6);  // "dir" is split: ▁d ir
    const auto words = attnlens::text::words_of_pieces(pieces, text);
    CHECK(describe(words) == "„@0-3 Wie@3-6 geht@7-11 es@12-14 dir@15-18 ?@18-19 “@19-22");
  }
  SUBCASE("white space runs, tabs and control characters are skipped; leading space too") {
    const std::string text = "  Ein\t\x01 Hund ";
    const auto words = attnlens::text::words_of_pieces(pieces_of(bpe, text), text);
    CHECK(describe(words) == "Ein@2-5 Hund@8-12");
  }
  SUBCASE("an unknown character is one <unk> piece covering one code point") {
    const std::string text = "Ein \xE2\x98\x83 Mann";  // U+2603 SNOWMAN is not in the vocabulary
    const auto pieces = pieces_of(bpe, text);
    CHECK(std::find(pieces.begin(), pieces.end(), "<unk>") != pieces.end());
    const auto words = attnlens::text::words_of_pieces(pieces, text);
    CHECK(describe(words) == "Ein@0-3 <unk>@4-7 Mann@8-12");
  }
  SUBCASE("an unknown punctuation character is a word of its own; the marker piece before it joins it") {
    const std::vector<std::string> pieces{"\xE2\x96\x81" "und", "\xE2\x96\x81", "<unk>", "die"};
    const std::string text = "und \xE2\x80\x9A" "die";  // U+201A, a punctuation character outside the vocabulary
    const auto words = attnlens::text::words_of_pieces(pieces, text);
    CHECK(describe(words) == "und@0-3 <unk>@4-7 die@7-10");
    CHECK(attnlens::text::word_index_of_pieces(words, 4) == std::vector<int>{0, 1, 1, 2});
  }
  SUBCASE("ill-formed UTF-8 is one U+FFFD code point, and offsets never leave the text") {
    const std::string text = "Ha\xC3 x";  // a lead byte cut short
    const auto words = attnlens::text::words_of_pieces(pieces_of(bpe, text), text);
    for (const auto& w : words) {
      CHECK(w.byte_begin <= w.byte_end);
      CHECK(w.byte_end <= text.size());
    }
    CHECK(words.back().text == "x");
    CHECK(words.back().byte_begin == 4);
  }
  SUBCASE("specials belong to no word; pieces that are not from the text cannot overrun it") {
    const std::vector<std::string> pieces{"\xE2\x96\x81" "ab", "c", "</s>"};
    const auto words = attnlens::text::words_of_pieces(pieces, "ab");
    REQUIRE(words.size() == 1);
    CHECK(words[0].end_piece == 2);
    CHECK(words[0].byte_end == 2);  // clamped to the text
    CHECK(attnlens::text::word_index_of_pieces(words, 3) == std::vector<int>{0, 0, -1});
  }
}

TEST_CASE("word maps: sum over column pieces, mean over row pieces, specials dropped") {
  // rows: pieces r0 r1 (word 0), r2 (word 1), r3 = </s>; cols: c0 (word 0), c1 c2 (word 1), c3 = </s>
  const std::vector<float> m{0.1f, 0.2f, 0.3f, 0.4f,  //
                             0.5f, 0.1f, 0.1f, 0.3f,  //
                             0.0f, 0.6f, 0.2f, 0.2f,  //
                             0.25f, 0.25f, 0.25f, 0.25f};
  const auto w = attnlens::analysis::merge_to_words(m.data(), 4, 4, {0, 0, 1, -1}, 2, {0, 1, 1, -1}, 2);
  REQUIRE(w.size() == 4);
  CHECK(w[0] == doctest::Approx((0.1 + 0.5) / 2));
  CHECK(w[1] == doctest::Approx((0.2 + 0.3 + 0.1 + 0.1) / 2));
  CHECK(w[2] == doctest::Approx(0.0));
  CHECK(w[3] == doctest::Approx(0.8));
  CHECK_THROWS_AS(attnlens::analysis::merge_to_words(m.data(), 4, 4, {0, 0, 1}, 2, {0, 1, 1, -1}, 2),
                  attnlens::Error);
  CHECK_THROWS_AS(attnlens::analysis::merge_to_words(m.data(), 4, 4, {0, 0, 5, -1}, 2, {0, 1, 1, -1}, 2),
                  attnlens::Error);
}

TEST_CASE("links: argmax per target word, and grow-diag-final-and of both directions") {
  // 3 target words × 3 source words.
  const std::vector<float> w{0.7f, 0.2f, 0.1f,   // target 0 -> source 0
                             0.1f, 0.3f, 0.6f,   // target 1 -> source 2
                             0.1f, 0.5f, 0.4f};  // target 2 -> source 1
  using attnlens::analysis::LinkExtraction;
  const auto arg = attnlens::analysis::extract_links(w, 3, 3, LinkExtraction::kArgmax);
  CHECK(arg == std::vector<Link>{{0, 0}, {1, 2}, {2, 1}});
  // Column argmaxes: source 0 -> 0, source 1 -> 2, source 2 -> 1: the same links, so gdfa keeps exactly them.
  CHECK(attnlens::analysis::extract_links(w, 3, 3, LinkExtraction::kGdfa) == arg);
  // Hand-made case for the growing steps: intersection {(0,0)}; its neighbours in the union, in the fixed order
  // (1,0) then (1,1): (1,0) joins (source word 1 unaligned), then (1,1) joins (target word 1 still unaligned —
  // one unaligned word is enough); (3,3) touches nothing and is added by final-and (both words unaligned);
  // (5,3) is not, since target word 3 is then aligned.
  const std::vector<Link> a{{0, 0}, {1, 1}, {1, 0}, {5, 3}}, b{{0, 0}, {3, 3}};
  CHECK(attnlens::analysis::grow_diag_final_and(a, b) == std::vector<Link>{{0, 0}, {1, 0}, {1, 1}, {3, 3}});
  CHECK_THROWS_AS(attnlens::analysis::parse_link_extraction("max"), attnlens::Error);
}

TEST_CASE("align: forced decoding equals PyTorch teacher forcing on every shipped translator's goldens") {
  for (const char* name : {"de-en-general", "de-en-transformer", "de-en-rnn-general", "de-en-rnn-additive"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("models/") + name);
    const auto tr = attnlens::api::Translator::load(dir);
    const auto golden_json = read_json(dir + "/golden.json");
    const auto golden = attnlens::io::SafeTensors::load(dir + "/golden.safetensors");
    const float tol = 1e-4f;  // the project's parity bound (the goldens' "tolerance.abs")
    std::size_t cases = 0, maps = 0;
    for (const auto& c : golden_json["cases"]) {
      if (!c.contains("source") || !c.contains("reference")) continue;
      const std::string key = c["name"].get<std::string>();
      CAPTURE(key);
      const auto r = tr->align(c["source"].get<std::string>(), c["reference"].get<std::string>());
      REQUIRE(r.source_ids == c["source_ids"].get<std::vector<int>>());
      REQUIRE(r.target_ids == c["target_out_ids"].get<std::vector<int>>());
      // Every map the golden holds, head by head.
      for (const auto& a : c["attentions"]) {
        const auto g = golden.to_float(a["key"].get<std::string>());
        const auto dims = golden.info(a["key"].get<std::string>()).shape;
        const std::string map_name = a["name"].get<std::string>();
        const int layer = a["layer"].get<int>();
        const std::size_t heads = dims.size() == 3 ? dims[0] : 1;
        const std::size_t cells = g.size() / heads;
        for (std::size_t h = 0; h < heads; ++h) {
          std::optional<attnlens::MapView> m;
          for (const attnlens::MapView x : r.attentions)
            if (x.name == map_name && (dims.size() != 3 || (x.layer == layer && x.head == static_cast<int>(h)))) m.emplace(x);
          REQUIRE_MESSAGE(m.has_value(), "no map " << map_name << " layer " << layer << " head " << h);
          REQUIRE(m->data.size() == cells);
          float worst = 0;
          for (std::size_t k = 0; k < cells; ++k) worst = std::max(worst, std::fabs(m->data[k] - g[h * cells + k]));
          CHECK(worst <= tol);
          ++maps;
        }
      }
      // Per-piece log-probabilities: logit(target) − logsumexp, where the golden's top-16 holds the target id.
      const auto top_ids = golden.to_int64(key + "/logits_top_ids");
      const auto top_values = golden.to_float(key + "/logits_top_values");
      const auto lse = golden.to_float(key + "/logits_logsumexp");
      const std::size_t k = golden.info(key + "/logits_top_ids").shape[1];
      REQUIRE(r.token_logprobs.size() == r.target_ids.size());
      for (std::size_t t = 0; t < r.target_ids.size(); ++t)
        for (std::size_t j = 0; j < k; ++j)
          if (top_ids[t * k + j] == r.target_ids[t]) CHECK(std::fabs(r.token_logprobs[t] - (top_values[t * k + j] - lse[t])) <= 1e-3f);
      // Words and links cover the pair: every target word has exactly one argmax link per the default method.
      CHECK(!r.source_words.empty());
      CHECK(!r.target_words.empty());
      CHECK(!r.alignment.empty());
      CHECK(r.alignment_map.size() == r.source_words.size() * r.target_words.size());
      // The guided model's default links come from its trained alignment head (config.json "alignment").
      if (std::string(name) == "de-en-general") CHECK(r.alignment_method == "head 1.0, gdfa");
      ++cases;
    }
    CHECK(cases >= 5);
    CHECK(maps >= cases);
  }
}

TEST_CASE("align and translate: alignment methods, word maps and bad input") {
  const auto tr = attnlens::api::Translator::load(source_path("models/de-en-transformer"));
  const std::string de = "Ein Mann fährt mit dem Fahrrad über eine Brücke.";
  const std::string en = "A man rides a bicycle across a bridge.";
  attnlens::api::TranslationParams p;
  p.alignment_method = "layer-mean";
  p.alignment_layer = 1;
  p.alignment_extraction = "argmax";
  p.word_maps = true;
  const auto r = tr->align(de, en, p);
  CHECK(r.alignment_method == "layer-mean 1, argmax");
  CHECK(r.alignment.size() == r.target_words.size());  // argmax: one link per target word
  CHECK(r.target_words.size() == 9);
  CHECK(r.source_words.size() == 10);
  // Word maps: every map, merged; a cross row of word j sums to 1 minus the mean weight its pieces gave to </s>.
  REQUIRE(r.word_attentions.size() == r.attentions.size());
  const auto tgt_of = attnlens::text::word_index_of_pieces(r.target_words, r.target_tokens.size());
  const std::size_t S = r.source_tokens.size();
  for (std::size_t k = 0; k < r.word_attentions.size(); ++k) {
    const auto& m = r.word_attentions[k];
    if (m.name != "cross") continue;
    REQUIRE(m.dims == std::vector<std::size_t>{9, 10});
    for (std::size_t j = 0; j < 9; ++j) {
      double row = 0, eos = 0, pieces = 0;
      for (std::size_t i = 0; i < 10; ++i) row += m.data[j * 10 + i];
      for (std::size_t t = 0; t < tgt_of.size(); ++t)
        if (tgt_of[t] == static_cast<int>(j)) {
          eos += r.attentions[k].data[t * S + (S - 1)];
          ++pieces;
        }
      REQUIRE(pieces > 0);
      CHECK(row == doctest::Approx(1.0 - eos / pieces).epsilon(1e-5));
    }
  }
  // The same head through translate(): links exist and refer to words of the two texts.
  const auto t = tr->translate(de, p);
  CHECK(!t.alignment.empty());
  for (const auto& l : t.alignment) {
    CHECK(l.source < static_cast<int>(t.source_words.size()));
    CHECK(l.target < static_cast<int>(t.target_words.size()));
  }
  for (const auto& w : t.target_words) CHECK(t.text.substr(w.byte_begin, w.byte_end - w.byte_begin) == w.text);

  CHECK_THROWS_WITH_AS(tr->align(de, ""), doctest::Contains("target text is empty"), attnlens::Error);
  CHECK_THROWS_WITH_AS(tr->align(de, "   "), doctest::Contains("target text is empty"), attnlens::Error);
  CHECK_THROWS_WITH_AS(tr->align("", en), doctest::Contains("source text is empty"), attnlens::Error);
  std::string long_target;
  for (int i = 0; i < 400; ++i) long_target += "dog ";
  CHECK_THROWS_WITH_AS(tr->align(de, long_target), doctest::Contains("decoder takes at most"), attnlens::Error);
  attnlens::api::TranslationParams bad;
  bad.alignment_method = "best";
  CHECK_THROWS_AS(tr->align(de, en, bad), attnlens::Error);
  bad = {};
  bad.alignment_extraction = "max";
  CHECK_THROWS_AS(tr->translate(de, bad), attnlens::Error);
  bad = {};
  bad.alignment_layer = 7;
  CHECK_THROWS_AS(tr->align(de, en, bad), attnlens::Error);
  bad = {};
  bad.alignment_method = "head";  // this model has no trained alignment head and no head was given
  CHECK_THROWS_WITH_AS(tr->align(de, en, bad), doctest::Contains("no trained alignment head"), attnlens::Error);
  bad.alignment_head = 0;
  bad.alignment_layer = 1;
  CHECK(tr->align(de, en, bad).alignment_method == "head 1.0, argmax");
}
