// GPT-2 (Radford et al. 2019), the forward pass of Hugging Face's GPT2LMHeadModel (transformers,
// models/gpt2/modeling_gpt2.py; reference in plain PyTorch: models/training/hf/gpt2.py), top to bottom:
//   h = wte[id] + wpe[position]                                positions continue from the cache's length
//   block l (pre-LN):  a = ln_1(h);  q | k | v = a·W_attn + b_attn   (Conv1D: W stored [in, out])
//                      per head: softmax(q·kᵀ / √d_head [/ (l + 1)], causal)·v  → concat → c_proj;  h += that
//                      h += c_proj(act(c_fc(ln_2(h))))              act = ACT2FN[activation_function] (gelu_new)
//   logits = ln_f(h)·wteᵀ                                      (lm_head tied to wte; an untied lm_head.weight is used)
// Config (bundle "hf_config", HF names and defaults): vocab_size 50257, n_positions 1024, n_embd 768, n_layer 12,
// n_head 12, n_inner null (4·n_embd), activation_function gelu_new, layer_norm_epsilon 1e-5, scale_attn_weights true,
// scale_attn_by_inverse_layer_idx false, eos_token_id 50256; add_cross_attention and reorder_and_upcast_attn are
// refused. Tensors: transformer.wte.weight [V, d], transformer.wpe.weight [P, d], transformer.h.<l>.{ln_1, attn.c_attn,
// attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}.{weight, bias}, transformer.ln_f.{weight, bias} (+ lm_head.weight).
//
// Decoding is incremental: a State keeps, per layer, the projected keys and values of every position fed so far
// (attention::MultiHeadKvCache, HF's past_key_values), so feed() projects only the new positions; feeding a sequence
// at once or position by position gives the same logits and map rows (tested). Maps: kind "self-attention", one per
// layer × head, dims [rows fed, positions so far] (a teacher-forced run from an empty state: [T, T], zero above the
// diagonal).
#pragma once

#include <cstddef>
#include <vector>

#include "attention/multi_head.h"
#include "io/bundle.h"
#include "models/hf_blocks.h"
#include "nn/linear.h"
#include "trace/trace.h"

namespace attnlens::models {

class HfGpt2 {
 public:
  explicit HfGpt2(const io::Bundle& bundle);

  // One sequence's past_key_values: per layer, every fed position's projected keys and values.
  struct State {
    std::vector<attention::MultiHeadKvCache> layers;
    std::size_t length() const { return layers.empty() ? 0 : layers.front().length(); }
  };
  // An empty state with room for max_positions() positions.
  State start() const;
  // Feeds ids[0..n) at positions state.length() … + n − 1 (ids in [0, vocab), positions < max_positions(), else
  // Error): logits (n × vocab) of every fed position; with `trace`, the maps of these rows; with `hidden`, appends
  // the hidden states as HF's output_hidden_states (n_layer + 1 blocks of n × d: each block's input, then ln_f's
  // output). With `vectors`, the fed rows' query and key vectors per layer × head, "self-attention.query" and
  // ".key" [n, d_head] (hf::record_qk): c_attn's q and k, q times the scale folded into it (√d_head without
  // scale_attn_weights, 1/(layer + 1) with scale_attn_by_inverse_layer_idx) so that map = softmax(q·kᵀ/√d_head).
  void feed(State& state, const int* ids, std::size_t n, float* logits, AttentionTrace* trace = nullptr,
            std::vector<std::vector<float>>* hidden = nullptr, AttentionTrace* vectors = nullptr) const;
  // Teacher forcing from an empty state: logits (T × vocab).
  std::vector<float> forward(const std::vector<int>& ids, AttentionTrace* trace = nullptr,
                             std::vector<std::vector<float>>* hidden = nullptr, AttentionTrace* vectors = nullptr) const;

  std::size_t vocab_size() const { return vocab_; }
  std::size_t max_positions() const { return positions_; }
  std::size_t d_model() const { return d_; }
  std::size_t layers() const { return blocks_.size(); }
  std::size_t heads() const { return heads_; }
  int eos_token_id() const { return eos_; }

 private:
  struct Block {
    hf::LayerNorm ln_1, ln_2;
    nn::Linear c_attn, c_proj, c_fc, mlp_proj;  // (3d, d), (d, d), (inner, d), (d, inner) as [out × in]
  };

  std::size_t vocab_ = 0, positions_ = 0, d_ = 0, heads_ = 0, d_head_ = 0, inner_ = 0;
  int eos_ = -1;
  float q_scale_ = 1.0f;      // folds "no scale_attn_weights" into the queries (attend_heads divides by √d_head)
  bool scale_by_layer_ = false;
  hf::Activation act_ = hf::Activation::gelu_new;
  std::vector<float> wte_, wpe_, lm_head_;  // (V, d), (P, d), (V, d) when untied (else empty: wte is used)
  std::vector<Block> blocks_;
  hf::LayerNorm ln_f_;
};

}  // namespace attnlens::models
