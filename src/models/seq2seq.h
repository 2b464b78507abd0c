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

// A translator's incremental decoder (decode::StepModel) that can also record its attention while it searches.
// With record_maps() on, every step() keeps, for each row it runs, that row's map rows of the step (every map of
// the model: one query row per layer and head) in one per-call arena; reorder() moves nothing there, so a row of
// step t stays addressable as (t, row). trace_hypothesis() then reads one hypothesis back — rows[t] = the row whose
// step t produced its token t (decode::SearchResult::rows) — as the maps a teacher-forced run over its tokens
// records: decoder self row t attends over the positions of that row's ancestors, which the KV cache copied.
class Seq2SeqDecoder : public decode::StepModel {
 public:
  // Starts recording from the next step on; `rows` and `steps` size the arena up front (it grows if they are
  // exceeded).
  virtual void record_maps(std::size_t rows, std::size_t steps) = 0;
  // Floats the arena would hold for `rows` rows over `steps` steps at most (the caller's memory bound).
  virtual std::size_t recorded_floats(std::size_t rows, std::size_t steps) const = 0;
  // Appends the decoder maps of one recorded hypothesis to `trace` (Transformer: decoder_self [T,T] zero above the
  // diagonal, then cross [T,S], per layer and head; RNNs: cross [T,S]), T = rows.size() ≤ steps recorded.
  virtual void trace_hypothesis(const std::vector<int>& rows, AttentionTrace& trace) const = 0;
};

class Seq2SeqModel {
 public:
  virtual ~Seq2SeqModel() = default;

  virtual std::size_t vocab_size() const = 0;
  // Longest source (ids, the final </s> included) the model takes; the API truncates longer ones.
  virtual std::size_t max_source_ids() const = 0;
  // Most target positions the decoder can take (Transformer: max_positions − 1); the search stops there.
  virtual std::size_t max_target_positions() const = 0;

  // Encodes `src` (ids in [0, vocab), non-empty) and returns a decoder holding one row, before its first step.
  // Records the encoder's own attention maps (if any) into `trace` when it is given (the one encoder run: the
  // decoder's maps come from the same decoder through record_maps / trace_hypothesis).
  virtual std::unique_ptr<Seq2SeqDecoder> start(const std::vector<int>& src, AttentionTrace* trace) const = 0;

  // Whether start_many() gives a decoder (the Transformer and both RNN translators); a model that says no has its
  // sources decoded one by one.
  virtual bool decodes_sources_together() const { return false; }
  // Several sources decoded together: a decoder holding one row per source, in order, each row reading its own
  // source — every layer of a step takes all the rows at once, and each row's numbers are the bits it would have
  // alone (decode::greedy_search_many). traces[i] (null: none) gets source i's encoder maps. No coverage signal
  // (step()'s attention must be null). Models that cannot return null: the caller decodes the sources one by one.
  virtual std::unique_ptr<Seq2SeqDecoder> start_many(const std::vector<std::vector<int>>& srcs,
                                                      const std::vector<AttentionTrace*>& traces) const {
    (void)srcs;
    (void)traces;
    return nullptr;
  }

  // Teacher forcing, computed incrementally step by step exactly as decoding does (one row, recording its maps):
  // feeds tgt_in[t] at step t and returns the logits of every step (tgt_in.size() × vocab). With `trace`, records
  // every attention map:
  //   Transformer: encoder_self [S,S], decoder_self [T,T] (zero above the diagonal), cross [T,S], one map per
  //                layer and head;   RNNs: cross [T,S] (layer −1, head −1).
  virtual std::vector<float> forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                     AttentionTrace* trace) const = 0;

  // Whether query_key_vectors() works: the model's attention is dot-product (the Transformer).
  virtual bool has_query_key_vectors() const { return false; }
  // The vectors behind every dot-product attention map (the neuron view), by teacher forcing of tgt_in exactly as
  // forward(): per attention kind, layer and head, "<kind>.query" [rows, d_head] and "<kind>.key" [columns, d_head]
  // (kind: encoder_self, decoder_self, cross), so that row i of that kind's map is
  // softmax(query[i] · key[j] / √d_head over j) — over j ≤ i for decoder_self. Throws for other models.
  virtual void query_key_vectors(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                 AttentionTrace& out) const;
};

// Teacher forcing through a started decoder (one row): tgt_in[t] fed at step t, logits (T × vocab) returned; with
// an enabled `trace`, the decoder records its maps on the way and they are appended (rows all 0).
std::vector<float> teacher_force(Seq2SeqDecoder& decoder, const std::vector<int>& tgt_in, AttentionTrace* trace);

}  // namespace attnlens::models
