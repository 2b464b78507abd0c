// BERT (Devlin et al. 2019) and DistilBERT (Sanh et al. 2019), the forward passes of Hugging Face's BertModel
// / BertForSequenceClassification (transformers, models/bert/modeling_bert.py) and DistilBertModel /
// DistilBertForSequenceClassification (models/distilbert/modeling_distilbert.py); references in plain
// PyTorch: models/training/hf/bert.py, distilbert.py. Top to bottom, for one sequence of T ids (no padding):
//   h = LayerNorm(word[id] + position[t] (+ token_type[0], BERT))       positions 0..T−1; T >
//   max_position_embeddings
//                                                                       is an Error (no silent truncation)
//   layer l (post-LN):  h = LayerNorm(h + out(self-attention(h)))       per head softmax(q·kᵀ/√d_head)·v
//                       h = LayerNorm(h + down(act(up(h))))             act = hidden_act (BERT) / activation
//                       (DistilBERT)
//   BERT:        pooled = tanh(pooler.dense(h[0]));            logits = classifier(pooled)
//   DistilBERT:  pooled = ReLU(pre_classifier(h[0]));          logits = classifier(pooled)
// Config (bundle "hf_config", HF names and defaults): BERT vocab_size 30522, hidden_size 768,
// num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072, hidden_act gelu,
// max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12; DistilBERT vocab_size,
// max_position_embeddings, dim 768, hidden_dim 3072, n_layers 6, n_heads 12, activation gelu, eps 1e-12
// (DistilBERT's sinusoidal position table is stored in the weights like a learned one). Tensors: HF's names
// under "bert." / "distilbert." (+ classifier.*, pre_classifier.*), as wasm/convert writes them. Maps: kind
// "self-attention", one per layer × head, dims [T, T].
#pragma once

#include <cstddef>
#include <vector>

#include "io/bundle.h"
#include "models/hf_blocks.h"
#include "models/hf_layers.h"
#include "nn/linear.h"
#include "trace/trace.h"

namespace attnlens::models {

// What an encoder forward gives: the last hidden states, the pooled vector and the logits when the model has
// them.
struct HfEncoderOutput {
  std::vector<float> last_hidden_state;  // (T, d)
  std::vector<float> pooled;             // (d), empty without a pooler / pre_classifier
  std::vector<float> logits;             // (labels), empty without a classifier
};

class HfBert {
 public:
  // A bundle of architecture "hf-bert" or "hf-distilbert".
  explicit HfBert(const io::Bundle& bundle);

  // ids in [0, vocab), 1 ≤ T ≤ max_positions() (else Error). With `trace`, every layer × head map; with
  // `hidden`, appends HF's output_hidden_states (layers + 1 blocks of T × d: the embeddings' output, then
  // each layer's). With `vectors`, every layer × head's query and key vectors, "self-attention.query" / ".key"
  // [T, d_head] (hf::record_qk: after the bias, map = softmax(q·kᵀ/√d_head)).
  HfEncoderOutput forward(const std::vector<int>& ids, AttentionTrace* trace = nullptr,
                          std::vector<std::vector<float>>* hidden = nullptr, AttentionTrace* vectors = nullptr) const;

  bool distilbert() const { return distil_; }
  std::size_t vocab_size() const { return vocab_; }
  std::size_t max_positions() const { return positions_; }
  std::size_t d_model() const { return d_; }
  std::size_t layers() const { return blocks_.size(); }
  std::size_t heads() const { return heads_; }
  std::size_t num_labels() const { return labels_; }  // 0: no classification head

 private:
  struct Block {
    hf::SelfAttention attention;
    hf::LayerNorm attention_norm;  // BERT attention.output.LayerNorm; DistilBERT sa_layer_norm
    hf::FeedForward ffn;
    hf::LayerNorm output_norm;  // BERT output.LayerNorm; DistilBERT output_layer_norm
  };

  bool distil_ = false;
  std::size_t vocab_ = 0, positions_ = 0, d_ = 0, heads_ = 0, labels_ = 0;
  std::vector<float> word_, position_, token_type0_;  // (V, d), (P, d), (d) (BERT only)
  hf::LayerNorm embeddings_norm_;
  std::vector<Block> blocks_;
  nn::Linear pool_;        // BERT pooler.dense or DistilBERT pre_classifier (d × d); out() == 0 when absent
  nn::Linear classifier_;  // (labels × d); out() == 0 when absent
};

}  // namespace attnlens::models
