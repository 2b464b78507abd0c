// Position-weighted memory (Tang, Qin, Liu 2016, "Aspect Level Sentiment Classification with Deep Memory
// Network", §3.3; eq. 10–13 of seed 000). Context words nearer to the aspect matter more, so each word's
// memory m_i mixes its embedding e_i [d] with a location vector built from L_i, the word's distance to the
// aspect in a sentence of T words:
//   Model 1: m_i = e_i ⊙ l_i,       l_i^k = (1 − L_i/T) − (k/d)(1 − 2 L_i/T)   (eq. 10; k = the hop, 1-based)
//   Model 2: m_i = e_i ⊙ l_i,       l_i = 1 − L_i/T                              (eq. 11; same for every hop)
//   Model 3: m_i = e_i + l_i,       l_i a learned location vector                (eq. 12)
//   Model 4: m_i = e_i ⊙ σ(l_i),    l_i a learned location vector used as a gate (eq. 13)
// The seed defines k in eq. 10 as the hop number, so in Model 1 every element of l_i takes the same value at
// a given hop. (End-to-end memory networks' position encoding, Sukhbaatar 2015, has the same form with k the
// element index; that is not what eq. 10 says.)
#pragma once

#include <cstddef>

namespace attnlens::attention {

enum class TangLocationModel { kModel1 = 1, kModel2 = 2, kModel3 = 3, kModel4 = 4 };

// embeddings [T × d] → memory [T × d].
//   locations [T]: L_i (Models 1 and 2; may be null for 3 and 4)
//   hop: k ≥ 1 (Model 1 only)
//   location_vectors [T × d]: the learned l_i of each word, looked up by the caller from its location
//   (Models 3 and 4; may be null for 1 and 2)
void position_weighted_memory(TangLocationModel model, const float* embeddings, std::size_t t, std::size_t d,
                              const float* locations, std::size_t hop, const float* location_vectors,
                              float* memory);

// Tang's content attention over the memory, for one hop (§3.2, eq. 1–2):
//   g_i = tanh(w_attᵀ [m_i ; v_aspect] + b_att),  α = softmax(g),  out = Σ_i α_i m_i
// memory [T × d], aspect [d], w_att [2d] → alpha [T], out [d].
void tang_content_attention(const float* memory, std::size_t t, std::size_t d, const float* aspect,
                            const float* w_att, float b_att, float* alpha, float* out);

}  // namespace attnlens::attention
