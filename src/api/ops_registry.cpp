// The attention catalogue's registry and its uniform entry (ops.h): one row per op — its description for
// list_ops() and its adapter (ops_adapters.cpp) — and run_op(), which checks every input name and param key.
#include <algorithm>
#include <iterator>
#include <utility>

#include "api/ops.h"
#include "api/ops_adapters.h"

namespace attnlens::api {

namespace {

using namespace ops_detail;

struct OpEntry {
  OpInfo info;
  OpFn run;
};

// One catalogue entry as constant data (OpInfo's fields; the lists end at the first null). A table of plain
// pointers rather than OpInfo literals: building the 29 OpInfo values inline took 66 KB of WASM
// code (a sixth of the C++ API's).
struct OpRow {
  const char* name;
  const char* family;
  const char* formula;
  const char* paper;
  const char* inputs[12];
  const char* optional_inputs[8];
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
     "A_i· = softmax_j σ(g_ij), g_ij = tanh(w_gᵀ[x_i;x_j] + b_g) or w_a2ᵀ tanh(W_a1[x_i;x_j] + b_a1) + b_a2,  "
     "r_i = Σ_j A_ij f([x_i;x_j]),  s = mean_i r_i",
     "Kim 2018 (seed 003); Santoro et al. 2017", {"x[T,d]", "w_f1[d_f,2d]", "w_f2[d_f,d_f]"},
     {"b_f1[d_f]", "b_f2[d_f]", "w_g[2d]", "b_g[1]", "w_a1[d_a,2d]", "b_a1[d_a]", "w_a2[d_a]", "b_a2[1]"},
     {"a[T,T]", "word[T,d_f]", "sentence[d_f]"}, "{}",
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

}  // namespace attnlens::api
