// Golden tests of the attention catalogue against PyTorch: every case of every
// tests/goldens/attention/<op>.json (written by tests/goldens/make_attention_goldens.py, which documents the
// names) is run through the engine op and each output compared with abs ≤ 1e-4 or rel ≤ 1e-3.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "attention/attention.h"
#include "common.h"
#include "golden.h"

namespace at = attnlens::attention;
using attnlens::testing::GoldenCase;
using attnlens::testing::GoldenFile;
using attnlens::testing::load_golden;

namespace {

GoldenFile load_op(const std::string& op) {
  GoldenFile f = load_golden("attention/" + op + ".json");
  REQUIRE(f.op == op);
  return f;
}

const float* data(const GoldenCase& gc, const std::string& key) { return gc.input(key).data.data(); }

std::vector<float> as_vector(const std::vector<std::size_t>& v) {
  return std::vector<float>(v.begin(), v.end());
}

at::AdditiveScoreWeights additive_from(const GoldenCase& gc, const std::string& query_weight = "w",
                                       const std::string& key_weight = "u") {
  at::AdditiveScoreWeights w;
  w.d_att = gc.input(query_weight).dim(0);
  w.d_q = gc.input(query_weight).dim(1);
  w.d_k = gc.input(key_weight).dim(1);
  w.w = data(gc, query_weight);
  w.u = data(gc, key_weight);
  w.bias = gc.optional("bias");
  w.v = data(gc, "v");
  return w;
}

// Checks every named output of a case against its golden.
void check_outputs(const GoldenCase& gc,
                   std::initializer_list<std::pair<const char*, const std::vector<float>*>> outputs) {
  for (const auto& [key, got] : outputs) CHECK_GOLDEN(gc, key, *got);
}

// For the 1-D score ops that take [n_q × d] and [n_k × d].
template <typename Fn>
void run_pairwise_score(const std::string& op, Fn fn) {
  for (const auto& gc : load_op(op).cases) {
    const auto& q = gc.input("q");
    const auto& k = gc.input("keys");
    std::vector<float> scores(q.dim(0) * k.dim(0), -7.0f);
    fn(gc, q.dim(0), k.dim(0), scores);
    CHECK_GOLDEN(gc, "scores", scores);
  }
}

}  // namespace

TEST_CASE("golden: score_dot and score_scaled_dot") {
  run_pairwise_score("score_dot",
                     [](const GoldenCase& gc, std::size_t nq, std::size_t nk, std::vector<float>& s) {
                       at::score_dot(data(gc, "q"), nq, data(gc, "keys"), nk, gc.input("q").dim(1), s.data());
                     });
  run_pairwise_score(
      "score_scaled_dot", [](const GoldenCase& gc, std::size_t nq, std::size_t nk, std::vector<float>& s) {
        at::score_scaled_dot(data(gc, "q"), nq, data(gc, "keys"), nk, gc.input("q").dim(1), s.data());
      });
}

TEST_CASE("golden: score_general") {
  run_pairwise_score("score_general",
                     [](const GoldenCase& gc, std::size_t nq, std::size_t nk, std::vector<float>& s) {
                       at::score_general(data(gc, "q"), nq, gc.input("q").dim(1), data(gc, "w"),
                                         data(gc, "keys"), nk, gc.input("keys").dim(1), s.data());
                     });
}

TEST_CASE("golden: score_additive (with projected keys)") {
  for (const auto& gc : load_op("score_additive").cases) {
    const auto w = additive_from(gc);
    const std::size_t nq = gc.input("q").dim(0), nk = gc.input("keys").dim(0);
    std::vector<float> keys_proj(nk * w.d_att), scores(nq * nk), scores_direct(nq * nk);
    at::additive_project_keys(w, data(gc, "keys"), nk, keys_proj.data());
    at::score_additive_projected(w, data(gc, "q"), nq, keys_proj.data(), nk, scores.data());
    at::score_additive(w, data(gc, "q"), nq, data(gc, "keys"), nk, scores_direct.data());
    CHECK_GOLDEN(gc, "keys_proj", keys_proj);
    CHECK_GOLDEN(gc, "scores", scores);
    CHECK_GOLDEN(gc, "scores", scores_direct);
  }
}

TEST_CASE("golden: score_cosine") {
  run_pairwise_score("score_cosine",
                     [](const GoldenCase& gc, std::size_t nq, std::size_t nk, std::vector<float>& s) {
                       at::score_cosine(data(gc, "q"), nq, data(gc, "keys"), nk, gc.input("q").dim(1),
                                        s.data(), gc.params.at("eps").get<float>());
                     });
}

TEST_CASE("golden: score_location") {
  for (const auto& gc : load_op("score_location").cases) {
    const std::size_t nq = gc.input("q").dim(0), dq = gc.input("q").dim(1), nk = gc.input("w_a").dim(0);
    std::vector<float> scores(nq * nk);
    at::score_location(data(gc, "q"), nq, dq, data(gc, "w_a"), nk, scores.data());
    CHECK_GOLDEN(gc, "scores", scores);
    at::align_soft(scores.data(), nq, nk);
    CHECK_GOLDEN(gc, "weights", scores);
  }
}

TEST_CASE("golden: align_soft with padding, causal and full masks") {
  for (const auto& gc : load_op("align_soft").cases) {
    const auto& s = gc.input("scores");
    std::vector<float> weights = s.data;
    std::vector<std::uint8_t> key_keep, keep;
    at::AlignMask mask;
    mask.causal = gc.params.at("causal").get<bool>();
    if (gc.has_input("key_keep")) {
      key_keep = gc.input("key_keep").as_mask();
      mask.key_keep = key_keep.data();
    }
    if (gc.has_input("keep")) {
      keep = gc.input("keep").as_mask();
      mask.keep = keep.data();
    }
    at::align_soft(weights.data(), s.dim(0), s.dim(1), mask);
    CHECK_GOLDEN(gc, "weights", weights);
  }
}

TEST_CASE("golden: align_local_m") {
  for (const auto& gc : load_op("align_local_m").cases) {
    std::vector<float> weights = gc.input("scores").data;
    std::vector<std::uint8_t> key_keep;
    if (gc.has_input("key_keep")) key_keep = gc.input("key_keep").as_mask();
    at::align_local_m(weights.data(), weights.size(), gc.params.at("t").get<std::size_t>(),
                      gc.params.at("D").get<std::size_t>(), key_keep.empty() ? nullptr : key_keep.data());
    CHECK_GOLDEN(gc, "weights", weights);
  }
}

TEST_CASE("golden: align_local_p") {
  for (const auto& gc : load_op("align_local_p").cases) {
    at::LocalPWeights w;
    w.d_att = gc.input("w_p").dim(0);
    w.d_q = gc.input("w_p").dim(1);
    w.w_p = data(gc, "w_p");
    w.v_p = data(gc, "v_p");
    std::vector<float> weights = gc.input("scores").data;
    const float p = at::local_p_position(w, data(gc, "q"), weights.size());
    CHECK_GOLDEN(gc, "p", &p, 1);
    at::align_local_p(weights.data(), weights.size(), p, gc.params.at("D").get<std::size_t>());
    CHECK_GOLDEN(gc, "weights", weights);
  }
}

TEST_CASE("golden: align_hard_argmax and align_hard_sample") {
  for (const auto& gc : load_op("align_hard_argmax").cases) {
    const auto& w = gc.input("weights");
    std::vector<float> one_hot(w.data.size());
    const float index =
        static_cast<float>(at::align_hard_argmax(w.data.data(), w.data.size(), one_hot.data()));
    CHECK_GOLDEN(gc, "index", &index, 1);
    CHECK_GOLDEN(gc, "one_hot", one_hot);
  }
  for (const auto& gc : load_op("align_hard_sample").cases) {
    const auto& w = gc.input("weights");
    at::SplitMix64 rng(gc.params.at("seed").get<std::uint64_t>());
    std::vector<float> samples;
    for (std::size_t i = 0; i < gc.params.at("draws").get<std::size_t>(); ++i) {
      samples.push_back(static_cast<float>(at::align_hard_sample(w.data.data(), w.data.size(), rng)));
    }
    CHECK_GOLDEN(gc, "samples", samples);
  }
}

TEST_CASE("golden: key_value_attention") {
  for (const auto& gc : load_op("key_value_attention").cases) {
    const std::size_t nq = gc.input("q").dim(0), dk = gc.input("q").dim(1);
    const std::size_t nk = gc.input("keys").dim(0), dv = gc.input("values").dim(1);
    std::vector<float> weights(nq * nk), context(nq * dv);
    std::vector<std::uint8_t> key_keep;
    at::AlignMask mask;
    mask.causal = gc.params.at("causal").get<bool>();
    if (gc.has_input("key_keep")) {
      key_keep = gc.input("key_keep").as_mask();
      mask.key_keep = key_keep.data();
    }
    const auto score = gc.params.at("score").get<std::string>() == "dot" ? at::KeyValueScore::kDot
                                                                         : at::KeyValueScore::kScaledDot;
    at::key_value_attention(data(gc, "q"), nq, data(gc, "keys"), data(gc, "values"), nk, dk, dv,
                            weights.data(), context.data(), score, mask);
    CHECK_GOLDEN(gc, "weights", weights);
    CHECK_GOLDEN(gc, "context", context);
  }
}

TEST_CASE("golden: multi_head_attention matches torch.nn.MultiheadAttention, and so does the KV cache") {
  for (const auto& gc : load_op("multi_head_attention").cases) {
    at::MultiHeadWeights w;
    w.embed_dim = gc.input("query").dim(1);
    w.num_heads = gc.params.at("num_heads").get<std::size_t>();
    w.in_proj_weight = data(gc, "in_proj_weight");
    w.in_proj_bias = gc.optional("in_proj_bias");
    w.out_proj_weight = data(gc, "out_proj_weight");
    w.out_proj_bias = gc.optional("out_proj_bias");
    const std::size_t nq = gc.input("query").dim(0), nk = gc.input("key").dim(0), e = w.embed_dim;
    std::vector<float> out(nq * e), weights(w.num_heads * nq * nk);
    std::vector<std::uint8_t> key_keep, keep;
    at::AlignMask mask;
    mask.causal = gc.params.at("causal").get<bool>();
    if (gc.has_input("key_keep")) {
      key_keep = gc.input("key_keep").as_mask();
      mask.key_keep = key_keep.data();
    }
    if (gc.has_input("keep")) {
      keep = gc.input("keep").as_mask();
      mask.keep = keep.data();
    }
    at::multi_head_attention(w, data(gc, "query"), nq, data(gc, "key"), data(gc, "value"), nk, out.data(),
                             weights.data(), mask);
    CHECK_GOLDEN(gc, "out", out);
    CHECK_GOLDEN(gc, "weights", weights);

    if (mask.causal && !gc.has_input("key_keep") && !gc.has_input("keep")) {
      // Incremental decoding: append one position, attend with its query; row t of every head must equal the
      // golden full-sequence causal row t (keys beyond t are zero there).
      at::MultiHeadKvCache cache(w, nk);
      std::vector<float> step_out(nq * e), step_weights(w.num_heads * nq * nk, 0.0f);
      for (std::size_t t = 0; t < nq; ++t) {
        cache.append(data(gc, "key") + t * e, data(gc, "value") + t * e, 1);
        std::vector<float> head_row(w.num_heads * (t + 1));
        cache.attend(data(gc, "query") + t * e, 1, step_out.data() + t * e, head_row.data());
        for (std::size_t h = 0; h < w.num_heads; ++h) {
          for (std::size_t j = 0; j <= t; ++j)
            step_weights[(h * nq + t) * nk + j] = head_row[h * (t + 1) + j];
        }
      }
      CHECK_GOLDEN(gc, "out", step_out);
      CHECK_GOLDEN(gc, "weights", step_weights);
    }
  }
}

TEST_CASE("golden: structured_self_attention and its penalty") {
  for (const auto& gc : load_op("structured_self_attention").cases) {
    at::StructuredSelfAttentionWeights w;
    w.d_a = gc.input("w_s1").dim(0);
    w.d_h = gc.input("w_s1").dim(1);
    w.r = gc.input("w_s2").dim(0);
    w.w_s1 = data(gc, "w_s1");
    w.w_s2 = data(gc, "w_s2");
    const std::size_t t = gc.input("h").dim(0);
    std::vector<float> a(w.r * t), m(w.r * w.d_h);
    std::vector<std::uint8_t> key_keep;
    if (gc.has_input("key_keep")) key_keep = gc.input("key_keep").as_mask();
    at::structured_self_attention(w, data(gc, "h"), t, a.data(), m.data(),
                                  key_keep.empty() ? nullptr : key_keep.data());
    CHECK_GOLDEN(gc, "a", a);
    CHECK_GOLDEN(gc, "m", m);
    const float penalty = at::structured_penalty(a.data(), w.r, t);
    CHECK_GOLDEN(gc, "penalty", &penalty, 1);
  }
}

TEST_CASE("golden: relation_self_attention") {
  for (const auto& gc : load_op("relation_self_attention").cases) {
    at::RelationAttentionWeights w;
    w.d = gc.input("x").dim(1);
    w.d_f = gc.input("w_f1").dim(0);
    w.w_f1 = data(gc, "w_f1");
    w.b_f1 = data(gc, "b_f1");
    w.w_f2 = data(gc, "w_f2");
    w.b_f2 = data(gc, "b_f2");
    if (gc.optional("w_a1") != nullptr) {  // the MLP pair score (cases mlp_*)
      w.d_a = gc.input("w_a1").dim(0);
      w.w_a1 = data(gc, "w_a1");
      w.b_a1 = data(gc, "b_a1");
      w.w_a2 = data(gc, "w_a2");
      w.b_a2 = gc.input("b_a2").data.at(0);
    } else {
      w.w_g = data(gc, "w_g");
      w.b_g = gc.input("b_g").data.at(0);
    }
    const std::size_t t = gc.input("x").dim(0);
    std::vector<float> a(t * t), word(t * w.d_f), sentence(w.d_f);
    at::relation_self_attention(w, data(gc, "x"), t, a.data(), word.data(), sentence.data());
    CHECK_GOLDEN(gc, "a", a);
    CHECK_GOLDEN(gc, "word", word);
    CHECK_GOLDEN(gc, "sentence", sentence);
  }
}

TEST_CASE("golden: co_attention_parallel, co_attention_max_pooled and co_attention_alternating") {
  // The learned and the max-pooled parallel co-attention: the same outputs; max-pooled reads only w_b.
  for (const bool max_pooled : {false, true}) {
    for (const auto& gc : load_op(max_pooled ? "co_attention_max_pooled" : "co_attention_parallel").cases) {
      at::ParallelCoAttentionWeights w;
      w.d = gc.input("v").dim(1);
      w.w_b = data(gc, "w_b");
      if (!max_pooled) {
        w.k = gc.input("w_v").dim(0);
        w.w_v = data(gc, "w_v");
        w.w_q = data(gc, "w_q");
        w.w_hv = data(gc, "w_hv");
        w.w_hq = data(gc, "w_hq");
      }
      const std::size_t n = gc.input("v").dim(0), t = gc.input("q").dim(0);
      std::vector<float> affinity(t * n), a_v(n), a_q(t), v_hat(w.d), q_hat(w.d);
      const auto op = max_pooled ? at::max_pooled_co_attention : at::parallel_co_attention;
      op(w, data(gc, "v"), n, data(gc, "q"), t, affinity.data(), a_v.data(), a_q.data(), v_hat.data(),
         q_hat.data());
      check_outputs(gc, {{"affinity", &affinity}, {"a_v", &a_v}, {"a_q", &a_q}, {"v_hat", &v_hat},
                          {"q_hat", &q_hat}});
    }
  }
  for (const auto& gc : load_op("co_attention_alternating").cases) {
    at::AlternatingCoAttentionWeights w;
    w.d = gc.input("v").dim(1);
    w.k = gc.input("w_x1").dim(0);
    for (int s = 0; s < 3; ++s) {
      const std::string i = std::to_string(s + 1);
      w.step[s].w_x = data(gc, "w_x" + i);
      w.step[s].w_g = gc.optional("w_g" + i);
      w.step[s].w_hx = data(gc, "w_hx" + i);
    }
    const std::size_t n = gc.input("v").dim(0), t = gc.input("q").dim(0);
    std::vector<float> a_s(t), s_hat(w.d), a_v(n), v_hat(w.d), a_q(t), q_hat(w.d);
    at::alternating_co_attention(w, data(gc, "v"), n, data(gc, "q"), t, a_s.data(), s_hat.data(), a_v.data(),
                                 v_hat.data(), a_q.data(), q_hat.data());
    check_outputs(gc, {{"a_s", &a_s}, {"s_hat", &s_hat}, {"a_v", &a_v}, {"v_hat", &v_hat}, {"a_q", &a_q},
                        {"q_hat", &q_hat}});
  }
}

TEST_CASE("golden: attention_over_attention") {
  for (const auto& gc : load_op("attention_over_attention").cases) {
    const std::size_t n = gc.input("doc").dim(0), m = gc.input("query").dim(0), d = gc.input("doc").dim(1);
    std::vector<float> matching(n * m), alpha(n * m), beta(n * m), beta_avg(m), s(n);
    at::attention_over_attention(data(gc, "doc"), n, data(gc, "query"), m, d, alpha.data(), beta.data(),
                                 beta_avg.data(), s.data(), matching.data());
    check_outputs(gc, {{"matching", &matching}, {"alpha", &alpha}, {"beta", &beta}, {"beta_avg", &beta_avg},
                        {"s", &s}});
  }
}

TEST_CASE("golden: hierarchical_attention") {
  for (const auto& gc : load_op("hierarchical_attention").cases) {
    at::AttentionPoolWeights word, sentence;
    word.d_att = gc.input("w_word").dim(0);
    word.d = gc.input("w_word").dim(1);
    word.w = data(gc, "w_word");
    word.bias = data(gc, "b_word");
    word.context = data(gc, "u_word");
    sentence.d_att = gc.input("w_sent").dim(0);
    sentence.d = gc.input("w_sent").dim(1);
    sentence.w = data(gc, "w_sent");
    sentence.bias = data(gc, "b_sent");
    sentence.context = data(gc, "u_sent");
    const auto lengths = gc.params.at("sentence_lengths").get<std::vector<std::size_t>>();
    const std::size_t total = gc.input("words").dim(0), L = lengths.size(), d = word.d;
    std::vector<float> word_alpha(total), sentence_vectors(L * d), sentence_alpha(L), document(d);
    at::hierarchical_attention(word, sentence, data(gc, "words"), lengths.data(), L, word_alpha.data(),
                               sentence_vectors.data(), sentence_alpha.data(), document.data());
    CHECK_GOLDEN(gc, "word_alpha", word_alpha);
    CHECK_GOLDEN(gc, "sentence_vectors", sentence_vectors);
    CHECK_GOLDEN(gc, "sentence_alpha", sentence_alpha);
    CHECK_GOLDEN(gc, "document", document);
  }
}

TEST_CASE("golden: pointer_attention") {
  for (const auto& gc : load_op("pointer_attention").cases) {
    const auto w = additive_from(gc);
    const std::size_t nq = gc.input("decoder").dim(0), n = gc.input("encoder").dim(0);
    std::vector<float> probs(nq * n);
    std::vector<std::size_t> pointers(nq);
    std::vector<std::uint8_t> key_keep;
    if (gc.has_input("key_keep")) key_keep = gc.input("key_keep").as_mask();
    at::pointer_attention(w, data(gc, "decoder"), nq, data(gc, "encoder"), n, probs.data(), pointers.data(),
                          key_keep.empty() ? nullptr : key_keep.data());
    CHECK_GOLDEN(gc, "probs", probs);
    CHECK_GOLDEN(gc, "pointers", as_vector(pointers));
  }
}

TEST_CASE("golden: coverage_attention and coverage_penalty") {
  for (const auto& gc : load_op("coverage_attention").cases) {
    at::CoverageAttentionWeights w;
    w.score = additive_from(gc);
    w.w_c = data(gc, "w_c");
    const std::size_t t = gc.input("queries").dim(0), nk = gc.input("keys").dim(0);
    std::vector<float> weights(t * nk), coverage(nk);
    at::coverage_attention(w, data(gc, "queries"), t, data(gc, "keys"), nk, weights.data(), coverage.data());
    CHECK_GOLDEN(gc, "weights", weights);
    CHECK_GOLDEN(gc, "coverage", coverage);
  }
  for (const auto& gc : load_op("coverage_penalty").cases) {
    const auto& w = gc.input("weights");
    const float penalty = static_cast<float>(
        at::coverage_penalty(w.data.data(), w.dim(0), w.dim(1), gc.params.at("beta").get<double>()));
    CHECK_GOLDEN(gc, "penalty", &penalty, 1);
  }
}

TEST_CASE("golden: position_weighted_memory (Tang 2016 Models 1-4) with content attention") {
  for (const auto& gc : load_op("position_weighted_memory").cases) {
    const auto model = static_cast<at::TangLocationModel>(gc.params.at("model").get<int>());
    const std::size_t t = gc.input("embeddings").dim(0), d = gc.input("embeddings").dim(1);
    std::vector<float> memory(t * d), alpha(t), out(d);
    at::position_weighted_memory(model, data(gc, "embeddings"), t, d, gc.optional("locations"),
                                 gc.params.at("hop").get<std::size_t>(), gc.optional("location_vectors"),
                                 memory.data());
    CHECK_GOLDEN(gc, "memory", memory);
    at::tang_content_attention(memory.data(), t, d, data(gc, "aspect"), data(gc, "w_att"),
                               gc.params.at("b_att").get<float>(), alpha.data(), out.data());
    CHECK_GOLDEN(gc, "alpha", alpha);
    CHECK_GOLDEN(gc, "out", out);
  }
}

TEST_CASE("golden: visual_soft_attention and doubly_stochastic_penalty") {
  for (const auto& gc : load_op("visual_soft_attention").cases) {
    at::VisualAttentionWeights w;
    w.att = additive_from(gc);
    w.w_beta = data(gc, "w_beta");
    w.b_beta = gc.params.at("b_beta").get<float>();
    const std::size_t n = gc.input("features").dim(0);
    std::vector<float> alpha(n), context(w.att.d_k), projected(n * w.att.d_att);
    float beta = -1.0f;
    at::visual_soft_attention(w, data(gc, "features"), n, nullptr, data(gc, "h"), alpha.data(), &beta,
                              context.data());
    CHECK_GOLDEN(gc, "alpha", alpha);
    CHECK_GOLDEN(gc, "beta", &beta, 1);
    CHECK_GOLDEN(gc, "context", context);
    // Same result from features projected once per image.
    at::additive_project_keys(w.att, data(gc, "features"), n, projected.data());
    std::fill(alpha.begin(), alpha.end(), 0.0f);
    at::visual_soft_attention(w, data(gc, "features"), n, projected.data(), data(gc, "h"), alpha.data(),
                              &beta, context.data());
    CHECK_GOLDEN(gc, "alpha", alpha);
    CHECK_GOLDEN(gc, "context", context);
  }
  for (const auto& gc : load_op("doubly_stochastic_penalty").cases) {
    const auto& a = gc.input("alphas");
    const float penalty = static_cast<float>(at::doubly_stochastic_penalty(
        a.data.data(), a.dim(0), a.dim(1), gc.params.at("lambda").get<double>()));
    CHECK_GOLDEN(gc, "penalty", &penalty, 1);
  }
}

namespace {

// [L, n, n] maps, or [L, H, n, n] averaged over heads (what the API does before calling the op).
std::vector<float> golden_layer_maps(const GoldenCase& gc, std::size_t& layers, std::size_t& n) {
  const auto& maps = gc.input("maps");
  const std::size_t r = maps.dims.size();
  layers = maps.dim(0);
  n = maps.dim(r - 1);
  const std::size_t heads = r == 4 ? maps.dim(1) : 1;
  std::vector<float> out(layers * n * n, 0.0f);
  for (std::size_t l = 0; l < layers; ++l)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t x = 0; x < n * n; ++x)
        out[l * n * n + x] += maps.data[(l * heads + h) * n * n + x] / static_cast<float>(heads);
  return out;
}

}  // namespace

TEST_CASE("golden: attention_rollout and attention_flow (Abnar & Zuidema 2020)") {
  for (const auto& gc : load_op("attention_rollout").cases) {
    std::size_t layers = 0, n = 0;
    const std::vector<float> maps = golden_layer_maps(gc, layers, n);
    std::vector<float> rollout(layers * n * n, -7.0f);
    at::attention_rollout(maps.data(), layers, n, gc.params.at("residual").get<double>(), rollout.data());
    CHECK_GOLDEN(gc, "rollout", rollout);
    // Every cumulative rollout is row-stochastic.
    for (std::size_t row = 0; row < layers * n; ++row) {
      float sum = 0.0f;
      for (std::size_t j = 0; j < n; ++j) sum += rollout[row * n + j];
      CHECK(sum == doctest::Approx(1.0f).epsilon(1e-5));
    }
  }
  for (const auto& gc : load_op("attention_flow").cases) {
    std::size_t layers = 0, n = 0;
    const std::vector<float> maps = golden_layer_maps(gc, layers, n);
    std::vector<float> flow(n * n, -7.0f);
    at::attention_flow(maps.data(), layers, n, gc.params.at("residual").get<double>(), flow.data());
    CHECK_GOLDEN(gc, "flow", flow);
    for (float f : flow) CHECK((f >= 0.0f && f <= 1.0f + 1e-5f));
  }
}

TEST_CASE("attention_rollout and attention_flow refuse what they cannot use") {
  const std::vector<float> ok = {0.5f, 0.5f, 0.25f, 0.75f};
  std::vector<float> out(8);
  CHECK_THROWS_AS(at::attention_rollout(ok.data(), 0, 2, 0.5, out.data()), attnlens::Error);
  CHECK_THROWS_AS(at::attention_rollout(ok.data(), 1, 0, 0.5, out.data()), attnlens::Error);
  CHECK_THROWS_AS(at::attention_rollout(ok.data(), 1, 2, 1.5, out.data()), attnlens::Error);
  CHECK_THROWS_AS(at::attention_flow(ok.data(), 1, 2, -0.1, out.data()), attnlens::Error);
  const std::vector<float> bad = {0.5f, std::numeric_limits<float>::quiet_NaN(), 0.25f, 0.75f};
  CHECK_THROWS_AS(at::attention_rollout(bad.data(), 1, 2, 0.5, out.data()), attnlens::Error);
  CHECK_THROWS_AS(at::attention_flow(bad.data(), 1, 2, 0.5, out.data()), attnlens::Error);
  const std::size_t big = at::kMaxFlowPositions + 1;
  std::vector<float> eye(big * big, 0.0f), flow(big * big);
  for (std::size_t i = 0; i < big; ++i) eye[i * big + i] = 1.0f;
  CHECK_THROWS_AS(at::attention_flow(eye.data(), 1, big, 0.5, flow.data()), attnlens::Error);
  // Identity maps: all of output i comes from input i, through both measures.
  const std::vector<float> eye3 = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::vector<float> r3(18), f3(9);
  at::attention_rollout(eye3.data(), 2, 3, 0.5, r3.data());
  at::attention_flow(eye3.data(), 2, 3, 0.5, f3.data());
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      CHECK(r3[9 + i * 3 + j] == (i == j ? 1.0f : 0.0f));
      CHECK(f3[i * 3 + j] == doctest::Approx(i == j ? 1.0 : 0.0));
    }
}
