// Visual question answering over an image grid (the shapes scenes): hierarchical co-attention (Lu et al. 2016)
// or attention-over-attention (Cui et al. 2017) between the question's words and the grid's regions, then an
// answer classifier. Ported line by line from models/training/vqa/model.py (the equations are at its top).
//
// Bundle (architecture "vqa", config.json "vqa": {"attention": "parallel-co-attention" | "attention-over-attention",
// "grid_dim", "d", "k", "hidden", "vocab_size", "num_answers"}), tensors (PyTorch state_dict names):
//   region.weight [d × grid_dim], region.bias [d]      V = tanh(grid W_regionᵀ + b)
//   embedding.weight [vocab × d]                       Q_w = embedding[ids]
//   lstm.{weight_ih,weight_hh,bias_ih,bias_hh}_l0       Q_s = LSTM(Q_w), hidden d, one forward layer
//   co_w.*, co_s.* (parallel-co-attention only): w_b [d × d], w_v [k × d], w_q [k × d], w_hv [k], w_hq [k]
//   fc_w.weight [hidden × d], fc_w.bias; fc_s.weight [hidden × (d + hidden + 1)], fc_s.bias;
//   with "relation_units" R > 0: relation.weight [R × (2 + d)], relation.bias [R] (the relation readout
//   r = tanh(W_r [where ; mean_t Q_w,t] + b_r), where = Σ a_s,n pos_n − Σ a_w,n pos_n over the cell centres
//   in cell units: pos_n = (column + 0.5, row + 0.5));
//   out.weight [answers × (hidden + R)], out.bias
//
// Maps recorded in the trace (layer 0 = word level Q_w, layer 1 = question level Q_s; N = grid cells, T = words):
//   "region_attention" [g, g]  a^v (co-attention) or s = αβ̄ (AoA) over the grid
//   "word_attention"   [T]     a^q (co-attention) or β̄ (AoA)
//   "affinity"         [T, N]  co-attention's C = tanh(Q W_b Vᵀ)
//   "aoa_matching", "aoa_alpha", "aoa_beta"  [T, N]  AoA's M, α (softmax over regions), β (softmax over words),
//                               stored word × region (the transpose of the op's region × word layout)
//   "count_density"    [g, g]  (layer 1) the count readout m, whose sum is the count fed to the classifier
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "nn/linear.h"
#include "nn/lstm.h"
#include "trace/trace.h"

namespace attnlens::models {

struct VqaConfig {
  std::string attention;  // "parallel-co-attention" or "attention-over-attention"
  std::size_t grid_dim = 0, d = 0, k = 0, hidden = 0, vocab_size = 0, num_answers = 0;
  std::size_t relation_units = 0;  // 0: no relation readout (the first bundles)
  bool co_attention() const { return attention == "parallel-co-attention"; }
};

struct VqaForward {
  std::vector<float> logits;  // [num_answers]
  float count = 0;            // Σ count_density
  // The relation readout's input (relation_units > 0): the question level's attention centroid minus the word
  // level's, in cell units (x = column + 0.5, y = row + 0.5, image y downwards); empty without the readout.
  std::vector<float> where;
};

class VqaModel {
 public:
  VqaModel() = default;
  static VqaModel from_bundle(const io::Bundle& bundle);
  const VqaConfig& config() const { return cfg_; }

  // grid [side·side × grid_dim] (row-major cells), ids [T ≥ 1] word ids → logits; every map into `trace`.
  VqaForward forward(const float* grid, std::size_t side, const std::vector<int>& ids, AttentionTrace& trace) const;

 private:
  struct CoAttentionLevel {
    std::vector<float> w_b, w_v, w_q, w_hv, w_hq;
  };
  // The trunk both variants share: regions V [N × d], word level Q_w and question level Q_s [T × d].
  void trunk(const float* grid, std::size_t cells, const std::vector<int>& ids, std::vector<float>& v,
             std::vector<float>& q_w, std::vector<float>& q_s) const;
  VqaForward forward_co_attention(const float* grid, std::size_t side, const std::vector<int>& ids,
                                  AttentionTrace& trace) const;
  VqaForward forward_attention_over_attention(const float* grid, std::size_t side, const std::vector<int>& ids,
                                              AttentionTrace& trace) const;
  // h_w = tanh(W_w (q̂_w + v̂_w) + b), h_s = tanh(W_s [q̂_s + v̂_s ; h_w ; count] + b), logits = W_o h_s + b.
  // a_w, a_s: the region attention of the word and question levels [side²]; q_w: the word embeddings [T × d].
  VqaForward classify(const std::vector<float>& sum_w, const std::vector<float>& sum_s, float count,
                      const std::vector<float>& a_w, const std::vector<float>& a_s, std::size_t side,
                      const std::vector<float>& q_w) const;

  VqaConfig cfg_;
  nn::Linear region_;  // [d × grid_dim]: each cell's region vector
  std::vector<float> embedding_;
  nn::Lstm lstm_;
  CoAttentionLevel co_[2];
  nn::Linear fc_w_, fc_s_, out_;  // [h × d], [h × (d + h + 1)], [answers × (h + R)]
  nn::Linear relation_;            // [R × (2 + d)] (none when relation_units is 0)
};

}  // namespace attnlens::models
