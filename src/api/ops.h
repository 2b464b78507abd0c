// attnlens C++ API: the attention catalogue (docs/DESIGN.md §3) through one uniform entry, run_op() — an op takes
// named input tensors and JSON params and returns named output tensors, with exactly the names of the golden files
// tests/goldens/attention/<op>.json, so one generic test (C++, Node) drives every op and a binding does not grow
// with the catalogue; list_ops() describes each op (formula, paper, inputs) for the attention lab and the CLI —
// and the stateful MultiHeadKvCache. Included by src/api.h. Implemented in ops_registry.cpp (the op table and
// run_op), ops_adapters.cpp (one adapter per op, from tensors to src/attention) and kv_cache.cpp.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "api/tensor.h"

namespace attnlens::api {

// ---- the attention catalogue ----
struct OpInfo {
  std::string name;                 // e.g. "score_additive"; the golden file is tests/goldens/attention/<name>.json
  std::string family;               // "score", "alignment", "context", "composite"
  std::string formula;              // in the seeds' notation
  std::string paper;                // e.g. "Bahdanau et al. 2014"
  std::vector<std::string> inputs;  // required input tensor names, with dims, e.g. "q[d]", "keys[S,d]"
  std::vector<std::string> optional_inputs;
  std::vector<std::string> outputs;
  std::string params;               // the JSON params the op reads, with their defaults
};

std::vector<OpInfo> list_ops();
bool has_op(const std::string& name);
// Runs one catalogue op. `params_json` is a JSON object (may be empty "{}"); unknown keys are an error so a typo
// never silently falls back to a default. Every input is checked for presence and shape before the op runs.
TensorMap run_op(const std::string& name, const TensorMap& inputs, const std::string& params_json = "{}");

// ---- stateful objects (opaque handles) ----

// Multi-head attention with an incremental key/value cache (attention/multi_head.h, Vaswani 2017): a decoder
// appends each new position and attends over everything cached, projecting every position once.
// Owns copies of its weights. Weights: in_proj_weight [3E, E], in_proj_bias [3E] (optional), out_proj_weight
// [E, E], out_proj_bias [E] (optional), PyTorch's nn.MultiheadAttention layout.
struct MultiHeadKvCacheParams {
  std::size_t num_heads = 1;   // must divide E
  std::size_t capacity = 512;  // positions; memory 2·capacity·E floats, allocated once; at most
                               // kMaxKvCacheCapacity positions and kMaxKvCacheFloats floats per buffer (Error past them)
};
constexpr std::size_t kMaxKvCacheCapacity = std::size_t(1) << 20;
constexpr std::size_t kMaxKvCacheFloats = std::size_t(1) << 28;  // capacity·E: 1 GiB of keys, 1 GiB of values
// Parses {"num_heads": H, "capacity": N} (unknown keys are an error) over the defaults above.
MultiHeadKvCacheParams multi_head_kv_cache_params(const std::string& params_json);

class MultiHeadKvCache {
 public:
  MultiHeadKvCache(const TensorMap& weights, const MultiHeadKvCacheParams& params);
  ~MultiHeadKvCache();
  MultiHeadKvCache(const MultiHeadKvCache&) = delete;
  MultiHeadKvCache& operator=(const MultiHeadKvCache&) = delete;

  // key, value [n, E] (or [E] for one position).
  void append(const Tensor& key, const Tensor& value);
  // query [n_q, E] (or [E]) → {"out": [n_q, E], "weights": [H, n_q, length()]}.
  TensorMap attend(const Tensor& query, bool causal = true);
  std::size_t length() const;
  std::size_t capacity() const;
  std::size_t embed_dim() const;
  std::size_t num_heads() const;
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
