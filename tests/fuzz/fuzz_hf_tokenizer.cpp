// The Hugging Face tokenizers (src/text/hf_tokenizer.h) and the tokenizer.json reader (src/api/hf_tokenizer_file.h),
// on any bytes. Byte 0 picks the mode:
//   0: the rest is text for the three fixture tokenizers (tests/fixtures/tokenizers: WordPiece, byte-level BPE,
//      MarianMT's unigram with vocab.json): encode with and without special tokens, decode both ways;
//   1: the rest is a tokenizer.json text, SEP, a text (SEP = "\n#~#\n"): parse, then encode and decode the text;
//   2: the rest is a precompiled charsmap (SentencePiece's trie + strings): longest-prefix searches at every offset
//      of the same bytes, then the charsmap as the Precompiled normaliser of the WordPiece fixture on a text.
// Checks: no exception but attnlens::Error; ids, tokens and offsets of one size; offsets inside the input with
// begin <= end; every id of a fixture tokenizer decodes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "api/hf_tokenizer_file.h"
#include "common.h"
#include "fuzz_common.h"
#include "text/hf_charsmap.h"
#include "text/hf_tokenizer.h"

namespace {

namespace text = attnlens::text;
namespace api = attnlens::api;

text::TokenizerSpec fixture_spec(const std::string& name) {
  const std::string dir = "tests/fixtures/tokenizers/" + name + "/";
  text::TokenizerSpec spec =
      api::parse_hf_tokenizer(fuzz::read_file(fuzz::source_path(dir + "tokenizer.json")), name + "/tokenizer.json");
  if (name == "unigram")
    api::add_marian_vocab(spec, fuzz::read_file(fuzz::source_path(dir + "vocab.json")), "unigram/vocab.json");
  return spec;
}

const std::vector<std::unique_ptr<text::HfTokenizer>>& fixtures() {
  static const auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<text::HfTokenizer>>();
    for (const char* name : {"wordpiece", "bytelevel-bpe", "unigram"})
      v->push_back(std::make_unique<text::HfTokenizer>(fixture_spec(name)));
    return v;
  }();
  return *all;
}

void exercise(const text::HfTokenizer& tok, const std::string& s) {
  for (bool special : {true, false}) {
    const text::Encoding e = tok.encode(s, special);
    if (e.ids.size() != e.tokens.size() || e.ids.size() != e.offsets.size()) __builtin_trap();
    for (const auto& [b, en] : e.offsets)
      if (b > en || en > s.size()) __builtin_trap();
    tok.decode(e.ids, true);
    tok.decode(e.ids, false);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fixtures();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0:
        for (const auto& tok : fixtures()) {
          exercise(*tok, rest);
          for (int id : tok->encode(rest).ids)
            if (tok->id_to_token(id).empty()) __builtin_trap();
        }
        break;
      case 1: {
        const std::size_t sep = rest.find("\n#~#\n");
        const std::string json = rest.substr(0, sep);
        const std::string input = sep == std::string::npos ? std::string() : rest.substr(sep + 5);
        const text::HfTokenizer tok(api::parse_hf_tokenizer(json, "tokenizer.json"));
        exercise(tok, input);
        tok.decode({0, 1, 2, -1, 1 << 30});
        break;
      }
      default: {
        const text::Charsmap map(rest);
        for (std::size_t i = 0; i < rest.size(); ++i) {
          const auto [len, repl] = map.longest_prefix(std::string_view(rest).substr(i));
          if (len > rest.size() - i || repl.data() + repl.size() > rest.data() + rest.size()) __builtin_trap();
        }
        static const text::TokenizerSpec wordpiece = fixture_spec("wordpiece");
        text::TokenizerSpec spec = wordpiece;
        text::NormalizerStep step;
        step.kind = text::NormalizerStep::Kind::kPrecompiled;
        step.charsmap = rest;
        spec.normalizers.insert(spec.normalizers.begin(), step);
        exercise(text::HfTokenizer(std::move(spec)), rest.substr(0, 64));
        break;
      }
    }
  } catch (const attnlens::Error&) {
  }
  return 0;
}
