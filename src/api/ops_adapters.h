// Internal to src/api (not included by api.h): what the catalogue's adapters share — typed, shape-checked access to
// an op call's named input tensors (Inputs) — and the adapters themselves, one per op of the catalogue
// (ops_adapters.cpp), which ops_registry.cpp lists with their descriptions and kv_cache.cpp reuses for its weights.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "api/ops.h"
#include "api/options.h"
#include "api/tensor.h"
#include "attention/multi_head.h"
#include "common.h"

namespace attnlens::api::ops_detail {

// Typed access to the input tensors of one op call, with shape checks whose messages name the op and the input.
class Inputs {
 public:
  Inputs(const std::string& op, const TensorMap& map) : op_(op), map_(map) {
    for (const auto& [name, t] : map_) t.validate(op_ + ": input '" + name + "'");
  }

  const std::string& op() const { return op_; }

  bool has(const std::string& name) {
    known_.insert(name);
    return map_.count(name) != 0;
  }

  const Tensor& get(const std::string& name) {
    require(has(name), op_ + ": missing input '" + name + "'");
    return map_.at(name);
  }

  // The input must have this rank; returns it.
  const Tensor& rank(const std::string& name, std::size_t r) {
    const Tensor& t = get(name);
    require(t.rank() == r, op_ + ": input '" + name + "' must have " + std::to_string(r) + " dims, got " +
                               dims_to_string(t.dims));
    return t;
  }

  // Checks that dim `axis` of input `name` equals `expected` (described as `what`, e.g. "d (the size of q)").
  void expect_dim(const std::string& name, std::size_t axis, std::size_t expected, const std::string& what) {
    const Tensor& t = get(name);
    require(axis < t.rank() && t.dims[axis] == expected,
            op_ + ": input '" + name + "' has dims " + dims_to_string(t.dims) + ", but dim " +
                std::to_string(axis) + " must be " + std::to_string(expected) + " (" + what + ")");
  }

  // The input must have exactly these dims, kAny matching any size; `meaning` names them, e.g. "[d_att, d_q]".
  const Tensor& shape(const std::string& name, const std::vector<std::size_t>& expected, const std::string& meaning) {
    const Tensor& t = get(name);
    bool ok = t.rank() == expected.size();
    for (std::size_t i = 0; ok && i < expected.size(); ++i) ok = expected[i] == kAny || expected[i] == t.dims[i];
    if (!ok) {
      std::string want = "[";
      for (std::size_t i = 0; i < expected.size(); ++i) {
        want += (i ? "," : "") + (expected[i] == kAny ? std::string("*") : std::to_string(expected[i]));
      }
      throw Error(op_ + ": input '" + name + "' has dims " + dims_to_string(t.dims) + ", expected " + want + "] " +
                  meaning);
    }
    return t;
  }

  // Pointer to an optional input of these dims, or null when absent.
  const float* optional(const std::string& name, const std::vector<std::size_t>& expected, const std::string& meaning) {
    return has(name) ? shape(name, expected, meaning).data.data() : nullptr;
  }

  static constexpr std::size_t kAny = static_cast<std::size_t>(-1);

  void finish() const {
    for (const auto& [name, t] : map_) {
      if (!known_.count(name)) throw Error(op_ + ": unknown input '" + name + "'");
    }
  }

 private:
  std::string op_;
  const TensorMap& map_;
  std::set<std::string> known_;
};

// One adapter per op: named tensors and JSON params in, named tensors out (names of tests/goldens/attention/<op>.json).
using OpFn = TensorMap (*)(Inputs&, OptionReader&);
TensorMap run_score_general(Inputs& in, OptionReader& params);
TensorMap run_score_additive(Inputs& in, OptionReader& params);
TensorMap run_score_location(Inputs& in, OptionReader& params);
TensorMap run_align_soft(Inputs& in, OptionReader& params);
TensorMap run_align_local_m(Inputs& in, OptionReader& params);
TensorMap run_align_local_p(Inputs& in, OptionReader& params);
TensorMap run_align_hard_argmax(Inputs& in, OptionReader& params);
TensorMap run_align_hard_sample(Inputs& in, OptionReader& params);
TensorMap run_soft_context(Inputs& in, OptionReader& params);
TensorMap run_key_value_attention(Inputs& in, OptionReader& params);
TensorMap run_multi_head_attention(Inputs& in, OptionReader& params);
TensorMap run_structured_self_attention(Inputs& in, OptionReader& params);
TensorMap run_relation_self_attention(Inputs& in, OptionReader& params);
TensorMap run_co_attention_parallel(Inputs& in, OptionReader& params);
TensorMap run_co_attention_max_pooled(Inputs& in, OptionReader& params);
TensorMap run_co_attention_alternating(Inputs& in, OptionReader& params);
TensorMap run_attention_over_attention(Inputs& in, OptionReader& params);
TensorMap run_hierarchical_attention(Inputs& in, OptionReader& params);
TensorMap run_pointer_attention(Inputs& in, OptionReader& params);
TensorMap run_coverage_attention(Inputs& in, OptionReader& params);
TensorMap run_coverage_penalty(Inputs& in, OptionReader& params);
TensorMap run_position_weighted_memory(Inputs& in, OptionReader& params);
TensorMap run_visual_soft_attention(Inputs& in, OptionReader& params);
TensorMap run_doubly_stochastic_penalty(Inputs& in, OptionReader& params);
TensorMap run_attention_rollout(Inputs& in, OptionReader& params);
TensorMap run_attention_flow(Inputs& in, OptionReader& params);
TensorMap run_score_dot(Inputs& in, OptionReader& params);
TensorMap run_score_scaled_dot(Inputs& in, OptionReader& params);
TensorMap run_score_cosine(Inputs& in, OptionReader& params);

// The packed projections of nn.MultiheadAttention for embed_dim E: in_proj_weight [3E, E], out_proj_weight [E, E],
// optional in_proj_bias [3E] and out_proj_bias [E].
void read_multi_head_weights(Inputs& in, std::size_t embed_dim, std::size_t num_heads,
                             attention::MultiHeadWeights& w);

}  // namespace attnlens::api::ops_detail
