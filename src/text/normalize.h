// The translator's source text as the engine sees it, with exact byte offsets back into the caller's input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::text {

struct PreparedText {
  std::string text;  // what the engine sees (valid UTF-8)
  // Byte offsets into the caller's input, size text.size() + 1: a [begin, end) pair of byte offsets of `text` maps
  // to [to_input_begin[begin], to_input_end[end]). A begin inside a merged or replaced character maps to the start
  // of what it came from, an end inside one to its end; to_input_*[text.size()] == input.size(). Both are monotone.
  std::vector<std::uint32_t> to_input_begin, to_input_end;
};

// The steps, each with its offsets kept:
//   1. ill-formed UTF-8 becomes U+FFFD (decode_wtf8: one per maximal ill-formed subsequence, and one per encoded
//      UTF-16 surrogate ED A0..BF xx, the generalized UTF-8 of a lone surrogate). Emscripten 3.1.6's Embind does not
//      produce those bytes: it pairs a lone surrogate with the code unit after it, so JavaScript callers replace lone
//      surrogates first (wasm/pipelines/input.js, toWellFormed);
//   2. the no-break spaces U+00A0, U+2007, U+202F become ' ';
//   3. Unicode NFC (unicode::nfc, within its tables' coverage), applied to each character with the combining marks
//      and Hangul jamo (U+1160-U+11FF) after it: a character NFC leaves as it is maps to itself; a group NFC changes
//      ("u" U+0308 → "ü") maps as a whole.
// Inputs of 4 GiB or more are refused (the offsets are 32-bit): attnlens::Error.
PreparedText prepare_text(std::string_view input);

}  // namespace attnlens::text
