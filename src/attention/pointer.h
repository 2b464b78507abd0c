// Pointer networks (Vinyals et al. 2015, "Pointer Networks", eq. 3): the attention distribution itself is the
// output — a pointer to one of the n input positions:
//   u_j^i = vᵀ tanh(W_1 e_j + W_2 d_i),   p(C_i | C_1..C_{i−1}, P) = softmax(u^i)
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention/scores.h"

namespace attnlens::attention {

// The additive score with W_2 = w.w acting on decoder states (queries) and W_1 = w.u on encoder states
// (keys). decoder [n_q × d_q], encoder [n × d_k] → probs [n_q × n]; pointers [n_q] (argmax of each row, null
// to skip). key_keep [n] masks positions that may not be pointed at (e.g. already visited cities), or null.
void pointer_attention(const AdditiveScoreWeights& w, const float* decoder, std::size_t n_q,
                       const float* encoder, std::size_t n, float* probs, std::size_t* pointers = nullptr,
                       const std::uint8_t* key_keep = nullptr);

}  // namespace attnlens::attention
