// Case restoration for a sentence typed in ALL CAPS or all lower case (the rule below), on UTF-8 bytes.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace attnlens::text {

// A mixed-case sentence is returned as it is (the person chose its case). ALL CAPS (at least two cased letters,
// none lower-case; "cased" and "upper" as JavaScript's toLowerCase/toUpperCase tell, unicode::Case) is lower-cased
// first. Then the sentence's first word is capitalised, and so is every other word that starts after white space or
// opening punctuation (Ps Pi Pf " ' „ ‚ « » ¿ ¡) whose capitalised form the model's BPE splits into fewer pieces
// than its lower-case form ("zeit" → "Zeit", one piece against two; "ich" and "morgen" stay: both forms are one
// piece). A word is a run of letters and marks. Every character keeps its UTF-8 length (one whose case mapping has
// another length — "ß" → "SS", "ı" → "I" — is left alone), so byte offsets do not move. Ill-formed UTF-8 is kept
// byte for byte (read as U+FFFD, which has no case).
// `pieces(word)`: how many BPE pieces a word (as a whole, space-initial word) takes.
std::string restore_case(std::string_view sentence, const std::function<std::size_t(std::string_view word)>& pieces);

}  // namespace attnlens::text
