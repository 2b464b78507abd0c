// Context vectors: what an attention reads once it has its weights.
#pragma once

#include <cstddef>

#include "attention/alignment.h"

namespace attnlens::attention {

// soft context (Bahdanau 2014; eq. 8 of seed 000): c_i = Σ_j α_ij v_j.
// weights [n_q × n_k], values [n_k × d_v] → context [n_q × d_v].
// ld_values / ld_context: floats between consecutive rows (0: dense, d_v). One query row (a decoding step) goes
// through the matrix-vector kernel, several through the matrix-matrix one.
void soft_context(const float* weights, std::size_t n_q, std::size_t n_k, const float* values,
                  std::size_t d_v, float* context, std::size_t ld_values = 0, std::size_t ld_context = 0);

// Which score a key-value attention uses between a query and a key (both of size d_k).
enum class KeyValueScore { kDot, kScaledDot };

// key-value attention (Daniluk et al. 2017, "Frustratingly Short Attention Spans in Neural Language
// Modeling"; eq. 7 of seed 000): every memory slot is split into a key k_j, used only to score, and a value
// v_j, used only to read:  α_i = softmax_j(s(q_i, k_j)) under `mask`,  c_i = Σ_j α_ij v_j. queries [n_q ×
// d_k], keys [n_k × d_k], values [n_k × d_v] → weights [n_q × n_k], context [n_q × d_v].
//
// `layout` gives the floats between consecutive rows of each operand (0: dense, the row's own size) so that one head
// of a [n × heads·d] block is read and written in place: a Transformer's head h is queries + h·d_k with rows d_model
// apart (models/transformer_seq2seq.cpp runs every head of every layer through this op). One query row (a decoding
// step) goes through the matrix–vector kernels, several through the matrix–matrix ones.
struct KeyValueLayout {
  std::size_t queries = 0, keys = 0, values = 0, context = 0;
};
void key_value_attention(const float* queries, std::size_t n_q, const float* keys, const float* values,
                         std::size_t n_k, std::size_t d_k, std::size_t d_v, float* weights, float* context,
                         KeyValueScore score = KeyValueScore::kScaledDot, const AlignMask& mask = {},
                         const KeyValueLayout& layout = {});

}  // namespace attnlens::attention
