// What every encoder–decoder translator offers the API (src/api/translation.cpp): the Transformer
// (models/transformer_seq2seq.h) and the two RNN families (models/rnn_seq2seq.h) implement it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "decode/search.h"
#include "trace/trace.h"

namespace attnlens::models {

class Seq2SeqModel {
 public:
  virtual ~Seq2SeqModel() = default;

  virtual std::size_t vocab_size() const = 0;
  // Longest source (ids, the final </s> included) the model takes; the API truncates longer ones.
  virtual std::size_t max_source_ids() const = 0;
  // Most target positions the decoder can take (Transformer: max_positions − 1); the search stops there.
  virtual std::size_t max_target_positions() const = 0;

  // Encodes `src` (ids in [0, vocab), non-empty) and returns a decoder holding one row, before its first step.
  // Records the encoder's own attention maps (if any) into `trace` when it is given.
  virtual std::unique_ptr<decode::StepModel> start(const std::vector<int>& src, AttentionTrace* trace) const = 0;

  // Teacher forcing, computed incrementally step by step exactly as decoding does: feeds tgt_in[t] at step t and
  // returns the logits of every step (tgt_in.size() × vocab). With `trace`, records every attention map:
  //   Transformer: encoder_self [S,S], decoder_self [T,T] (zero above the diagonal), cross [T,S], one map per
  //                layer and head;   RNNs: cross [T,S] (layer −1, head −1).
  virtual std::vector<float> forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                     AttentionTrace* trace) const = 0;
};

}  // namespace attnlens::models
