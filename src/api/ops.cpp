// attnlens C++ API (see api/ops.h): JSON params, input checks, and the registry that adapts each catalogue op of
// src/attention to the uniform run_op() entry; MultiHeadKvCache.
#include "api/ops.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/options.h"
#include "attention/alignment.h"
#include "attention/attention_over_attention.h"
#include "attention/co_attention.h"
#include "attention/context.h"
#include "attention/coverage.h"
#include "attention/hierarchical.h"
#include "attention/multi_head.h"
#include "attention/pointer.h"
#include "attention/position_memory.h"
#include "attention/rollout.h"
#include "attention/scores.h"
#include "attention/self_attention.h"
#include "attention/visual.h"
#include "kernels/kernels.h"

namespace attnlens::api {

namespace {

// Reads the JSON params of one op call. Every key read is remembered so that finish() can reject keys the op does
// not know (a misspelt "causal" must not silently run without the mask).
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

using OpFn = TensorMap (*)(Inputs&, OptionReader&);

struct OpEntry {
  OpInfo info;
  OpFn run;
};

const std::vector<OpEntry>& registry();

}  // namespace

std::vector<OpInfo> list_ops() {
  std::vector<OpInfo> out;
  for (const auto& e : registry()) out.push_back(e.info);
  return out;
}

bool has_op(const std::string& name) {
  const auto& r = registry();
  return std::any_of(r.begin(), r.end(), [&](const OpEntry& e) { return e.info.name == name; });
}

TensorMap run_op(const std::string& name, const TensorMap& inputs, const std::string& params_json) {
  for (const auto& e : registry()) {
    if (e.info.name != name) continue;
    Inputs in(name, inputs);
    OptionReader params(name, params_json);
    TensorMap out = e.run(in, params);
    // Unknown names are reported after the op ran so that every key the op might read has been seen.
    in.finish();
    params.finish();
    return out;
  }
  std::string names;
  for (const auto& e : registry()) names += (names.empty() ? "" : ", ") + e.info.name;
  throw Error("unknown attention op '" + name + "'; known ops: " + names);
}

namespace {

// ---- adapters: each turns named tensors + params into calls of src/attention ----
// Names and shapes follow tests/goldens/make_attention_goldens.py (its table is the reference); scalars travel as
// tensors of dims [1], indices as floats.

namespace att = attnlens::attention;
constexpr std::size_t kAny = Inputs::kAny;

// A mask tensor holds 1 (attend) or 0 (masked), like the engine's uint8 masks.
std::vector<std::uint8_t> mask_from(const std::string& op, const std::string& name, const Tensor& t) {
  std::vector<std::uint8_t> keep(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    require(t.data[i] == 0.0f || t.data[i] == 1.0f,
            op + ": mask '" + name + "' must hold only 0 (masked) and 1 (attend), found " + std::to_string(t.data[i]));
    keep[i] = t.data[i] != 0.0f;
  }
  return keep;
}

// Rows of a [n, d] matrix, or one row for a vector [d] (a single query: the decoder step). With a vector, outputs
// drop their query axis as well.
struct Rows {
  std::size_t n = 0;
  std::size_t d = 0;
  bool vector = false;
};

Rows rows_of(Inputs& in, const std::string& name) {
  const Tensor& t = in.get(name);
  if (t.rank() == 1) return {1, t.dims[0], true};
  require(t.rank() == 2, in.op() + ": input '" + name + "' must be [n, d] or [d], got " + dims_to_string(t.dims));
  return {t.dims[0], t.dims[1], false};
}

std::vector<std::size_t> per_query(const Rows& q, std::size_t width) {
  return q.vector ? std::vector<std::size_t>{width} : std::vector<std::size_t>{q.n, width};
}

Tensor scalar(double v) { return Tensor({1}, {static_cast<float>(v)}); }

const float* ptr(Inputs& in, const std::string& name) { return in.get(name).data.data(); }

// Optional padding mask key_keep [n].
const std::uint8_t* read_key_keep(Inputs& in, std::size_t n, std::vector<std::uint8_t>& keep) {
  if (!in.has("key_keep")) return nullptr;
  keep = mask_from(in.op(), "key_keep", in.shape("key_keep", {n}, "(1 = attend, 0 = padding)"));
  return keep.data();
}

// key_keep [n_k], keep [n_q, n_k] and the causal flag.
struct MaskInputs {
  std::vector<std::uint8_t> key_keep, keep;
  att::AlignMask mask;
};

void read_masks(Inputs& in, OptionReader& params, std::size_t n_q, std::size_t n_k, MaskInputs& m) {
  m.mask.key_keep = read_key_keep(in, n_k, m.key_keep);
  if (in.has("keep")) {
    const Tensor& t = in.get("keep");
    require(t.size() == n_q * n_k && t.rank() >= 1 && t.dims.back() == n_k,
            in.op() + ": mask 'keep' must be [" + std::to_string(n_q) + "," + std::to_string(n_k) + "], got " +
                dims_to_string(t.dims));
    m.keep = mask_from(in.op(), "keep", t);
    m.mask.keep = m.keep.data();
  }
  m.mask.causal = params.flag("causal", false);
  require(!m.mask.causal || n_k >= n_q, in.op() + ": a causal mask needs at least as many keys as queries (" +
                                            std::to_string(n_k) + " keys, " + std::to_string(n_q) + " queries)");
}

// vᵀ tanh(W q + U k + b) weights: w [d_att, d_q], u [d_att, d_k], v [d_att], optional bias [d_att].
att::AdditiveScoreWeights additive_weights(Inputs& in, std::size_t d_q, std::size_t d_k,
                                           const std::string& w_name = "w", const std::string& u_name = "u") {
  att::AdditiveScoreWeights w;
  const Tensor& wt = in.shape(w_name, {kAny, d_q}, "[d_att, d_q]");
  w.d_q = d_q;
  w.d_k = d_k;
  w.d_att = wt.dims[0];
  w.w = wt.data.data();
  w.u = in.shape(u_name, {w.d_att, d_k}, "[d_att, d_k]").data.data();
  w.v = in.shape("v", {w.d_att}, "[d_att]").data.data();
  w.bias = in.optional("bias", {w.d_att}, "[d_att]");
  return w;
}

TensorMap run_pairwise_score(const std::string& op, Inputs& in, OptionReader& params) {
  const Rows q = rows_of(in, "q");
  const Tensor& keys = in.shape("keys", {kAny, q.d}, "[n_k, d]: keys of the size of q");
  const std::size_t n_k = keys.dims[0];
  Tensor scores(per_query(q, n_k));
  if (op == "score_dot") {
    att::score_dot(ptr(in, "q"), q.n, keys.data.data(), n_k, q.d, scores.data.data());
  } else if (op == "score_scaled_dot") {
    att::score_scaled_dot(ptr(in, "q"), q.n, keys.data.data(), n_k, q.d, scores.data.data());
  } else {
    const double eps = params.number("eps", 1e-8);
    require(eps > 0, op + ": param 'eps' must be positive");
    att::score_cosine(ptr(in, "q"), q.n, keys.data.data(), n_k, q.d, scores.data.data(), static_cast<float>(eps));
  }
  return {{"scores", std::move(scores)}};
}

TensorMap run_score_general(Inputs& in, OptionReader&) {
  const Rows q = rows_of(in, "q");
  const Tensor& keys = in.rank("keys", 2);
  const std::size_t n_k = keys.dims[0], d_k = keys.dims[1];
  const Tensor& w = in.shape("w", {q.d, d_k}, "[d_q, d_k]");
  Tensor scores(per_query(q, n_k));
  att::score_general(ptr(in, "q"), q.n, q.d, w.data.data(), keys.data.data(), n_k, d_k, scores.data.data());
  return {{"scores", std::move(scores)}};
}

TensorMap run_score_additive(Inputs& in, OptionReader&) {
  const Rows q = rows_of(in, "q");
  const Tensor& keys = in.rank("keys", 2);
  const std::size_t n_k = keys.dims[0];
  const att::AdditiveScoreWeights w = additive_weights(in, q.d, keys.dims[1]);
  // U k + b once per source (Bahdanau's precomputation), then the scores from the projected keys.
  Tensor keys_proj({n_k, w.d_att});
  att::additive_project_keys(w, keys.data.data(), n_k, keys_proj.data.data());
  Tensor scores(per_query(q, n_k));
  att::score_additive_projected(w, ptr(in, "q"), q.n, keys_proj.data.data(), n_k, scores.data.data());
  return {{"scores", std::move(scores)}, {"keys_proj", std::move(keys_proj)}};
}

TensorMap run_score_location(Inputs& in, OptionReader& params) {
  const Rows q = rows_of(in, "q");
  const Tensor& w_a = in.shape("w_a", {kAny, q.d}, "[n_max, d_q]");
  const std::size_t n_k = params.index("n_k", w_a.dims[0]);
  require(n_k <= w_a.dims[0], "score_location: param 'n_k' = " + std::to_string(n_k) + " exceeds the " +
                                  std::to_string(w_a.dims[0]) + " rows of w_a (the longest source it was trained for)");
  Tensor scores(per_query(q, n_k));
  att::score_location(ptr(in, "q"), q.n, q.d, w_a.data.data(), n_k, scores.data.data());
  Tensor weights = scores;
  att::align_soft(weights.data.data(), q.n, n_k);
  return {{"scores", std::move(scores)}, {"weights", std::move(weights)}};
}

TensorMap run_align_soft(Inputs& in, OptionReader& params) {
  const Rows s = rows_of(in, "scores");
  MaskInputs m;
  read_masks(in, params, s.n, s.d, m);
  Tensor weights = in.get("scores");
  att::align_soft(weights.data.data(), s.n, s.d, m.mask);
  return {{"weights", std::move(weights)}};
}

TensorMap run_align_local_m(Inputs& in, OptionReader& params) {
  const Tensor& scores = in.rank("scores", 1);
  const std::size_t n = scores.dims[0];
  const std::size_t t = params.required_index("t");
  const std::size_t d = params.required_index("D");
  std::vector<std::uint8_t> keep;
  const std::uint8_t* key_keep = read_key_keep(in, n, keep);
  Tensor weights = scores;
  att::align_local_m(weights.data.data(), n, t, d, key_keep);
  return {{"weights", std::move(weights)}};
}

TensorMap run_align_local_p(Inputs& in, OptionReader& params) {
  const Tensor& scores = in.rank("scores", 1);
  const std::size_t n = scores.dims[0];
  const std::size_t d = params.required_index("D");
  float p = 0.0f;
  if (in.has("q")) {
    // p_t = S · sigmoid(v_pᵀ tanh(W_p h_t)) (Luong 2015 eq. 9) from the query and the learned W_p, v_p.
    const Tensor& q = in.rank("q", 1);
    att::LocalPWeights lw;
    const Tensor& w_p = in.shape("w_p", {kAny, q.dims[0]}, "[d_att, d_q]");
    lw.d_q = q.dims[0];
    lw.d_att = w_p.dims[0];
    lw.w_p = w_p.data.data();
    lw.v_p = in.shape("v_p", {lw.d_att}, "[d_att]").data.data();
    p = att::local_p_position(lw, q.data.data(), n);
  } else {
    // The attention lab sets the window centre directly.
    require(params.has("p"), "align_local_p: give the inputs q, w_p and v_p (p is predicted), or the param 'p'");
    p = static_cast<float>(params.number("p", 0.0));
  }
  std::vector<std::uint8_t> keep;
  const std::uint8_t* key_keep = read_key_keep(in, n, keep);
  Tensor weights = scores;
  att::align_local_p(weights.data.data(), n, p, d, key_keep);
  return {{"weights", std::move(weights)}, {"p", scalar(p)}};
}

TensorMap run_align_hard_argmax(Inputs& in, OptionReader&) {
  const Tensor& weights = in.rank("weights", 1);
  const std::size_t n = weights.dims[0];
  require(n >= 1, "align_hard_argmax: 'weights' must hold at least one position");
  Tensor one_hot({n});
  const std::size_t index = att::align_hard_argmax(weights.data.data(), n, one_hot.data.data());
  return {{"one_hot", std::move(one_hot)}, {"index", scalar(static_cast<double>(index))}};
}

TensorMap run_align_hard_sample(Inputs& in, OptionReader& params) {
  const Tensor& weights = in.rank("weights", 1);
  const std::size_t n = weights.dims[0];
  require(n >= 1, "align_hard_sample: 'weights' must hold at least one position");
  const std::size_t draws = params.index("draws", 1);
  require(draws <= (1u << 24), "align_hard_sample: param 'draws' is too large (at most 16777216)");
  att::SplitMix64 rng(static_cast<std::uint64_t>(params.index("seed", 0)));
  Tensor samples({draws});
  for (std::size_t i = 0; i < draws; ++i) {
    samples.data[i] = static_cast<float>(att::align_hard_sample(weights.data.data(), n, rng));
  }
  return {{"samples", std::move(samples)}};
}

TensorMap run_soft_context(Inputs& in, OptionReader&) {
  const Rows w = rows_of(in, "weights");
  const Tensor& values = in.shape("values", {w.d, kAny}, "[n_k, d_v]: one value per weight");
  const std::size_t d_v = values.dims[1];
  Tensor context(per_query(w, d_v));
  att::soft_context(ptr(in, "weights"), w.n, w.d, values.data.data(), d_v, context.data.data());
  return {{"context", std::move(context)}};
}

TensorMap run_key_value_attention(Inputs& in, OptionReader& params) {
  const Rows q = rows_of(in, "q");
  const Tensor& keys = in.shape("keys", {kAny, q.d}, "[n_k, d_k]: keys of the size of q");
  const std::size_t n_k = keys.dims[0];
  const Tensor& values = in.shape("values", {n_k, kAny}, "[n_k, d_v]: one value per key");
  const std::size_t d_v = values.dims[1];
  const std::string score = params.text("score", "scaled_dot", {"dot", "scaled_dot"});
  MaskInputs m;
  read_masks(in, params, q.n, n_k, m);
  Tensor weights(per_query(q, n_k));
  Tensor context(per_query(q, d_v));
  att::key_value_attention(ptr(in, "q"), q.n, keys.data.data(), values.data.data(), n_k, q.d, d_v,
                           weights.data.data(), context.data.data(),
                           score == "dot" ? att::KeyValueScore::kDot : att::KeyValueScore::kScaledDot, m.mask);
  return {{"weights", std::move(weights)}, {"context", std::move(context)}};
}

// The packed projections of nn.MultiheadAttention for embed_dim E.
void read_multi_head_weights(Inputs& in, std::size_t embed_dim, std::size_t num_heads, att::MultiHeadWeights& w) {
  require(embed_dim >= 1, in.op() + ": embed_dim must be at least 1");
  require(num_heads >= 1 && embed_dim % num_heads == 0, in.op() + ": num_heads = " + std::to_string(num_heads) +
                                                            " must divide embed_dim = " + std::to_string(embed_dim));
  w.embed_dim = embed_dim;
  w.num_heads = num_heads;
  w.in_proj_weight = in.shape("in_proj_weight", {3 * embed_dim, embed_dim}, "[3E, E]: W_q, W_k, W_v stacked").data.data();
  w.out_proj_weight = in.shape("out_proj_weight", {embed_dim, embed_dim}, "[E, E]").data.data();
  w.in_proj_bias = in.optional("in_proj_bias", {3 * embed_dim}, "[3E]");
  w.out_proj_bias = in.optional("out_proj_bias", {embed_dim}, "[E]");
}

TensorMap run_multi_head_attention(Inputs& in, OptionReader& params) {
  const Rows q = rows_of(in, "query");
  const Tensor& key = in.shape("key", {kAny, q.d}, "[n_k, E]");
  const std::size_t n_k = key.dims[0];
  const Tensor& value = in.shape("value", {n_k, q.d}, "[n_k, E]: one value per key");
  const std::size_t heads = params.required_index("num_heads");
  att::MultiHeadWeights w;
  read_multi_head_weights(in, q.d, heads, w);
  MaskInputs m;
  read_masks(in, params, q.n, n_k, m);
  Tensor out(per_query(q, q.d));
  Tensor weights({heads, q.n, n_k});
  att::multi_head_attention(w, ptr(in, "query"), q.n, key.data.data(), value.data.data(), n_k, out.data.data(),
                            weights.data.data(), m.mask);
  return {{"out", std::move(out)}, {"weights", std::move(weights)}};
}

TensorMap run_structured_self_attention(Inputs& in, OptionReader&) {
  const Tensor& h = in.rank("h", 2);
  const std::size_t t = h.dims[0];
  att::StructuredSelfAttentionWeights w;
  w.d_h = h.dims[1];
  const Tensor& w_s1 = in.shape("w_s1", {kAny, w.d_h}, "[d_a, d_h]");
  w.d_a = w_s1.dims[0];
  const Tensor& w_s2 = in.shape("w_s2", {kAny, w.d_a}, "[r, d_a]");
  w.r = w_s2.dims[0];
  w.w_s1 = w_s1.data.data();
  w.w_s2 = w_s2.data.data();
  std::vector<std::uint8_t> keep;
  const std::uint8_t* key_keep = read_key_keep(in, t, keep);
  Tensor a({w.r, t});
  Tensor m({w.r, w.d_h});
  att::structured_self_attention(w, h.data.data(), t, a.data.data(), m.data.data(), key_keep);
  const float penalty = att::structured_penalty(a.data.data(), w.r, t);
  return {{"a", std::move(a)}, {"m", std::move(m)}, {"penalty", scalar(penalty)}};
}

TensorMap run_relation_self_attention(Inputs& in, OptionReader&) {
  const Tensor& x = in.rank("x", 2);
  const std::size_t t = x.dims[0];
  att::RelationAttentionWeights w;
  w.d = x.dims[1];
  const Tensor& w_f1 = in.shape("w_f1", {kAny, 2 * w.d}, "[d_f, 2d]: applied to the pair [x_i; x_j]");
  w.d_f = w_f1.dims[0];
  w.w_f1 = w_f1.data.data();
  w.b_f1 = in.optional("b_f1", {w.d_f}, "[d_f]");
  w.w_f2 = in.shape("w_f2", {w.d_f, w.d_f}, "[d_f, d_f]").data.data();
  w.b_f2 = in.optional("b_f2", {w.d_f}, "[d_f]");
  w.w_g = in.shape("w_g", {2 * w.d}, "[2d]").data.data();
  const float* b_g = in.optional("b_g", {1}, "[1]");
  w.b_g = b_g ? *b_g : 0.0f;
  Tensor a({t, t});
  Tensor word({t, w.d_f});
  Tensor sentence({w.d_f});
  att::relation_self_attention(w, x.data.data(), t, a.data.data(), word.data.data(), sentence.data.data());
  return {{"a", std::move(a)}, {"word", std::move(word)}, {"sentence", std::move(sentence)}};
}

TensorMap run_co_attention_parallel(Inputs& in, OptionReader&) {
  const Tensor& v = in.rank("v", 2);
  const std::size_t n = v.dims[0];
  att::ParallelCoAttentionWeights w;
  w.d = v.dims[1];
  const std::size_t t = in.shape("q", {kAny, w.d}, "[T, d]: question words of the size of the image regions").dims[0];
  const Tensor& w_v = in.shape("w_v", {kAny, w.d}, "[k, d]");
  w.k = w_v.dims[0];
  w.w_v = w_v.data.data();
  w.w_b = in.shape("w_b", {w.d, w.d}, "[d, d]").data.data();
  w.w_q = in.shape("w_q", {w.k, w.d}, "[k, d]").data.data();
  w.w_hv = in.shape("w_hv", {w.k}, "[k]").data.data();
  w.w_hq = in.shape("w_hq", {w.k}, "[k]").data.data();
  Tensor affinity({t, n}), a_v({n}), a_q({t}), v_hat({w.d}), q_hat({w.d});
  att::parallel_co_attention(w, v.data.data(), n, ptr(in, "q"), t, affinity.data.data(), a_v.data.data(),
                             a_q.data.data(), v_hat.data.data(), q_hat.data.data());
  return {{"affinity", std::move(affinity)}, {"a_v", std::move(a_v)}, {"a_q", std::move(a_q)},
          {"v_hat", std::move(v_hat)}, {"q_hat", std::move(q_hat)}};
}

TensorMap run_co_attention_max_pooled(Inputs& in, OptionReader&) {
  const Tensor& v = in.rank("v", 2);
  const std::size_t n = v.dims[0];
  att::ParallelCoAttentionWeights w;
  w.d = v.dims[1];
  const std::size_t t = in.shape("q", {kAny, w.d}, "[T, d]: question words of the size of the image regions").dims[0];
  w.w_b = in.shape("w_b", {w.d, w.d}, "[d, d]").data.data();
  Tensor affinity({t, n}), a_v({n}), a_q({t}), v_hat({w.d}), q_hat({w.d});
  att::max_pooled_co_attention(w, v.data.data(), n, ptr(in, "q"), t, affinity.data.data(), a_v.data.data(),
                               a_q.data.data(), v_hat.data.data(), q_hat.data.data());
  return {{"affinity", std::move(affinity)}, {"a_v", std::move(a_v)}, {"a_q", std::move(a_q)},
          {"v_hat", std::move(v_hat)}, {"q_hat", std::move(q_hat)}};
}

TensorMap run_co_attention_alternating(Inputs& in, OptionReader&) {
  const Tensor& v = in.rank("v", 2);
  const std::size_t n = v.dims[0];
  att::AlternatingCoAttentionWeights w;
  w.d = v.dims[1];
  const std::size_t t = in.shape("q", {kAny, w.d}, "[T, d]: question words of the size of the image regions").dims[0];
  w.k = in.shape("w_x1", {kAny, w.d}, "[k, d]").dims[0];
  for (int step = 0; step < 3; ++step) {
    const std::string i = std::to_string(step + 1);
    w.step[step].w_x = in.shape("w_x" + i, {w.k, w.d}, "[k, d]").data.data();
    w.step[step].w_hx = in.shape("w_hx" + i, {w.k}, "[k]").data.data();
    // Step 1 has no guidance (g = 0, Lu 2016 §3.3), so its w_g is optional; steps 2 and 3 need theirs.
    w.step[step].w_g = step == 0 ? in.optional("w_g1", {w.k, w.d}, "[k, d]")
                                 : in.shape("w_g" + i, {w.k, w.d}, "[k, d]").data.data();
  }
  Tensor a_s({t}), s_hat({w.d}), a_v({n}), v_hat({w.d}), a_q({t}), q_hat({w.d});
  att::alternating_co_attention(w, v.data.data(), n, ptr(in, "q"), t, a_s.data.data(), s_hat.data.data(),
                                a_v.data.data(), v_hat.data.data(), a_q.data.data(), q_hat.data.data());
  return {{"a_s", std::move(a_s)}, {"s_hat", std::move(s_hat)}, {"a_v", std::move(a_v)},
          {"v_hat", std::move(v_hat)}, {"a_q", std::move(a_q)}, {"q_hat", std::move(q_hat)}};
}

TensorMap run_attention_over_attention(Inputs& in, OptionReader&) {
  const Tensor& doc = in.rank("doc", 2);
  const std::size_t n = doc.dims[0], d = doc.dims[1];
  const std::size_t m = in.shape("query", {kAny, d}, "[m, d]: query words of the size of the document's").dims[0];
  Tensor matching({n, m}), alpha({n, m}), beta({n, m}), beta_avg({m}), s({n});
  att::attention_over_attention(doc.data.data(), n, ptr(in, "query"), m, d, alpha.data.data(), beta.data.data(),
                                beta_avg.data.data(), s.data.data(), matching.data.data());
  return {{"matching", std::move(matching)}, {"alpha", std::move(alpha)}, {"beta", std::move(beta)},
          {"beta_avg", std::move(beta_avg)}, {"s", std::move(s)}};
}

att::AttentionPoolWeights pool_weights(Inputs& in, std::size_t d, const std::string& suffix) {
  att::AttentionPoolWeights w;
  w.d = d;
  const Tensor& wt = in.shape("w_" + suffix, {kAny, d}, "[d_att, d]");
  w.d_att = wt.dims[0];
  w.w = wt.data.data();
  w.bias = in.optional("b_" + suffix, {w.d_att}, "[d_att]");
  w.context = in.shape("u_" + suffix, {w.d_att}, "[d_att]: the learned context vector").data.data();
  return w;
}

TensorMap run_hierarchical_attention(Inputs& in, OptionReader& params) {
  const Tensor& words = in.rank("words", 2);
  const std::size_t total = words.dims[0], d = words.dims[1];
  const std::vector<std::size_t> lengths = params.index_list("sentence_lengths");
  std::size_t sum = 0;
  for (std::size_t len : lengths) sum += len;
  require(sum == total, "hierarchical_attention: param 'sentence_lengths' adds up to " + std::to_string(sum) +
                            " words, but input 'words' has " + std::to_string(total) + " rows");
  const att::AttentionPoolWeights word = pool_weights(in, d, "word");
  const att::AttentionPoolWeights sentence = pool_weights(in, d, "sent");
  const std::size_t count = lengths.size();
  Tensor word_alpha({total}), sentence_vectors({count, d}), sentence_alpha({count}), document({d});
  att::hierarchical_attention(word, sentence, words.data.data(), lengths.data(), count, word_alpha.data.data(),
                              sentence_vectors.data.data(), sentence_alpha.data.data(), document.data.data());
  return {{"word_alpha", std::move(word_alpha)}, {"sentence_vectors", std::move(sentence_vectors)},
          {"sentence_alpha", std::move(sentence_alpha)}, {"document", std::move(document)}};
}

TensorMap run_pointer_attention(Inputs& in, OptionReader&) {
  const Rows dec = rows_of(in, "decoder");
  const Tensor& enc = in.rank("encoder", 2);
  const std::size_t n = enc.dims[0];
  const att::AdditiveScoreWeights w = additive_weights(in, dec.d, enc.dims[1]);
  std::vector<std::uint8_t> keep;
  const std::uint8_t* key_keep = read_key_keep(in, n, keep);
  Tensor probs(per_query(dec, n));
  std::vector<std::size_t> pointers(dec.n);
  att::pointer_attention(w, ptr(in, "decoder"), dec.n, enc.data.data(), n, probs.data.data(), pointers.data(),
                         key_keep);
  Tensor pointer_tensor(dec.vector ? std::vector<std::size_t>{1} : std::vector<std::size_t>{dec.n});
  for (std::size_t i = 0; i < dec.n; ++i) pointer_tensor.data[i] = static_cast<float>(pointers[i]);
  return {{"probs", std::move(probs)}, {"pointers", std::move(pointer_tensor)}};
}

TensorMap run_coverage_attention(Inputs& in, OptionReader&) {
  const Rows q = rows_of(in, "queries");
  const Tensor& keys = in.rank("keys", 2);
  const std::size_t n_k = keys.dims[0];
  att::CoverageAttentionWeights w;
  w.score = additive_weights(in, q.d, keys.dims[1]);
  w.w_c = in.shape("w_c", {w.score.d_att}, "[d_att]: how coverage enters the score").data.data();
  std::vector<std::uint8_t> keep;
  const std::uint8_t* key_keep = read_key_keep(in, n_k, keep);
  Tensor weights(per_query(q, n_k)), coverage({n_k});
  att::coverage_attention(w, ptr(in, "queries"), q.n, keys.data.data(), n_k, weights.data.data(),
                          coverage.data.data(), key_keep);
  return {{"weights", std::move(weights)}, {"coverage", std::move(coverage)}};
}

TensorMap run_coverage_penalty(Inputs& in, OptionReader& params) {
  const Tensor& weights = in.rank("weights", 2);
  const double beta = params.number("beta", 0.0);
  return {{"penalty", scalar(att::coverage_penalty(weights.data.data(), weights.dims[0], weights.dims[1], beta))}};
}

TensorMap run_position_weighted_memory(Inputs& in, OptionReader& params) {
  const Tensor& e = in.rank("embeddings", 2);
  const std::size_t t = e.dims[0], d = e.dims[1];
  const std::size_t model = params.required_index("model");
  require(model >= 1 && model <= 4, "position_weighted_memory: param 'model' must be 1, 2, 3 or 4 (Tang 2016 §3.3)");
  const std::size_t hop = params.index("hop", 1);
  const float* locations = in.optional("locations", {t}, "[T]: each word's distance to the aspect");
  const float* vectors = in.optional("location_vectors", {t, d}, "[T, d]: learned location vectors");
  require(model > 2 || locations, "position_weighted_memory: Models 1 and 2 need the input 'locations' [T]");
  require(model < 3 || vectors, "position_weighted_memory: Models 3 and 4 need the input 'location_vectors' [T, d]");
  const float* aspect = in.shape("aspect", {d}, "[d]").data.data();
  const float* w_att = in.shape("w_att", {2 * d}, "[2d]: applied to [m_i; v_aspect]").data.data();
  const double b_att = params.number("b_att", 0.0);
  Tensor memory({t, d}), alpha({t}), out({d});
  att::position_weighted_memory(static_cast<att::TangLocationModel>(model), e.data.data(), t, d, locations, hop,
                                vectors, memory.data.data());
  att::tang_content_attention(memory.data.data(), t, d, aspect, w_att, static_cast<float>(b_att), alpha.data.data(),
                              out.data.data());
  return {{"memory", std::move(memory)}, {"alpha", std::move(alpha)}, {"out", std::move(out)}};
}

TensorMap run_visual_soft_attention(Inputs& in, OptionReader& params) {
  const Tensor& features = in.rank("features", 2);
  const std::size_t n = features.dims[0];
  const Tensor& h = in.rank("h", 1);
  att::VisualAttentionWeights w;
  w.att = additive_weights(in, h.dims[0], features.dims[1]);
  w.w_beta = in.optional("w_beta", {h.dims[0]}, "[d_h]: the gate β = σ(w_βᵀ h + b_β)");
  w.b_beta = static_cast<float>(params.number("b_beta", 0.0));
  Tensor alpha({n}), beta({1}), context({features.dims[1]});
  att::visual_soft_attention(w, features.data.data(), n, nullptr, h.data.data(), alpha.data.data(),
                             beta.data.data(), context.data.data());
  return {{"alpha", std::move(alpha)}, {"beta", std::move(beta)}, {"context", std::move(context)}};
}

TensorMap run_doubly_stochastic_penalty(Inputs& in, OptionReader& params) {
  const Tensor& alphas = in.rank("alphas", 2);
  const double lambda = params.number("lambda", 1.0);
  return {{"penalty", scalar(att::doubly_stochastic_penalty(alphas.data.data(), alphas.dims[0], alphas.dims[1],
                                                             lambda))}};
}

// maps [L, n, n], or [L, H, n, n] whose heads are averaged first → the layers' maps in order.
std::vector<float> layer_means(Inputs& in, std::size_t& layers, std::size_t& n) {
  const Tensor& maps = in.get("maps");
  require(maps.rank() == 3 || maps.rank() == 4,
          in.op() + ": input 'maps' must be [L, n, n] or [L, H, n, n], got " + dims_to_string(maps.dims));
  const std::size_t r = maps.rank();
  layers = maps.dims[0];
  n = maps.dims[r - 1];
  require(maps.dims[r - 2] == n, in.op() + ": input 'maps' must hold square maps, got " + dims_to_string(maps.dims));
  const std::size_t heads = r == 4 ? maps.dims[1] : 1;
  require(heads > 0, in.op() + ": input 'maps' has no heads");
  std::vector<float> out(layers * n * n, 0.0f);
  for (std::size_t l = 0; l < layers; ++l) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float* src = maps.data.data() + (l * heads + h) * n * n;
      for (std::size_t x = 0; x < n * n; ++x) out[l * n * n + x] += src[x] / static_cast<float>(heads);
    }
  }
  return out;
}

TensorMap run_attention_rollout(Inputs& in, OptionReader& params) {
  std::size_t layers = 0, n = 0;
  const std::vector<float> maps = layer_means(in, layers, n);
  const double residual = params.number("residual", 0.5);
  Tensor rollout({layers, n, n});
  att::attention_rollout(maps.data(), layers, n, residual, rollout.data.data());
  return {{"rollout", std::move(rollout)}};
}

TensorMap run_attention_flow(Inputs& in, OptionReader& params) {
  std::size_t layers = 0, n = 0;
  const std::vector<float> maps = layer_means(in, layers, n);
  const double residual = params.number("residual", 0.5);
  Tensor flow({n, n});
  att::attention_flow(maps.data(), layers, n, residual, flow.data.data());
  return {{"flow", std::move(flow)}};
}

// The pairwise scores share one runner; each gets its own entry point for the table below.
TensorMap run_score_dot(Inputs& in, OptionReader& p) { return run_pairwise_score("score_dot", in, p); }
TensorMap run_score_scaled_dot(Inputs& in, OptionReader& p) { return run_pairwise_score("score_scaled_dot", in, p); }
TensorMap run_score_cosine(Inputs& in, OptionReader& p) { return run_pairwise_score("score_cosine", in, p); }

// One catalogue entry as constant data (OpInfo's fields; the lists end at the first null). A table of plain
// pointers rather than OpInfo literals: building the 29 OpInfo values inline took 66 KB of WASM
// code (a sixth of the C++ API's).
struct OpRow {
  const char* name;
  const char* family;
  const char* formula;
  const char* paper;
  const char* inputs[12];
  const char* optional_inputs[6];
  const char* outputs[8];
  const char* params;
  OpFn run;
};

constexpr OpRow kOps[] = {
    {"score_dot", "score", "s(q,k) = qᵀk", "Luong et al. 2015", {"q[n_q,d]", "keys[n_k,d]"}, {},
     {"scores[n_q,n_k]"}, "{}", run_score_dot},
    {"score_scaled_dot", "score", "s(q,k) = qᵀk / √d", "Vaswani et al. 2017", {"q[n_q,d]", "keys[n_k,d]"}, {},
     {"scores[n_q,n_k]"}, "{}", run_score_scaled_dot},
    {"score_general", "score", "s(q,k) = qᵀ W k", "Luong et al. 2015",
     {"q[n_q,d_q]", "w[d_q,d_k]", "keys[n_k,d_k]"}, {}, {"scores[n_q,n_k]"}, "{}", run_score_general},
    {"score_additive", "score", "s(q,k) = vᵀ tanh(W q + U k + b)", "Bahdanau et al. 2014",
     {"q[n_q,d_q]", "keys[n_k,d_k]", "w[d_att,d_q]", "u[d_att,d_k]", "v[d_att]"}, {"bias[d_att]"},
     {"scores[n_q,n_k]", "keys_proj[n_k,d_att]"}, "{}", run_score_additive},
    {"score_cosine", "score", "s(q,k) = qᵀk / (max(‖q‖,ε)·max(‖k‖,ε))", "Graves et al. 2014",
     {"q[n_q,d]", "keys[n_k,d]"}, {}, {"scores[n_q,n_k]"}, R"({"eps": 1e-8})", run_score_cosine},
    {"score_location", "score", "a = softmax(W_a q)  (no keys are read)", "Luong et al. 2015",
     {"q[n_q,d_q]", "w_a[n_max,d_q]"}, {}, {"scores[n_q,n_k]", "weights[n_q,n_k]"},
     R"({"n_k": "rows of w_a"})", run_score_location},
    {"align_soft", "alignment", "α_ij = exp(s_ij) / Σ_j' exp(s_ij')  over unmasked keys",
     "Bahdanau et al. 2014; Luong et al. 2015", {"scores[n_q,n_k]"}, {"key_keep[n_k]", "keep[n_q,n_k]"},
     {"weights[n_q,n_k]"}, R"({"causal": false})", run_align_soft},
    {"align_local_m", "alignment", "α = softmax(s) over [t − D, t + D], 0 elsewhere",
     "Luong et al. 2015", {"scores[n_k]"}, {"key_keep[n_k]"}, {"weights[n_k]"},
     R"({"t": "required", "D": "required"})", run_align_local_m},
    {"align_local_p", "alignment",
     "p = S·σ(v_pᵀ tanh(W_p q));  α_s = softmax(s)_s · exp(−(s − p)² / 2σ²), σ = D/2",
     "Luong et al. 2015", {"scores[n_k]"}, {"q[d_q]", "w_p[d_att,d_q]", "v_p[d_att]", "key_keep[n_k]"},
     {"weights[n_k]", "p[1]"}, R"({"D": "required", "p": "only without q, w_p, v_p"})", run_align_local_p},
    {"align_hard_argmax", "alignment", "α = onehot(argmax_i α_i)", "Xu et al. 2015", {"weights[n]"},
     {}, {"one_hot[n]", "index[1]"}, "{}", run_align_hard_argmax},
    {"align_hard_sample", "alignment", "s ~ Multinoulli(α)  (SplitMix64 RNG, inverse CDF)",
     "Xu et al. 2015", {"weights[n]"}, {}, {"samples[draws]"}, R"({"seed": 0, "draws": 1})", run_align_hard_sample},
    {"soft_context", "context", "c_i = Σ_j α_ij v_j", "Bahdanau et al. 2014",
     {"weights[n_q,n_k]", "values[n_k,d_v]"}, {}, {"context[n_q,d_v]"}, "{}", run_soft_context},
    {"key_value_attention", "context", "α_i = softmax_j s(q_i, k_j);  c_i = Σ_j α_ij v_j",
     "Daniluk et al. 2017", {"q[n_q,d_k]", "keys[n_k,d_k]", "values[n_k,d_v]"},
     {"key_keep[n_k]", "keep[n_q,n_k]"}, {"weights[n_q,n_k]", "context[n_q,d_v]"},
     R"({"score": "scaled_dot", "causal": false})", run_key_value_attention},
    {"multi_head_attention", "composite",
     "Concat(head_1..h) Wᴼ,  head_i = softmax(Q W_iᵠ (K W_iᴷ)ᵀ / √d_h) V W_iⱽ", "Vaswani et al. 2017",
     {"query[n_q,E]", "key[n_k,E]", "value[n_k,E]", "in_proj_weight[3E,E]", "out_proj_weight[E,E]"},
     {"in_proj_bias[3E]", "out_proj_bias[E]", "key_keep[n_k]", "keep[n_q,n_k]"},
     {"out[n_q,E]", "weights[H,n_q,n_k]"}, R"({"num_heads": "required", "causal": false})", run_multi_head_attention},
    {"structured_self_attention", "composite",
     "A = softmax(W_s2 tanh(W_s1 Hᵀ)),  M = A H,  P = ‖A Aᵀ − I‖²_F", "Lin et al. 2017",
     {"h[T,d_h]", "w_s1[d_a,d_h]", "w_s2[r,d_a]"}, {"key_keep[T]"}, {"a[r,T]", "m[r,d_h]", "penalty[1]"},
     "{}", run_structured_self_attention},
    {"relation_self_attention", "composite",
     "A_i· = softmax_j σ(tanh(w_gᵀ[x_i;x_j] + b_g)),  r_i = Σ_j A_ij f([x_i;x_j]),  s = mean_i r_i",
     "Kim 2018 (seed 003); Santoro et al. 2017", {"x[T,d]", "w_f1[d_f,2d]", "w_f2[d_f,d_f]", "w_g[2d]"},
     {"b_f1[d_f]", "b_f2[d_f]", "b_g[1]"}, {"a[T,T]", "word[T,d_f]", "sentence[d_f]"}, "{}",
     run_relation_self_attention},
    {"co_attention_parallel", "composite",
     "C = tanh(Qᵀ W_b V);  H_v = tanh(W_v V + (W_q Q) C);  a_v = softmax(w_hvᵀ H_v)  (and for Q)",
     "Lu et al. 2016", {"v[N,d]", "q[T,d]", "w_b[d,d]", "w_v[k,d]", "w_q[k,d]", "w_hv[k]", "w_hq[k]"},
     {}, {"affinity[T,N]", "a_v[N]", "a_q[T]", "v_hat[d]", "q_hat[d]"}, "{}", run_co_attention_parallel},
    {"co_attention_max_pooled", "composite",
     "C = tanh(Qᵀ W_b V);  a_v = softmax(max over T of C);  a_q = softmax(max over N of C)",
     "dos Santos et al. 2016 (attentive pooling)", {"v[N,d]", "q[T,d]", "w_b[d,d]"}, {},
     {"affinity[T,N]", "a_v[N]", "a_q[T]", "v_hat[d]", "q_hat[d]"}, "{}", run_co_attention_max_pooled},
    {"co_attention_alternating", "composite",
     "H = tanh(W_x X + (W_g g) 1ᵀ);  a_x = softmax(w_hxᵀ H);  x̂ = Σ a_x x  (3 steps: Q, V, Q)",
     "Lu et al. 2016",
     {"v[N,d]", "q[T,d]", "w_x1[k,d]", "w_hx1[k]", "w_x2[k,d]", "w_g2[k,d]", "w_hx2[k]", "w_x3[k,d]",
     "w_g3[k,d]", "w_hx3[k]"},
     {"w_g1[k,d]"}, {"a_s[T]", "s_hat[d]", "a_v[N]", "v_hat[d]", "a_q[T]", "q_hat[d]"}, "{}",
     run_co_attention_alternating},
    {"attention_over_attention", "composite",
     "M = D Qᵀ;  α = column-softmax(M);  β = row-softmax(M), averaged over rows;  s = α β",
     "Cui et al. 2017", {"doc[n,d]", "query[m,d]"}, {},
     {"matching[n,m]", "alpha[n,m]", "beta[n,m]", "beta_avg[m]", "s[n]"}, "{}", run_attention_over_attention},
    {"hierarchical_attention", "composite",
     "u_it = tanh(W_w h_it + b_w);  α_it = softmax_t(u_itᵀ u_w);  s_i = Σ_t α_it h_it;  then the same "
     "over sentences with u_s",
     "Yang et al. 2016",
     {"words[ΣT,d]", "w_word[d_att,d]", "u_word[d_att]", "w_sent[d_att,d]", "u_sent[d_att]"},
     {"b_word[d_att]", "b_sent[d_att]"},
     {"word_alpha[ΣT]", "sentence_vectors[L,d]", "sentence_alpha[L]", "document[d]"},
     R"({"sentence_lengths": "required, e.g. [5, 3]"})", run_hierarchical_attention},
    {"pointer_attention", "composite", "p(c_i) = softmax_j(vᵀ tanh(W x_j + U h_i))",
     "Vinyals et al. 2015",
     {"decoder[n_q,d_q]", "encoder[n,d_k]", "w[d_att,d_q]", "u[d_att,d_k]", "v[d_att]"},
     {"bias[d_att]", "key_keep[n]"}, {"probs[n_q,n]", "pointers[n_q]"}, "{}", run_pointer_attention},
    {"coverage_attention", "composite",
     "s_tj = vᵀ tanh(W q_t + U k_j + w_c c_tj + b),  c_t = Σ_{t'<t} α_t'", "Tu et al. 2016",
     {"queries[T,d_q]", "keys[n_k,d_k]", "w[d_att,d_q]", "u[d_att,d_k]", "v[d_att]", "w_c[d_att]"},
     {"bias[d_att]", "key_keep[n_k]"}, {"weights[T,n_k]", "coverage[n_k]"}, "{}", run_coverage_attention},
    {"coverage_penalty", "composite", "cp = β Σ_j log(min(Σ_t α_tj, 1))",
     "Wu et al. 2016 (GNMT); Tu et al. 2016", {"weights[T,S]"}, {}, {"penalty[1]"},
     R"({"beta": 0})", run_coverage_penalty},
    {"position_weighted_memory", "composite",
     "m_i = e_i ⊙ l_i (Models 1, 2), e_i + l_i (3), e_i ⊙ σ(l_i) (4);  α = softmax(tanh(w_attᵀ[m_i; "
     "v_a] + b_att))",
     "Tang et al. 2016", {"embeddings[T,d]", "aspect[d]", "w_att[2d]"},
     {"locations[T]", "location_vectors[T,d]"}, {"memory[T,d]", "alpha[T]", "out[d]"},
     R"({"model": "required, 1-4", "hop": 1, "b_att": 0})", run_position_weighted_memory},
    {"visual_soft_attention", "composite",
     "e_i = vᵀ tanh(W h + U a_i + b);  α = softmax(e);  β = σ(w_βᵀ h + b_β);  z = β Σ α_i a_i",
     "Xu et al. 2015", {"features[N,d_a]", "h[d_h]", "w[d_att,d_h]", "u[d_att,d_a]", "v[d_att]"},
     {"bias[d_att]", "w_beta[d_h]"}, {"alpha[N]", "beta[1]", "context[d_a]"}, R"({"b_beta": 0})",
     run_visual_soft_attention},
    {"doubly_stochastic_penalty", "composite", "λ Σ_i (1 − Σ_t α_ti)²", "Xu et al. 2015",
     {"alphas[T,N]"}, {}, {"penalty[1]"}, R"({"lambda": 1})", run_doubly_stochastic_penalty},
    {"attention_rollout", "analysis",
     "Ã_l = r I + (1 − r) A_l (A_l: the mean of layer l's heads);  R_1 = Ã_1,  R_l = Ã_l R_{l−1}",
     "Abnar & Zuidema 2020", {"maps[L,n,n] or [L,H,n,n]"}, {}, {"rollout[L,n,n]"},
     R"({"residual": 0.5})", run_attention_rollout},
    {"attention_flow", "analysis",
     "F[i,j] = max flow from input j to output i through layers of capacities Ã_l = r I + (1 − r) A_l",
     "Abnar & Zuidema 2020", {"maps[L,n,n] or [L,H,n,n]"}, {}, {"flow[n,n]"},
     R"({"residual": 0.5})", run_attention_flow},
};

std::vector<std::string> names_of(const char* const* list, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n && list[i] != nullptr; ++i) out.emplace_back(list[i]);
  return out;
}

const std::vector<OpEntry>& registry() {
  static const std::vector<OpEntry> ops = [] {
    std::vector<OpEntry> r;
    for (const OpRow& row : kOps) {
      OpInfo info{row.name,
                  row.family,
                  row.formula,
                  row.paper,
                  names_of(row.inputs, std::size(row.inputs)),
                  names_of(row.optional_inputs, std::size(row.optional_inputs)),
                  names_of(row.outputs, std::size(row.outputs)),
                  row.params};
      r.push_back(OpEntry{std::move(info), row.run});
    }
    return r;
  }();
  return ops;
}

}  // namespace

// ---- MultiHeadKvCache ----

MultiHeadKvCacheParams multi_head_kv_cache_params(const std::string& params_json) {
  OptionReader p("MultiHeadKvCache", params_json);
  MultiHeadKvCacheParams out;
  out.num_heads = p.index("num_heads", out.num_heads);
  out.capacity = p.index("capacity", out.capacity);
  p.finish();
  return out;
}

struct MultiHeadKvCache::Impl {
  TensorMap weights;  // owned copies: attention::MultiHeadKvCache only references its weights
  att::MultiHeadWeights w;
  std::unique_ptr<att::MultiHeadKvCache> cache;
};

MultiHeadKvCache::MultiHeadKvCache(const TensorMap& weights, const MultiHeadKvCacheParams& params)
    : impl_(std::make_unique<Impl>()) {
  impl_->weights = weights;
  const std::string op = "MultiHeadKvCache";
  Inputs in(op, impl_->weights);
  // E is read off out_proj_weight [E, E]; read_multi_head_weights checks every other shape against it.
  const Tensor& out_proj = in.rank("out_proj_weight", 2);
  require(params.capacity >= 1, op + ": capacity must be at least 1");
  // The cache is allocated up front: a huge capacity must be an Error here, not an allocation failure (an abort
  // natively, an out-of-memory trap in WASM) — found by tests/fuzz/fuzz_options.
  require(params.capacity <= kMaxKvCacheCapacity, op + ": capacity must be at most " +
                                                      std::to_string(kMaxKvCacheCapacity) + " positions, got " +
                                                      std::to_string(params.capacity));
  read_multi_head_weights(in, out_proj.dims[1], params.num_heads, impl_->w);
  require(params.capacity <= kMaxKvCacheFloats / impl_->w.embed_dim,  // no overflow on wasm32
          op + ": capacity " + std::to_string(params.capacity) + " × embed_dim " +
              std::to_string(impl_->w.embed_dim) + " is more than " + std::to_string(kMaxKvCacheFloats) +
              " cached floats per keys/values buffer; use a smaller capacity");
  in.finish();
  impl_->cache = std::make_unique<att::MultiHeadKvCache>(impl_->w, params.capacity);
}

MultiHeadKvCache::~MultiHeadKvCache() = default;

namespace {
// [n, E] or [E] → number of rows, checking E.
std::size_t rows_with_width(const std::string& what, const Tensor& t, std::size_t e) {
  t.validate("MultiHeadKvCache: " + what);
  require((t.rank() == 1 && t.dims[0] == e) || (t.rank() == 2 && t.dims[1] == e),
          "MultiHeadKvCache: " + what + " must be [n, " + std::to_string(e) + "] or [" + std::to_string(e) +
              "], got " + dims_to_string(t.dims));
  return t.rank() == 1 ? 1 : t.dims[0];
}
}  // namespace

void MultiHeadKvCache::append(const Tensor& key, const Tensor& value) {
  const std::size_t e = impl_->w.embed_dim;
  const std::size_t n = rows_with_width("key", key, e);
  require(rows_with_width("value", value, e) == n, "MultiHeadKvCache: key and value must have the same rows, got " +
                                                      dims_to_string(key.dims) + " and " + dims_to_string(value.dims));
  require(length() + n <= capacity(), "MultiHeadKvCache: appending " + std::to_string(n) + " positions to " +
                                          std::to_string(length()) + " exceeds the capacity " +
                                          std::to_string(capacity()) + "; create the cache with a larger capacity");
  impl_->cache->append(key.data.data(), value.data.data(), n);
}

TensorMap MultiHeadKvCache::attend(const Tensor& query, bool causal) {
  const std::size_t e = impl_->w.embed_dim;
  const std::size_t n_q = rows_with_width("query", query, e);
  require(length() >= 1, "MultiHeadKvCache: attend() before any append(): the cache is empty");
  require(!causal || n_q <= length(), "MultiHeadKvCache: " + std::to_string(n_q) +
                                          " causal queries need at least as many cached positions, have " +
                                          std::to_string(length()));
  Tensor out(query.rank() == 1 ? std::vector<std::size_t>{e} : std::vector<std::size_t>{n_q, e});
  Tensor weights({impl_->w.num_heads, n_q, length()});
  impl_->cache->attend(query.data.data(), n_q, out.data.data(), weights.data.data(), causal);
  return {{"out", std::move(out)}, {"weights", std::move(weights)}};
}

std::size_t MultiHeadKvCache::length() const { return impl_->cache->length(); }
std::size_t MultiHeadKvCache::capacity() const { return impl_->cache->capacity(); }
std::size_t MultiHeadKvCache::embed_dim() const { return impl_->w.embed_dim; }
std::size_t MultiHeadKvCache::num_heads() const { return impl_->w.num_heads; }
void MultiHeadKvCache::clear() { impl_->cache->clear(); }

}  // namespace attnlens::api
