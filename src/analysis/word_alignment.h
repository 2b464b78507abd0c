// Word alignments from attention: piece maps merged into word maps, and hard links extracted from them.
// Pure functions over row-major float matrices; the translation API (api/translation.h) applies them to the maps of
// a translation or of a forced decode (Translator::align), and the training recipes' alignment_eval.py does the same
// in Python, so the two agree.
//
// Word maps (rows and columns are words of text/word_spans.h; pieces of no word — </s> — are dropped):
//   W[r, c] = mean over the pieces p of row word r of ( sum over the pieces q of column word c of A[p, q] )
// i.e. SUM over the attended (column) pieces, MEAN over the attending (row) pieces, so a word row of a cross map
// still sums to at most 1 (exactly 1 minus the weight the row pieces gave to </s>).
//
// Links (source word i, target word j) from a word-level cross map W [target words, source words]:
//   kArgmax: for each target word j, i = argmax_i W[j, i] (ties: the lowest i) — every target word gets one link;
//   kGdfa:   the row argmaxes (target→source) and the column argmaxes (source→target) of W, symmetrised with
//            grow-diag-final-and (Koehn et al. 2005), as the project's statistical aligner does: start from their
//            intersection, add union links that neighbour a link (8-neighbourhood) and align a word not yet
//            aligned, until nothing changes; then add union links whose two words are both unaligned.
// The matrix comes from the method's attention: one head (a trained alignment head, Garg et al. 2019), or the mean
// of one layer's heads, or an RNN's single cross map (api/translation.h, TranslationParams::alignment).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace attnlens::analysis {

// A piece-level map [rows, cols] (row-major) → the word-level map [row words, col words]. `row_word[p]` and
// `col_word[q]` give each piece's word (-1 for none; text::word_index_of_pieces).
std::vector<float> merge_to_words(const float* map, std::size_t rows, std::size_t cols,
                                  const std::vector<int>& row_word, std::size_t num_row_words,
                                  const std::vector<int>& col_word, std::size_t num_col_words);

enum class LinkExtraction { kArgmax, kGdfa };

// "argmax" | "gdfa" → the enum; throws Error naming the accepted values otherwise.
LinkExtraction parse_link_extraction(const std::string& name);
const char* link_extraction_name(LinkExtraction e);

struct Link {
  int source = 0;  // source word
  int target = 0;  // target word
  bool operator==(const Link& o) const { return source == o.source && target == o.target; }
  bool operator<(const Link& o) const { return source != o.source ? source < o.source : target < o.target; }
  // Published as the pair [source, target] (api/contract.h).
  static constexpr bool kAsArray = true;
  template <class F>
  void fields(F&& f) const {
    f("source", source), f("target", target);
  }
};

// Links from a word-level cross map W [num_target, num_source], sorted by (source, target).
std::vector<Link> extract_links(const std::vector<float>& w, std::size_t num_target, std::size_t num_source,
                                LinkExtraction how);

// grow-diag-final-and of two link sets (sorted output); exposed for tests.
std::vector<Link> grow_diag_final_and(const std::vector<Link>& a, const std::vector<Link>& b);

}  // namespace attnlens::analysis
