#include "text/hf_unicode.h"

#include <algorithm>
#include <iterator>

#include "text/hf_unicode_data.h"

namespace attnlens::text::hf_unicode {

namespace hd = hf_unicode_data;

namespace {

std::uint8_t code_of(char32_t cp) {
  if (cp > 0x10FFFF) return 0;
  const auto* end = std::end(hd::kGcStart);
  const auto* it = std::upper_bound(std::begin(hd::kGcStart), end, static_cast<std::uint32_t>(cp));
  return hd::kGcCode[(it - std::begin(hd::kGcStart)) - 1];
}

char32_t lower_one(char32_t cp) {
  const auto* it = std::lower_bound(std::begin(hd::kLowerFrom), std::end(hd::kLowerFrom), cp);
  if (it == std::end(hd::kLowerFrom) || *it != cp) return cp;
  return hd::kLowerTo[it - std::begin(hd::kLowerFrom)];
}

// Unicode's Final_Sigma condition at index i: a cased letter before (case-ignorable characters skipped) and none
// after.
bool final_sigma(const AlignedText& t, std::size_t i) {
  std::size_t j = i;
  bool before = false;
  while (j > 0) {
    const char32_t c = t[--j].cp;
    if (is_case_ignorable(c)) continue;
    before = is_cased(c);
    break;
  }
  if (!before) return false;
  for (std::size_t k = i + 1; k < t.size(); ++k) {
    if (is_case_ignorable(t[k].cp)) continue;
    return !is_cased(t[k].cp);
  }
  return true;
}

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = 19 * kNCount;

void decompose(const AlignedChar& c, AlignedText& out) {
  if (c.cp >= kSBase && c.cp < kSBase + kSCount) {
    const char32_t s = c.cp - kSBase;
    out.push_back({kLBase + s / kNCount, c.begin, c.end});
    out.push_back({kVBase + (s % kNCount) / kTCount, c.begin, c.end});
    if (s % kTCount) out.push_back({kTBase + s % kTCount, c.begin, c.end});
    return;
  }
  const auto* it = std::lower_bound(std::begin(hd::kDecompCp), std::end(hd::kDecompCp), c.cp);
  if (it == std::end(hd::kDecompCp) || *it != c.cp) {
    out.push_back(c);
    return;
  }
  const std::size_t k = it - std::begin(hd::kDecompCp);
  for (std::size_t p = hd::kDecompOffset[k]; p < hd::kDecompOffset[k + 1]; ++p)
    out.push_back({hd::kDecompPool[p], c.begin, c.end});
}

}  // namespace

Gc category(char32_t cp) { return static_cast<Gc>(code_of(cp) & 31); }
bool is_cased(char32_t cp) { return (code_of(cp) & 32) != 0; }
bool is_case_ignorable(char32_t cp) { return (code_of(cp) & 64) != 0; }

bool is_js_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

int combining_class(char32_t cp) {
  constexpr std::size_t n = std::size(hd::kCcc) / 3;
  std::size_t lo = 0, hi = n;
  while (lo < hi) {  // first run whose end is above cp
    const std::size_t mid = (lo + hi) / 2;
    if (hd::kCcc[mid * 3 + 1] <= cp) lo = mid + 1; else hi = mid;
  }
  return lo < n && hd::kCcc[lo * 3] <= cp ? static_cast<int>(hd::kCcc[lo * 3 + 2]) : 0;
}

AlignedText to_lower(const AlignedText& text) {
  AlignedText out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const AlignedChar& c = text[i];
    if (c.cp == 0x130) {  // İ: the one unconditional lower case of two characters
      out.push_back({U'i', c.begin, c.end});
      out.push_back({0x307, c.begin, c.end});
    } else if (c.cp == 0x3A3) {
      out.push_back({final_sigma(text, i) ? char32_t{0x3C2} : char32_t{0x3C3}, c.begin, c.end});
    } else {
      out.push_back({lower_one(c.cp), c.begin, c.end});
    }
  }
  return out;
}

AlignedText nfd(const AlignedText& text) {
  AlignedText out;
  out.reserve(text.size());
  for (const AlignedChar& c : text) decompose(c, out);
  // Canonical ordering: each run of non-starters sorted stably by combining class.
  for (std::size_t i = 0; i < out.size();) {
    if (combining_class(out[i].cp) == 0) { ++i; continue; }
    std::size_t j = i;
    while (j < out.size() && combining_class(out[j].cp) != 0) ++j;
    std::stable_sort(out.begin() + i, out.begin() + j, [](const AlignedChar& a, const AlignedChar& b) {
      return combining_class(a.cp) < combining_class(b.cp);
    });
    i = j;
  }
  return out;
}

}  // namespace attnlens::text::hf_unicode
