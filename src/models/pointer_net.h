// The number-sorting pointer network of models/training/pointer (common.py is the PyTorch reference; each step
// below quotes the line it implements). Vinyals, Fortunato & Jaitly 2015, "Pointer Networks": the output at each
// decoding step is an attention distribution over the input positions, and the position it points at is the
// next element of the sorted list.
//
// Preprocessing (config.json "preprocessing"; identical in PyTorch): values v_1..v_n (finite, 1 ≤ n ≤
// max_length) → x_j = (v_j − min v) / (max v − min v) computed in double, then rounded to float; every x_j = 0
// when all values are equal; when max − min overflows a double, both sides are halved first.
//
// Forward for one list (d = d_model, H = hidden, A = att_hidden):
//   e = x w_embed + b_embed                                       (n, d)     Linear(1, d)
//   per encoder layer l (post-norm Transformer layer, no positions: a set encoder):
//     a = MHA(e, e, e), maps α_l [heads × n × n]                  (n, d)     attention/multi_head.h
//     e = LN1(e + a);   e = LN2(e + W2 relu(W1 e + b1) + b2)      (n, d)
//   decoder: LSTM cell (d → H), h = c = 0; step 0 reads `start` [d], step i > 0 reads e[p_{i−1}]   nn/lstm.h
//   pointer at step i: p_i = softmax_{j unvisited}(vᵀ tanh(W_k e_j + W_q h_i + b_q))                 (n,)
//                      attention/pointer.h (pointer_attention, visited positions masked)
//   output position:   argmax_j p_i (lowest index on equal probabilities), then the first unvisited position
//                      holding the same input value — equal numbers cannot be told apart by the model, so they
//                      keep their input order (a stable sort).
//
// Cost: O(L·n²·d + n·d·d_ff) for the encoder, O(n²·A·d) for the pointer (keys are projected at every step).
#pragma once

#include <cstddef>
#include <vector>

#include "io/bundle.h"
#include "nn/linear.h"
#include "nn/lstm.h"
#include "trace/trace.h"

namespace attnlens::models {

// Hard ceiling on config "max_length": the pointer map is n × n floats.
constexpr std::size_t kPointerMaxLengthLimit = 1000;

struct PointerSortForward {
  std::vector<float> inputs;        // x, the preprocessed values [n]
  std::vector<std::size_t> order;   // [n] input positions in output order (a permutation)
  std::vector<float> pointer;       // [n × n] row i = p_i over input positions (pointed positions 0)
  std::vector<float> encoder;       // [n × d] final encoder states
};

class PointerNet {
 public:
  // Architecture "pointer-sort". Every tensor is taken with the shape the config implies; anything missing,
  // misshapen or unused fails with an Error naming it.
  explicit PointerNet(const io::Bundle& bundle);

  // The documented preprocessing. Throws Error for an empty list, more than max_length() values or a value that
  // is NaN or infinite (the message names its position).
  std::vector<float> preprocess(const std::vector<double>& values) const;

  // Sorts `values` (checked as in preprocess). Records into `trace`, when enabled: "encoder_self" [n × n] per
  // layer and head, and "pointer" [n × n] (row = output step, column = input position).
  PointerSortForward forward(const std::vector<double>& values, AttentionTrace& trace) const;

  std::size_t max_length() const { return max_length_; }
  std::size_t d_model() const { return d_; }
  std::size_t num_layers() const { return layers_.size(); }
  std::size_t num_heads() const { return heads_; }

 private:
  struct Layer {
    std::vector<float> in_proj_w, in_proj_b, out_proj_w, out_proj_b;  // [3d × d], [3d], [d × d], [d]
    std::vector<float> ln1_g, ln1_b, ln2_g, ln2_b;                     // [d] each
    nn::Linear ff1, ff2;                                               // [F × d], [d × F] (and biases)
  };
  std::size_t d_ = 0, heads_ = 0, d_ff_ = 0, hidden_ = 0, att_ = 0, max_length_ = 0;
  std::vector<float> embed_w_, embed_b_;  // [d × 1], [d]
  std::vector<Layer> layers_;
  std::vector<float> start_;               // [d]
  std::vector<float> dec_w_ih_, dec_w_hh_, dec_bias_;  // [4H × d], [4H × H], b_ih + b_hh [4H]
  std::vector<float> ptr_k_, ptr_q_, ptr_q_b_, ptr_v_;  // W_k [A × d], W_q [A × H], b_q [A], v [A]
};

}  // namespace attnlens::models
