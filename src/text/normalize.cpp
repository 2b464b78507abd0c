#include "text/normalize.h"

#include <cstddef>

#include "common.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace attnlens::text {

namespace {

bool joins_previous(char32_t cp) {
  return (cp >= 0x1160 && cp <= 0x11FF) || unicode::info(cp).cat == unicode::Cat::kMark;
}

// Appends the UTF-8 of `cps`, which input bytes [a, b) became, and the map entries of its bytes: a begin anywhere
// in it maps to a; an end at its first byte to a, at any later byte to b.
void emit(PreparedText& out, std::u32string_view cps, std::uint32_t a, std::uint32_t b) {
  const std::size_t from = out.text.size();
  for (char32_t cp : cps) append_utf8(out.text, cp);
  for (std::size_t p = from; p < out.text.size(); ++p) {
    out.to_input_begin.push_back(a);
    out.to_input_end.push_back(p == from ? a : b);
  }
}

}  // namespace

PreparedText prepare_text(std::string_view input) {
  require(input.size() < 0xFFFFFFFFu, "prepare_text: the text must be shorter than 4 GiB");
  std::vector<std::size_t> at;
  std::u32string cps = decode_wtf8(input, &at);
  for (char32_t& cp : cps)
    if (cp == 0xA0 || cp == 0x2007 || cp == 0x202F) cp = ' ';
  PreparedText out;
  out.text.reserve(input.size());
  out.to_input_begin.reserve(input.size() + 1);
  out.to_input_end.reserve(input.size() + 1);
  const std::size_t n = cps.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && joins_previous(cps[j])) ++j;
    const std::u32string_view group(cps.data() + i, j - i);
    const bool plain = j == i + 1 && cps[i] < 0xC0;  // ASCII and Latin-1 symbols: nothing to compose
    const std::u32string nfc = plain ? std::u32string(group) : unicode::nfc(group);
    if (nfc == group) {
      for (std::size_t k = i; k < j; ++k)
        emit(out, group.substr(k - i, 1), static_cast<std::uint32_t>(at[k]), static_cast<std::uint32_t>(at[k + 1]));
    } else {
      emit(out, nfc, static_cast<std::uint32_t>(at[i]), static_cast<std::uint32_t>(at[j]));
    }
    i = j;
  }
  out.to_input_begin.push_back(static_cast<std::uint32_t>(input.size()));
  out.to_input_end.push_back(static_cast<std::uint32_t>(input.size()));
  return out;
}

}  // namespace attnlens::text
