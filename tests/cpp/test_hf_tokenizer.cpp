// Tests of the Hugging Face tokenizers (src/text/hf_tokenizer.h, src/api/hf_tokenizer_file.h): token ids and
// decoded text identical to the references on the 5,400-line corpus of tests/fixtures/tokenizers (reference.txt
// there; tests/node/hf-tokenizers.test.mjs recomputes it from Tokenizers.js and python3-sentencepiece), offsets
// into the input, bad input and corrupt tokenizer.json files.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/hf_tokenizer_file.h"
#include "common.h"
#include "test_support.h"
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
