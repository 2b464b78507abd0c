#include "text/hf_charsmap.h"

#include "common.h"

namespace attnlens::text {

namespace {

std::uint32_t le32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 | std::uint32_t{b[3]} << 24;
}

// darts-clone's unit fields.
bool has_leaf(std::uint32_t u) { return (u >> 8) & 1; }
std::uint32_t value(std::uint32_t u) { return u & ((1u << 31) - 1); }
std::uint32_t label(std::uint32_t u) { return u & ((1u << 31) | 0xFF); }
std::uint32_t offset(std::uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

}  // namespace

Charsmap::Charsmap(std::string_view blob) : blob_(blob) {
  require(blob.size() >= 4, "precompiled_charsmap: shorter than its 4-byte header");
  const std::uint32_t trie_bytes = le32(blob.data());
  require(trie_bytes % 4 == 0 && trie_bytes <= blob.size() - 4,
          "precompiled_charsmap: the trie size " + std::to_string(trie_bytes) + " does not fit the " +
              std::to_string(blob.size()) + "-byte charsmap");
  units_ = trie_bytes / 4;
  replacements_ = blob.substr(4 + trie_bytes);
}

std::uint32_t Charsmap::unit(std::size_t i) const { return le32(blob_.data() + 4 + 4 * i); }

std::pair<std::size_t, std::string_view> Charsmap::longest_prefix(std::string_view s) const {
  std::pair<std::size_t, std::string_view> best{0, {}};
  if (units_ == 0) return best;
  std::size_t pos = offset(unit(0));
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    pos ^= c;
    if (pos >= units_) break;
    const std::uint32_t u = unit(pos);
    if (label(u) != c) break;
    pos ^= offset(u);
    if (pos >= units_) break;
    if (has_leaf(u)) {
      const std::uint32_t at = value(unit(pos));
      if (at >= replacements_.size()) break;
      const std::size_t end = replacements_.find('\0', at);
      if (end == std::string_view::npos) break;
      best = {i + 1, replacements_.substr(at, end - at)};
    }
  }
  return best;
}

}  // namespace attnlens::text
