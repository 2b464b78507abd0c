// SentencePiece's precompiled charsmap (NormalizerSpec.precompiled_charsmap; tokenizer.json's Precompiled
// normaliser): a 4-byte little-endian size of a double-array trie (darts-clone layout, 32-bit units), the trie,
// then NUL-terminated replacement strings. The trie maps UTF-8 byte strings to the offset of their replacement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace attnlens::text {

class Charsmap {
 public:
  // Checks the header (Error naming the charsmap when the trie size does not fit the blob); `blob` must outlive
  // this object.
  explicit Charsmap(std::string_view blob);
  // The longest prefix of `s` the trie holds and its replacement; {0, ""} when none. A trie or offset that points
  // outside the blob ends the search (no match), so a corrupt charsmap never reads out of bounds.
  std::pair<std::size_t, std::string_view> longest_prefix(std::string_view s) const;

 private:
  std::uint32_t unit(std::size_t i) const;
  std::string_view blob_;
  std::size_t units_ = 0;          // trie units
  std::string_view replacements_;  // the strings after the trie
};

}  // namespace attnlens::text
