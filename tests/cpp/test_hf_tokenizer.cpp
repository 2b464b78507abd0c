// Tests of the Hugging Face tokenizers (src/text/hf_tokenizer.h, src/api/hf_tokenizer_file.h): token ids and
// decoded text identical to the references on the 5,400-line corpus of tests/fixtures/tokenizers (reference.txt
// there; tests/node/hf-tokenizers.test.mjs recomputes it from Tokenizers.js and python3-sentencepiece), offsets
// into the input, bad input and corrupt tokenizer.json files.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/hf_tokenizer_file.h"
#include "common.h"
#include "test_support.h"
#include "text/hf_charsmap.h"
#include "text/hf_tokenizer.h"

namespace {

namespace api = attnlens::api;
namespace text = attnlens::text;
using attnlens::testing::error_of;
using attnlens::testing::read_file;
using attnlens::testing::source_path;

const std::string kDir = "tests/fixtures/tokenizers/";

text::HfTokenizer load(const std::string& name) {
  const std::string dir = kDir + name + "/";
  text::TokenizerSpec spec = api::parse_hf_tokenizer(read_file(source_path(dir + "tokenizer.json")), dir + "tokenizer.json");
  if (name == "unigram") api::add_marian_vocab(spec, read_file(source_path(dir + "vocab.json")), dir + "vocab.json");
  return text::HfTokenizer(std::move(spec));
}

std::vector<std::string> corpus() {
  std::vector<std::string> lines;
  std::istringstream in(read_file(source_path(kDir + "corpus.jsonl")));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line).get<std::string>());
  return lines;
}

std::string fnv1a64(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char b : s) h = (h ^ b) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string join(const std::vector<int>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s;
}

void check_corpus(const std::string& name) {
  const text::HfTokenizer tok = load(name);
  const std::vector<std::string> lines = corpus();
  std::istringstream ref(read_file(source_path(kDir + name + "/reference.txt")));
  std::size_t id_mismatches = 0, decode_mismatches = 0, tokens = 0, decodes = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string row;
    REQUIRE(std::getline(ref, row));
    const std::size_t tab = row.find('\t');
    REQUIRE(tab != std::string::npos);
    const text::Encoding e = tok.encode(lines[i]);
    tokens += e.ids.size();
    const std::string got = join(e.ids);
    if (got != row.substr(0, tab) && ++id_mismatches <= 5)
      MESSAGE(name << " line " << i + 1 << " " << nlohmann::json(lines[i]).dump() << "\n  engine    " << got
                   << "\n  reference " << row.substr(0, tab));
    // Offsets: inside the input, specials (0,0).
    for (std::size_t k = 0; k < e.offsets.size(); ++k)
      REQUIRE(e.offsets[k].first <= e.offsets[k].second);
    for (const auto& [b, en] : e.offsets) REQUIRE(en <= lines[i].size());
    const std::string hash = row.substr(tab + 1);
    if (hash == "-") continue;
    ++decodes;
    const std::string dec = tok.decode(e.ids);
    if (fnv1a64(dec) != hash && ++decode_mismatches <= 5)
      MESSAGE(name << " line " << i + 1 << ": decode " << nlohmann::json(dec).dump() << " differs from the reference");
  }
  MESSAGE(name << ": " << lines.size() << " lines, " << tokens << " tokens, " << id_mismatches
               << " lines with other ids; " << decodes << " decodes, " << decode_mismatches << " differ");
  CHECK(lines.size() >= 5000);
  CHECK(id_mismatches == 0);
  CHECK(decode_mismatches == 0);
}

}  // namespace

TEST_CASE("hf tokenizers: WordPiece (uncased) ids and decode equal Tokenizers.js on the corpus") {
  check_corpus("wordpiece");
}
TEST_CASE("hf tokenizers: WordPiece (cased) ids and decode equal Tokenizers.js on the corpus") {
  check_corpus("wordpiece-cased");
}
TEST_CASE("hf tokenizers: byte-level BPE ids and decode equal Tokenizers.js on the corpus") {
  check_corpus("bytelevel-bpe");
}
TEST_CASE("hf tokenizers: SentencePiece unigram with MarianMT's vocab.json: ids equal python3-sentencepiece") {
  check_corpus("unigram");
}

TEST_CASE("hf tokenizers: offsets are bytes of the input; specials (0,0)") {
  const text::HfTokenizer wp = load("wordpiece");
  const text::Encoding e = wp.encode("Größe, 我!");
  // [CLS] große , 我 ! [SEP]: "Größe" is bytes 0-7 (ö and ß take two bytes each), 我 bytes 9-12.
  REQUIRE(e.tokens.size() == 6);
  CHECK(e.tokens[1] == "große");
  CHECK(e.offsets == std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 7}, {7, 8}, {9, 12}, {12, 13}, {0, 0}});
  const text::HfTokenizer bl = load("bytelevel-bpe");
  // "a", "Ġ", then three byte-level tokens that share the emoji's four bytes.
  CHECK(bl.encode("a 😀").offsets == std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {1, 2}, {2, 6}, {2, 6}, {2, 6}});
  const text::HfTokenizer un = load("unigram");
  const text::Encoding u = un.encode("  Hallo Welt  ");
  CHECK(u.offsets.back() == std::pair<std::size_t, std::size_t>{0, 0});  // </s>
  CHECK(u.tokens.front() == "▁H");  // the "▁" stands for the leading spaces
  CHECK(u.offsets.front() == std::pair<std::size_t, std::size_t>{0, 3});
  CHECK(u.offsets[u.offsets.size() - 2].second == 12);
}

TEST_CASE("hf tokenizers: invalid UTF-8 reads as U+FFFD, empty text gives the template only") {
  for (const char* name : {"wordpiece", "bytelevel-bpe", "unigram"}) {
    const text::HfTokenizer tok = load(name);
    CAPTURE(name);
    CHECK(tok.encode("a\xff" "b\xe2\x82").ids == tok.encode("a\xef\xbf\xbd" "b\xef\xbf\xbd").ids);
    const text::Encoding bad = tok.encode("\xc3");
    for (const auto& [b, e] : bad.offsets) CHECK(e <= 1);
    CHECK(tok.encode("", false).ids.empty());
  }
  CHECK(load("wordpiece").encode("").ids == std::vector<int>{2, 3});
  CHECK(load("unigram").encode("   ").ids == std::vector<int>{0});  // MarianMT: </s> only
}

TEST_CASE("hf tokenizers: long inputs take bounded time; above kMaxInputBytes an Error") {
  for (const char* name : {"wordpiece", "bytelevel-bpe", "unigram"}) {
    const text::HfTokenizer tok = load(name);
    CAPTURE(name);
    // One 200,000-byte word (BPE merges it with a heap; WordPiece stops at 100 characters) and 200,000 bytes of
    // short words: each well under a second natively.
    const std::string word(200000, 'a');
    std::string words;
    while (words.size() < 200000) words += "Zwei junge Männer 😀 ";
    CHECK(!tok.encode(word).ids.empty());
    CHECK(tok.encode(words).ids.size() > 10000);
    const std::string huge(text::kMaxInputBytes + 1, 'x');
    CHECK(error_of([&] { tok.encode(huge); }).find("the tokenizer takes at most 8388608") != std::string::npos);
  }
}

TEST_CASE("hf tokenizers: decode") {
  const text::HfTokenizer wp = load("wordpiece");
  CHECK(wp.decode(wp.encode("Hello, world!").ids) == "hello, world!");
  CHECK(wp.decode(wp.encode("Hello").ids, false) == "[CLS] hello [SEP]");
  const text::HfTokenizer bl = load("bytelevel-bpe");
  CHECK(bl.decode(bl.encode("Zwei  Männer\tim 😀 <|endoftext|>").ids, false) == "Zwei  Männer\tim 😀 <|endoftext|>");
  CHECK(bl.decode({100000, -1}) == "");
  const text::HfTokenizer un = load("unigram");
  CHECK(un.decode(un.encode("Zwei Männer sitzen.").ids) == "Zwei Männer sitzen.");
  CHECK(un.token_to_id("</s>") == 0);
  CHECK(un.id_to_token(1) == "<unk>");
  CHECK(un.token_to_id("no such piece") == -1);
}

namespace {

// tokenizer.json of the WordPiece fixture with `edit` applied; the message of the Error parsing it.
std::string parse_error(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(read_file(source_path(kDir + "wordpiece/tokenizer.json")));
  edit(j);
  return error_of([&] { text::HfTokenizer(api::parse_hf_tokenizer(j.dump(), "tokenizer.json in x")); });
}

}  // namespace

TEST_CASE("hf tokenizers: a corrupt tokenizer.json is an Error naming the file and the key") {
  CHECK(error_of([] { api::parse_hf_tokenizer("{\"model\": ", "tokenizer.json in x"); })
            .rfind("tokenizer.json in x: not valid JSON", 0) == 0);
  CHECK(error_of([] { api::parse_hf_tokenizer("[1]", "tokenizer.json in x"); }) ==
        "tokenizer.json in x: expected a JSON object");
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& j) { j.erase("model"); }, "key \"model\""},
      {[](auto& j) { j["model"]["vocab"]["hello"] = -1; }, "key \"model.vocab.hello\""},
      {[](auto& j) { j["model"]["vocab"]["hello"] = "x"; }, "key \"model.vocab.hello\""},
      {[](auto& j) { j["model"]["type"] = "WordLevel"; }, "key \"model.type\": WordLevel is not supported"},
      {[](auto& j) { j["model"]["unk_token"] = "<nope>"; }, "model.unk_token \"<nope>\" is not in model.vocab"},
      {[](auto& j) { j["normalizer"] = {{"type", "NFKC"}}; }, "key \"normalizer.type\": NFKC is not supported"},
      {[](auto& j) { j["normalizer"]["lowercase"] = 1; }, "key \"normalizer.lowercase\""},
      {[](auto& j) { j["pre_tokenizer"] = {{"type", "Digits"}}; }, "key \"pre_tokenizer.type\": Digits is not supported"},
      {[](auto& j) { j["decoder"] = {{"type", "CTC"}}; }, "key \"decoder.type\": CTC is not supported"},
      {[](auto& j) { j["post_processor"]["special_tokens"].erase("[SEP]"); },
       "key \"post_processor.special_tokens.[SEP]\""},
      {[](auto& j) { j["added_tokens"][0]["content"] = ""; }, "key \"added_tokens.0.content\": is empty"},
      {[](auto& j) { j["added_tokens"][1] = 7; }, "key \"added_tokens.1\": expected an object"},
      {[](auto& j) {
         j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}};
       }, "key \"normalizer.pattern.Regex\": \"\\s+\" is not supported"},
      {[](auto& j) {
         j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "/////w=="}};
       }, "key \"normalizer.precompiled_charsmap\": precompiled_charsmap: the trie size 4294967295 does not fit"},
      {[](auto& j) {
         j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "not base64!"}};
       }, "key \"normalizer.precompiled_charsmap\": is not base64"},
      {[](auto& j) {
         j["model"] = {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", {"a a", 3}}};
       }, "key \"model.merges.1\": expected \"left right\" or [left, right]"},
      {[](auto& j) { j["model"] = {{"type", "Unigram"}, {"vocab", nlohmann::json::array({nlohmann::json::array({"a", 0.5}), nlohmann::json::array({"b"})})}, {"unk_id", 0}}; },
       "key \"model.vocab.1\": expected [piece, score]"},
      {[](auto& j) { j["model"] = {{"type", "Unigram"}, {"vocab", nlohmann::json::array({nlohmann::json::array({"a", 0.5})})}, {"unk_id", 3}}; },
       "key \"model.unk_id\""},
  };
  for (const auto& [edit, expected] : cases) {
    const std::string message = parse_error(edit);
    CAPTURE(message);
    CHECK(message.rfind("tokenizer.json in x", 0) == 0);
    CHECK(message.find(expected) != std::string::npos);
  }
}

TEST_CASE("hf tokenizers: a charsmap whose trie points anywhere never reads outside it") {
  // Header: trie of 8 units; the units are arbitrary, the replacement strings lack their NUL.
  std::string blob("\x20\x00\x00\x00", 4);
  for (int i = 0; i < 32; ++i) blob += static_cast<char>(i * 37 + 11);
  blob += "abc";
  const text::Charsmap map(blob);
  for (int c = 0; c < 256; ++c) {
    const std::string s(3, static_cast<char>(c));
    const auto [len, repl] = map.longest_prefix(s);
    CHECK(len <= s.size());
    CHECK(repl.size() <= 3);
  }
}

TEST_CASE("hf tokenizers: load_hf_tokenizer reads config.tokenizer of a bundle (MarianMT with vocab.json)") {
  const std::string dir = kDir + "unigram/";
  // (An architecture the engine knows today: the tokenizer reads only config.tokenizer.)
  const std::string config = R"({"architecture": "transformer-seq2seq", "version": 1, "tokenizer": {"type": "hf",
      "file": "tokenizer.json", "vocab": "vocab.json"}})";
  const std::string empty_weights = std::string("\x02\x00\x00\x00\x00\x00\x00\x00{}", 10);
  std::map<std::string, std::string> files = {{"tokenizer.json", read_file(source_path(dir + "tokenizer.json"))},
                                              {"vocab.json", read_file(source_path(dir + "vocab.json"))}};
  const auto bundle = attnlens::io::Bundle::from_memory(
      config, std::vector<std::uint8_t>(empty_weights.begin(), empty_weights.end()), files, "m");
  const text::HfTokenizer tok = api::load_hf_tokenizer(bundle);
  CHECK(tok.encode("Zwei Männer").ids == load("unigram").encode("Zwei Männer").ids);
  files["vocab.json"] = R"({"</s>": 0})";
  const auto no_unk = attnlens::io::Bundle::from_memory(
      config, std::vector<std::uint8_t>(empty_weights.begin(), empty_weights.end()), files, "m");
  CHECK(error_of([&] { api::load_hf_tokenizer(no_unk); }) == "vocab.json in m: key \"<unk>\": is missing");
}
