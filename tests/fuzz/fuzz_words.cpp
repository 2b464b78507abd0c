// The SST-2 word tokenizer (src/text/words.*) and its vocabulary, on any bytes.
//   byte 0: max_tokens for the early-stopping call (0..63); the rest: the text.
// Checks: no exception but attnlens::Error; tokens are non-empty and hold no white space; tokenize_words(t, k) is
// exactly the first k tokens of tokenize_words(t); the vocabulary built from the text maps every token back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api.h"
#include "fuzz_common.h"
#include "text/words.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t k = data[0] % 64;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<std::string> all = attnlens::text::tokenize_words(text);
  for (const auto& t : all) {
    if (t.empty()) __builtin_trap();
    for (char c : t)
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') __builtin_trap();
  }
  const std::vector<std::string> first = attnlens::text::tokenize_words(text, k);
  if (first.size() != std::min(k, all.size())) __builtin_trap();
  for (std::size_t i = 0; i < first.size(); ++i)
    if (first[i] != all[i]) __builtin_trap();
  if (attnlens::api::tokenize_words(std::string(text)) != all) __builtin_trap();

  // The text as a vocabulary file (one token per line, "<unk>" required).
  fuzz::ok_or_error([&] {
    const auto vocab = attnlens::text::WordVocab::from_text(text);
    const auto ids = vocab.encode(all);
    for (int id : ids) vocab.token(id);
    vocab.visible_tokens(all);
    attnlens::text::WordVocab::from_json(vocab.to_json());
  });
  return 0;
}
