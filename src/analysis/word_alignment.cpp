#include "analysis/word_alignment.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <unordered_set>

#include "common.h"

namespace attnlens::analysis {

std::vector<float> merge_to_words(const float* map, std::size_t rows, std::size_t cols,
                                  const std::vector<int>& row_word, std::size_t num_row_words,
                                  const std::vector<int>& col_word, std::size_t num_col_words) {
  require(row_word.size() == rows && col_word.size() == cols,
          "merge_to_words: the piece-to-word maps must have one entry per row and per column");
  std::vector<double> sum(num_row_words * num_col_words, 0.0);
  std::vector<std::size_t> count(num_row_words, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    const int wr = row_word[r];
    if (wr < 0) continue;
    require(static_cast<std::size_t>(wr) < num_row_words, "merge_to_words: row word index out of range");
    ++count[wr];
    for (std::size_t c = 0; c < cols; ++c) {
      const int wc = col_word[c];
      if (wc < 0) continue;
      require(static_cast<std::size_t>(wc) < num_col_words, "merge_to_words: column word index out of range");
      sum[wr * num_col_words + wc] += map[r * cols + c];
    }
  }
  std::vector<float> out(sum.size());
  for (std::size_t r = 0; r < num_row_words; ++r)
    for (std::size_t c = 0; c < num_col_words; ++c)
      out[r * num_col_words + c] =
          count[r] ? static_cast<float>(sum[r * num_col_words + c] / static_cast<double>(count[r])) : 0.0f;
  return out;
}

LinkExtraction parse_link_extraction(const std::string& name) {
  if (name == "argmax") return LinkExtraction::kArgmax;
  if (name == "gdfa") return LinkExtraction::kGdfa;
  throw Error("alignment extraction must be \"argmax\" or \"gdfa\", got \"" + name + "\"");
}

const char* link_extraction_name(LinkExtraction e) { return e == LinkExtraction::kArgmax ? "argmax" : "gdfa"; }

std::vector<Link> grow_diag_final_and(const std::vector<Link>& a_in, const std::vector<Link>& b_in) {
  // Ordered sets where the order matters (the passes iterate links sorted, as the Python aligner does), hashed
  // lookups for membership: with set lookups alone, long sentences (hundreds of words) cost seconds.
  const auto key = [](const Link& l) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l.source)) << 32) | static_cast<std::uint32_t>(l.target);
  };
  const std::set<Link> a(a_in.begin(), a_in.end()), b(b_in.begin(), b_in.end());
  std::set<Link> uni = a, out;
  uni.insert(b.begin(), b.end());
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  std::unordered_set<std::uint64_t> in_uni, in_out;
  for (const Link& l : uni) in_uni.insert(key(l));
  std::unordered_set<int> src_aligned, tgt_aligned;
  const auto add = [&](const Link& l) {
    out.insert(l);
    in_out.insert(key(l));
    src_aligned.insert(l.source);
    tgt_aligned.insert(l.target);
  };
  for (const Link& l : out) {
    in_out.insert(key(l));
    src_aligned.insert(l.source);
    tgt_aligned.insert(l.target);
  }
  static constexpr int kNeighbours[8][2] = {{-1, 0}, {0, -1}, {1, 0}, {0, 1}, {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};
  for (bool added = true; added;) {
    added = false;
    const std::vector<Link> current(out.begin(), out.end());  // sorted, as the Python aligner iterates
    for (const Link& l : current) {
      for (const auto& d : kNeighbours) {
        const Link c{l.source + d[0], l.target + d[1]};
        if (in_uni.count(key(c)) && !in_out.count(key(c)) &&
            (!src_aligned.count(c.source) || !tgt_aligned.count(c.target))) {
          add(c);
          added = true;
        }
      }
    }
  }
  for (const Link& c : uni) {
    if (!in_out.count(key(c)) && !src_aligned.count(c.source) && !tgt_aligned.count(c.target)) add(c);
  }
  return {out.begin(), out.end()};
}

std::vector<Link> extract_links(const std::vector<float>& w, std::size_t num_target, std::size_t num_source,
                                LinkExtraction how) {
  require(w.size() == num_target * num_source, "extract_links: matrix size does not match its dims");
  std::vector<Link> rows;  // target -> source argmax
  if (num_source == 0) return rows;
  for (std::size_t j = 0; j < num_target; ++j) {
    const float* r = &w[j * num_source];
    const std::size_t i = static_cast<std::size_t>(std::max_element(r, r + num_source) - r);
    rows.push_back({static_cast<int>(i), static_cast<int>(j)});
  }
  if (how == LinkExtraction::kArgmax) {
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  std::vector<Link> cols;  // source -> target argmax
  if (num_target == 0) return cols;
  for (std::size_t i = 0; i < num_source; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < num_target; ++j)
      if (w[j * num_source + i] > w[best * num_source + i]) best = j;
    cols.push_back({static_cast<int>(i), static_cast<int>(best)});
  }
  return grow_diag_final_and(rows, cols);
}

}  // namespace attnlens::analysis
