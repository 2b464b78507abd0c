// Words from BPE pieces: which pieces make up each word a person sees, and where that word is in the input text.
// Used to give attention maps and alignments per word (analysis/word_alignment.h) and to highlight the original text.
//
// Rule (the same as the training recipes' aligner, models/training/translation/aligner.py: words_of_pieces):
//   a piece starts a new word when it starts with the space marker "▁", when it is a punctuation piece (after the
//   marker, one character of class kPunct — text/utf8.h), or when the piece before it was punctuation; otherwise it
//   continues the current word. "<unk>" stands for one input character: a punctuation piece when that character is punctuation (class kPunct),
//   else it joins like a letter. A piece that is the marker alone ("▁", before an <unk>) belongs to the word of
//   the piece after it. The specials
//   "<pad>", "<s>" and "</s>" belong to no word.
// For ordinary text these are exactly the tokens of the regex \w+|[^\w\s] (the gold alignments' tokenization):
// "Das T-Shirt." → Das | T | - | Shirt | .
//
// Offsets: byte offsets [begin, end) into the UTF-8 text that was tokenized. They are found by walking the text
// the way the tokenizer normalised it (text/bpe.h): white space and control characters are skipped before a
// piece that carries the marker; every other character of a piece — and one character per "<unk>" — advances one
// code point (an ill-formed UTF-8 sequence is one code point, U+FFFD, as in text/utf8.h). A piece list that does
// not come from this text can never make the walk read outside it: offsets are clamped to the text.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::text {

struct WordSpan {
  std::string text;              // the pieces joined, marker removed ("<unk>" kept as the visible text "<unk>")
  std::size_t first_piece = 0;   // pieces [first_piece, end_piece) of the piece list
  std::size_t end_piece = 0;
  std::size_t byte_begin = 0;    // [byte_begin, byte_end) in the tokenized text
  std::size_t byte_end = 0;
  // [start, end) as string indices (UTF-16 code units, as JavaScript counts) of the caller's text; the translator
  // sets them (api/translation.h), words_of_pieces leaves them 0.
  std::size_t start = 0;
  std::size_t end = 0;

  // As results publish a word (api/contract.h): {text, start, end, pieces: [first_piece, end_piece]}.
  template <class F>
  void fields(F&& f) const {
    f("text", text), f("start", start), f("end", end);
    f("pieces", std::array<std::size_t, 2>{first_piece, end_piece});
  }
};

// The words of `pieces` (as produced by BpeTokenizer::encode(text), specials allowed) and their spans in `text`.
std::vector<WordSpan> words_of_pieces(const std::vector<std::string>& pieces, std::string_view text);

// For each piece the index of its word, or -1 for the specials.
std::vector<int> word_index_of_pieces(const std::vector<WordSpan>& words, std::size_t num_pieces);

}  // namespace attnlens::text
