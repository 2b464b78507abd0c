// UTF-8 handling shared by every tokenizer: lossy validation and a small character classification.
//
// Validation follows the WHATWG Encoding Standard's UTF-8 decoder ("maximal subpart" replacement, also Unicode
// §3.9 best practice): every ill-formed subsequence — a lone continuation byte, a sequence cut short, an
// overlong form (C0/C1, E0 80..9F, F0 80..8F), an encoded surrogate (ED A0..BF), a value above U+10FFFF (F4 90..,
// F5..FF) — becomes one U+FFFD and decoding resumes at the first byte that could not continue the sequence.
// Decoding therefore never fails and never reads past the input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnlens::text {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Bytes → code points; invalid input becomes U+FFFD as described above. With `offsets`, also the byte offset of
// every code point in `bytes`, plus one final entry bytes.size() (so code point k spans [offsets[k], offsets[k+1])).
std::u32string decode_utf8(std::string_view bytes, std::vector<std::size_t>* offsets = nullptr);

// As decode_utf8, except that a complete 3-byte encoding of a UTF-16 surrogate (ED A0..BF 80..BF: generalized
// UTF-8, "WTF-8", of a lone surrogate of a JavaScript string) is one U+FFFD rather than three.
std::u32string decode_wtf8(std::string_view bytes, std::vector<std::size_t>* offsets = nullptr);

// How many UTF-16 code units JavaScript counts for the string these bytes came from, decoded as decode_wtf8 does:
// a 4-byte sequence is 2 (a surrogate pair), every other character 1 — an encoded surrogate and each U+FFFD that
// replaces an ill-formed sequence included. utf16_units(s.substr(0, k)) turns a byte offset k into a string index.
std::size_t utf16_units(std::string_view utf8);

// Appends the UTF-8 form of `cp`. Code points that cannot be encoded (surrogates, > U+10FFFF) become U+FFFD.
void append_utf8(std::string& out, char32_t cp);
std::string encode_utf8(std::u32string_view cps);

// Replaces ill-formed UTF-8 by U+FFFD (decode + encode). Valid input comes back unchanged.
std::string sanitize_utf8(std::string_view bytes);

// Character classes used for pre-tokenisation: a range table (the engine must stay small in WASM) covering what the
// shipped languages and typical user input contain (the finer classes of the translator's text rules: unicode.h):
//   kSpace: ASCII/Unicode white space, C0/C1 control characters, BOM and zero-width space (all normalised away);
//   kPunct: ASCII punctuation and symbols, Latin-1 punctuation/symbols (¡ « » ° § × ÷ …), general punctuation
//           (dashes, quotes, …), currency, letterlike/arrows/maths/technical/box/shapes/dingbats, CJK and
//           full-width punctuation, emoji and pictographs, U+FFFD;
//   kWord:  everything else — letters of every script (umlauts, ß, accents), digits, combining marks.
enum class CharClass { kSpace, kWord, kPunct };
CharClass classify(char32_t cp);

// Splits file contents into lines, accepting "\n" and "\r\n" endings and a missing final newline. The views
// point into `text`.
std::vector<std::string_view> split_lines(std::string_view text);

}  // namespace attnlens::text
