#include "text/word_spans.h"

#include <algorithm>

#include "text/bpe.h"
#include "text/utf8.h"

namespace attnlens::text {

namespace {

constexpr std::string_view kMarker = kSpaceMarker;

bool is_special(const std::string& p) { return p == "<pad>" || p == "<s>" || p == "</s>"; }

// The piece without its leading marker, and whether it had one.
std::string_view body_of(const std::string& piece, bool* marked) {
  std::string_view v = piece;
  *marked = v.substr(0, kMarker.size()) == kMarker;
  if (*marked) v.remove_prefix(kMarker.size());
  return v;
}

bool is_punct_piece(std::string_view body) {
  if (body.empty()) return false;
  const std::u32string cps = decode_utf8(body);
  return cps.size() == 1 && classify(cps[0]) == CharClass::kPunct;
}

}  // namespace

std::vector<WordSpan> words_of_pieces(const std::vector<std::string>& pieces, std::string_view text) {
  std::vector<std::size_t> offsets;
  const std::u32string cps = decode_utf8(text, &offsets);  // offsets.size() == cps.size() + 1
  std::size_t cp = 0;                                       // next code point of `text` to consume
  std::vector<WordSpan> words;
  bool prev_punct = false;
  bool carried = false;           // a marker-only piece "▁" (before an <unk>) marks the piece after it
  std::size_t carried_piece = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (is_special(pieces[i])) {
      prev_punct = carried = false;
      continue;
    }
    bool marked = false;
    const std::string_view body = body_of(pieces[i], &marked);
    if (marked && body.empty()) {
      while (cp < cps.size() && classify(cps[cp]) == CharClass::kSpace) ++cp;
      if (!carried) carried_piece = i;
      carried = true;
      continue;
    }
    if (carried) marked = true;
    // Code points this piece stands for in the text.
    const std::size_t width = body == "<unk>" ? 1 : decode_utf8(body).size();
    if (marked)
      while (cp < cps.size() && classify(cps[cp]) == CharClass::kSpace) ++cp;
    // "<unk>" is punctuation when the character it stands for is (the tokenizer made it a pre-token of its own).
    const bool punct = body == "<unk>" ? cp < cps.size() && classify(cps[cp]) == CharClass::kPunct
                                       : is_punct_piece(body);
    const bool starts = words.empty() || marked || punct || prev_punct || words.back().end_piece != i;
    if (starts) {
      WordSpan w;
      w.first_piece = carried ? carried_piece : i;
      w.byte_begin = offsets[std::min(cp, cps.size())];
      words.push_back(std::move(w));
    }
    WordSpan& w = words.back();
    w.text.append(body);
    w.end_piece = i + 1;
    cp = std::min(cp + width, cps.size());
    w.byte_end = offsets[cp];
    prev_punct = punct;
    carried = false;
  }
  return words;
}

std::vector<int> word_index_of_pieces(const std::vector<WordSpan>& words, std::size_t num_pieces) {
  std::vector<int> of(num_pieces, -1);
  for (std::size_t w = 0; w < words.size(); ++w)
    for (std::size_t p = words[w].first_piece; p < words[w].end_piece && p < num_pieces; ++p)
      of[p] = static_cast<int>(w);
  return of;
}

}  // namespace attnlens::text
