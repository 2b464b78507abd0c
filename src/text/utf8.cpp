#include "text/utf8.h"

#include <cstdint>

namespace attnlens::text {

namespace {

// One decoder for decode_utf8 and decode_wtf8; `surrogates`: an encoded surrogate ED A0..BF 80..BF is one U+FFFD.
std::u32string decode(std::string_view bytes, std::vector<std::size_t>* offsets, bool surrogates) {
  std::u32string out;
  out.reserve(bytes.size());
  if (offsets != nullptr) {
    offsets->clear();
    offsets->reserve(bytes.size() + 1);
  }
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    if (offsets != nullptr) offsets->push_back(i);  // every iteration below emits exactly one code point
    const auto b0 = static_cast<std::uint8_t>(bytes[i]);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    // Length and the allowed range of the second byte (Unicode Table 3-7, well-formed byte sequences).
    std::size_t need = 0;
    std::uint8_t lo = 0x80, hi = 0xBF;
    char32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      need = 1;
      cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 2;
      cp = b0 & 0x0F;
      if (b0 == 0xE0) lo = 0xA0;  // overlong below U+0800
      if (b0 == 0xED && !surrogates) hi = 0x9F;  // surrogates U+D800..U+DFFF
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 3;
      cp = b0 & 0x07;
      if (b0 == 0xF0) lo = 0x90;  // overlong below U+10000
      if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      // Continuation byte without a lead, C0/C1 (always overlong) or F5..FF (never valid).
      out.push_back(kReplacementChar);
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    bool ok = true;
    for (std::size_t k = 0; k < need; ++k, ++j) {
      if (j >= n) {
        ok = false;
        break;
      }
      const auto b = static_cast<std::uint8_t>(bytes[j]);
      const std::uint8_t l = k == 0 ? lo : 0x80, h = k == 0 ? hi : 0xBF;
      if (b < l || b > h) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (b & 0x3F);
    }
    if (ok) {
      out.push_back(cp >= 0xD800 && cp <= 0xDFFF ? kReplacementChar : cp);
      i = j;
    } else {
      // The maximal valid prefix [i, j) becomes one U+FFFD; byte j (if any) starts the next attempt.
      out.push_back(kReplacementChar);
      i = j;
    }
  }
  if (offsets != nullptr) offsets->push_back(n);
  return out;
}

}  // namespace

std::u32string decode_utf8(std::string_view bytes, std::vector<std::size_t>* offsets) {
  return decode(bytes, offsets, false);
}

std::u32string decode_wtf8(std::string_view bytes, std::vector<std::size_t>* offsets) {
  return decode(bytes, offsets, true);
}

std::size_t utf16_units(std::string_view utf8) {
  std::vector<std::size_t> offsets;
  const std::u32string cps = decode_wtf8(utf8, &offsets);
  std::size_t units = 0;
  for (std::size_t k = 0; k < cps.size(); ++k) units += offsets[k + 1] - offsets[k] == 4 ? 2 : 1;
  return units;
}

void append_utf8(std::string& out, char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = kReplacementChar;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t cp : cps) append_utf8(out, cp);
  return out;
}

std::string sanitize_utf8(std::string_view bytes) { return encode_utf8(decode_utf8(bytes)); }

namespace {
bool in(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }
}  // namespace

CharClass classify(char32_t cp) {
  if (cp < 0x80) {
    if (cp <= 0x20 || cp == 0x7F) return CharClass::kSpace;
    if (in(cp, '0', '9') || in(cp, 'a', 'z') || in(cp, 'A', 'Z')) return CharClass::kWord;
    return CharClass::kPunct;
  }
  if (cp <= 0xA0) return CharClass::kSpace;  // C1 controls (incl. U+0085 NEL) and no-break space
  if (cp <= 0xBF) {
    // Latin-1 punctuation and symbols, except the letters ª µ º and the numbers ² ³ ¹ ¼ ½ ¾.
    switch (cp) {
      case 0xAA: case 0xB2: case 0xB3: case 0xB5: case 0xB9: case 0xBA: case 0xBC: case 0xBD: case 0xBE:
        return CharClass::kWord;
      default:
        return CharClass::kPunct;
    }
  }
  if (cp == 0xD7 || cp == 0xF7) return CharClass::kPunct;  // × ÷
  if (cp < 0x1680) return CharClass::kWord;
  if (cp == 0x1680 || in(cp, 0x2000, 0x200B) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
      cp == 0x3000 || cp == 0xFEFF)
    return CharClass::kSpace;
  if (in(cp, 0x2010, 0x2027) || in(cp, 0x2030, 0x205E)) return CharClass::kPunct;  // general punctuation
  if (in(cp, 0x20A0, 0x20CF)) return CharClass::kPunct;                            // currency
  if (in(cp, 0x2100, 0x214F)) return CharClass::kPunct;                            // letterlike (℃ ™ №)
  if (in(cp, 0x2190, 0x2BFF)) return CharClass::kPunct;  // arrows, maths, technical, box, shapes, dingbats
  if (in(cp, 0x2E00, 0x2E7F)) return CharClass::kPunct;  // supplemental punctuation
  if (in(cp, 0x3001, 0x303F)) return CharClass::kPunct;  // CJK punctuation
  if (in(cp, 0xFE10, 0xFE1F) || in(cp, 0xFE30, 0xFE6F)) return CharClass::kPunct;
  if (in(cp, 0xFF01, 0xFF0F) || in(cp, 0xFF1A, 0xFF20) || in(cp, 0xFF3B, 0xFF40) || in(cp, 0xFF5B, 0xFF65))
    return CharClass::kPunct;  // full-width punctuation
  if (in(cp, 0xFFF0, 0xFFFF)) return CharClass::kPunct;  // specials, incl. U+FFFD
  if (in(cp, 0x1F000, 0x1FAFF)) return CharClass::kPunct;  // emoji, pictographs, playing cards, …
  return CharClass::kWord;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace attnlens::text
