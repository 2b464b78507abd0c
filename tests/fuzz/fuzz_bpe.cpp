// The byte-safe BPE tokenizer (src/text/bpe.*, api::BpeTokenizer), on any bytes. byte 0 picks the mode:
//   0: the rest is text for the shipped de-en-transformer tokenizer: encode, pieces → words, decode;
//   1: the rest is "vocab text" SEP "merges text" SEP "text" (SEP = "\n#~#\n"): from_text, encode, decode, JSON
//      round trip;
//   2: the rest is the bundle JSON form {"type": "bpe", "vocab": [...], "merges": [...]}, then SEP and a text;
//   3: the rest is training lines; learn() with byte 1 as the number of merges, then encode/decode the lines;
//   4: ids (2 bytes each) for decode() with the shipped tokenizer (out-of-range ids must be an Error).
// Checks: no exception but attnlens::Error; decode(encode(t)) never throws; ids and pieces agree.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api.h"
#include "fuzz_common.h"
#include "text/bpe.h"
#include "text/word_spans.h"

namespace {

const attnlens::text::BpeTokenizer& shipped() {
  static const attnlens::text::BpeTokenizer t = attnlens::text::BpeTokenizer::from_text(
      fuzz::read_file(fuzz::source_path("models/de-en-transformer/bpe.vocab")),
      fuzz::read_file(fuzz::source_path("models/de-en-transformer/bpe.merges")));
  return t;
}

void exercise(const attnlens::text::BpeTokenizer& tok, const std::string& text) {
  const std::vector<int> ids = tok.encode(text);
  const std::vector<std::string> pieces = tok.encode_pieces(text);
  if (ids.size() != pieces.size()) __builtin_trap();
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= tok.vocab_size()) __builtin_trap();
  tok.decode(ids);
  tok.decode_pieces(pieces);
  const auto words = attnlens::text::words_of_pieces(pieces, text);
  for (const auto& w : words)
    if (w.byte_begin > w.byte_end || w.byte_end > text.size() || w.first_piece > w.end_piece ||
        w.end_piece > pieces.size())
      __builtin_trap();
  attnlens::text::word_index_of_pieces(words, pieces.size());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  shipped();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned mode = data[0] % 5;
  ++data;
  --size;
  const std::string rest(reinterpret_cast<const char*>(data), size);
  switch (mode) {
    case 0:
      exercise(shipped(), rest);
      break;
    case 1: {
      const auto parts = fuzz::split(data, size, fuzz::kSep, 3);
      fuzz::ok_or_error([&] {
        const auto tok = attnlens::text::BpeTokenizer::from_text(parts[0], parts.size() > 1 ? parts[1] : "");
        exercise(tok, parts.size() > 2 ? parts[2] : "");
        const auto again = attnlens::text::BpeTokenizer::from_json(tok.to_json());
        if (again.vocab() != tok.vocab() || again.merges() != tok.merges()) __builtin_trap();
        const auto api_tok = attnlens::api::BpeTokenizer::from_text(tok.vocab_text(), tok.merges_text());
        if (api_tok->vocab_size() != tok.vocab_size()) __builtin_trap();
      });
      break;
    }
    case 2: {
      const auto parts = fuzz::split(data, size, fuzz::kSep, 2);
      fuzz::ok_or_error([&] {
        const auto tok = attnlens::api::BpeTokenizer::from_json(parts[0]);
        const auto enc = tok->encode(parts.size() > 1 ? parts[1] : "ein Hund");
        tok->decode(enc.ids);
        tok->to_json();
      });
      break;
    }
    case 3: {
      if (size < 1) return 0;
      const auto lines = fuzz::split(data + 1, size - 1, "\n", 64);
      fuzz::ok_or_error([&] {
        attnlens::api::BpeLearnParams p;
        p.num_merges = data[0] % 64;
        p.min_frequency = 1 + (data[0] >> 6);
        const auto tok = attnlens::api::BpeTokenizer::learn(lines, p);
        for (const auto& line : lines) {
          const auto enc = tok->encode(line);
          tok->decode(enc.ids);
        }
        attnlens::api::BpeTokenizer::from_json(tok->to_json());
      });
      break;
    }
    default: {
      std::vector<int> ids;
      for (std::size_t i = 0; i + 1 < size; i += 2)
        ids.push_back(static_cast<int>(static_cast<std::int16_t>(data[i] | (data[i + 1] << 8))));
      fuzz::ok_or_error([&] { shipped().decode(ids); });
      break;
    }
  }
  return 0;
}
