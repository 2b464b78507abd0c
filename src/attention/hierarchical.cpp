// Hierarchical attention; formulas and paper in hierarchical.h.
#include "attention/hierarchical.h"

#include <string>
#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

static void check_pool(const AttentionPoolWeights& w, const char* op) {
  detail::require_positive(w.d_att, op, "d_att");
  require_data(w.w, checked_mul(w.d_att, w.d, op), op, "w ([d_att x d])");
  require_data(w.context, w.d_att, op, "context ([d_att])");
}

void attention_pool(const AttentionPoolWeights& w, const float* h, std::size_t t, float* alpha, float* pooled,
                    const std::uint8_t* key_keep) {
  const char* op = "attention_pool";
  check_pool(w, op);
  require_data(h, checked_mul(t, w.d, op), op, "h");
  require_data(alpha, t, op, "alpha");
  require_data(pooled, w.d, op, "pooled");
  std::vector<float> u(checked_mul(t, w.d_att, op));
  kernels::gemm_nt_bias_act(t, w.d_att, w.d, h, w.d, w.w, w.d, u.data(), w.d_att, w.bias,
                            kernels::Activation::none);
  kernels::vtanh(u.data(), u.size());
  kernels::gemm_nt_bias_act(t, 1, w.d_att, u.data(), w.d_att, w.context, w.d_att, alpha, 1, nullptr,
                            kernels::Activation::none);
  AlignMask mask;
  mask.key_keep = key_keep;
  align_soft(alpha, 1, t, mask);
  detail::matmul(1, w.d, t, alpha, h, pooled);
}

void hierarchical_attention(const AttentionPoolWeights& word_level,
                            const AttentionPoolWeights& sentence_level, const float* words,
                            const std::size_t* sentence_lengths, std::size_t num_sentences, float* word_alpha,
                            float* sentence_vectors, float* sentence_alpha, float* document) {
  const char* op = "hierarchical_attention";
  check_pool(word_level, op);
  check_pool(sentence_level, op);
  require(
      word_level.d == sentence_level.d,
      "hierarchical_attention: word and sentence levels must have the same d (the sentence encoder is the "
      "identity); got " +
          std::to_string(word_level.d) + " and " + std::to_string(sentence_level.d));
  detail::require_positive(num_sentences, op, "num_sentences");
  require_data(sentence_lengths, num_sentences, op, "sentence_lengths");
  const std::size_t d = word_level.d;
  std::size_t total = 0;
  for (std::size_t s = 0; s < num_sentences; ++s) {
    require(sentence_lengths[s] >= 1, "hierarchical_attention: sentence " + std::to_string(s) +
                                          " is empty; every sentence needs a word");
    require(sentence_lengths[s] <= static_cast<std::size_t>(-1) - total,
            "hierarchical_attention: too many words");
    total += sentence_lengths[s];
  }
  require_data(words, checked_mul(total, d, op), op, "words");
  require_data(word_alpha, total, op, "word_alpha");
  require_data(sentence_vectors, checked_mul(num_sentences, d, op), op, "sentence_vectors");
  require_data(sentence_alpha, num_sentences, op, "sentence_alpha");
  require_data(document, d, op, "document");
  std::size_t start = 0;
  for (std::size_t s = 0; s < num_sentences; ++s) {
    attention_pool(word_level, words + start * d, sentence_lengths[s], word_alpha + start,
                   sentence_vectors + s * d);
    start += sentence_lengths[s];
  }
  attention_pool(sentence_level, sentence_vectors, num_sentences, sentence_alpha, document);
}

}  // namespace attnlens::attention
