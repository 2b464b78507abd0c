// Word embeddings already multiplied by the first layer's input weights, kept per word.
//
// A recurrent encoder over word ids starts with  x_t = E[id_t]  and then  W x_t + b  for every step (an LSTM's
// input projection, one product per direction). Both depend on the word alone, so the row  W E[id] + b  is the same
// every time the word comes back. EmbeddingProjection computes it the first time a sentence uses the word and keeps
// it: later sentences read the row instead of multiplying again (for sst2-selfattn that is 240k of the ~450k
// multiply-adds per word).
//
//   rows(ids)[t] = [ W_0 E[id_t] + b_0 ; W_1 E[id_t] + b_1 ; … ]        (N = Σ n_b floats per word)
//
// Exactness: every row comes from the packed GEMM (gemm_nt_bias_act of the words' embeddings against each
// block's W and b, at least three rows per product so that the one-or-two-row dot-product path is never taken);
// the GEMM's result for a row does not depend on the other rows of the product, so a sentence's projections have
// the same bits with the cache, without it, with a full cache, alone or in a list on several threads
// (tests/cpp/test_model_sentiment.cpp checks it on the shipped model).
//
// Memory: rows are stored in chunks allocated on first use, up to `max_bytes` (the words seen first are kept;
// once full, the words not kept are computed per call into the caller's scratch, as without a cache). A word's row
// never moves once stored, so the returned pointers stay valid for the object's lifetime.
//
// Threads: rows() may be called from several threads at once (a list of sentences on the pool): a stored word is
// read without a lock; the words a call has to add are computed under one mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace attnlens::nn {

class EmbeddingProjection {
 public:
  struct Block {
    std::size_t rows = 0;          // n_b outputs
    const float* weight = nullptr;  // [n_b × in], PyTorch Linear layout
    const float* bias = nullptr;    // [n_b] or null
  };

  // embed(id, out) writes E[id] (in floats; e.g. a row of a packed table). It and every block's weight and bias
  // must outlive this object (they are read, not copied). max_bytes = 0 keeps nothing (every row computed per
  // call). Throws Error on empty sizes or nulls.
  using EmbeddingRow = std::function<void(int id, float* out)>;
  EmbeddingProjection(EmbeddingRow embed, std::size_t vocab, std::size_t in, std::vector<Block> blocks,
                      std::size_t max_bytes);
  // The same over a plain table embedding [vocab × in].
  EmbeddingProjection(const float* embedding, std::size_t vocab, std::size_t in, std::vector<Block> blocks,
                      std::size_t max_bytes);

  std::size_t width() const { return width_; }  // N
  std::size_t stored() const { return used_.load(std::memory_order_acquire); }  // words kept so far
  std::size_t capacity() const { return capacity_; }                           // words it may keep

  // out[t] ← the row of ids[t] (N floats; block b at offset Σ_{b'<b} n_b'). Rows of words that are not kept are
  // written to `scratch` (resized to at most t·N floats; the pointers into it stay valid until the caller next
  // changes it). Ids must be in [0, vocab) (the model checks them first; an id outside throws Error).
  void rows(const int* ids, std::size_t t, std::vector<const float*>& out, std::vector<float>& scratch) const;

 private:
  // Computes the rows of `ids` (m words) into dst [m × N].
  void compute(const int* ids, std::size_t m, float* dst) const;
  float* slot_row(std::int32_t slot) const;

  static constexpr std::size_t kChunkRows = 128;
  EmbeddingRow embed_;
  std::size_t vocab_, in_, width_ = 0, capacity_ = 0;
  std::vector<Block> blocks_;
  std::unique_ptr<std::atomic<std::int32_t>[]> slot_of_;  // [vocab], −1 = not stored
  std::unique_ptr<std::unique_ptr<float[]>[]> chunks_;    // [capacity / kChunkRows], allocated on use
  mutable std::atomic<std::size_t> used_{0};
  mutable std::mutex fill_;
};

}  // namespace attnlens::nn
