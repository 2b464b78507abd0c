#include "nn/embedding_projection.h"

#include <algorithm>
#include <string>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::nn {

EmbeddingProjection::EmbeddingProjection(const float* embedding, std::size_t vocab, std::size_t in,
                                         std::vector<Block> blocks, std::size_t max_bytes)
    : EmbeddingProjection(
          [embedding, in](int id, float* out) {
            std::copy_n(embedding + static_cast<std::size_t>(id) * in, in, out);
          },
          vocab, in, std::move(blocks), max_bytes) {
  require(embedding != nullptr, "embedding projection: empty embedding table");
}

EmbeddingProjection::EmbeddingProjection(EmbeddingRow embed, std::size_t vocab, std::size_t in,
                                         std::vector<Block> blocks, std::size_t max_bytes)
    : embed_(std::move(embed)), vocab_(vocab), in_(in), blocks_(std::move(blocks)) {
  require(embed_ && vocab > 0 && in > 0, "embedding projection: empty embedding table");
  require(!blocks_.empty(), "embedding projection: no weight blocks");
  for (const Block& b : blocks_) {
    require(b.weight != nullptr && b.rows > 0, "embedding projection: a weight block is empty");
    width_ += b.rows;
  }
  // Whole chunks only, and never more rows than there are words.
  const std::size_t chunk_bytes = kChunkRows * width_ * sizeof(float);
  const std::size_t chunks = std::min(max_bytes / chunk_bytes, (vocab + kChunkRows - 1) / kChunkRows);
  capacity_ = chunks * kChunkRows;
  slot_of_.reset(new std::atomic<std::int32_t>[vocab]);
  for (std::size_t i = 0; i < vocab; ++i) slot_of_[i].store(-1, std::memory_order_relaxed);
  chunks_.reset(new std::unique_ptr<float[]>[chunks > 0 ? chunks : 1]);
}

float* EmbeddingProjection::slot_row(std::int32_t slot) const {
  const auto s = static_cast<std::size_t>(slot);
  return chunks_[s / kChunkRows].get() + (s % kChunkRows) * width_;
}

void EmbeddingProjection::compute(const int* ids, std::size_t m, float* dst) const {
  // The GEMM gives a row the same bits whatever the other rows — except that products of one or two rows take
  // the dot-product path (kernels/dispatch.cpp). So at least kMinRows rows always go in (copies of the first
  // row as filler): a word's row is then the same however many words are computed with it.
  constexpr std::size_t kMinRows = 3;
  const std::size_t rows = std::max(m, kMinRows);
  std::vector<float> x(rows * in_);
  for (std::size_t r = 0; r < rows; ++r) embed_(ids[r < m ? r : 0], x.data() + r * in_);
  std::vector<float> padded(rows > m ? rows * width_ : 0);
  float* out = rows > m ? padded.data() : dst;
  std::size_t offset = 0;
  for (const Block& b : blocks_) {
    kernels::gemm_nt_bias_act(rows, b.rows, in_, x.data(), in_, b.weight, in_, out + offset, width_, b.bias,
                              kernels::Activation::none);
    offset += b.rows;
  }
  if (rows > m) std::copy_n(padded.data(), m * width_, dst);
}

void EmbeddingProjection::rows(const int* ids, std::size_t t, std::vector<const float*>& out,
                               std::vector<float>& scratch) const {
  out.assign(t, nullptr);
  std::vector<int> missing;  // words not stored yet (sorted and made distinct below)
  for (std::size_t i = 0; i < t; ++i) {
    const int id = ids[i];
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_)
      throw Error("embedding projection: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                  std::to_string(vocab_ - 1) + ")");
    const std::int32_t slot = slot_of_[id].load(std::memory_order_acquire);
    if (slot >= 0)
      out[i] = slot_row(slot);
    else
      missing.push_back(id);
  }
  if (missing.empty()) return;
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());

  std::vector<int> uncached;  // words that do not fit any more (sorted): computed into scratch
  if (capacity_ > 0) {
    std::lock_guard<std::mutex> lock(fill_);
    std::vector<int> add;  // (another thread may have stored some meanwhile)
    for (int id : missing)
      if (slot_of_[id].load(std::memory_order_relaxed) < 0) add.push_back(id);
    const std::size_t used = used_.load(std::memory_order_relaxed);
    const std::size_t fit = std::min(add.size(), capacity_ - used);
    uncached.assign(add.begin() + static_cast<std::ptrdiff_t>(fit), add.end());
    add.resize(fit);
    if (!add.empty()) {
      std::vector<float> fresh(add.size() * width_);
      compute(add.data(), add.size(), fresh.data());
      for (std::size_t r = 0; r < add.size(); ++r) {
        const std::size_t s = used + r;
        std::unique_ptr<float[]>& chunk = chunks_[s / kChunkRows];
        if (!chunk) chunk.reset(new float[kChunkRows * width_]);
        std::copy_n(fresh.data() + r * width_, width_, chunk.get() + (s % kChunkRows) * width_);
        slot_of_[add[r]].store(static_cast<std::int32_t>(s), std::memory_order_release);
      }
      used_.store(used + add.size(), std::memory_order_release);
    }
  } else {
    uncached = missing;
  }

  if (!uncached.empty()) {
    scratch.resize(uncached.size() * width_);
    compute(uncached.data(), uncached.size(), scratch.data());
  }
  for (std::size_t i = 0; i < t; ++i) {
    if (out[i] != nullptr) continue;
    const std::int32_t slot = slot_of_[ids[i]].load(std::memory_order_acquire);
    if (slot >= 0) {
      out[i] = slot_row(slot);
    } else {
      const auto at = std::lower_bound(uncached.begin(), uncached.end(), ids[i]) - uncached.begin();
      out[i] = scratch.data() + static_cast<std::size_t>(at) * width_;
    }
  }
}

}  // namespace attnlens::nn
