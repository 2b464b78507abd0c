// The translator's text handling (src/text/normalize.h, sentences.h, recase.h, utf16_units) on any bytes.
// Checks: prepare_text's maps have text.size() + 1 entries, are monotone, lie in [0, input.size()], begin ≤ end at
// each place, start at 0 and end at input.size(); its text is valid UTF-8 and prepare_text(text) leaves it as it
// is; sentence spans are non-empty, ordered, disjoint, inside the text, on character boundaries and trimmed;
// restore_case keeps the length and every character's byte offsets; utf16_units counts at most one unit per byte.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/normalize.h"
#include "text/recase.h"
#include "text/sentences.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace {

std::vector<std::size_t> boundaries(std::string_view s) {
  std::vector<std::size_t> at;
  attnlens::text::decode_utf8(s, &at);
  return at;
}

void check_spans(std::string_view text) {
  const std::vector<std::size_t> at = boundaries(text);
  const std::u32string cps = attnlens::text::decode_utf8(text);
  std::size_t last = 0;
  for (const auto& s : attnlens::text::split_sentences(text)) {
    if (s.begin < last || s.end <= s.begin || s.end > text.size()) __builtin_trap();
    std::size_t k = 0;
    while (k < at.size() && at[k] < s.begin) ++k;
    if (k + 1 >= at.size() || at[k] != s.begin || attnlens::text::unicode::is_space(cps[k])) __builtin_trap();
    std::size_t e = k;
    while (e < at.size() && at[e] < s.end) ++e;
    if (e >= at.size() || at[e] != s.end || attnlens::text::unicode::is_space(cps[e - 1])) __builtin_trap();
    last = s.end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const attnlens::text::PreparedText p = attnlens::text::prepare_text(input);
  const std::size_t n = p.text.size();
  if (p.to_input_begin.size() != n + 1 || p.to_input_end.size() != n + 1) __builtin_trap();
  if (p.to_input_begin[0] != 0 || p.to_input_end[0] != 0) __builtin_trap();
  if (p.to_input_begin[n] != size || p.to_input_end[n] != size) __builtin_trap();
  for (std::size_t i = 0; i <= n; ++i) {
    if (p.to_input_begin[i] > p.to_input_end[i] || p.to_input_end[i] > size) __builtin_trap();
    if (i > 0 && (p.to_input_begin[i - 1] > p.to_input_begin[i] || p.to_input_end[i - 1] > p.to_input_end[i]))
      __builtin_trap();
  }
  if (attnlens::text::sanitize_utf8(p.text) != p.text) __builtin_trap();
  if (attnlens::text::prepare_text(p.text).text != p.text) __builtin_trap();  // NFC is idempotent
  if (attnlens::text::utf16_units(input) > size) __builtin_trap();

  check_spans(input);
  check_spans(p.text);

  for (std::string_view s : {input, std::string_view(p.text)}) {
    const std::string r = attnlens::text::restore_case(
        s, [](std::string_view w) -> std::size_t { return (w.size() * 7 + static_cast<unsigned char>(w[0])) % 3; });
    if (r.size() != s.size() || boundaries(r) != boundaries(s)) __builtin_trap();
  }
  return 0;
}
