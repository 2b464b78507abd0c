// The catalogue's adapters: each turns an op call's named tensors and JSON params into calls of src/attention.
// Names and shapes follow tests/goldens/make_attention_goldens.py (its table is the reference); scalars travel as
// tensors of dims [1], indices as floats.
#include "api/ops_adapters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

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

namespace attnlens::api::ops_detail {

namespace att = attnlens::attention;
constexpr std::size_t kAny = Inputs::kAny;

namespace {

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

}  // namespace

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
  if (in.has("w_a1")) {  // the MLP pair score
    require(!in.has("w_g") && !in.has("b_g"),
            "relation_self_attention: give the single-layer score (w_g, b_g) or the MLP score (w_a1, w_a2), not both");
    const Tensor& w_a1 = in.shape("w_a1", {kAny, 2 * w.d}, "[d_a, 2d]: the score MLP's first layer on [x_i; x_j]");
    w.d_a = w_a1.dims[0];
    w.w_a1 = w_a1.data.data();
    w.b_a1 = in.optional("b_a1", {w.d_a}, "[d_a]");
    w.w_a2 = in.shape("w_a2", {w.d_a}, "[d_a]").data.data();
    const float* b_a2 = in.optional("b_a2", {1}, "[1]");
    w.b_a2 = b_a2 ? *b_a2 : 0.0f;
  } else {
    w.w_g = in.shape("w_g", {2 * w.d}, "[2d]").data.data();
    const float* b_g = in.optional("b_g", {1}, "[1]");
    w.b_g = b_g ? *b_g : 0.0f;
  }
  Tensor a({t, t});
  Tensor word({t, w.d_f});
  Tensor sentence({w.d_f});
  att::relation_self_attention(w, x.data.data(), t, a.data.data(), word.data.data(), sentence.data.data());
  return {{"a", std::move(a)}, {"word", std::move(word)}, {"sentence", std::move(sentence)}};
}

namespace {

// Lu 2016's parallel co-attention, learned (w_b, w_v, w_q, w_hv, w_hq) or max-pooled (w_b only): the same outputs.
TensorMap run_parallel_co_attention(Inputs& in, bool max_pooled) {
  const Tensor& v = in.rank("v", 2);
  const std::size_t n = v.dims[0];
  att::ParallelCoAttentionWeights w;
  w.d = v.dims[1];
  const std::size_t t = in.shape("q", {kAny, w.d}, "[T, d]: question words of the size of the image regions").dims[0];
  if (!max_pooled) {
    const Tensor& w_v = in.shape("w_v", {kAny, w.d}, "[k, d]");
    w.k = w_v.dims[0];
    w.w_v = w_v.data.data();
  }
  w.w_b = in.shape("w_b", {w.d, w.d}, "[d, d]").data.data();
  if (!max_pooled) {
    w.w_q = in.shape("w_q", {w.k, w.d}, "[k, d]").data.data();
    w.w_hv = in.shape("w_hv", {w.k}, "[k]").data.data();
    w.w_hq = in.shape("w_hq", {w.k}, "[k]").data.data();
  }
  Tensor affinity({t, n}), a_v({n}), a_q({t}), v_hat({w.d}), q_hat({w.d});
  const auto op = max_pooled ? att::max_pooled_co_attention : att::parallel_co_attention;
  op(w, v.data.data(), n, ptr(in, "q"), t, affinity.data.data(), a_v.data.data(), a_q.data.data(),
     v_hat.data.data(), q_hat.data.data());
  return {{"affinity", std::move(affinity)}, {"a_v", std::move(a_v)}, {"a_q", std::move(a_q)},
          {"v_hat", std::move(v_hat)}, {"q_hat", std::move(q_hat)}};
}

}  // namespace

TensorMap run_co_attention_parallel(Inputs& in, OptionReader&) { return run_parallel_co_attention(in, false); }
TensorMap run_co_attention_max_pooled(Inputs& in, OptionReader&) { return run_parallel_co_attention(in, true); }

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

// The pairwise scores share one runner; each gets its own entry point for the registry.
TensorMap run_score_dot(Inputs& in, OptionReader& p) { return run_pairwise_score("score_dot", in, p); }
TensorMap run_score_scaled_dot(Inputs& in, OptionReader& p) { return run_pairwise_score("score_scaled_dot", in, p); }
TensorMap run_score_cosine(Inputs& in, OptionReader& p) { return run_pairwise_score("score_cosine", in, p); }

}  // namespace attnlens::api::ops_detail
