// Kernel benchmark: GFLOP/s of GEMM 256×256×256 and GEMV 1×512 · 512×2048 (plus a few shapes the models use),
// for every SIMD backend this build and CPU offer. Each measurement is one JSON line on stdout, e.g.
//   {"bench":"gemm","m":256,"n":256,"k":256,"gflops":61.2,"ms":0.548,"gflops_best":63.0,"backend":"avx2+fma","reps":15}
// so a JS harness (bench/run.mjs) can parse the native binary and the WASM build (node bench_kernels.js)
// alike. Methodology: warm-up, then `reps` timed samples, each long enough (≥ 20 ms of repeated calls) for
// the clock; the median sample is reported as gflops/ms, the fastest as gflops_best. Options: --backend NAME
// (only that backend), --reps N, --quick (shorter samples), --only BENCH.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "kernels/kernels.h"

namespace k = attnlens::kernels;

namespace {

struct Options {
  std::string backend;  // empty: every available backend
  int reps = 15;
  double min_sample_ms = 20.0;
  std::string only;  // run only this bench name ("gemm", "gemv", …); empty: all
};

bool enabled(const Options& opt, const char* bench) { return opt.only.empty() || opt.only == bench; }

struct Timing {
  double median_ms;
  double best_ms;  // the fastest sample: on a shared, loaded machine the closest to the uncontended speed
};

// Warm-up (caches, page faults, packing buffers), then how many back-to-back calls fill one sample.
template <class F>
int calls_per_sample(F& call, const Options& opt) {
  using clock = std::chrono::steady_clock;
  call();
  int calls = 1;
  for (;;) {
    const auto t0 = clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (ms >= opt.min_sample_ms || calls >= (1 << 20)) return calls;
    calls *= 2;
  }
}

// One sample: ms per call over `calls` back-to-back calls.
template <class F>
double sample_ms(F& call, int calls) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  for (int i = 0; i < calls; ++i) call();
  return std::chrono::duration<double, std::milli>(clock::now() - t0).count() / calls;
}

Timing summarise(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples.front()};
}

template <class F>
Timing time_per_call(F call, const Options& opt) {
  const int calls = calls_per_sample(call, opt);
  std::vector<double> samples;
  for (int r = 0; r < opt.reps; ++r) samples.push_back(sample_ms(call, calls));
  return summarise(samples);
}

// Two calls timed in alternation: sample r of A, then sample r of B, each long enough for the clock.
template <class FA, class FB>
std::pair<Timing, Timing> time_alternating(FA a, FB b, const Options& opt) {
  const int ca = calls_per_sample(a, opt), cb = calls_per_sample(b, opt);
  std::vector<double> sa, sb;
  for (int r = 0; r < opt.reps; ++r) {
    sa.push_back(sample_ms(a, ca));
    sb.push_back(sample_ms(b, cb));
  }
  return {summarise(sa), summarise(sb)};
}

void fill(std::vector<float>& v, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : v) x = dist(gen);
}

void report(const char* bench, std::size_t m, std::size_t n, std::size_t kk, Timing t, const Options& opt) {
  const double flops = 2.0 * static_cast<double>(m) * n * kk;
  std::printf(
      "{\"bench\":\"%s\",\"m\":%zu,\"n\":%zu,\"k\":%zu,\"gflops\":%.3f,\"ms\":%.5f,\"gflops_best\":%.3f,"
      "\"backend\":\"%s\",\"reps\":%d}\n",
      bench, m, n, kk, flops / (t.median_ms * 1e6), t.median_ms, flops / (t.best_ms * 1e6), k::simd_backend(),
      opt.reps);
  std::fflush(stdout);
}

void run_all(const Options& opt) {
  std::mt19937 gen(7);
  {  // the GEMM shape
    const std::size_t m = 256, n = 256, kk = 256;
    std::vector<float> a(m * kk), b(kk * n), c(m * n);
    fill(a, gen);
    fill(b, gen);
    if (enabled(opt, "gemm"))
      report("gemm", m, n, kk,
             time_per_call([&] { k::gemm(m, n, kk, a.data(), kk, b.data(), n, c.data(), n); }, opt), opt);
    if (enabled(opt, "gemm_nt"))
      report("gemm_nt", m, n, kk,
             time_per_call([&] { k::gemm_nt(m, n, kk, a.data(), kk, b.data(), kk, c.data(), n); }, opt), opt);
  }
  {  // the GEMV shape: x[1×512] · B[512×2048]
    const std::size_t n = 2048, kk = 512;
    std::vector<float> x(kk), b(kk * n), y(n);
    fill(x, gen);
    fill(b, gen);
    if (enabled(opt, "gemv"))
      report("gemv", 1, n, kk, time_per_call([&] { k::gemv(n, kk, x.data(), b.data(), n, y.data()); }, opt),
             opt);
    // The same work with the weight stored [out, in] (PyTorch Linear): y = B·x.
    if (enabled(opt, "gemv_nt"))
      report("gemv_nt", 1, n, kk,
             time_per_call([&] { k::gemv_nt(n, kk, x.data(), b.data(), kk, y.data()); }, opt), opt);
  }
  // Weights a decoding step streams: float32 packed panels against int8 codes (kernels.h, Precision::int8), on
  // the GEMV shape above and the translator's tied output layer (10131 × 256). The two alternate sample by sample
  // (this machine is shared: a slow phase hits both), and each gets its own line.
  if (enabled(opt, "gemv_int8")) {
    for (const auto& shape : {std::pair<std::size_t, std::size_t>{2048, 512}, {10131, 256}}) {
      const std::size_t n = shape.first, kk = shape.second;
      std::vector<float> x(kk), b(n * kk), y(n);
      fill(x, gen);
      fill(b, gen);
      const k::PackedMatrix f32 = k::pack_rows(n, kk, b.data(), kk);
      const k::PackedMatrix i8 = k::pack_rows(n, kk, b.data(), kk, k::Precision::int8);
      const auto [tf, ti] = time_alternating(
          [&] { k::linear_packed(1, x.data(), kk, f32, nullptr, y.data(), n); },
          [&] { k::linear_packed(1, x.data(), kk, i8, nullptr, y.data(), n); }, opt);
      report("gemv_packed_f32", 1, n, kk, tf, opt);
      report("gemv_packed_int8", 1, n, kk, ti, opt);
    }
  }
  // Many rows through one weight (the relation classifier's pair product, the captioner's grid projection,
  // MobileNetV2's 1×1 convolutions): the float32 GEMM the float models use against int8 codes (linear_packed,
  // four rows a pass), alternating sample by sample. Small inputs (k = 16) are where the int8 path loses.
  if (enabled(opt, "rows_int8")) {
    struct Shape {
      std::size_t m, n, k;
    };
    for (const Shape& s : {Shape{400, 128, 128}, Shape{121, 256, 1282}, Shape{484, 576, 96}, Shape{1936, 96, 16}}) {
      std::vector<float> a(s.m * s.k), b(s.n * s.k), c(s.m * s.n), bias(s.n);
      fill(a, gen);
      fill(b, gen);
      const k::PackedMatrix i8 = k::pack_rows(s.n, s.k, b.data(), s.k, k::Precision::int8);
      const auto [tf, ti] = time_alternating(
          [&] {
            k::gemm_nt_bias_act(s.m, s.n, s.k, a.data(), s.k, b.data(), s.k, c.data(), s.n, bias.data(),
                                k::Activation::relu);
          },
          [&] { k::linear_packed(s.m, a.data(), s.k, i8, bias.data(), c.data(), s.n, k::Activation::relu); }, opt);
      report("rows_gemm_nt_f32", s.m, s.n, s.k, tf, opt);
      report("rows_packed_int8", s.m, s.n, s.k, ti, opt);
    }
  }
  if (enabled(opt, "gemm512")) {  // a larger square GEMM, to show the blocking beyond L2
    const std::size_t m = 512, n = 512, kk = 512;
    std::vector<float> a(m * kk), b(kk * n), c(m * n);
    fill(a, gen);
    fill(b, gen);
    report("gemm", m, n, kk,
           time_per_call([&] { k::gemm(m, n, kk, a.data(), kk, b.data(), n, c.data(), n); }, opt), opt);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--backend" && i + 1 < argc) {
      opt.backend = argv[++i];
    } else if (arg == "--reps" && i + 1 < argc) {
      opt.reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--only" && i + 1 < argc) {
      opt.only = argv[++i];
    } else if (arg == "--quick") {
      opt.reps = 5;
      opt.min_sample_ms = 5.0;
    } else {
      std::fprintf(stderr,
                   "usage: bench_kernels [--backend auto|sse2|avx2+fma] [--reps N] [--quick] [--only "
                   "gemm|gemm_nt|gemv|gemv_nt|gemv_int8|rows_int8|gemm512]\n");
      return 2;
    }
  }
  try {
    std::vector<std::string> backends;
    if (!opt.backend.empty()) {
      backends.push_back(opt.backend);
    } else {
      for (const char* name : {"avx2+fma", "sse2"}) {
        try {
          k::select_simd_backend(name);
          backends.emplace_back(name);
        } catch (const attnlens::Error&) {
        }
      }
    }
    for (const std::string& name : backends) {
      k::select_simd_backend(name.c_str());
      run_all(opt);
    }
  } catch (const attnlens::Error& e) {
    std::fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 1;
  }
  return 0;
}
