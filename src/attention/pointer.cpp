// Pointer networks; formula and paper in pointer.h.
#include "attention/pointer.h"

#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"

namespace attnlens::attention {

void pointer_attention(const AdditiveScoreWeights& w, const float* decoder, std::size_t n_q,
                       const float* encoder, std::size_t n, float* probs, std::size_t* pointers,
                       const std::uint8_t* key_keep) {
  const char* op = "pointer_attention";
  detail::require_positive(n, op, "n (input positions)");
  detail::require_data(pointers, pointers == nullptr ? 0 : n_q, op, "pointers");
  score_additive(w, decoder, n_q, encoder, n, probs);
  AlignMask mask;
  mask.key_keep = key_keep;
  align_soft(probs, n_q, n, mask);
  if (pointers == nullptr) return;
  for (std::size_t i = 0; i < n_q; ++i) {
    const float* row = probs + i * n;
    std::size_t best = 0;
    for (std::size_t j = 1; j < n; ++j) {
      if (row[j] > row[best]) best = j;
    }
    pointers[i] = best;
  }
}

}  // namespace attnlens::attention
