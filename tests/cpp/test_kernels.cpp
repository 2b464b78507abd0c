// Kernel tests: every SIMD kernel (on every backend this build and CPU have) and its scalar *_ref twin
// against double-precision loops written here. Sizes sweep 0, 1, 2, … past 3× the widest vector (8 floats),
// pointers start one float past an aligned address, leading dimensions exceed the row length.
//
// GEMM-like tolerances use the standard forward error bound of a float dot product of length k,
// |fl(Σ a_i b_i) − Σ a_i b_i| ≤ γ_k Σ|a_i b_i|, γ_k ≈ k·u, u = 2⁻²⁴ (Higham, "Accuracy and Stability of
// Numerical Algorithms", §3.1), with a safety factor of 2 for blocked summation orders.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common.h"
#include "kernels/kernels.h"
#include "kernels/kernels_ref.h"

namespace k = attnlens::kernels;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Backends available in this build on this CPU ("sse2" is "wasm-simd128" under Emscripten).
std::vector<std::string> available_backends() {
  std::vector<std::string> out;
  for (const char* name : {"sse2", "avx2+fma"}) {
    try {
      k::select_simd_backend(name);
      out.emplace_back(name);
    } catch (const attnlens::Error&) {
    }
  }
  k::select_simd_backend("auto");
  return out;
}

// Runs `body` once per SIMD backend (as a doctest subcase, so a failure names the backend), then restores
// "auto".
template <class F>
void for_each_backend(F body) {
  for (const std::string& name : available_backends()) {
    k::select_simd_backend(name.c_str());
    CAPTURE(name);
    body();
  }
  k::select_simd_backend("auto");
}

// sweep(plain, false) and sweep(nt, true) on every SIMD backend, then on the reference kernels.
template <class Sweep, class Fn, class RefFn>
void sweep_plain_and_nt(Sweep sweep, Fn plain, Fn nt, RefFn plain_ref, RefFn nt_ref) {
  for_each_backend([&] {
    sweep(plain, false);
    sweep(nt, true);
  });
  sweep(plain_ref, false);
  sweep(nt_ref, true);
}

// A float buffer whose data starts one float past a 64-byte boundary, to exercise unaligned loads.
struct Buffer {
  std::vector<float> storage;
  float* ptr;
  explicit Buffer(std::size_t n, float fill = 0.0f) : storage(n + 32, fill) {
    auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
    const std::size_t skip = ((64 - addr % 64) % 64) / sizeof(float) + 1;
    ptr = storage.data() + skip;
  }
  float* data() { return ptr; }
  float& operator[](std::size_t i) { return ptr[i]; }
};

std::mt19937& rng() {
  static std::mt19937 gen(12345);
  return gen;
}

void fill_uniform(float* x, std::size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  for (std::size_t i = 0; i < n; ++i) x[i] = dist(rng());
}

constexpr double kUnit = 1.0 / (1 << 24);  // unit roundoff of float

double dot_bound(std::size_t k, double sum_abs) {
  return 2.0 * static_cast<double>(k + 2) * kUnit * sum_abs + 1e-30;
}

// The exact result as float can hold it: beyond FLT_MAX the correctly rounded float is ±inf.
double float_range(double v) {
  return std::fabs(v) > std::numeric_limits<float>::max() ? std::copysign(static_cast<double>(kInf), v) : v;
}

// ---------------------------------------------------------------- GEMM
using GemmFn = void (*)(std::size_t, std::size_t, std::size_t, const float*, std::size_t, const float*,
                        std::size_t, float*, std::size_t, bool);

// Checks c = [c0 +] A·op(B) against a double loop; B is k×n (or n×k when transposed).
bool check_gemm(GemmFn fn, bool b_transposed, std::size_t m, std::size_t n, std::size_t kk, bool accumulate,
                std::size_t extra_ld) {
  const std::size_t lda = kk + extra_ld;
  const std::size_t ldb = (b_transposed ? kk : n) + extra_ld;
  const std::size_t ldc = n + extra_ld;
  const std::size_t b_rows = b_transposed ? n : kk;
  Buffer a(m * lda + 1), b(b_rows * ldb + 1), c(m * ldc + 1);
  fill_uniform(a.data(), m * lda);
  fill_uniform(b.data(), b_rows * ldb);
  // Without accumulate, C's old contents (NaN here) must not leak into the result.
  if (accumulate)
    fill_uniform(c.data(), m * ldc);
  else
    std::fill(c.data(), c.data() + m * ldc, kNaN);
  std::vector<float> c0(c.data(), c.data() + m * ldc);
  fn(m, n, kk, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0.0, sum_abs = 0.0;
      for (std::size_t p = 0; p < kk; ++p) {
        const double bv = b_transposed ? b[j * ldb + p] : b[p * ldb + j];
        s += static_cast<double>(a[i * lda + p]) * bv;
        sum_abs += std::fabs(static_cast<double>(a[i * lda + p]) * bv);
      }
      if (accumulate) {
        s += c0[i * ldc + j];
        sum_abs += std::fabs(c0[i * ldc + j]);
      }
      const double got = c[i * ldc + j];
      if (!(std::fabs(got - s) <= dot_bound(kk, sum_abs))) {
        FAIL_CHECK("gemm mismatch at (" << i << "," << j << ") m=" << m << " n=" << n << " k=" << kk
                                        << " acc=" << accumulate << " nt=" << b_transposed << ": got " << got
                                        << " want " << s);
        return false;
      }
    }
    // Padding between rows (ldc > n) is not ours to touch.
    for (std::size_t j = n; j < ldc && i * ldc + j < m * ldc; ++j)
      if (!(c[i * ldc + j] == c0[i * ldc + j] ||
            (std::isnan(c[i * ldc + j]) && std::isnan(c0[i * ldc + j])))) {
        FAIL_CHECK("gemm wrote past row end at (" << i << "," << j << ")");
        return false;
      }
  }
  return true;
}

const std::vector<std::size_t> kSweepM = {0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 25, 40};
const std::vector<std::size_t> kSweepN = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 25, 33, 40};
const std::vector<std::size_t> kSweepK = {0, 1, 2, 3, 5, 8, 9, 17, 31, 40};

void sweep_gemm(GemmFn fn, bool transposed) {
  for (std::size_t m : kSweepM)
    for (std::size_t n : kSweepN)
      for (std::size_t kk : kSweepK)
        for (bool acc : {false, true})
          CHECK(check_gemm(fn, transposed, m, n, kk, acc, (m + n + kk) % 2 ? 3 : 0));
  // Shapes that cross the blocking (kc = 256, mc = 96, nc = 1024) and odd tails on every side.
  CHECK(check_gemm(fn, transposed, 97, 35, 300, false, 1));
  CHECK(check_gemm(fn, transposed, 97, 35, 300, true, 0));
  CHECK(check_gemm(fn, transposed, 9, 1100, 19, true, 2));
  CHECK(check_gemm(fn, transposed, 64, 64, 64, false, 0));
}

}  // namespace

TEST_CASE("kernels: gemm matches double precision (SIMD backends and ref)") {
  for_each_backend([] { sweep_gemm(&k::gemm, false); });
  sweep_gemm(&k::gemm_ref, false);
}

TEST_CASE("kernels: gemm_nt matches double precision (SIMD backends and ref)") {
  for_each_backend([] { sweep_gemm(&k::gemm_nt, true); });
  sweep_gemm(&k::gemm_nt_ref, true);
}

namespace {
using GemvFn = void (*)(std::size_t, std::size_t, const float*, const float*, std::size_t, float*, bool);

bool check_gemv(GemvFn fn, bool transposed, std::size_t n, std::size_t kk, bool accumulate,
                std::size_t extra_ld) {
  const std::size_t ldb = (transposed ? kk : n) + extra_ld;
  const std::size_t b_rows = transposed ? n : kk;
  Buffer x(kk + 1), b(b_rows * ldb + 1), y(n + 1);
  fill_uniform(x.data(), kk);
  fill_uniform(b.data(), b_rows * ldb);
  if (accumulate)
    fill_uniform(y.data(), n);
  else
    std::fill(y.data(), y.data() + n, kNaN);
  std::vector<float> y0(y.data(), y.data() + n);
  fn(n, kk, x.data(), b.data(), ldb, y.data(), accumulate);
  for (std::size_t j = 0; j < n; ++j) {
    double s = accumulate ? y0[j] : 0.0;
    double sum_abs = std::fabs(s);
    for (std::size_t p = 0; p < kk; ++p) {
      const double term = static_cast<double>(x[p]) * (transposed ? b[j * ldb + p] : b[p * ldb + j]);
      s += term;
      sum_abs += std::fabs(term);
    }
    if (!(std::fabs(y[j] - s) <= dot_bound(kk, sum_abs))) {
      FAIL_CHECK("gemv mismatch at " << j << " n=" << n << " k=" << kk << " acc=" << accumulate
                                     << " nt=" << transposed << ": got " << y[j] << " want " << s);
      return false;
    }
  }
  return true;
}

void sweep_gemv(GemvFn fn, bool transposed) {
  for (std::size_t n = 0; n <= 41; ++n)
    for (std::size_t kk : kSweepK)
      for (bool acc : {false, true}) CHECK(check_gemv(fn, transposed, n, kk, acc, n % 3));
  for (std::size_t kk = 0; kk <= 41; ++kk) CHECK(check_gemv(fn, transposed, 13, kk, kk % 2 == 0, 1));
  CHECK(check_gemv(fn, transposed, 2048, 512, false, 0));
  CHECK(check_gemv(fn, transposed, 301, 257, true, 5));
}
}  // namespace

namespace {
using GemmBiasFn = void (*)(std::size_t, std::size_t, std::size_t, const float*, std::size_t, const float*,
                            std::size_t, float*, std::size_t, const float*, k::Activation);

// C = act(A·op(B) + bias) against a double loop (ReLU/ReLU6 are 1-Lipschitz, so the same bound holds).
bool check_gemm_bias_act(GemmBiasFn fn, bool b_transposed, std::size_t m, std::size_t n, std::size_t kk,
                         bool with_bias, k::Activation act) {
  const std::size_t lda = kk + 1, ldb = (b_transposed ? kk : n) + 2, ldc = n + 3;
  const std::size_t b_rows = b_transposed ? n : kk;
  Buffer a(m * lda + 1), b(b_rows * ldb + 1), c(m * ldc + 1, kNaN), bias(n + 1);
  fill_uniform(a.data(), m * lda, -2.0f, 2.0f);
  fill_uniform(b.data(), b_rows * ldb, -2.0f, 2.0f);
  fill_uniform(bias.data(), n, -3.0f, 3.0f);
  fn(m, n, kk, a.data(), lda, b.data(), ldb, c.data(), ldc, with_bias ? bias.data() : nullptr, act);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = with_bias ? bias[j] : 0.0, sum_abs = std::fabs(s);
      for (std::size_t p = 0; p < kk; ++p) {
        const double t =
            static_cast<double>(a[i * lda + p]) * (b_transposed ? b[j * ldb + p] : b[p * ldb + j]);
        s += t;
        sum_abs += std::fabs(t);
      }
      if (act != k::Activation::none) s = std::max(s, 0.0);
      if (act == k::Activation::relu6) s = std::min(s, 6.0);
      if (!(std::fabs(c[i * ldc + j] - s) <= dot_bound(kk + 1, sum_abs))) {
        FAIL_CHECK("gemm_bias_act mismatch at (" << i << "," << j << ") m=" << m << " n=" << n << " k=" << kk
                                                 << " act=" << static_cast<int>(act) << ": got "
                                                 << c[i * ldc + j] << " want " << s);
        return false;
      }
    }
  return true;
}

void sweep_gemm_bias_act(GemmBiasFn fn, bool transposed) {
  for (std::size_t m : {0, 1, 2, 3, 5, 7, 13})
    for (std::size_t n : {0, 1, 3, 8, 9, 16, 17, 33})
      for (std::size_t kk : {0, 1, 4, 9, 31})
        for (int act = 0; act < 3; ++act)
          CHECK(check_gemm_bias_act(fn, transposed, m, n, kk, (m + n + act) % 4 != 0,
                                    static_cast<k::Activation>(act)));
  CHECK(check_gemm_bias_act(fn, transposed, 50, 37, 300, true,
                            k::Activation::relu6));  // epilogue after two k-blocks
}
}  // namespace

TEST_CASE("kernels: gemm_bias_act and gemm_nt_bias_act fuse bias and activation") {
  sweep_plain_and_nt(sweep_gemm_bias_act, &k::gemm_bias_act, &k::gemm_nt_bias_act, &k::gemm_bias_act_ref,
                     &k::gemm_nt_bias_act_ref);
}

TEST_CASE("kernels: gemv and gemv_nt match double precision") {
  sweep_plain_and_nt(sweep_gemv, &k::gemv, &k::gemv_nt, &k::gemv_ref, &k::gemv_nt_ref);
}

TEST_CASE("kernels: leading dimensions smaller than a row are rejected") {
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
  CHECK_THROWS_AS(k::gemm(2, 4, 4, a.data(), 3, b.data(), 4, c.data(), 4), attnlens::Error);
  CHECK_THROWS_AS(k::gemm(2, 4, 4, a.data(), 4, b.data(), 3, c.data(), 4), attnlens::Error);
  CHECK_THROWS_AS(k::gemm_nt(2, 4, 4, a.data(), 4, b.data(), 3, c.data(), 4), attnlens::Error);
  CHECK_THROWS_AS(k::gemm_nt(2, 4, 4, a.data(), 4, b.data(), 4, c.data(), 2), attnlens::Error);
  CHECK_THROWS_AS(k::gemv(4, 2, a.data(), b.data(), 3, c.data()), attnlens::Error);
  CHECK_THROWS_AS(k::gemv_nt(2, 4, a.data(), b.data(), 3, c.data()), attnlens::Error);
  CHECK_THROWS_AS(k::softmax_rows(a.data(), 2, 4, 3), attnlens::Error);
}

TEST_CASE("kernels: backend selection") {
  const std::vector<std::string> names = available_backends();
  REQUIRE(!names.empty());
  CHECK(names.front() == "sse2");
  k::select_simd_backend("sse2");
  const std::string sse2_name = k::simd_backend();
#ifdef ATTNLENS_WASM
  CHECK(sse2_name == "wasm-simd128");
#else
  CHECK(sse2_name == "sse2");
#endif
  CHECK_THROWS_AS(k::select_simd_backend("avx512-please"), attnlens::Error);
  k::select_simd_backend("auto");
  const std::string chosen = k::simd_backend();
  CHECK((chosen == sse2_name || chosen == "avx2+fma"));
  MESSAGE("auto-selected SIMD backend: " << chosen);
}

// ---------------------------------------------------------------- vector ops
namespace {
void check_vector_ops(bool use_ref) {
  for (std::size_t n = 0; n <= 41; ++n) {
    CAPTURE(n);
    Buffer x(n + 1), y(n + 1);
    fill_uniform(x.data(), n);
    fill_uniform(y.data(), n);
    std::vector<double> xd(x.data(), x.data() + n), yd(y.data(), y.data() + n);
    double s = 0.0, sum_abs = 0.0, sum = 0.0, sum_abs_x = 0.0, mx = -INFINITY;
    for (std::size_t i = 0; i < n; ++i) {
      s += xd[i] * yd[i];
      sum_abs += std::fabs(xd[i] * yd[i]);
      sum += xd[i];
      sum_abs_x += std::fabs(xd[i]);
      mx = std::max(mx, xd[i]);
    }
    CHECK(std::fabs((use_ref ? k::dot_ref : k::dot)(x.data(), y.data(), n) - s) <= dot_bound(n, sum_abs));
    CHECK(std::fabs((use_ref ? k::vsum_ref : k::vsum)(x.data(), n) - sum) <= dot_bound(n, sum_abs_x));
    CHECK((use_ref ? k::vmax_ref : k::vmax)(x.data(), n) == static_cast<float>(mx));

    Buffer z(n + 1);
    std::copy(y.data(), y.data() + n, z.data());
    (use_ref ? k::axpy_ref : k::axpy)(-0.75f, x.data(), z.data(), n);
    for (std::size_t i = 0; i < n; ++i) CHECK(std::fabs(z[i] - (yd[i] - 0.75 * xd[i])) <= 4 * kUnit);
    std::copy(y.data(), y.data() + n, z.data());
    (use_ref ? k::add_ref : k::add)(x.data(), z.data(), n);
    for (std::size_t i = 0; i < n; ++i) CHECK(z[i] == static_cast<float>(yd[i] + xd[i]));
    std::copy(y.data(), y.data() + n, z.data());
    (use_ref ? k::mul_ref : k::mul)(x.data(), z.data(), n);
    for (std::size_t i = 0; i < n; ++i) CHECK(z[i] == static_cast<float>(yd[i] * xd[i]));
    std::copy(y.data(), y.data() + n, z.data());
    (use_ref ? k::scale_ref : k::scale)(3.0f, z.data(), n);
    for (std::size_t i = 0; i < n; ++i) CHECK(z[i] == static_cast<float>(yd[i] * 3.0));
    // The float just past the end stays untouched.
    z[n] = 42.0f;
    (use_ref ? k::scale_ref : k::scale)(3.0f, z.data(), n);
    CHECK(z[n] == 42.0f);
  }
}
}  // namespace

TEST_CASE("kernels: dot, vsum, vmax, axpy, add, mul, scale") {
  for_each_backend([] { check_vector_ops(false); });
  check_vector_ops(true);
}

TEST_CASE("kernels: add_bias_rows broadcasts the bias over rows") {
  for_each_backend([] {
    for (std::size_t n : {0, 1, 5, 8, 17, 33}) {
      const std::size_t m = 3, ld = n + 2;
      Buffer y(m * ld + 1), bias(n + 1);
      fill_uniform(y.data(), m * ld);
      fill_uniform(bias.data(), n);
      std::vector<float> y0(y.data(), y.data() + m * ld);
      k::add_bias_rows(y.data(), m, n, ld, bias.data());
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < ld; ++j)
          CHECK(y[i * ld + j] == (j < n ? y0[i * ld + j] + bias[j] : y0[i * ld + j]));
    }
  });
}

// ---------------------------------------------------------------- softmax family
namespace {
using SoftmaxFn = void (*)(float*, std::size_t, const std::uint8_t*);

// Double-precision masked softmax of the float inputs; all-masked → zeros (the kernel contract).
std::vector<double> softmax_double(const std::vector<float>& x, const std::uint8_t* keep) {
  std::vector<double> out(x.size(), 0.0);
  double mx = -INFINITY;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!keep || keep[i]) mx = std::max(mx, static_cast<double>(x[i]));
  if (mx == -INFINITY) return out;
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!keep || keep[i]) sum += (out[i] = std::exp(static_cast<double>(x[i]) - mx));
  for (double& v : out) v /= sum;
  return out;
}

void check_softmax_case(SoftmaxFn fn, const std::vector<float>& x, const std::uint8_t* keep) {
  const std::size_t n = x.size();
  Buffer buf(n + 1);
  std::copy(x.begin(), x.end(), buf.data());
  buf[n] = 42.0f;
  fn(buf.data(), n, keep);
  const std::vector<double> want = softmax_double(x, keep);
  double total = 0.0;
  bool any_kept = false;
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CAPTURE(n);
    if (keep && !keep[i]) {
      CHECK(buf[i] == 0.0f);  // exactly zero, not merely small
      continue;
    }
    any_kept = true;
    // exp of a rounded difference: relative error a few ulp of the argument's magnitude.
    CHECK(std::fabs(buf[i] - want[i]) <= 1e-6 * want[i] + 1e-37);
    total += buf[i];
  }
  if (any_kept && n > 0) CHECK(std::fabs(total - 1.0) <= 1e-5);
  CHECK(buf[n] == 42.0f);
}

void check_softmax(SoftmaxFn fn) {
  std::uniform_int_distribution<int> coin(0, 3);
  for (std::size_t n = 0; n <= 41; ++n) {
    std::vector<float> x(n);
    fill_uniform(x.data(), n, -8.0f, 8.0f);
    check_softmax_case(fn, x, nullptr);
    std::vector<std::uint8_t> keep(n);
    for (auto& kv : keep) kv = coin(rng()) != 0;
    check_softmax_case(fn, x, keep.data());
    std::vector<std::uint8_t> none(n, 0);
    check_softmax_case(fn, x, none.data());  // every entry masked: all zeros
  }
  // Stability: huge magnitudes must neither overflow nor turn into NaN.
  check_softmax_case(fn, {1e30f, 1e30f, -1e30f, 0.0f, 3e38f, -3e38f, 3e38f, 1.0f, 2.0f}, nullptr);
  check_softmax_case(fn, {-1e30f, -1e30f - 1e24f, -3e38f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f},
                     nullptr);
  check_softmax_case(fn, {88.0f, 89.0f, 100.0f, 120.0f, -200.0f, 1000.0f, 1000.0f}, nullptr);
  check_softmax_case(fn, {-kInf, 0.0f, -kInf, 1.0f, -kInf, -kInf, -kInf, -kInf, 2.0f}, nullptr);
  // A kept huge value next to masked ones.
  const std::uint8_t keep_some[] = {0, 1, 0, 1, 1, 0, 0, 0, 1, 0};
  check_softmax_case(fn, {5e37f, -5e37f, 1e38f, 7.0f, 7.0f, 0.0f, 2e38f, -1.0f, 1e20f, 3.0f}, keep_some);
  // A single finite entry gives exactly one.
  std::vector<float> one = {123.0f};
  fn(one.data(), 1, nullptr);
  CHECK(one[0] == 1.0f);
}
}  // namespace

TEST_CASE("kernels: masked stable softmax (SIMD backends and ref)") {
  for_each_backend([] { check_softmax(&k::softmax); });
  check_softmax(&k::softmax_ref);
}

TEST_CASE("kernels: softmax_rows with stride and masks") {
  for_each_backend([] {
    const std::size_t rows = 5, n = 11, ld = 14;
    Buffer x(rows * ld + 1);
    fill_uniform(x.data(), rows * ld, -3.0f, 3.0f);
    std::vector<std::uint8_t> keep(rows * n, 1);
    keep[3] = 0;
    for (std::size_t j = 0; j < n; ++j) keep[2 * n + j] = 0;  // row 2 fully masked
    std::vector<float> orig(x.data(), x.data() + rows * ld);
    k::softmax_rows(x.data(), rows, n, ld, keep.data());
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> row(orig.begin() + r * ld, orig.begin() + r * ld + n);
      const std::vector<double> want = softmax_double(row, keep.data() + r * n);
      for (std::size_t j = 0; j < n; ++j) CHECK(std::fabs(x[r * ld + j] - want[j]) <= 1e-6 * want[j] + 1e-37);
      for (std::size_t j = n; j < ld; ++j) CHECK(x[r * ld + j] == orig[r * ld + j]);
    }
  });
}

namespace {
void check_log_softmax(void (*fn)(float*, std::size_t)) {
  auto run = [&](const std::vector<float>& x) {
    const std::size_t n = x.size();
    Buffer buf(n + 1);
    std::copy(x.begin(), x.end(), buf.data());
    fn(buf.data(), n);
    double mx = -INFINITY;
    for (float v : x) mx = std::max(mx, static_cast<double>(v));
    double sum = 0.0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - mx);
    for (std::size_t i = 0; i < n; ++i) {
      // Never above 0, rounding included (the max's exp is exactly 1, so Σ ≥ 1 and log Σ ≥ 0): beam search's
      // early stop (decode/search.h) relies on scores that never rise.
      CHECK(buf[i] <= 0.0f);
      const double want = float_range(static_cast<double>(x[i]) - mx - std::log(sum));
      if (std::isinf(want)) {
        CHECK(buf[i] == want);
        continue;
      }
      // Error of the subtraction x_i − (m + log Σ): a few ulp of the larger operand.
      const double scale_mag = std::max({std::fabs(static_cast<double>(x[i])), std::fabs(mx), 1.0});
      CHECK(std::fabs(buf[i] - want) <= 4 * kUnit * scale_mag + 1e-6 * std::fabs(want));
    }
  };
  for (std::size_t n = 0; n <= 41; ++n) {
    std::vector<float> x(n);
    fill_uniform(x.data(), n, -20.0f, 20.0f);
    run(x);
  }
  run({1e30f, -1e30f, 0.0f, 1e30f, 5.0f, 3e38f, -3e38f, 1.0f, 2.0f});
  run({-1e4f, -1e4f + 1.0f, -1e4f + 2.0f, -1e4f, -1e4f, -1e4f, -1e4f, -1e4f, -1e4f, -1e4f});
  for (float top : {0.0f, 1e-30f, 37.5f, -81.25f, 3e4f, -7e6f, 1e20f}) {  // one clear winner, or a tie of 2..19
    for (std::size_t ties = 1; ties < 20; ++ties) {
      std::vector<float> x(19 + ties);
      fill_uniform(x.data(), x.size(), -30.0f, 0.0f);
      for (float& v : x) v = top + v;
      for (std::size_t i = 0; i < ties; ++i) x[(i * 7) % x.size()] = top;
      run(x);
    }
  }
}
}  // namespace

TEST_CASE("kernels: log_softmax (SIMD backends and ref)") {
  for_each_backend([] { check_log_softmax(&k::log_softmax); });
  check_log_softmax(&k::log_softmax_ref);
}

namespace {
void check_layer_norm(void (*fn)(const float*, float*, std::size_t, const float*, const float*, float)) {
  for (std::size_t n = 0; n <= 41; ++n) {
    for (int variant = 0; variant < 3; ++variant) {
      CAPTURE(n);
      CAPTURE(variant);
      Buffer x(n + 1), y(n + 1), gamma(n + 1), beta(n + 1);
      // Variant 2 sits on a large offset: a one-pass variance would lose most digits there.
      fill_uniform(x.data(), n, -2.0f, 2.0f);
      if (variant == 2)
        for (std::size_t i = 0; i < n; ++i) x[i] += 1000.0f;
      fill_uniform(gamma.data(), n, 0.5f, 1.5f);
      fill_uniform(beta.data(), n, -0.5f, 0.5f);
      const bool affine = variant != 1;
      const float eps = 1e-5f;
      double mean = 0.0, var = 0.0;
      for (std::size_t i = 0; i < n; ++i) mean += x[i];
      mean /= std::max<std::size_t>(n, 1);
      for (std::size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
      var /= std::max<std::size_t>(n, 1);
      std::vector<float> x0(x.data(), x.data() + n);
      const bool in_place = n % 2 == 1;  // x may alias y
      float* out = in_place ? x.data() : y.data();
      fn(x.data(), out, n, affine ? gamma.data() : nullptr, affine ? beta.data() : nullptr, eps);
      for (std::size_t i = 0; i < n; ++i) {
        const double norm = (x0[i] - mean) / std::sqrt(var + eps);
        const double want = affine ? norm * gamma[i] + beta[i] : norm;
        // Relative to the input's magnitude over its spread: the rounding of x itself limits the result.
        const double cond = std::max(1.0, std::fabs(mean) / std::sqrt(var + eps));
        CHECK(std::fabs(out[i] - want) <= 2e-6 * cond * (1.0 + std::fabs(want)) * std::sqrt(n + 1.0));
      }
    }
  }
}
}  // namespace

TEST_CASE("kernels: layer_norm, in place and with null gamma/beta") {
  for_each_backend([] { check_layer_norm(&k::layer_norm); });
  check_layer_norm(&k::layer_norm_ref);
}

// ---------------------------------------------------------------- activations
namespace {
// Inputs covering every branch: tiny, moderate, the range-reduction edges, saturation, huge, ±inf, ±0.
std::vector<float> activation_inputs() {
  std::vector<float> xs = {0.0f,     -0.0f, 1e-30f, -1e-30f, 1e-8f,   -1e-8f, 1e-4f,   -1e-4f,  0.3465f,
                           -0.3466f, 0.5f,  -0.5f,  0.625f,  -0.625f, 1.0f,   -1.0f,   4.5f,    -4.5f,
                           9.0f,     -9.0f, 9.2f,   -9.2f,   15.0f,   -15.0f, 20.0f,   -20.0f,  50.0f,
                           -50.0f,   87.0f, -87.0f, 88.5f,   88.72f,  88.73f, -103.0f, -104.5f, 100.0f,
                           -100.0f,  1e4f,  -1e4f,  3e38f,   -3e38f,  kInf,   -kInf};
  for (int i = -3000; i <= 3000; ++i) xs.push_back(static_cast<float>(i) * 0.01f + 0.0031f);
  for (int i = -120; i <= 120; ++i) xs.push_back(static_cast<float>(i) * 0.7337f);
  for (int e = -40; e <= 6; ++e) {
    xs.push_back(std::ldexp(1.37f, e));
    xs.push_back(-std::ldexp(1.37f, e));
  }
  return xs;
}

struct ActivationCase {
  const char* name;
  void (*simd)(float*, std::size_t);
  void (*ref)(float*, std::size_t);
  double (*exact)(double);
  double rel_tol;
  double abs_tol;
};

double exact_tanh(double x) { return std::tanh(x); }
double exact_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double exact_relu(double x) { return x > 0 ? x : 0.0; }
double exact_relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
double exact_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double exact_exp(double x) { return std::exp(x); }

void check_activation(const ActivationCase& c, void (*fn)(float*, std::size_t), const std::string& impl) {
  const std::vector<float> xs = activation_inputs();
  // Every length from 0 to past 3 vectors, at an unaligned start, then the whole set at once.
  for (std::size_t n = 0; n <= 27; ++n) {
    Buffer buf(n + 1);
    std::copy(xs.begin() + 40, xs.begin() + 40 + n, buf.data());
    buf[n] = 42.0f;
    fn(buf.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = float_range(c.exact(xs[40 + i]));
      if (std::isnan(want))  // GELU(−inf) = −inf·0, NaN as in PyTorch
        CHECK(std::isnan(buf[i]));
      else if (std::isinf(want))
        CHECK(buf[i] == want);
      else
        CHECK(std::fabs(buf[i] - want) <= c.rel_tol * std::fabs(want) + c.abs_tol);
    }
    CHECK(buf[n] == 42.0f);
  }
  Buffer buf(xs.size());
  std::copy(xs.begin(), xs.end(), buf.data());
  fn(buf.data(), xs.size());
  double worst = 0.0;
  float worst_x = 0.0f;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double want = float_range(c.exact(xs[i]));
    const double got = buf[i];
    if (std::isinf(want) || std::isnan(want)) {
      CHECK((got == want || (std::isnan(got) && std::isnan(want))));
      continue;
    }
    const double err = std::fabs(got - want) / (std::fabs(want) + c.abs_tol / c.rel_tol);
    if (err > worst) {
      worst = err;
      worst_x = xs[i];
    }
  }
  CAPTURE(worst_x);
  CHECK(worst <= c.rel_tol);
  MESSAGE(std::string(c.name) << " (" << impl << "): worst relative error " << worst << " at x=" << worst_x);
  // NaN propagates.
  std::vector<float> nan_in(9, kNaN);
  fn(nan_in.data(), nan_in.size());
  for (float v : nan_in) CHECK(std::isnan(v));
}

// Float results cannot be closer than half an ulp; 1e-6 relative (~8 ulp) is the target. Absolute floors only
// matter where the exact result is below float's normal range (≈1.2e-38), where float itself has lost bits.
const ActivationCase kActivations[] = {
    {"tanh", &k::vtanh, &k::vtanh_ref, &exact_tanh, 1e-6, 1e-37},
    {"sigmoid", &k::vsigmoid, &k::vsigmoid_ref, &exact_sigmoid, 1e-6, 1e-37},
    {"relu", &k::vrelu, &k::vrelu_ref, &exact_relu, 0.0, 0.0},
    {"relu6", &k::vrelu6, &k::vrelu6_ref, &exact_relu6, 0.0, 0.0},
    {"exp", &k::vexp, &k::vexp_ref, &exact_exp, 1e-6, 1e-37},
    // GELU's argument x/√2 is rounded to float before erfc; in the far negative tail erfc's sensitivity
    // (≈ 2z²·u relative) exceeds 1e-6 for x < −5, so there the floor is absolute (torch computes in float
    // too).
    {"gelu", &k::vgelu, &k::vgelu_ref, &exact_gelu, 1e-6, 1e-9},
};
}  // namespace

TEST_CASE("kernels: activations match double precision") {
  for (const ActivationCase& c : kActivations) {
    const std::string name = c.name;
    CAPTURE(name);
    for_each_backend([&] {
      if (c.rel_tol == 0.0) {
        const std::vector<float> xs = activation_inputs();
        for (std::size_t n = 0; n <= 27; ++n) {
          Buffer buf(n + 1);
          std::copy(xs.begin(), xs.begin() + n, buf.data());
          c.simd(buf.data(), n);
          for (std::size_t i = 0; i < n; ++i) CHECK(buf[i] == static_cast<float>(c.exact(xs[i])));
        }
        std::vector<float> nan_in(9, kNaN);
        c.simd(nan_in.data(), nan_in.size());
        for (float v : nan_in) CHECK(std::isnan(v));
        return;
      }
      check_activation(c, c.simd, k::simd_backend());
    });
    if (c.rel_tol > 0.0) check_activation(c, c.ref, "scalar ref");
  }
}

// ---------------------------------------------------------------- convolution
namespace {
// Direct double-precision convolution on HWC input with PyTorch-layout weights (OIHW, or C1HW when
// depthwise), so it also checks the layout conversion helpers.
std::vector<double> conv_double(const k::Conv2dParams& p, const std::vector<float>& in,
                                const std::vector<float>& w_torch, const float* bias, bool depthwise,
                                std::vector<double>* sum_abs) {
  const k::ConvGeometry g = k::conv2d_geometry(p);
  const std::size_t oc_n = depthwise ? p.in_c : p.out_c;
  std::vector<double> out(g.out_h * g.out_w * oc_n);
  sum_abs->assign(out.size(), 0.0);
  for (std::size_t oy = 0; oy < g.out_h; ++oy)
    for (std::size_t ox = 0; ox < g.out_w; ++ox)
      for (std::size_t oc = 0; oc < oc_n; ++oc) {
        double s = bias ? bias[oc] : 0.0, sa = std::fabs(s);
        for (std::size_t ky = 0; ky < p.kernel_h; ++ky)
          for (std::size_t kx = 0; kx < p.kernel_w; ++kx) {
            const long iy = static_cast<long>(oy * p.stride + ky) - static_cast<long>(g.pad_top);
            const long ix = static_cast<long>(ox * p.stride + kx) - static_cast<long>(g.pad_left);
            if (iy < 0 || ix < 0 || iy >= static_cast<long>(p.in_h) || ix >= static_cast<long>(p.in_w))
              continue;
            const std::size_t pix =
                (static_cast<std::size_t>(iy) * p.in_w + static_cast<std::size_t>(ix)) * p.in_c;
            if (depthwise) {
              const double t =
                  static_cast<double>(in[pix + oc]) * w_torch[(oc * p.kernel_h + ky) * p.kernel_w + kx];
              s += t;
              sa += std::fabs(t);
            } else {
              for (std::size_t ic = 0; ic < p.in_c; ++ic) {
                const double t = static_cast<double>(in[pix + ic]) *
                                 w_torch[((oc * p.in_c + ic) * p.kernel_h + ky) * p.kernel_w + kx];
                s += t;
                sa += std::fabs(t);
              }
            }
          }
        if (p.activation != k::Activation::none) s = std::max(s, 0.0);
        if (p.activation == k::Activation::relu6) s = std::min(s, 6.0);
        out[(oy * g.out_w + ox) * oc_n + oc] = s;
        (*sum_abs)[(oy * g.out_w + ox) * oc_n + oc] = sa;
      }
  return out;
}

using ConvFn = void (*)(const k::Conv2dParams&, const float*, const float*, const float*, float*);

bool check_conv(const k::Conv2dParams& p, bool depthwise, ConvFn fn, bool with_bias) {
  const std::size_t oc_n = depthwise ? p.in_c : p.out_c;
  std::vector<float> in(p.in_h * p.in_w * p.in_c);
  fill_uniform(in.data(), in.size());
  const std::size_t w_count =
      depthwise ? p.in_c * p.kernel_h * p.kernel_w : p.out_c * p.in_c * p.kernel_h * p.kernel_w;
  std::vector<float> w_torch(w_count), w_ours(w_count), bias(oc_n);
  fill_uniform(w_torch.data(), w_count);
  fill_uniform(bias.data(), oc_n, -2.0f, 2.0f);
  if (depthwise)
    k::depthwise_weights_from_c1hw(w_torch.data(), p.in_c, p.kernel_h, p.kernel_w, w_ours.data());
  else
    k::conv_weights_from_oihw(w_torch.data(), p.out_c, p.in_c, p.kernel_h, p.kernel_w, w_ours.data());
  const k::ConvGeometry g = k::conv2d_geometry(p);
  Buffer out(g.out_h * g.out_w * oc_n + 1, kNaN);
  out[g.out_h * g.out_w * oc_n] = 42.0f;
  // Input at an unaligned address too.
  Buffer in_buf(in.size() + 1);
  std::copy(in.begin(), in.end(), in_buf.data());
  fn(p, in_buf.data(), w_ours.data(), with_bias ? bias.data() : nullptr, out.data());
  std::vector<double> sum_abs;
  const std::vector<double> want =
      conv_double(p, in, w_torch, with_bias ? bias.data() : nullptr, depthwise, &sum_abs);
  const std::size_t taps = p.kernel_h * p.kernel_w * (depthwise ? 1 : p.in_c);
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(out[i] - want[i]) <= dot_bound(taps + 1, sum_abs[i]))) {
      FAIL_CHECK("conv mismatch at " << i << ": got " << out[i] << " want " << want[i] << " (in " << p.in_h
                                     << "x" << p.in_w << "x" << p.in_c << " k" << p.kernel_h << "x"
                                     << p.kernel_w << " s" << p.stride << " depthwise=" << depthwise << ")");
      return false;
    }
  }
  CHECK(out[want.size()] == 42.0f);
  return true;
}

void sweep_conv(ConvFn conv, ConvFn depthwise) {
  const std::pair<std::size_t, std::size_t> sizes[] = {{1, 1}, {2, 3}, {4, 4}, {5, 5}, {7, 6}, {8, 9}};
  for (auto [h, w] : sizes)
    for (std::size_t kernel : {1, 3, 5})
      for (std::size_t stride : {1, 2})
        for (int pad_mode = 0; pad_mode < 3; ++pad_mode) {
          k::Conv2dParams p;
          p.in_h = h;
          p.in_w = w;
          p.kernel_h = kernel;
          p.kernel_w = kernel;
          p.stride = stride;
          if (pad_mode == 0) {
            p.padding = k::Padding::same_tf;
          } else {
            p.padding = k::Padding::explicit_symmetric;
            p.pad_h = p.pad_w = pad_mode == 1 ? 0 : kernel / 2;
            if (h + 2 * p.pad_h < kernel || w + 2 * p.pad_w < kernel) continue;
          }
          for (std::size_t in_c : {1, 3, 9}) {
            p.in_c = in_c;
            p.activation = static_cast<k::Activation>((h + in_c + kernel) % 3);
            for (std::size_t out_c : {1, 4, 17}) {
              p.out_c = out_c;
              CHECK(check_conv(p, false, conv, out_c != 4));
            }
          }
          for (std::size_t c : {1, 3, 8, 17, 33, 40}) {
            p.in_c = c;
            p.activation = static_cast<k::Activation>((h + c + kernel) % 3);
            CHECK(check_conv(p, true, depthwise, c != 8));
          }
        }
  // MobileNetV2-like layers: the stride-2 3×3 stem on an even size (TF pads one row/column, bottom/right) and
  // a pointwise 1×1 expansion, which takes the pure-GEMM path.
  // in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride, padding, pad_h, pad_w, activation
  const k::Conv2dParams stem{16, 16, 3, 32, 3, 3, 2, k::Padding::same_tf, 0, 0, k::Activation::relu6};
  CHECK(check_conv(stem, false, conv, true));
  k::Conv2dParams pointwise;
  pointwise.in_h = 7;
  pointwise.in_w = 7;
  pointwise.in_c = 96;
  pointwise.out_c = 24;
  CHECK(check_conv(pointwise, false, conv, true));
  k::Conv2dParams dw = stem;
  dw.in_c = 144;
  CHECK(check_conv(dw, true, depthwise, true));
}
}  // namespace

TEST_CASE("kernels: conv2d and depthwise_conv2d, stride 1/2, SAME_tf and explicit padding") {
  for_each_backend([] { sweep_conv(&k::conv2d, &k::depthwise_conv2d); });
  sweep_conv(&k::conv2d_ref, &k::depthwise_conv2d_ref);
}

// The 3×3 interior path of depthwise_conv2d (kernels_simd.hpp) and its general loop both sum bias, then the valid
// taps in (ky, kx) order, like the scalar reference. Without fused multiply-adds (SSE2, WASM SIMD128) that is the
// reference's arithmetic exactly, so every output must equal it bit for bit: borders, interior, both strides and
// paddings, channel counts that take the interior path (multiples of 4) and ones that do not.
TEST_CASE("kernels: depthwise 3x3 gives the scalar reference's bits without FMA") {
  bool ran = false;
  for (const std::string& name : available_backends()) {
    if (name == "avx2+fma") continue;  // fused multiply-adds round once per tap: close, not equal (sweep above)
    k::select_simd_backend(name.c_str());
    CAPTURE(name);
    ran = true;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::size_t sizes[][2] = {{3, 3}, {4, 7}, {9, 5}, {12, 12}, {13, 11}};
    for (const auto& size : sizes)
      for (std::size_t stride : {1, 2})
        for (int pad_mode = 0; pad_mode < 3; ++pad_mode)
          for (std::size_t c : {4, 6, 16, 24, 36}) {
            const std::size_t h = size[0], w = size[1];
            k::Conv2dParams p;
            p.in_h = h;
            p.in_w = w;
            p.in_c = c;
            p.kernel_h = p.kernel_w = 3;
            p.stride = stride;
            p.padding = pad_mode == 0 ? k::Padding::same_tf : k::Padding::explicit_symmetric;
            p.pad_h = p.pad_w = pad_mode == 2 ? 1 : 0;
            p.activation = static_cast<k::Activation>((h + c + stride) % 3);
            const k::ConvGeometry g = k::conv2d_geometry(p);
            std::vector<float> in(h * w * c), wt(9 * c), bias(c);
            for (float& v : in) v = u(rng) * 4.0f;
            for (float& v : wt) v = u(rng);
            for (float& v : bias) v = u(rng);
            for (bool with_bias : {true, false}) {
              std::vector<float> ours(g.out_h * g.out_w * c, -7.0f), ref(ours.size(), -9.0f);
              const float* b = with_bias ? bias.data() : nullptr;
              k::depthwise_conv2d(p, in.data(), wt.data(), b, ours.data());
              k::depthwise_conv2d_ref(p, in.data(), wt.data(), b, ref.data());
              CAPTURE(h);
              CAPTURE(w);
              CAPTURE(stride);
              CAPTURE(pad_mode);
              CAPTURE(c);
              CHECK(std::memcmp(ours.data(), ref.data(), ours.size() * sizeof(float)) == 0);
            }
          }
  }
  k::select_simd_backend("auto");
  CHECK(ran);
}

TEST_CASE("kernels: conv geometry follows TensorFlow SAME and PyTorch explicit padding") {
  k::Conv2dParams p;
  p.in_h = 224;
  p.in_w = 224;
  p.in_c = 3;
  p.kernel_h = p.kernel_w = 3;
  p.stride = 2;
  p.padding = k::Padding::same_tf;
  k::ConvGeometry g = k::conv2d_geometry(p);
  // 224 → 112; total pad (112−1)·2 + 3 − 224 = 1 goes to the bottom/right only (MobileNetV2 from TFLite).
  CHECK(g.out_h == 112);
  CHECK(g.out_w == 112);
  CHECK(g.pad_top == 0);
  CHECK(g.pad_left == 0);
  p.in_h = 7;
  p.in_w = 8;
  g = k::conv2d_geometry(p);
  CHECK(g.out_h == 4);  // ceil(7/2); total pad 3·2 + 3 − 7 = 2 → 1 top, 1 bottom
  CHECK(g.pad_top == 1);
  CHECK(g.out_w == 4);  // total pad 3·2 + 3 − 8 = 1 → 0 left, 1 right
  CHECK(g.pad_left == 0);
  p.stride = 1;
  g = k::conv2d_geometry(p);
  CHECK(g.out_h == 7);
  CHECK(g.pad_top == 1);
  p.padding = k::Padding::explicit_symmetric;
  p.pad_h = 1;
  p.pad_w = 0;
  p.stride = 2;
  g = k::conv2d_geometry(p);
  CHECK(g.out_h == 4);  // (7 + 2 − 3)/2 + 1
  CHECK(g.out_w == 3);  // (8 − 3)/2 + 1
  p.stride = 0;
  CHECK_THROWS_AS(k::conv2d_geometry(p), attnlens::Error);
  p.stride = 1;
  p.kernel_h = 10;
  CHECK_THROWS_AS(k::conv2d_geometry(p), attnlens::Error);
  p.kernel_h = 0;
  CHECK_THROWS_AS(k::conv2d_geometry(p), attnlens::Error);
}

TEST_CASE("kernels: CHW and HWC conversions round-trip") {
  const std::size_t c = 3, h = 4, w = 5;
  std::vector<float> chw(c * h * w), hwc(c * h * w), back(c * h * w);
  for (std::size_t i = 0; i < chw.size(); ++i) chw[i] = static_cast<float>(i);
  k::chw_to_hwc(chw.data(), c, h, w, hwc.data());
  CHECK(hwc[(2 * w + 3) * c + 1] == chw[(1 * h + 2) * w + 3]);
  k::hwc_to_chw(hwc.data(), h, w, c, back.data());
  CHECK(back == chw);
}

// The operands of a packed-weights case: B [n × k] (stride k + 3), three input rows x (stride k + 1), their outputs y
// (stride n + 2, NaN-filled so that writes past a row show), a bias, and a reference row; uniform random values.
struct PackedCase {
  std::size_t ldb, rows, ldx, ldy;
  Buffer b, x, bias, y, y_ref;
  PackedCase(std::size_t n, std::size_t kk, std::size_t rows_ = 3)
      : ldb(kk + 3), rows(rows_), ldx(kk + 1), ldy(n + 2), b(n * ldb + 1), x(rows * ldx + 1), bias(n + 1),
        y(rows * ldy + 1, kNaN), y_ref(n + 1, kNaN) {
    fill_uniform(b.data(), n * ldb, -2.0f, 2.0f);
    fill_uniform(x.data(), rows * ldx, -2.0f, 2.0f);
    fill_uniform(bias.data(), n, -3.0f, 3.0f);
  }
};

TEST_CASE("kernels: packed weights (pack_rows, packed_row, linear_packed) match double precision") {
  auto check = [](std::size_t n, std::size_t kk, bool with_bias, k::Activation act) {
    PackedCase pc(n, kk);
    const std::size_t ldb = pc.ldb, rows = pc.rows, ldx = pc.ldx, ldy = pc.ldy;
    Buffer &b = pc.b, &x = pc.x, &bias = pc.bias, &y = pc.y, &y_ref = pc.y_ref;
    const float* bias_p = with_bias ? bias.data() : nullptr;
    const k::PackedMatrix w = k::pack_rows(n, kk, b.data(), ldb);
    REQUIRE(w.rows == n);
    REQUIRE(w.cols == kk);
    REQUIRE(w.data.size() == (n + k::kPanel - 1) / k::kPanel * k::kPanel * kk);
    std::vector<float> row(kk + 1);
    for (std::size_t j = 0; j < n; ++j) {  // the layout round-trips exactly
      k::packed_row(w, j, row.data());
      for (std::size_t p = 0; p < kk; ++p) REQUIRE(row[p] == b[j * ldb + p]);
    }
    // Three rows in one call (a pair through gemv_packed2, then one alone; strides ldx and ldy): each row must
    // have the same bits as the row computed alone.
    k::linear_packed(rows, x.data(), ldx, w, bias_p, y.data(), ldy, act);
    k::gemv_packed_ref(w, x.data(), bias_p, y_ref.data(), act);
    for (std::size_t i = 0; i < rows; ++i) {
      std::vector<float> alone(n + 1, kNaN);
      k::linear_packed(1, x.data() + i * ldx, ldx, w, bias_p, alone.data(), n, act);
      for (std::size_t j = 0; j < n; ++j) {
        double s = with_bias ? bias[j] : 0.0, sum_abs = std::fabs(s);
        for (std::size_t p = 0; p < kk; ++p) {
          const double t = static_cast<double>(x[i * ldx + p]) * b[j * ldb + p];
          s += t;
          sum_abs += std::fabs(t);
        }
        if (act != k::Activation::none) s = std::max(s, 0.0);
        if (act == k::Activation::relu6) s = std::min(s, 6.0);
        const float got = y[i * ldy + j];
        if (!(std::fabs(got - s) <= dot_bound(kk + 1, sum_abs)))
          FAIL_CHECK("linear_packed mismatch at (" << i << "," << j << ") n=" << n << " k=" << kk << ": got " << got
                                                   << " want " << s);
        if (i == 0 && !(std::fabs(y_ref[j] - s) <= dot_bound(kk + 1, sum_abs)))
          FAIL_CHECK("gemv_packed_ref mismatch at " << j << " n=" << n << " k=" << kk);
        if (std::memcmp(&got, &alone[j], sizeof(float)) != 0)
          FAIL_CHECK("row " << i << " alone differs from the same row in a batch at " << j << " n=" << n
                            << " k=" << kk);
      }
      CHECK(std::isnan(y[i * ldy + n]));  // nothing written past a row (the last panel's padding stays inside)
    }
  };
  for_each_backend([&] {
    for (std::size_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 255, 256, 257})
      for (std::size_t kk : {0, 1, 2, 3, 7, 8, 15, 16, 17, 255, 256, 257})
        check(n, kk, (n + kk) % 3 != 0, static_cast<k::Activation>((n + kk) % 3));
    check(10131, 256, false, k::Activation::none);  // the translator's tied output layer
  });
  std::vector<float> b(12, 1.0f), x(8, 1.0f), y(8, 0.0f);
  const k::PackedMatrix w = k::pack_rows(3, 4, b.data(), 4);
  CHECK_THROWS_AS(k::pack_rows(3, 4, b.data(), 2), attnlens::Error);
  CHECK_THROWS_AS(k::packed_row(w, 3, y.data()), attnlens::Error);
  CHECK_THROWS_AS(k::linear_packed(1, x.data(), 2, w, nullptr, y.data(), 3), attnlens::Error);
  CHECK_THROWS_AS(k::linear_packed(1, x.data(), 4, w, nullptr, y.data(), 2), attnlens::Error);
  k::PackedMatrix broken = w;
  broken.data.pop_back();
  CHECK_THROWS_AS(k::linear_packed(1, x.data(), 4, broken, nullptr, y.data(), 3), attnlens::Error);
}

TEST_CASE("kernels: int8 weights (Precision::int8) equal their scalar reference and stay within the rounding bound") {
  auto check = [](std::size_t n, std::size_t kk, bool with_bias, k::Activation act) {
    PackedCase pc(n, kk, 7);  // rows four at a time, then a pair, then one
    const std::size_t ldb = pc.ldb, rows = pc.rows, ldx = pc.ldx, ldy = pc.ldy;
    Buffer &b = pc.b, &x = pc.x, &bias = pc.bias, &y = pc.y, &y_ref = pc.y_ref;
    if (n > 2) std::fill(b.data() + 2 * ldb, b.data() + 2 * ldb + kk, 0.0f);  // an all-zero row: scale 0
    const float* bias_p = with_bias ? bias.data() : nullptr;
    const k::PackedMatrix w = k::pack_rows(n, kk, b.data(), ldb, k::Precision::int8);
    REQUIRE(w.precision == k::Precision::int8);
    REQUIRE(w.data.empty());
    REQUIRE(w.qscale.size() == n);
    const std::size_t k2 = kk + kk % 2;
    REQUIRE(w.qdata.size() == (n + k::kPanel - 1) / k::kPanel * k::kPanel * k2);
    std::vector<float> row(kk + 1);
    for (std::size_t j = 0; j < n; ++j) {  // dequantised rows are within half a step of the weights
      k::packed_row(w, j, row.data());
      for (std::size_t p = 0; p < kk; ++p)
        if (!(std::fabs(row[p] - b[j * ldb + p]) <= 0.5f * w.qscale[j] * (1.0f + 1e-4f) + 1e-6f))
          FAIL_CHECK("packed_row int8 at (" << j << "," << p << "): " << row[p] << " for " << b[j * ldb + p]);
    }
    k::linear_packed(rows, x.data(), ldx, w, bias_p, y.data(), ldy, act);
    for (std::size_t i = 0; i < rows; ++i) {
      std::vector<float> alone(n + 1, kNaN);
      k::linear_packed(1, x.data() + i * ldx, ldx, w, bias_p, alone.data(), n, act);
      k::linear_int8_ref(w, x.data() + i * ldx, bias_p, y_ref.data(), act);
      std::vector<std::int16_t> codes(k2 + 1);
      const float sx = k::quantize_input_int16(x.data() + i * ldx, kk, codes.data());
      for (std::size_t j = 0; j < n; ++j) {
        const float got = y[i * ldy + j];
        if (std::memcmp(&got, &y_ref[j], sizeof(float)) != 0)
          FAIL_CHECK("int8 product differs from its scalar reference at (" << i << "," << j << ") n=" << n
                                                                          << " k=" << kk);
        if (std::memcmp(&got, &alone[j], sizeof(float)) != 0)
          FAIL_CHECK("int8 row " << i << " alone differs from the same row in a batch at " << j);
        // |x·w − x̂·ŵ| ≤ Σ |x|·s_j/2 + Σ |ŵ|·s_x/2 (+ float rounding of the epilogue)
        double s = with_bias ? bias[j] : 0.0, bound = 0.0;
        for (std::size_t p = 0; p < kk; ++p) {
          const double wv = b[j * ldb + p], xv = x[i * ldx + p];
          s += wv * xv;
          bound += std::fabs(xv) * 0.5 * w.qscale[j] + (std::fabs(wv) + 0.5 * w.qscale[j]) * 0.5 * sx;
        }
        if (act != k::Activation::none) s = std::max(s, 0.0);
        if (act == k::Activation::relu6) s = std::min(s, 6.0);
        if (!(std::fabs(got - s) <= bound * 1.001 + 1e-5 * (std::fabs(s) + 1.0)))
          FAIL_CHECK("int8 product at (" << i << "," << j << ") n=" << n << " k=" << kk << ": got " << got
                                         << " want " << s << " bound " << bound);
      }
      CHECK(std::isnan(y[i * ldy + n]));
    }
  };
  for_each_backend([&] {
    for (std::size_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 255, 256, 257})
      for (std::size_t kk : {0, 1, 2, 3, 7, 8, 15, 16, 17, 255, 256, 257})
        check(n, kk, (n + kk) % 3 != 0, static_cast<k::Activation>((n + kk) % 3));
    check(10131, 256, false, k::Activation::none);
  });
  // The input codes of the SIMD quantiser equal the plain loop's, bit for bit: edge sizes, values exactly half-way
  // between two codes, zeros, a NaN or an Inf anywhere.
  for (std::size_t kk : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 255, 256, 257}) {
    std::vector<float> xs(kk);
    fill_uniform(xs.data(), kk, -3.0f, 3.0f);
    const std::size_t k2 = kk + kk % 2;
    for (int variant = 0; variant < 5; ++variant) {
      std::vector<float> v = xs;
      if (variant == 1) {  // half-way values: with amax = A·0.5 every x = (n + 0.5)·0.5 lands on n + 0.5
        for (std::size_t p = 0; p < kk; ++p) v[p] = (static_cast<float>(p % 9) - 4.0f + 0.5f) * 0.5f;
        const float a = static_cast<float>(std::min<long long>(32767, 2147483647LL / (127LL * static_cast<long long>(k2))));
        v[0] = a * 0.5f;
      }
      if (variant == 2) std::fill(v.begin(), v.end(), 0.0f);
      if (variant == 3) v[kk / 2] = kNaN;
      if (variant == 4) v[kk - 1] = -std::numeric_limits<float>::infinity();
      std::vector<std::int16_t> got(k2 + 1, 7), want(k2 + 1, 7);
      const float s_got = k::quantize_input_int16(v.data(), kk, got.data());
      const float s_want = k::quantize_input_int16_ref(v.data(), kk, want.data());
      CHECK_MESSAGE((s_got == s_want || (std::isnan(s_got) && std::isnan(s_want))), "k=" << kk << " variant " << variant);
      CHECK_MESSAGE(got == want, "k=" << kk << " variant " << variant);
    }
  }
  // The largest sums: every weight and input at the top of its range, k = 2048, same sign: no int32 overflow.
  {
    const std::size_t n = 9, kk = 2048;
    std::vector<float> b(n * kk, 1.5f), x(kk, -0.25f), y(n), y_ref(n);
    const k::PackedMatrix w = k::pack_rows(n, kk, b.data(), kk, k::Precision::int8);
    k::linear_packed(1, x.data(), kk, w, nullptr, y.data(), n);
    k::linear_int8_ref(w, x.data(), nullptr, y_ref.data());
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(y[j] == y_ref[j]);
      CHECK(y[j] == doctest::Approx(-0.375 * kk).epsilon(1e-6));
    }
  }
  // Non-finite inputs give NaN outputs (as float32 would), non-finite weights and too many inputs are refused.
  std::vector<float> b(12, 1.0f), x(4, 1.0f), y(3, 0.0f);
  const k::PackedMatrix w = k::pack_rows(3, 4, b.data(), 4, k::Precision::int8);
  x[1] = std::numeric_limits<float>::infinity();
  k::linear_packed(1, x.data(), 4, w, nullptr, y.data(), 3);
  CHECK(std::isnan(y[0]));
  b[5] = kNaN;
  CHECK_THROWS_AS(k::pack_rows(3, 4, b.data(), 4, k::Precision::int8), attnlens::Error);
  std::vector<float> wide(65537, 1.0f);
  CHECK_THROWS_AS(k::pack_rows(1, 65537, wide.data(), 65537, k::Precision::int8), attnlens::Error);
  k::PackedMatrix broken = w;
  broken.qdata.pop_back();
  CHECK_THROWS_AS(k::linear_packed(1, x.data(), 4, broken, nullptr, y.data(), 3), attnlens::Error);
}
