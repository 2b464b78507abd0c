// Hierarchical attention (Yang et al. 2016, "Hierarchical Attention Networks for Document Classification",
// §2.2): words are pooled into sentence vectors, sentences into a document vector, each level with a learned
// context.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlens::attention {

// One level of Yang's attention pooling (eq. 5–7 for words, 8–10 for sentences):
//   u_t = tanh(W h_t + b),  α_t = exp(u_tᵀ u_ctx) / Σ_t' exp(u_t'ᵀ u_ctx),  s = Σ_t α_t h_t
struct AttentionPoolWeights {
  std::size_t d = 0;               // size of each h_t
  std::size_t d_att = 0;           // size of u_t and of the context vector
  const float* w = nullptr;        // [d_att × d]
  const float* bias = nullptr;     // [d_att] or null
  const float* context = nullptr;  // u_w or u_s [d_att]
};
// h [T × d] → alpha [T], pooled [d]. key_keep [T] or null.
void attention_pool(const AttentionPoolWeights& w, const float* h, std::size_t t, float* alpha, float* pooled,
                    const std::uint8_t* key_keep = nullptr);

// Word attention with u_w in every sentence, then sentence attention with u_s over the sentence vectors.
// Yang runs a bidirectional GRU over the sentence vectors between the two levels; this op takes the sentence
// vectors as they are (identity sentence encoder, so word and sentence levels share the size d). Models with
// a sentence encoder call attention_pool for each level themselves. words [Σ lengths × d] (sentences one
// after another), sentence_lengths [L] (each ≥ 1)
//   → word_alpha [Σ lengths], sentence_vectors [L × d], sentence_alpha [L], document [d].
void hierarchical_attention(const AttentionPoolWeights& word_level,
                            const AttentionPoolWeights& sentence_level, const float* words,
                            const std::size_t* sentence_lengths, std::size_t num_sentences, float* word_alpha,
                            float* sentence_vectors, float* sentence_alpha, float* document);

}  // namespace attnlens::attention
