// Scalar reference tests of the attention catalogue: each op against a straightforward double-precision loop
// written here from the paper's formula, over several sizes, plus properties that must hold (rows sum to 1,
// masked weights are 0, KV cache == full causal, one-hot hard attention, reproducible seeded sampling that
// follows α) and the errors bad arguments must raise.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "common.h"
#include "golden.h"

namespace at = attnlens::attention;
using attnlens::AttentionTrace;
using attnlens::Error;

namespace {

using Vec = std::vector<float>;
using DVec = std::vector<double>;

// Test data from the engine's own cross-platform generator, so native and WASM runs see identical inputs.
class Data {
 public:
  explicit Data(std::uint64_t seed) : rng_(seed) {}
  Vec vec(std::size_t n, double scale = 1.0) {
    Vec v(n);
    for (auto& x : v) x = static_cast<float>((2.0 * rng_.next_double() - 1.0) * scale);
    return v;
  }
  std::vector<std::uint8_t> mask(std::size_t n, double p_keep = 0.7) {
    std::vector<std::uint8_t> m(n);
    for (auto& x : m) x = rng_.next_double() < p_keep ? 1 : 0;
    return m;
  }

 private:
  at::SplitMix64 rng_;
};

constexpr double kTol = 2e-5;  // float32 op vs double reference, all quantities here are O(1)

void check_close(const float* got, const DVec& want, const std::string& what, double tol = kTol) {
  double worst = 0.0;
  std::size_t at_index = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= worst)) {
      worst = diff;
      at_index = i;
    }
  }
  INFO(what << ": max abs diff " << worst << " at " << at_index << " of " << want.size());
  CHECK(worst <= tol * std::max(1.0, want.empty() ? 1.0 : std::fabs(want[at_index])));
}
void check_close(const Vec& got, const DVec& want, const std::string& what, double tol = kTol) {
  REQUIRE(got.size() == want.size());
  check_close(got.data(), want, what, tol);
}

// ---- double-precision references ----
DVec ref_softmax(const DVec& s, const std::vector<bool>& keep) {
  double mx = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (keep[j]) mx = std::max(mx, s[j]);
  }
  DVec out(s.size(), 0.0);
  double sum = 0.0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (keep[j]) sum += (out[j] = std::exp(s[j] - mx));
  }
  for (auto& x : out) x = sum > 0 ? x / sum : 0.0;
  return out;
}
DVec ref_softmax(const DVec& s) { return ref_softmax(s, std::vector<bool>(s.size(), true)); }

double ref_dot(const float* a, const float* b, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}
// y = W x + b, W [out × in] float, x double.
DVec ref_linear(const float* w, const float* b, std::size_t out, std::size_t in, const DVec& x) {
  DVec y(out);
  for (std::size_t o = 0; o < out; ++o) {
    double s = b == nullptr ? 0.0 : b[o];
    for (std::size_t i = 0; i < in; ++i) s += static_cast<double>(w[o * in + i]) * x[i];
    y[o] = s;
  }
  return y;
}
DVec to_d(const float* x, std::size_t n) { return DVec(x, x + n); }
double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double ref_additive(const at::AdditiveScoreWeights& w, const float* q, const float* k) {
  const DVec wq = ref_linear(w.w, nullptr, w.d_att, w.d_q, to_d(q, w.d_q));
  const DVec uk = ref_linear(w.u, w.bias, w.d_att, w.d_k, to_d(k, w.d_k));
  double s = 0.0;
  for (std::size_t a = 0; a < w.d_att; ++a) s += w.v[a] * std::tanh(wq[a] + uk[a]);
  return s;
}

// Weights for an additive score owned by the test.
struct AdditiveOwned {
  Vec w, u, bias, v;
  at::AdditiveScoreWeights view;
  AdditiveOwned(Data& data, std::size_t d_q, std::size_t d_k, std::size_t d_att, bool with_bias) {
    w = data.vec(d_att * d_q, 0.8);
    u = data.vec(d_att * d_k, 0.8);
    v = data.vec(d_att);
    if (with_bias) bias = data.vec(d_att, 0.3);
    view.d_q = d_q;
    view.d_k = d_k;
    view.d_att = d_att;
    view.w = w.data();
    view.u = u.data();
    view.bias = with_bias ? bias.data() : nullptr;
    view.v = v.data();
  }
};

void check_rows_sum_to_one(const float* w, std::size_t rows, std::size_t cols, const std::string& what) {
  for (std::size_t i = 0; i < rows; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      CHECK(w[i * cols + j] >= 0.0f);
      s += w[i * cols + j];
    }
    INFO(what << " row " << i);
    CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
  }
}

}  // namespace

// ============================================================ scores
TEST_CASE("scores: dot, scaled dot, general, cosine, location vs double references over sizes") {
  Data data(101);
  for (std::size_t n_q : {1u, 3u}) {
    for (std::size_t n_k : {1u, 4u, 9u}) {
      for (std::size_t d : {0u, 1u, 3u, 8u, 17u}) {
        CAPTURE(n_q);
        CAPTURE(n_k);
        CAPTURE(d);
        const Vec q = data.vec(n_q * d), k = data.vec(n_k * d);
        Vec s(n_q * n_k);
        DVec want(n_q * n_k), want_cos(n_q * n_k);
        for (std::size_t i = 0; i < n_q; ++i) {
          for (std::size_t j = 0; j < n_k; ++j) {
            want[i * n_k + j] = ref_dot(q.data() + i * d, k.data() + j * d, d);
            const double nq = std::max(std::sqrt(ref_dot(q.data() + i * d, q.data() + i * d, d)), 1e-8);
            const double nk = std::max(std::sqrt(ref_dot(k.data() + j * d, k.data() + j * d, d)), 1e-8);
            want_cos[i * n_k + j] = want[i * n_k + j] / (nq * nk);
          }
        }
        at::score_dot(q.data(), n_q, k.data(), n_k, d, s.data());
        check_close(s, want, "dot");
        at::score_scaled_dot(q.data(), n_q, k.data(), n_k, d, s.data());
        DVec scaled = want;
        if (d > 0) {
          for (auto& x : scaled) x /= std::sqrt(static_cast<double>(d));
        }
        check_close(s, scaled, "scaled dot");
        at::score_cosine(q.data(), n_q, k.data(), n_k, d, s.data());
        check_close(s, want_cos, "cosine");
        for (float x : s) CHECK(std::fabs(x) <= 1.0f + 1e-6f);

        // general with a rectangular W [d × d2]
        const std::size_t d2 = d + 2;
        const Vec w = data.vec(d * d2), k2 = data.vec(n_k * d2);
        DVec want_g(n_q * n_k, 0.0);
        for (std::size_t i = 0; i < n_q; ++i)
          for (std::size_t j = 0; j < n_k; ++j)
            for (std::size_t a = 0; a < d; ++a)
              for (std::size_t b = 0; b < d2; ++b)
                want_g[i * n_k + j] += static_cast<double>(q[i * d + a]) * w[a * d2 + b] * k2[j * d2 + b];
        at::score_general(q.data(), n_q, d, w.data(), k2.data(), n_k, d2, s.data());
        check_close(s, want_g, "general");

        // location: W_a [n_k × d]
        const Vec wa = data.vec(n_k * d);
        DVec want_l(n_q * n_k);
        for (std::size_t i = 0; i < n_q; ++i)
          for (std::size_t j = 0; j < n_k; ++j)
            want_l[i * n_k + j] = ref_dot(wa.data() + j * d, q.data() + i * d, d);
        at::score_location(q.data(), n_q, d, wa.data(), n_k, s.data());
        check_close(s, want_l, "location");
      }
    }
  }
}

TEST_CASE("scores: cosine of a zero vector is 0, never NaN, and parallel vectors score 1") {
  const Vec q = {0.0f, 0.0f, 0.0f}, k = {1.0f, 2.0f, 3.0f, 2.0f, 4.0f, 6.0f};
  Vec s(2);
  at::score_cosine(q.data(), 1, k.data(), 2, 3, s.data());
  CHECK(s[0] == 0.0f);
  CHECK(s[1] == 0.0f);
  at::score_cosine(k.data(), 1, k.data(), 2, 3, s.data(), 0.0f);
  CHECK(s[0] == doctest::Approx(1.0));
  CHECK(s[1] == doctest::Approx(1.0));
  at::score_cosine(q.data(), 1, k.data(), 2, 3, s.data(), 0.0f);  // eps 0: still 0, not NaN
  CHECK(s[0] == 0.0f);
}

TEST_CASE("scores: additive vs reference, with and without bias, projected keys reused") {
  Data data(102);
  for (std::size_t d_att : {1u, 4u, 11u}) {
    for (bool bias : {false, true}) {
      const std::size_t d_q = 5, d_k = 3, n_q = 2, n_k = 7;
      AdditiveOwned w(data, d_q, d_k, d_att, bias);
      const Vec q = data.vec(n_q * d_q), k = data.vec(n_k * d_k);
      DVec want(n_q * n_k);
      for (std::size_t i = 0; i < n_q; ++i)
        for (std::size_t j = 0; j < n_k; ++j)
          want[i * n_k + j] = ref_additive(w.view, &q[i * d_q], &k[j * d_k]);
      Vec s(n_q * n_k), proj(n_k * d_att);
      at::score_additive(w.view, q.data(), n_q, k.data(), n_k, s.data());
      check_close(s, want, "additive");
      at::additive_project_keys(w.view, k.data(), n_k, proj.data());
      for (std::size_t i = 0; i < n_q; ++i) {  // one decoder step at a time over the same projected keys
        at::score_additive_projected(w.view, &q[i * d_q], 1, proj.data(), n_k, s.data());
        check_close(s.data(), DVec(want.begin() + i * n_k, want.begin() + (i + 1) * n_k), "additive step");
      }
      // Queries projected by the caller too (as the decoders do once per step for all their rows).
      Vec q_proj(n_q * d_att, 0.0f), scratch(n_k * d_att), s2(n_q * n_k);
      for (std::size_t i = 0; i < n_q; ++i)
        for (std::size_t a = 0; a < d_att; ++a) q_proj[i * d_att + a] = static_cast<float>(ref_dot(&w.w[a * d_q], &q[i * d_q], d_q));
      at::score_additive_hidden(w.view.v, d_att, q_proj.data(), n_q, proj.data(), n_k, s2.data(), scratch.data());
      check_close(s2, want, "additive hidden");
    }
  }
}

// ============================================================ alignments
TEST_CASE(
    "align_soft: masks (padding, full, causal with cache offset) vs reference; rows sum to 1; masked are 0") {
  Data data(201);
  for (std::size_t n_q : {1u, 3u, 5u}) {
    for (std::size_t n_k : {5u, 8u, 13u}) {
      for (int mode = 0; mode < 4; ++mode) {
        CAPTURE(n_q);
        CAPTURE(n_k);
        CAPTURE(mode);
        Vec s = data.vec(n_q * n_k, 4.0);
        std::vector<std::uint8_t> key_keep = data.mask(n_k), keep = data.mask(n_q * n_k);
        key_keep[0] = 1;  // keep every row non-empty for the sum check (column 0 is always visible)
        for (std::size_t i = 0; i < n_q; ++i) keep[i * n_k] = 1;
        at::AlignMask mask;
        if (mode == 1 || mode == 3) mask.key_keep = key_keep.data();
        if (mode == 2) mask.keep = keep.data();
        if (mode == 3) mask.causal = true;
        DVec want;
        std::vector<bool> visible_all;
        for (std::size_t i = 0; i < n_q; ++i) {
          std::vector<bool> visible(n_k);
          for (std::size_t j = 0; j < n_k; ++j) {
            bool v = true;
            if (mask.key_keep) v = v && key_keep[j];
            if (mask.keep) v = v && keep[i * n_k + j];
            if (mask.causal) v = v && j <= i + (n_k - n_q);
            visible[j] = v;
            visible_all.push_back(v);
          }
          const DVec row = ref_softmax(to_d(&s[i * n_k], n_k), visible);
          want.insert(want.end(), row.begin(), row.end());
        }
        at::align_soft(s.data(), n_q, n_k, mask);
        check_close(s, want, "align_soft");
        check_rows_sum_to_one(s.data(), n_q, n_k, "align_soft");
        for (std::size_t p = 0; p < s.size(); ++p) {
          if (!visible_all[p]) CHECK(s[p] == 0.0f);
        }
      }
    }
  }
}

TEST_CASE("align_soft: a fully masked row becomes zeros; huge scores stay finite") {
  Vec s = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const std::vector<std::uint8_t> keep = {0, 0, 0, 1, 0, 1};
  at::AlignMask mask;
  mask.keep = keep.data();
  at::align_soft(s.data(), 2, 3, mask);
  CHECK(at::row_is_empty(s.data(), 3));
  CHECK_FALSE(at::row_is_empty(s.data() + 3, 3));
  Vec big = {1e30f, -1e30f, 88.0f, 1e30f};
  at::align_soft(big.data(), 1, 4);
  for (float x : big) CHECK(std::isfinite(x));
  CHECK(big[0] == doctest::Approx(0.5));
  CHECK(big[3] == doctest::Approx(0.5));
}

TEST_CASE("smooth_grid_scores: mean over the window's cells inside the grid; shift-invariant; k = 1 is identity") {
  // 3 × 3 grid, values 0..8 (row-major); k = 3: a corner averages 4 cells, an edge 6, the centre all 9
  Vec s = {0, 1, 2, 3, 4, 5, 6, 7, 8}, tmp(9);
  at::smooth_grid_scores(s.data(), 3, 3, tmp.data());
  CHECK(s[0] == doctest::Approx((0 + 1 + 3 + 4) / 4.0));
  CHECK(s[1] == doctest::Approx((0 + 1 + 2 + 3 + 4 + 5) / 6.0));
  CHECK(s[4] == doctest::Approx(36 / 9.0));
  CHECK(s[8] == doctest::Approx((4 + 5 + 7 + 8) / 4.0));
  CHECK(s[7] == doctest::Approx((3 + 4 + 5 + 6 + 7 + 8) / 6.0));
  // 5 × 5, k = 5 against a double reference; a constant added to every score moves every mean by it
  Vec g(25), shifted(25), t2(25);
  for (std::size_t i = 0; i < 25; ++i) g[i] = std::sin(0.7f * static_cast<float>(i)) * 3.0f;
  for (std::size_t i = 0; i < 25; ++i) shifted[i] = g[i] + 10.0f;
  Vec ref(25);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 5; ++c) {
      double sum = 0;
      int n = 0;
      for (int y = std::max(0, r - 2); y <= std::min(4, r + 2); ++y)
        for (int x = std::max(0, c - 2); x <= std::min(4, c + 2); ++x, ++n) sum += g[y * 5 + x];
      ref[r * 5 + c] = static_cast<float>(sum / n);
    }
  Vec out = g;
  at::smooth_grid_scores(out.data(), 5, 5, t2.data());
  at::smooth_grid_scores(shifted.data(), 5, 5, t2.data());
  for (std::size_t i = 0; i < 25; ++i) {
    CHECK(out[i] == doctest::Approx(ref[i]).epsilon(1e-6));
    CHECK(shifted[i] == doctest::Approx(out[i] + 10.0f).epsilon(1e-5));
  }
  Vec same = g;
  at::smooth_grid_scores(same.data(), 5, 1, t2.data());
  CHECK(same == g);
  CHECK_THROWS_WITH_AS(at::smooth_grid_scores(same.data(), 5, 2, t2.data()),
                       doctest::Contains("window side must be odd"), Error);
}

TEST_CASE("align_local_m: softmax inside [t-D, t+D] only, clipped at the edges") {
  Data data(202);
  for (std::size_t n_k : {1u, 6u, 15u}) {
    for (std::size_t t : {0u, 3u, 14u}) {
      for (std::size_t dw : {0u, 1u, 4u}) {
        Vec s = data.vec(n_k, 3.0);
        std::vector<bool> visible(n_k);
        for (std::size_t j = 0; j < n_k; ++j) visible[j] = (j > t ? j - t : t - j) <= dw;
        const DVec want = ref_softmax(to_d(s.data(), n_k), visible);
        at::align_local_m(s.data(), n_k, t, dw);
        check_close(s, want, "local-m");
        const bool any = std::count(visible.begin(), visible.end(), true) > 0;
        if (any) {
          check_rows_sum_to_one(s.data(), 1, n_k, "local-m");
        } else {
          CHECK(at::row_is_empty(s.data(), n_k));  // t beyond the sentence by more than D
        }
      }
    }
  }
}

TEST_CASE("local-p: p = S·sigmoid(v_p·tanh(W_p q)); Gaussian-weighted window, zero outside, sum ≤ 1") {
  Data data(203);
  const std::size_t d_q = 6, d_att = 5, n_k = 20;
  const Vec wp = data.vec(d_att * d_q), vp = data.vec(d_att, 2.0);
  at::LocalPWeights w;
  w.d_q = d_q;
  w.d_att = d_att;
  w.w_p = wp.data();
  w.v_p = vp.data();
  for (int trial = 0; trial < 6; ++trial) {
    const Vec q = data.vec(d_q, 2.0);
    const DVec h = ref_linear(wp.data(), nullptr, d_att, d_q, to_d(q.data(), d_q));
    double logit = 0.0;
    for (std::size_t a = 0; a < d_att; ++a) logit += vp[a] * std::tanh(h[a]);
    const double p_want = n_k * ref_sigmoid(logit);
    const float p = at::local_p_position(w, q.data(), n_k);
    CHECK(p == doctest::Approx(p_want).epsilon(1e-5));
    CHECK(p >= 0.0f);
    CHECK(p <= static_cast<float>(n_k));
    for (std::size_t dw : {1u, 2u, 5u}) {
      Vec s = data.vec(n_k, 2.0);
      std::vector<bool> visible(n_k);
      for (std::size_t j = 0; j < n_k; ++j) visible[j] = std::fabs(static_cast<double>(j) - p) <= dw;
      DVec want = ref_softmax(to_d(s.data(), n_k), visible);
      const double sigma = dw / 2.0;
      for (std::size_t j = 0; j < n_k; ++j)
        want[j] *= std::exp(-std::pow(j - static_cast<double>(p), 2) / (2 * sigma * sigma));
      at::align_local_p(s.data(), n_k, p, dw);
      check_close(s, want, "local-p");
      double sum = 0.0;
      for (std::size_t j = 0; j < n_k; ++j) {
        sum += s[j];
        if (!visible[j]) CHECK(s[j] == 0.0f);
      }
      CHECK(sum <= 1.0 + 1e-6);
    }
  }
  Vec s(4, 0.0f);
  CHECK_THROWS_AS(at::align_local_p(s.data(), 4, 1.0f, 0), Error);
  CHECK_THROWS_AS(at::align_local_p(s.data(), 4, std::nanf(""), 2), Error);
}

TEST_CASE("hard attention: argmax is one-hot at the first maximum") {
  Vec w = {0.1f, 0.4f, 0.05f, 0.4f, 0.05f};
  Vec one_hot(5);
  CHECK(at::align_hard_argmax(w.data(), 5, one_hot.data()) == 1);
  CHECK(one_hot == Vec{0, 1, 0, 0, 0});
  // in place
  CHECK(at::align_hard_argmax(w.data(), 5, w.data()) == 1);
  CHECK(w == Vec{0, 1, 0, 0, 0});
  CHECK_THROWS_AS(at::align_hard_argmax(w.data(), 0, w.data()), Error);
}

TEST_CASE("SplitMix64 gives the published stream (so native, WASM and JS agree)") {
  // First outputs of splitmix64 from state 0 (Vigna's reference splitmix64.c).
  at::SplitMix64 rng(0);
  CHECK(rng.next_u64() == 0xE220A8397B1DCDAFull);
  CHECK(rng.next_u64() == 0x6E789E6AA1B965F4ull);
  CHECK(rng.next_u64() == 0x06C45D188009454Full);
  at::SplitMix64 r2(12345);
  for (int i = 0; i < 1000; ++i) {
    const double u = r2.next_double();
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
  }
}

TEST_CASE("hard attention: seeded sampling is reproducible, one-hot, and distributed like α") {
  const Vec alpha = {0.05f, 0.3f, 0.0f, 0.15f, 0.4f, 0.1f};
  at::SplitMix64 a(2024), b(2024), c(2025);
  std::vector<std::size_t> sa, sb, sc;
  Vec one_hot(alpha.size());
  for (int i = 0; i < 200; ++i) {
    sa.push_back(at::align_hard_sample(alpha.data(), alpha.size(), a, one_hot.data()));
    CHECK(std::count(one_hot.begin(), one_hot.end(), 1.0f) == 1);
    CHECK(one_hot[sa.back()] == 1.0f);
    sb.push_back(at::align_hard_sample(alpha.data(), alpha.size(), b));
    sc.push_back(at::align_hard_sample(alpha.data(), alpha.size(), c));
  }
  CHECK(sa == sb);
  CHECK(sa != sc);

  const int draws = 200000;
  std::vector<int> counts(alpha.size(), 0);
  at::SplitMix64 rng(7);
  for (int i = 0; i < draws; ++i) ++counts[at::align_hard_sample(alpha.data(), alpha.size(), rng)];
  CHECK(counts[2] == 0);  // zero weight is never drawn
  for (std::size_t j = 0; j < alpha.size(); ++j) {
    const double expected = alpha[j] * draws;
    const double sd = std::sqrt(draws * alpha[j] * (1.0 - alpha[j]));
    INFO("position " << j << " drawn " << counts[j] << " times, expected " << expected);
    CHECK(std::fabs(counts[j] - expected) <= 5.0 * sd + 1e-9);
  }
  // Unnormalised weights are sampled in proportion too.
  const Vec doubled = {2.0f, 6.0f};
  int first = 0;
  for (int i = 0; i < 40000; ++i) first += at::align_hard_sample(doubled.data(), 2, rng) == 0 ? 1 : 0;
  CHECK(first == doctest::Approx(10000).epsilon(0.05));
  const Vec zeros = {0.0f, 0.0f}, negative = {0.5f, -0.1f};
  CHECK_THROWS_AS(at::align_hard_sample(zeros.data(), 2, rng), Error);
  CHECK_THROWS_AS(at::align_hard_sample(negative.data(), 2, rng), Error);
}

// ============================================================ context
TEST_CASE("key-value attention and soft context vs reference") {
  Data data(301);
  for (std::size_t n_k : {1u, 6u, 10u}) {
    const std::size_t n_q = 3, d_k = 7, d_v = 4;
    const Vec q = data.vec(n_q * d_k), k = data.vec(n_k * d_k, 2.0), v = data.vec(n_k * d_v);
    for (auto score : {at::KeyValueScore::kDot, at::KeyValueScore::kScaledDot}) {
      Vec weights(n_q * n_k), context(n_q * d_v);
      at::key_value_attention(q.data(), n_q, k.data(), v.data(), n_k, d_k, d_v, weights.data(),
                              context.data(), score);
      DVec want_w, want_c;
      for (std::size_t i = 0; i < n_q; ++i) {
        DVec s(n_k);
        for (std::size_t j = 0; j < n_k; ++j) {
          s[j] = ref_dot(&q[i * d_k], &k[j * d_k], d_k);
          if (score == at::KeyValueScore::kScaledDot) s[j] /= std::sqrt(7.0);
        }
        const DVec a = ref_softmax(s);
        want_w.insert(want_w.end(), a.begin(), a.end());
        for (std::size_t c = 0; c < d_v; ++c) {
          double acc = 0.0;
          for (std::size_t j = 0; j < n_k; ++j) acc += a[j] * v[j * d_v + c];
          want_c.push_back(acc);
        }
      }
      check_close(weights, want_w, "kv weights");
      check_close(context, want_c, "kv context");
      check_rows_sum_to_one(weights.data(), n_q, n_k, "kv");
      Vec context2(n_q * d_v);
      at::soft_context(weights.data(), n_q, n_k, v.data(), d_v, context2.data());
      check_close(context2, want_c, "soft_context");
    }
  }
}

TEST_CASE("key-value attention over one head of interleaved heads (row strides) equals it on the head alone") {
  Data data(302);
  const std::size_t heads = 3, d_k = 5, d_v = 5, width = heads * d_k;  // rows of [heads · d] floats
  for (std::size_t n_q : {1u, 4u}) {
    for (std::size_t n_k : {1u, 9u}) {
      CAPTURE(n_q);
      CAPTURE(n_k);
      const Vec q = data.vec(n_q * width), k = data.vec(n_k * width, 2.0), v = data.vec(n_k * width);
      Vec ctx(n_q * width, -7.0f);  // every head's columns are written, nothing else
      for (std::size_t h = 0; h < heads; ++h) {
        Vec qh, kh, vh;
        for (std::size_t i = 0; i < n_q; ++i) qh.insert(qh.end(), &q[i * width + h * d_k], &q[i * width + h * d_k] + d_k);
        for (std::size_t j = 0; j < n_k; ++j) {
          kh.insert(kh.end(), &k[j * width + h * d_k], &k[j * width + h * d_k] + d_k);
          vh.insert(vh.end(), &v[j * width + h * d_v], &v[j * width + h * d_v] + d_v);
        }
        Vec w_dense(n_q * n_k), c_dense(n_q * d_v), w_strided(n_q * n_k);
        at::key_value_attention(qh.data(), n_q, kh.data(), vh.data(), n_k, d_k, d_v, w_dense.data(), c_dense.data());
        at::key_value_attention(q.data() + h * d_k, n_q, k.data() + h * d_k, v.data() + h * d_v, n_k, d_k, d_v,
                                w_strided.data(), ctx.data() + h * d_v, at::KeyValueScore::kScaledDot, {},
                                {width, width, width, width});
        for (std::size_t x = 0; x < w_dense.size(); ++x) CHECK(w_strided[x] == doctest::Approx(w_dense[x]).epsilon(1e-6));
        for (std::size_t i = 0; i < n_q; ++i)
          for (std::size_t c = 0; c < d_v; ++c)
            CHECK(ctx[i * width + h * d_v + c] == doctest::Approx(c_dense[i * d_v + c]).epsilon(1e-6));
        check_rows_sum_to_one(w_strided.data(), n_q, n_k, "strided kv");
      }
      for (float x : ctx) CHECK(x != -7.0f);  // the heads tile the rows
    }
  }
  Vec w(4), c(2);
  const Vec x(8, 0.0f);
  CHECK_THROWS_AS(at::key_value_attention(x.data(), 1, x.data(), x.data(), 4, 2, 2, w.data(), c.data(),
                                          at::KeyValueScore::kDot, {}, {1, 0, 0, 0}),  // a stride shorter than a row
                  Error);
}

// ============================================================ multi-head
namespace {

struct MhaOwned {
  Vec in_w, in_b, out_w, out_b;
  at::MultiHeadWeights view;
  MhaOwned(Data& data, std::size_t e, std::size_t h, bool bias) {
    in_w = data.vec(3 * e * e, 0.5);
    out_w = data.vec(e * e, 0.5);
    if (bias) {
      in_b = data.vec(3 * e, 0.2);
      out_b = data.vec(e, 0.2);
    }
    view.embed_dim = e;
    view.num_heads = h;
    view.in_proj_weight = in_w.data();
    view.in_proj_bias = bias ? in_b.data() : nullptr;
    view.out_proj_weight = out_w.data();
    view.out_proj_bias = bias ? out_b.data() : nullptr;
  }
};

// Vaswani 2017 §3.2.2 with explicit loops over heads, in double.
void ref_mha(const at::MultiHeadWeights& w, const Vec& query, std::size_t n_q, const Vec& key,
             const Vec& value, std::size_t n_k, bool causal, DVec& out, DVec& weights) {
  const std::size_t e = w.embed_dim, h_count = w.num_heads, dh = e / h_count;
  auto project = [&](const Vec& x, std::size_t n, int p) {
    std::vector<DVec> rows;
    for (std::size_t i = 0; i < n; ++i)
      rows.push_back(ref_linear(w.in_proj_weight + p * e * e,
                                w.in_proj_bias ? w.in_proj_bias + p * e : nullptr, e, e, to_d(&x[i * e], e)));
    return rows;
  };
  const auto qp = project(query, n_q, 0), kp = project(key, n_k, 1), vp = project(value, n_k, 2);
  std::vector<DVec> concat(n_q, DVec(e, 0.0));
  weights.assign(h_count * n_q * n_k, 0.0);
  for (std::size_t h = 0; h < h_count; ++h) {
    for (std::size_t i = 0; i < n_q; ++i) {
      DVec s(n_k);
      std::vector<bool> visible(n_k);
      for (std::size_t j = 0; j < n_k; ++j) {
        double acc = 0.0;
        for (std::size_t c = 0; c < dh; ++c) acc += qp[i][h * dh + c] * kp[j][h * dh + c];
        s[j] = acc / std::sqrt(static_cast<double>(dh));
        visible[j] = !causal || j <= i + (n_k - n_q);
      }
      const DVec a = ref_softmax(s, visible);
      for (std::size_t j = 0; j < n_k; ++j) {
        weights[(h * n_q + i) * n_k + j] = a[j];
        for (std::size_t c = 0; c < dh; ++c) concat[i][h * dh + c] += a[j] * vp[j][h * dh + c];
      }
    }
  }
  out.clear();
  for (std::size_t i = 0; i < n_q; ++i) {
    const DVec o = ref_linear(w.out_proj_weight, w.out_proj_bias, e, e, concat[i]);
    out.insert(out.end(), o.begin(), o.end());
  }
}

}  // namespace

TEST_CASE("multi-head attention vs per-head double reference (self, cross, causal; 1, 2, 4 heads)") {
  Data data(401);
  for (std::size_t h : {1u, 2u, 4u}) {
    for (bool causal : {false, true}) {
      for (bool bias : {false, true}) {
        const std::size_t e = 8, n_q = causal ? 5 : 3, n_k = 5;
        CAPTURE(h);
        CAPTURE(causal);
        MhaOwned w(data, e, h, bias);
        const Vec query = data.vec(n_q * e), key = data.vec(n_k * e), value = data.vec(n_k * e);
        Vec out(n_q * e), weights(h * n_q * n_k);
        at::AlignMask mask;
        mask.causal = causal;
        at::multi_head_attention(w.view, query.data(), n_q, key.data(), value.data(), n_k, out.data(),
                                 weights.data(), mask);
        DVec want_out, want_w;
        ref_mha(w.view, query, n_q, key, value, n_k, causal, want_out, want_w);
        check_close(out, want_out, "mha out", 5e-5);
        check_close(weights, want_w, "mha weights");
        check_rows_sum_to_one(weights.data(), h * n_q, n_k, "mha");
        // Output without asking for weights is the same.
        Vec out2(n_q * e);
        at::multi_head_attention(w.view, query.data(), n_q, key.data(), value.data(), n_k, out2.data(),
                                 nullptr, mask);
        CHECK(out2 == out);
      }
    }
  }
}

TEST_CASE("multi-head KV cache: one step at a time (and in chunks) equals the full causal computation") {
  Data data(402);
  const std::size_t e = 12, h = 3, t = 7;
  MhaOwned w(data, e, h, true);
  const Vec x = data.vec(t * e);
  Vec full_out(t * e), full_w(h * t * t);
  at::AlignMask causal;
  causal.causal = true;
  at::multi_head_attention(w.view, x.data(), t, x.data(), x.data(), t, full_out.data(), full_w.data(),
                           causal);

  at::MultiHeadKvCache cache(w.view, t);
  for (std::size_t step = 0; step < t; ++step) {
    cache.append(&x[step * e], &x[step * e], 1);
    CHECK(cache.length() == step + 1);
    Vec out(e), weights(h * (step + 1));
    cache.attend(&x[step * e], 1, out.data(), weights.data());
    check_close(out.data(), to_d(&full_out[step * e], e), "cache out step " + std::to_string(step));
    for (std::size_t head = 0; head < h; ++head) {
      check_close(&weights[head * (step + 1)], to_d(&full_w[(head * t + step) * t], step + 1),
                  "cache weights step " + std::to_string(step));
      // the full causal row has zeros after the step: nothing was lost by not having those keys yet
      for (std::size_t j = step + 1; j < t; ++j) CHECK(full_w[(head * t + step) * t + j] == 0.0f);
    }
  }
  // Chunks: 3 positions, then 4, attended together.
  cache.clear();
  cache.append(x.data(), x.data(), 3);
  Vec out3(3 * e);
  cache.attend(x.data(), 3, out3.data());
  check_close(out3.data(), to_d(full_out.data(), 3 * e), "cache chunk 1");
  cache.append(&x[3 * e], &x[3 * e], 4);
  Vec out4(4 * e);
  cache.attend(&x[3 * e], 4, out4.data());
  check_close(out4.data(), to_d(&full_out[3 * e], 4 * e), "cache chunk 2");
  CHECK_THROWS_AS(cache.append(x.data(), x.data(), 1), Error);  // over capacity
  Vec too_many(8 * e);
  CHECK_THROWS_AS(cache.attend(too_many.data(), 8, too_many.data()),
                  Error);  // more causal queries than positions
}

TEST_CASE("multi-head KV cache: rows of projected positions, reordered as a beam forks, attend as one row each") {
  // Three sequences advance together; after step 1 the rows become (2, 0, 0, 1) — row 2 kept, row 0 forked twice.
  // Each row then attends exactly as a one-row cache holding that row's own history.
  Data data(404);
  const std::size_t e = 8, h = 2, t = 4, rows = 3;
  std::vector<Vec> keys(rows), values(rows);  // per initial row: t projected positions
  for (std::size_t r = 0; r < rows; ++r) {
    keys[r] = data.vec(t * e);
    values[r] = data.vec(t * e);
  }
  at::MultiHeadKvCache cache(e, h, t, rows);
  auto step_rows = [&](const std::vector<std::size_t>& from, std::size_t pos) {  // one position per row
    Vec k, v;
    for (std::size_t r : from) {
      k.insert(k.end(), &keys[r][pos * e], &keys[r][pos * e] + e);
      v.insert(v.end(), &values[r][pos * e], &values[r][pos * e] + e);
    }
    cache.append_projected(k.data(), v.data());
  };
  step_rows({0, 1, 2}, 0);
  step_rows({0, 1, 2}, 1);
  cache.reorder({2, 0, 0, 1});
  CHECK(cache.rows() == 4);
  const std::vector<std::size_t> history = {2, 0, 0, 1};
  step_rows(history, 2);
  CHECK(cache.length() == 3);
  const Vec q = data.vec(e);
  for (std::size_t r = 0; r < history.size(); ++r) {
    at::MultiHeadKvCache alone(e, h, t);
    alone.append_projected(keys[history[r]].data(), values[history[r]].data(), 3);
    Vec want_ctx(e), want_w(h * 3), ctx(e), weights(h * 3);
    alone.attend_heads(0, q.data(), 1, want_ctx.data(), want_w.data());
    cache.attend_heads(r, q.data(), 1, ctx.data(), weights.data());
    CHECK(ctx == want_ctx);
    CHECK(weights == want_w);
  }
  CHECK_THROWS_AS(cache.reorder({4}), Error);
  Vec ctx(e);
  CHECK_THROWS_AS(cache.attend_heads(4, q.data(), 1, ctx.data()), Error);
  CHECK_THROWS_AS(cache.append(q.data(), q.data(), 1), Error);  // no weights: it stores projected rows only
}

TEST_CASE("multi-head attention rejects inconsistent shapes with clear errors") {
  Data data(403);
  MhaOwned w(data, 6, 4, false);  // 4 does not divide 6
  Vec x(12), out(12);
  CHECK_THROWS_WITH_AS(at::multi_head_attention(w.view, x.data(), 2, x.data(), x.data(), 2, out.data()),
                       doctest::Contains("must divide embed_dim"), Error);
  w.view.num_heads = 3;
  w.view.in_proj_weight = nullptr;
  CHECK_THROWS_WITH_AS(at::multi_head_attention(w.view, x.data(), 2, x.data(), x.data(), 2, out.data()),
                       doctest::Contains("in_proj_weight"), Error);
}

// ============================================================ self-attention
TEST_CASE("structured self-attention (Lin 2017) vs reference; rows sum to 1; penalty") {
  Data data(501);
  for (std::size_t t : {1u, 4u, 9u}) {
    for (std::size_t r : {1u, 3u}) {
      const std::size_t d_h = 6, d_a = 5;
      const Vec h = data.vec(t * d_h), ws1 = data.vec(d_a * d_h), ws2 = data.vec(r * d_a, 2.0);
      at::StructuredSelfAttentionWeights w;
      w.d_h = d_h;
      w.d_a = d_a;
      w.r = r;
      w.w_s1 = ws1.data();
      w.w_s2 = ws2.data();
      std::vector<std::uint8_t> keep(t, 1);
      if (t > 2) keep[t - 1] = 0;
      Vec a(r * t), m(r * d_h);
      at::structured_self_attention(w, h.data(), t, a.data(), m.data(), keep.data());
      DVec want_a, want_m;
      std::vector<DVec> hidden;
      for (std::size_t i = 0; i < t; ++i) {
        DVec x = ref_linear(ws1.data(), nullptr, d_a, d_h, to_d(&h[i * d_h], d_h));
        for (auto& v : x) v = std::tanh(v);
        hidden.push_back(x);
      }
      for (std::size_t hop = 0; hop < r; ++hop) {
        DVec s(t);
        std::vector<bool> visible(t);
        for (std::size_t i = 0; i < t; ++i) {
          s[i] = 0.0;
          for (std::size_t c = 0; c < d_a; ++c) s[i] += ws2[hop * d_a + c] * hidden[i][c];
          visible[i] = keep[i] != 0;
        }
        const DVec row = ref_softmax(s, visible);
        want_a.insert(want_a.end(), row.begin(), row.end());
        for (std::size_t c = 0; c < d_h; ++c) {
          double acc = 0.0;
          for (std::size_t i = 0; i < t; ++i) acc += row[i] * h[i * d_h + c];
          want_m.push_back(acc);
        }
      }
      check_close(a, want_a, "A");
      check_close(m, want_m, "M");
      check_rows_sum_to_one(a.data(), r, t, "A");
      double pen = 0.0;
      for (std::size_t i = 0; i < r; ++i)
        for (std::size_t k = 0; k < r; ++k) {
          const double g = ref_dot(&a[i * t], &a[k * t], t) - (i == k ? 1.0 : 0.0);
          pen += g * g;
        }
      CHECK(at::structured_penalty(a.data(), r, t) == doctest::Approx(pen).epsilon(1e-5));
    }
  }
  // Hops on distinct positions: A Aᵀ = I, no penalty. Two identical one-hot hops: A Aᵀ − I =
  // [[0,1],[1,0]], 2.
  const Vec distinct = {1, 0, 0, 0, 0, 1, 0, 0}, same = {1, 0, 0, 0, 1, 0, 0, 0};
  CHECK(at::structured_penalty(distinct.data(), 2, 4) == 0.0f);
  CHECK(at::structured_penalty(same.data(), 2, 4) == doctest::Approx(2.0));
}

namespace {
// The feature layers of a relation-network self-attention over [x_i; x_j] of size 2d (biases may be null).
at::RelationAttentionWeights relation_features(std::size_t d, std::size_t d_f, const Vec& wf1, const float* bf1,
                                               const Vec& wf2, const float* bf2) {
  at::RelationAttentionWeights w;
  w.d = d;
  w.d_f = d_f;
  w.w_f1 = wf1.data();
  w.b_f1 = bf1;
  w.w_f2 = wf2.data();
  w.b_f2 = bf2;
  return w;
}
}  // namespace

TEST_CASE("relation-network self-attention (seed 003) vs reference; each word's row sums to 1") {
  Data data(502);
  for (std::size_t t : {1u, 3u, 6u}) {
    const std::size_t d = 4, d_f = 5;
    const Vec x = data.vec(t * d), wf1 = data.vec(d_f * 2 * d), bf1 = data.vec(d_f, 0.2),
              wf2 = data.vec(d_f * d_f), bf2 = data.vec(d_f, 0.2), wg = data.vec(2 * d, 2.0);
    at::RelationAttentionWeights w = relation_features(d, d_f, wf1, bf1.data(), wf2, bf2.data());
    w.w_g = wg.data();
    w.b_g = 0.3f;
    Vec a(t * t), word(t * d_f), sentence(d_f);
    at::relation_self_attention(w, x.data(), t, a.data(), word.data(), sentence.data());
    DVec want_a, want_word, want_sentence(d_f, 0.0);
    for (std::size_t i = 0; i < t; ++i) {
      DVec s(t);
      std::vector<DVec> feats;
      for (std::size_t j = 0; j < t; ++j) {
        DVec pair = to_d(&x[i * d], d);
        const DVec xj = to_d(&x[j * d], d);
        pair.insert(pair.end(), xj.begin(), xj.end());
        double g = w.b_g;
        for (std::size_t c = 0; c < 2 * d; ++c) g += wg[c] * pair[c];
        s[j] = ref_sigmoid(std::tanh(g));
        DVec f1 = ref_linear(wf1.data(), bf1.data(), d_f, 2 * d, pair);
        for (auto& v : f1) v = std::max(v, 0.0);
        DVec f2 = ref_linear(wf2.data(), bf2.data(), d_f, d_f, f1);
        for (auto& v : f2) v = std::max(v, 0.0);
        feats.push_back(f2);
      }
      const DVec row = ref_softmax(s);
      want_a.insert(want_a.end(), row.begin(), row.end());
      for (std::size_t c = 0; c < d_f; ++c) {
        double acc = 0.0;
        for (std::size_t j = 0; j < t; ++j) acc += row[j] * feats[j][c];
        want_word.push_back(acc);
        want_sentence[c] += acc / static_cast<double>(t);
      }
    }
    check_close(a, want_a, "relation A");
    check_close(word, want_word, "relation word");
    check_close(sentence, want_sentence, "relation sentence");
    check_rows_sum_to_one(a.data(), t, t, "relation");
  }
}

TEST_CASE("relation-network self-attention: a caller's feature layer replaces w_f2 and b_f2") {
  Data data(503);
  const std::size_t t = 4, d = 3, d_f = 5, d_a = 2;
  const Vec x = data.vec(t * d), wf1 = data.vec(d_f * 2 * d), wf2 = data.vec(d_f * d_f), bf2 = data.vec(d_f, 0.2),
            wa1 = data.vec(d_a * 2 * d), wa2 = data.vec(d_a);
  at::RelationAttentionWeights w = relation_features(d, d_f, wf1, nullptr, wf2, bf2.data());
  w.d_a = d_a;
  w.w_a1 = wa1.data();
  w.w_a2 = wa2.data();
  Vec a(t * t), word(t * d_f), sentence(d_f);
  at::relation_self_attention(w, x.data(), t, a.data(), word.data(), sentence.data());
  // The same layer, computed by the caller in double: the same outputs; a layer of zeros: zero words.
  std::size_t calls = 0;
  at::RelationAttentionWeights hooked = w;
  hooked.w_f2 = nullptr;
  hooked.b_f2 = nullptr;
  hooked.feature_layer = [&](std::size_t n, const float* f1, float* f2) {
    ++calls;
    for (std::size_t r = 0; r < n; ++r) {
      const DVec y = ref_linear(wf2.data(), bf2.data(), d_f, d_f, to_d(f1 + r * d_f, d_f));
      for (std::size_t c = 0; c < d_f; ++c) f2[r * d_f + c] = static_cast<float>(std::max(y[c], 0.0));
    }
  };
  Vec a2(t * t), word2(t * d_f), sentence2(d_f);
  at::relation_self_attention(hooked, x.data(), t, a2.data(), word2.data(), sentence2.data());
  CHECK(calls == t);
  check_close(a2, to_d(a.data(), a.size()), "hooked A");
  check_close(word2, to_d(word.data(), word.size()), "hooked word");
  check_close(sentence2, to_d(sentence.data(), sentence.size()), "hooked sentence");
  hooked.feature_layer = [&](std::size_t n, const float*, float* f2) { std::fill(f2, f2 + n * d_f, 0.0f); };
  at::relation_self_attention(hooked, x.data(), t, a2.data(), word2.data(), sentence2.data());
  for (float v : word2) CHECK(v == 0.0f);
  // Without a feature layer, w_f2 is required.
  hooked.feature_layer = nullptr;
  CHECK_THROWS(at::relation_self_attention(hooked, x.data(), t, a2.data(), word2.data(), sentence2.data()));
}

// ============================================================ co-attention, AoA, hierarchical
TEST_CASE("parallel, max-pooled and alternating co-attention vs reference") {
  Data data(601);
  const std::size_t n = 7, t = 5, d = 6, k = 4;
  const Vec v = data.vec(n * d), q = data.vec(t * d), wb = data.vec(d * d, 0.5), wv = data.vec(k * d, 0.6),
            wq = data.vec(k * d, 0.6), whv = data.vec(k, 2.0), whq = data.vec(k, 2.0);
  at::ParallelCoAttentionWeights pw;
  pw.d = d;
  pw.k = k;
  pw.w_b = wb.data();
  pw.w_v = wv.data();
  pw.w_q = wq.data();
  pw.w_hv = whv.data();
  pw.w_hq = whq.data();
  Vec affinity(t * n), a_v(n), a_q(t), v_hat(d), q_hat(d);
  at::parallel_co_attention(pw, v.data(), n, q.data(), t, affinity.data(), a_v.data(), a_q.data(),
                            v_hat.data(), q_hat.data());
  // C_tn = tanh(q_tᵀ W_b v_n)
  DVec c(t * n);
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const DVec wbv = ref_linear(wb.data(), nullptr, d, d, to_d(&v[j * d], d));
      double s = 0.0;
      for (std::size_t a = 0; a < d; ++a) s += q[i * d + a] * wbv[a];
      c[i * n + j] = std::tanh(s);
    }
  check_close(affinity, c, "C");
  std::vector<DVec> wvv, wqq;
  for (std::size_t j = 0; j < n; ++j) wvv.push_back(ref_linear(wv.data(), nullptr, k, d, to_d(&v[j * d], d)));
  for (std::size_t i = 0; i < t; ++i) wqq.push_back(ref_linear(wq.data(), nullptr, k, d, to_d(&q[i * d], d)));
  DVec sv(n), sq(t);
  for (std::size_t j = 0; j < n; ++j) {  // H^v column n = tanh(W_v v_n + Σ_t (W_q q_t) C_tn)
    double s = 0.0;
    for (std::size_t a = 0; a < k; ++a) {
      double hv = wvv[j][a];
      for (std::size_t i = 0; i < t; ++i) hv += wqq[i][a] * c[i * n + j];
      s += whv[a] * std::tanh(hv);
    }
    sv[j] = s;
  }
  for (std::size_t i = 0; i < t; ++i) {  // H^q column t = tanh(W_q q_t + Σ_n (W_v v_n) C_tn)
    double s = 0.0;
    for (std::size_t a = 0; a < k; ++a) {
      double hq = wqq[i][a];
      for (std::size_t j = 0; j < n; ++j) hq += wvv[j][a] * c[i * n + j];
      s += whq[a] * std::tanh(hq);
    }
    sq[i] = s;
  }
  const DVec av = ref_softmax(sv), aq = ref_softmax(sq);
  check_close(a_v, av, "a_v");
  check_close(a_q, aq, "a_q");
  DVec vh(d, 0.0), qh(d, 0.0);
  for (std::size_t c2 = 0; c2 < d; ++c2) {
    for (std::size_t j = 0; j < n; ++j) vh[c2] += av[j] * v[j * d + c2];
    for (std::size_t i = 0; i < t; ++i) qh[c2] += aq[i] * q[i * d + c2];
  }
  check_close(v_hat, vh, "v_hat");
  check_close(q_hat, qh, "q_hat");

  // Max-pooled: the same C, attention from its maxima along the other side.
  Vec affinity2(t * n), mav(n), maq(t), mvh(d), mqh(d);
  at::max_pooled_co_attention(pw, v.data(), n, q.data(), t, affinity2.data(), mav.data(), maq.data(),
                              mvh.data(), mqh.data());
  check_close(affinity2, c, "max-pooled C");
  DVec col_max(n, -2.0), row_max(t, -2.0);
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      col_max[j] = std::max(col_max[j], c[i * n + j]);
      row_max[i] = std::max(row_max[i], c[i * n + j]);
    }
  const DVec mav_want = ref_softmax(col_max), maq_want = ref_softmax(row_max);
  check_close(mav, mav_want, "max-pooled a_v");
  check_close(maq, maq_want, "max-pooled a_q");
  DVec mvh_want(d, 0.0), mqh_want(d, 0.0);
  for (std::size_t c2 = 0; c2 < d; ++c2) {
    for (std::size_t j = 0; j < n; ++j) mvh_want[c2] += mav_want[j] * v[j * d + c2];
    for (std::size_t i = 0; i < t; ++i) mqh_want[c2] += maq_want[i] * q[i * d + c2];
  }
  check_close(mvh, mvh_want, "max-pooled v_hat");
  check_close(mqh, mqh_want, "max-pooled q_hat");

  // Alternating: three x̂ = A(X; g) steps.
  std::vector<Vec> wx, wg, wh;
  at::AlternatingCoAttentionWeights aw;
  aw.d = d;
  aw.k = k;
  for (int s = 0; s < 3; ++s) {
    wx.push_back(data.vec(k * d, 0.6));
    wg.push_back(data.vec(k * d, 0.6));
    wh.push_back(data.vec(k, 2.0));
  }
  for (int s = 0; s < 3; ++s) {
    aw.step[s].w_x = wx[s].data();
    aw.step[s].w_g = s == 0 ? nullptr : wg[s].data();
    aw.step[s].w_hx = wh[s].data();
  }
  auto ref_step = [&](int s, const Vec& x, std::size_t count, const DVec* g, DVec& alpha, DVec& x_hat) {
    DVec wgg(k, 0.0);
    if (g != nullptr) wgg = ref_linear(wg[s].data(), nullptr, k, d, *g);
    DVec sc(count);
    for (std::size_t i = 0; i < count; ++i) {
      const DVec hx = ref_linear(wx[s].data(), nullptr, k, d, to_d(&x[i * d], d));
      double acc = 0.0;
      for (std::size_t a = 0; a < k; ++a) acc += wh[s][a] * std::tanh(hx[a] + wgg[a]);
      sc[i] = acc;
    }
    alpha = ref_softmax(sc);
    x_hat.assign(d, 0.0);
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t c2 = 0; c2 < d; ++c2) x_hat[c2] += alpha[i] * x[i * d + c2];
  };
  DVec ras, rsh, rav, rvh, raq, rqh;
  ref_step(0, q, t, nullptr, ras, rsh);
  ref_step(1, v, n, &rsh, rav, rvh);
  ref_step(2, q, t, &rvh, raq, rqh);
  Vec as(t), sh(d), av2(n), vh2(d), aq2(t), qh2(d);
  at::alternating_co_attention(aw, v.data(), n, q.data(), t, as.data(), sh.data(), av2.data(), vh2.data(),
                               aq2.data(), qh2.data());
  check_close(as, ras, "a_s");
  check_close(sh, rsh, "s_hat");
  check_close(av2, rav, "alt a_v");
  check_close(vh2, rvh, "alt v_hat");
  check_close(aq2, raq, "alt a_q");
  check_close(qh2, rqh, "alt q_hat");
}

TEST_CASE("attention-over-attention (Cui 2017) vs reference; α columns and s sum to 1") {
  Data data(602);
  for (std::size_t n : {1u, 5u, 12u}) {
    for (std::size_t m : {1u, 4u}) {
      const std::size_t d = 5;
      const Vec doc = data.vec(n * d), query = data.vec(m * d);
      Vec alpha(n * m), beta(n * m), beta_avg(m), s(n), matching(n * m);
      at::attention_over_attention(doc.data(), n, query.data(), m, d, alpha.data(), beta.data(),
                                   beta_avg.data(), s.data(), matching.data());
      DVec M(n * m), want_alpha(n * m), want_beta(n * m), want_avg(m, 0.0), want_s(n, 0.0);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t t = 0; t < m; ++t) M[i * m + t] = ref_dot(&doc[i * d], &query[t * d], d);
      for (std::size_t t = 0; t < m; ++t) {
        DVec col(n);
        for (std::size_t i = 0; i < n; ++i) col[i] = M[i * m + t];
        const DVec a = ref_softmax(col);
        for (std::size_t i = 0; i < n; ++i) want_alpha[i * m + t] = a[i];
      }
      for (std::size_t i = 0; i < n; ++i) {
        const DVec b = ref_softmax(DVec(M.begin() + i * m, M.begin() + (i + 1) * m));
        for (std::size_t t = 0; t < m; ++t) {
          want_beta[i * m + t] = b[t];
          want_avg[t] += b[t] / static_cast<double>(n);
        }
      }
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t t = 0; t < m; ++t) want_s[i] += want_alpha[i * m + t] * want_avg[t];
      check_close(matching, M, "M");
      check_close(alpha, want_alpha, "alpha");
      check_close(beta, want_beta, "beta");
      check_close(beta_avg, want_avg, "beta_avg");
      check_close(s, want_s, "s");
      check_rows_sum_to_one(s.data(), 1, n, "s");
      check_rows_sum_to_one(beta.data(), n, m, "beta");
      check_rows_sum_to_one(beta_avg.data(), 1, m, "beta_avg");
    }
  }
}

TEST_CASE("hierarchical attention (Yang 2016) vs reference") {
  Data data(603);
  const std::size_t d = 4, d_att = 3;
  const std::vector<std::size_t> lengths = {2, 5, 1, 3};
  const std::size_t total = 11, L = lengths.size();
  const Vec words = data.vec(total * d), ww = data.vec(d_att * d), bw = data.vec(d_att, 0.3),
            uw = data.vec(d_att, 2.0), ws = data.vec(d_att * d), bs = data.vec(d_att, 0.3),
            us = data.vec(d_att, 2.0);
  at::AttentionPoolWeights wl{d, d_att, ww.data(), bw.data(), uw.data()};
  at::AttentionPoolWeights sl{d, d_att, ws.data(), bs.data(), us.data()};
  Vec word_alpha(total), sentence_vectors(L * d), sentence_alpha(L), document(d);
  at::hierarchical_attention(wl, sl, words.data(), lengths.data(), L, word_alpha.data(),
                             sentence_vectors.data(), sentence_alpha.data(), document.data());
  auto ref_pool = [&](const float* w, const float* b, const float* u, const DVec& h, std::size_t t,
                      DVec& alpha, DVec& pooled) {
    DVec s(t);
    for (std::size_t i = 0; i < t; ++i) {
      const DVec ui = ref_linear(w, b, d_att, d, DVec(h.begin() + i * d, h.begin() + (i + 1) * d));
      double acc = 0.0;
      for (std::size_t a = 0; a < d_att; ++a) acc += std::tanh(ui[a]) * u[a];
      s[i] = acc;
    }
    alpha = ref_softmax(s);
    pooled.assign(d, 0.0);
    for (std::size_t i = 0; i < t; ++i)
      for (std::size_t c = 0; c < d; ++c) pooled[c] += alpha[i] * h[i * d + c];
  };
  DVec want_wa, want_sv;
  std::size_t start = 0;
  for (std::size_t len : lengths) {
    DVec a, p;
    ref_pool(ww.data(), bw.data(), uw.data(), to_d(&words[start * d], len * d), len, a, p);
    want_wa.insert(want_wa.end(), a.begin(), a.end());
    want_sv.insert(want_sv.end(), p.begin(), p.end());
    start += len;
  }
  DVec want_sa, want_doc;
  ref_pool(ws.data(), bs.data(), us.data(), want_sv, L, want_sa, want_doc);
  check_close(word_alpha, want_wa, "word alpha");
  check_close(sentence_vectors, want_sv, "sentence vectors");
  check_close(sentence_alpha, want_sa, "sentence alpha");
  check_close(document, want_doc, "document");
  const std::vector<std::size_t> bad = {2, 0};
  CHECK_THROWS_WITH_AS(
      at::hierarchical_attention(wl, sl, words.data(), bad.data(), 2, word_alpha.data(),
                                 sentence_vectors.data(), sentence_alpha.data(), document.data()),
      doctest::Contains("sentence 1 is empty"), Error);
}

// ============================================================ pointer, coverage
TEST_CASE("pointer network attention (Vinyals 2015): probabilities over inputs, pointers at the argmax") {
  Data data(701);
  const std::size_t n_q = 4, n = 6, d_q = 5, d_k = 3, d_att = 6;
  AdditiveOwned w(data, d_q, d_k, d_att, false);
  const Vec dec = data.vec(n_q * d_q, 2.0), enc = data.vec(n * d_k, 2.0);
  std::vector<std::uint8_t> keep = {1, 1, 0, 1, 1, 0};
  Vec probs(n_q * n);
  std::vector<std::size_t> pointers(n_q);
  at::pointer_attention(w.view, dec.data(), n_q, enc.data(), n, probs.data(), pointers.data(), keep.data());
  for (std::size_t i = 0; i < n_q; ++i) {
    DVec s(n);
    std::vector<bool> visible(n);
    for (std::size_t j = 0; j < n; ++j) {
      s[j] = ref_additive(w.view, &dec[i * d_q], &enc[j * d_k]);
      visible[j] = keep[j] != 0;
    }
    const DVec p = ref_softmax(s, visible);
    check_close(&probs[i * n], p, "pointer probs");
    const std::size_t best = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
    CHECK(pointers[i] == best);
    CHECK(keep[pointers[i]] == 1);
  }
  check_rows_sum_to_one(probs.data(), n_q, n, "pointer");
}

TEST_CASE(
    "coverage attention (Tu 2016): coverage is the running sum of weights; steps == sequence; penalty") {
  Data data(702);
  const std::size_t t = 5, n_k = 6, d_q = 4, d_k = 3, d_att = 5;
  AdditiveOwned a(data, d_q, d_k, d_att, true);
  const Vec wc = data.vec(d_att, 2.0), queries = data.vec(t * d_q, 2.0), keys = data.vec(n_k * d_k, 2.0);
  at::CoverageAttentionWeights w;
  w.score = a.view;
  w.w_c = wc.data();
  Vec weights(t * n_k), coverage(n_k);
  at::coverage_attention(w, queries.data(), t, keys.data(), n_k, weights.data(), coverage.data());
  DVec cov(n_k, 0.0), want;
  for (std::size_t i = 0; i < t; ++i) {
    const DVec wq = ref_linear(a.w.data(), nullptr, d_att, d_q, to_d(&queries[i * d_q], d_q));
    DVec s(n_k);
    for (std::size_t j = 0; j < n_k; ++j) {
      const DVec uk = ref_linear(a.u.data(), a.bias.data(), d_att, d_k, to_d(&keys[j * d_k], d_k));
      double acc = 0.0;
      for (std::size_t h = 0; h < d_att; ++h) acc += a.v[h] * std::tanh(wq[h] + uk[h] + wc[h] * cov[j]);
      s[j] = acc;
    }
    const DVec row = ref_softmax(s);
    for (std::size_t j = 0; j < n_k; ++j) cov[j] += row[j];
    want.insert(want.end(), row.begin(), row.end());
  }
  check_close(weights, want, "coverage weights", 5e-5);
  check_close(coverage, cov, "coverage", 5e-5);
  check_rows_sum_to_one(weights.data(), t, n_k, "coverage");

  // Step API gives the same numbers.
  Vec proj(n_k * d_att), cov_steps(n_k, 0.0f), row(n_k);
  at::additive_project_keys(a.view, keys.data(), n_k, proj.data());
  for (std::size_t i = 0; i < t; ++i) {
    at::coverage_attention_step(w, &queries[i * d_q], proj.data(), n_k, cov_steps.data(), row.data());
    check_close(row.data(), DVec(want.begin() + i * n_k, want.begin() + (i + 1) * n_k), "coverage step");
  }
  check_close(cov_steps, cov, "coverage after steps", 5e-5);

  // GNMT penalty: β Σ_j log(min(Σ_i α_ij, 1)).
  double pen = 0.0;
  for (std::size_t j = 0; j < n_k; ++j) {
    double sum = 0.0;
    for (std::size_t i = 0; i < t; ++i) sum += weights[i * n_k + j];
    pen += std::log(std::min(sum, 1.0));
  }
  CHECK(at::coverage_penalty(weights.data(), t, n_k, 0.4) == doctest::Approx(0.4 * pen).epsilon(1e-6));
  CHECK(at::coverage_penalty(weights.data(), t, n_k, 0.4) <= 0.0);
  const Vec full = {0.5f, 0.5f, 0.5f, 0.5f, 0.6f, 0.6f};  // every source word covered ≥ 1: no penalty
  CHECK(at::coverage_penalty(full.data(), 3, 2, 1.0) == 0.0);
  const Vec missing = {1.0f, 0.0f, 1.0f, 0.0f};  // source word 1 never attended
  CHECK(std::isinf(at::coverage_penalty(missing.data(), 2, 2, 1.0)));
  CHECK(at::coverage_penalty(missing.data(), 2, 2, 1.0) < 0.0);
}

// ============================================================ Tang memories, visual
TEST_CASE("Tang 2016 position-weighted memories (Models 1-4) and content attention vs reference") {
  Data data(801);
  const std::size_t t = 6, d = 4;
  const Vec e = data.vec(t * d), lv = data.vec(t * d), aspect = data.vec(d), w_att = data.vec(2 * d, 2.0);
  const Vec locations = {3, 2, 1, 0, 1, 2};  // distance to an aspect at position 3
  for (int model = 1; model <= 4; ++model) {
    for (std::size_t hop : {1u, 3u}) {
      CAPTURE(model);
      CAPTURE(hop);
      Vec memory(t * d), alpha(t), out(d);
      at::position_weighted_memory(static_cast<at::TangLocationModel>(model), e.data(), t, d,
                                   locations.data(), hop, lv.data(), memory.data());
      DVec want(t * d);
      for (std::size_t i = 0; i < t; ++i) {
        const double rel = locations[i] / static_cast<double>(t);
        for (std::size_t k = 0; k < d; ++k) {
          const double ei = e[i * d + k], li = lv[i * d + k];
          switch (model) {
            case 1:
              want[i * d + k] = ei * ((1 - rel) - (static_cast<double>(hop) / d) * (1 - 2 * rel));
              break;
            case 2:
              want[i * d + k] = ei * (1 - rel);
              break;
            case 3:
              want[i * d + k] = ei + li;
              break;
            default:
              want[i * d + k] = ei * ref_sigmoid(li);
              break;
          }
        }
      }
      check_close(memory, want, "memory");
      at::tang_content_attention(memory.data(), t, d, aspect.data(), w_att.data(), 0.2f, alpha.data(),
                                 out.data());
      DVec s(t);
      for (std::size_t i = 0; i < t; ++i) {
        double g = 0.2;
        for (std::size_t k = 0; k < d; ++k) g += w_att[k] * memory[i * d + k] + w_att[d + k] * aspect[k];
        s[i] = std::tanh(g);
      }
      const DVec a = ref_softmax(s);
      DVec o(d, 0.0);
      for (std::size_t i = 0; i < t; ++i)
        for (std::size_t k = 0; k < d; ++k) o[k] += a[i] * memory[i * d + k];
      check_close(alpha, a, "tang alpha");
      check_close(out, o, "tang out");
    }
  }
  // Model 2: the aspect word itself (distance 0) keeps its embedding, farther words shrink.
  Vec memory(t * d);
  at::position_weighted_memory(at::TangLocationModel::kModel2, e.data(), t, d, locations.data(), 1, nullptr,
                               memory.data());
  CHECK(memory[3 * d] == e[3 * d]);
  CHECK_THROWS_AS(at::position_weighted_memory(at::TangLocationModel::kModel2, e.data(), t, d, nullptr, 1,
                                               nullptr, memory.data()),
                  Error);
  CHECK_THROWS_AS(at::position_weighted_memory(at::TangLocationModel::kModel4, e.data(), t, d, nullptr, 1,
                                               nullptr, memory.data()),
                  Error);
  CHECK_THROWS_AS(at::position_weighted_memory(static_cast<at::TangLocationModel>(9), e.data(), t, d,
                                               locations.data(), 1, lv.data(), memory.data()),
                  Error);
}

TEST_CASE("visual soft attention (Xu 2015) with gate β vs reference; doubly stochastic penalty") {
  Data data(802);
  const std::size_t n = 12, d_a = 5, d_h = 4, d_att = 6;
  AdditiveOwned a(data, d_h, d_a, d_att, true);
  const Vec features = data.vec(n * d_a), h = data.vec(d_h), w_beta = data.vec(d_h);
  at::VisualAttentionWeights w;
  w.att = a.view;
  w.w_beta = w_beta.data();
  w.b_beta = -0.2f;
  Vec alpha(n), context(d_a);
  float beta = 0.0f;
  at::visual_soft_attention(w, features.data(), n, nullptr, h.data(), alpha.data(), &beta, context.data());
  DVec s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = ref_additive(a.view, h.data(), &features[i * d_a]);
  const DVec want_alpha = ref_softmax(s);
  const double want_beta = ref_sigmoid(ref_dot(w_beta.data(), h.data(), d_h) - 0.2);
  DVec want_ctx(d_a, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < d_a; ++c) want_ctx[c] += want_beta * want_alpha[i] * features[i * d_a + c];
  check_close(alpha, want_alpha, "visual alpha");
  CHECK(beta == doctest::Approx(want_beta).epsilon(1e-5));
  check_close(context, want_ctx, "visual context");
  // Without the gate, β = 1.
  w.w_beta = nullptr;
  at::visual_soft_attention(w, features.data(), n, nullptr, h.data(), alpha.data(), &beta, context.data());
  CHECK(beta == 1.0f);

  const std::size_t t = 3;
  const Vec alphas = {0.5f, 0.5f, 0.0f, 0.25f, 0.25f, 0.5f, 0.25f, 0.25f, 0.5f};
  // column sums 1, 1, 1 → no penalty
  CHECK(at::doubly_stochastic_penalty(alphas.data(), t, 3, 1.0) == doctest::Approx(0.0));
  const Vec uneven = {1.0f, 0.0f, 1.0f, 0.0f};  // sums 2 and 0 → λ((1−2)² + (1−0)²) = 2λ
  CHECK(at::doubly_stochastic_penalty(uneven.data(), 2, 2, 0.5) == doctest::Approx(1.0));
}

// ============================================================ trace, errors, golden helper
TEST_CASE("trace helpers record every head with its coordinates; a disabled trace records nothing") {
  Data data(901);
  MhaOwned w(data, 8, 2, true);
  const Vec x = data.vec(3 * 8);
  Vec out(3 * 8), weights(2 * 3 * 3);
  at::multi_head_attention(w.view, x.data(), 3, x.data(), x.data(), 3, out.data(), weights.data());
  AttentionTrace trace;
  at::record_heads(trace, "encoder_self", weights.data(), 2, 3, 3, /*layer=*/1, /*step=*/-1);
  REQUIRE(trace.size() == 2);
  const auto maps = trace.find("encoder_self");
  REQUIRE(maps.size() == 2);
  for (int h = 0; h < 2; ++h) {
    CHECK(maps[h].head == h);
    CHECK(maps[h].layer == 1);
    CHECK(maps[h].dims == std::vector<std::size_t>{3, 3});
    CHECK(maps[h].data == Vec(weights.begin() + h * 9, weights.begin() + (h + 1) * 9));
  }
  at::record_weights(trace, "cross", weights.data(), {2, 9}, -1, -1, 4);
  CHECK(trace.find("cross").at(0).step == 4);
  CHECK(trace.find("cross").at(0).data.size() == 18);
  AttentionTrace off(false);
  at::record_heads(off, "x", weights.data(), 2, 3, 3);
  CHECK(off.size() == 0);
}

TEST_CASE("bad arguments raise attnlens::Error with a message naming the problem") {
  Vec s(6);
  CHECK_THROWS_WITH_AS(at::score_dot(nullptr, 2, s.data(), 3, 1, s.data()),
                       doctest::Contains("'queries' is null"), Error);
  at::AlignMask causal;
  causal.causal = true;
  CHECK_THROWS_WITH_AS(at::align_soft(s.data(), 3, 2, causal), doctest::Contains("causal"), Error);
  at::AdditiveScoreWeights w;  // d_att = 0
  CHECK_THROWS_WITH_AS(at::score_additive(w, s.data(), 1, s.data(), 1, s.data()), doctest::Contains("d_att"),
                       Error);
  at::StructuredSelfAttentionWeights sw;
  CHECK_THROWS_AS(at::structured_self_attention(sw, s.data(), 2, s.data(), s.data()), Error);
  CHECK_THROWS_AS(
      at::attention_over_attention(s.data(), 0, s.data(), 1, 1, s.data(), s.data(), s.data(), s.data()),
      Error);
  // Sizes whose product overflows are rejected before anything is touched.
  const std::size_t huge = static_cast<std::size_t>(-1) / 2;
  CHECK_THROWS_WITH_AS(at::score_dot(s.data(), huge, s.data(), 1, 4, s.data()),
                       doctest::Contains("overflows"), Error);
  // Empty inputs are fine where they mean something: no keys, no scores.
  CHECK_NOTHROW(at::score_dot(s.data(), 1, nullptr, 0, 3, nullptr));
  CHECK_NOTHROW(at::align_soft(nullptr, 0, 0));
}

TEST_CASE("golden helper: tolerance abs 1e-4 or rel 1e-3, size mismatch and NaN fail") {
  attnlens::testing::GoldenTensor g;
  g.dims = {3};
  g.data = {0.01f, 100.0f, -2.0f};
  CHECK(attnlens::testing::compare(Vec{0.01009f, 100.09f, -2.0f}, g, "ok").ok);
  CHECK_FALSE(attnlens::testing::compare(Vec{0.0102f, 100.0f, -2.0f}, g, "abs").ok);
  CHECK_FALSE(attnlens::testing::compare(Vec{0.01f, 100.2f, -2.0f}, g, "rel").ok);
  CHECK_FALSE(attnlens::testing::compare(Vec{0.01f, std::nanf(""), -2.0f}, g, "nan").ok);
  CHECK_FALSE(attnlens::testing::compare(Vec{0.01f, 100.0f}, g, "size").ok);
}
