// Sentence spans of a text (the translator's sentence rule, below), on UTF-8 bytes.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace attnlens::text {

struct TextSpan {
  std::size_t begin = 0, end = 0;  // byte offsets, [begin, end)
};

// Sentence spans of `text`, trimmed of white space (JavaScript's \s), empty ones dropped, in order.
//
// The rule. A sentence ends after a run of . ! ? … (e.g. "?!", "..."), plus any closing quotes or brackets right
// after it (" ' “ ” ‘ ’ » « ) ]), when white space follows and the next sentence starts with an upper-case letter
// (Lu) or an opening quote („ “ " ‚ ‘ ' « »). A run that is a single "." does NOT end a sentence when the word before
// it (back to white space, without leading opening punctuation: Ps, Pi, " ' „ ‚)
//   - is a number (all N): ordinals and dates ("am 3. Mai", "1. Platz") — so "Er ist 30. Sie ist 25." stays one;
//   - is a single letter: "z. B.", "d. h.", "u. a.", initials ("A. Merkel");
//   - contains a full stop itself: "z.B.", "u.a.", "U.S.";
//   - is an abbreviation ("Dr.", "Nr.", "usw.", "bzw.", "ca.", "Prof.", "Str.", months, …; compared lower-case).
// A number such as "3.5" or "2,50" never splits (no space after the stop); lower-case after a stop does not start
// a sentence ("… geht es dir? mir auch" is one). A blank line (two line breaks, \n or \r\n, with only white space
// other than line breaks between) always ends a sentence. Ill-formed UTF-8 is read as U+FFFD (never a letter).
std::vector<TextSpan> split_sentences(std::string_view text);

}  // namespace attnlens::text
