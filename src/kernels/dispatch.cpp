// Public kernel entry points: choose the instruction set once (AVX2+FMA when the CPU has it, else SSE2; SSE2
// lowered to SIMD128 under WebAssembly), own the scratch memory, and build conv2d from im2col + GEMM.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "common.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attnlens::kernels {
namespace detail {
// Instantiated in kernels_sse2.cpp and kernels_avx2.cpp, each compiled with its own instruction-set flags.
extern template KernelTable make_kernel_table<xsimd::sse2>();
#if defined(ATTNLENS_HAVE_AVX2) && !defined(__EMSCRIPTEN__)
extern template KernelTable make_kernel_table<xsimd::fma3<xsimd::avx2>>();
#endif
}  // namespace detail

namespace {

using detail::KernelTable;

const KernelTable& sse2_table() {
  static const KernelTable table = detail::make_kernel_table<xsimd::sse2>();
  return table;
}

#if defined(ATTNLENS_HAVE_AVX2) && !defined(__EMSCRIPTEN__)
bool cpu_has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
const KernelTable& avx2_table() {
  static const KernelTable table = detail::make_kernel_table<xsimd::fma3<xsimd::avx2>>();
  return table;
}
#endif

const KernelTable* auto_table() {
#if defined(ATTNLENS_HAVE_AVX2) && !defined(__EMSCRIPTEN__)
  const char* forced = std::getenv("ATTNLENS_SIMD");
  const bool force_sse2 = forced && std::strcmp(forced, "sse2") == 0;
  if (!force_sse2 && cpu_has_avx2_fma()) return &avx2_table();
#endif
  return &sse2_table();
}

std::atomic<const KernelTable*> g_table{nullptr};

const KernelTable& table() {
  const KernelTable* t = g_table.load(std::memory_order_acquire);
  if (!t) {
    t = auto_table();
    g_table.store(t, std::memory_order_release);
  }
  return *t;
}

// Scratch memory that grows to the largest request and is reused: GEMM packing buffers must be 64-byte
// aligned (the micro-kernel uses aligned loads), so the vector is over-allocated and the pointer rounded up.
struct Scratch {
  std::vector<float> storage;
  float* get(std::size_t floats) {
    const std::size_t pad = 64 / sizeof(float);
    if (storage.size() < floats + pad) storage.resize(floats + pad);
    auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
    addr = (addr + 63) & ~static_cast<std::uintptr_t>(63);
    return reinterpret_cast<float*>(addr);
  }
};
thread_local Scratch t_gemm_scratch;
thread_local Scratch t_im2col_scratch;

// Splits keep every output element on the code path one thread would take: rows in multiples of 12 (whole
// register tiles for both mr = 4 and mr = 6), columns in multiples of 64 (whole nr = 8/16 tiles and whole SIMD
// vectors of the GEMV loops), so a product's bits do not depend on the thread count (parallel.h).
constexpr std::size_t kRowGrain = 12;
constexpr std::size_t kColGrain = 64;

void run_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
              std::size_t ldb, bool b_transposed, float* c, std::size_t ldc, bool accumulate,
              const float* bias = nullptr, Activation act = Activation::none) {
  const KernelTable& t = table();
  const std::size_t chunks = useful_chunks(m * n * k);
  if (m <= 2) {
    // One or two rows: packing B would cost as much as the product itself; stream B per row instead.
    parallel_for(n, kColGrain, [&](std::size_t j0, std::size_t j1) {
      const float* bj = b_transposed ? b + j0 * ldb : b + j0;
      for (std::size_t i = 0; i < m; ++i) {
        if (b_transposed)
          t.gemv_nt(j1 - j0, k, a + i * lda, bj, ldb, c + i * ldc + j0, accumulate);
        else
          t.gemv(j1 - j0, k, a + i * lda, bj, ldb, c + i * ldc + j0, accumulate);
      }
      t.bias_activation(c + j0, m, j1 - j0, ldc, bias ? bias + j0 : nullptr, act);
    }, chunks);
    return;
  }
  if (chunks > 1 && m >= n) {
    parallel_for(m, kRowGrain, [&](std::size_t i0, std::size_t i1) {
      float* workspace = t_gemm_scratch.get(t.gemm_workspace_floats(i1 - i0, n, k));
      t.gemm(i1 - i0, n, k, a + i0 * lda, lda, b, ldb, b_transposed, c + i0 * ldc, ldc, accumulate, bias, act,
             workspace);
    }, chunks);
    return;
  }
  parallel_for(n, kColGrain, [&](std::size_t j0, std::size_t j1) {
    float* workspace = t_gemm_scratch.get(t.gemm_workspace_floats(m, j1 - j0, k));
    t.gemm(m, j1 - j0, k, a, lda, b_transposed ? b + j0 * ldb : b + j0, ldb, b_transposed, c + j0, ldc,
           accumulate, bias ? bias + j0 : nullptr, act, workspace);
  }, chunks);
}

// fn(j0, j1) over output rows [j0, j1) of `w` in whole 8-row panels, split among threads when m rows of input make
// the product large enough: each output row is computed by the same panel code whatever the split.
void for_panel_ranges(const PackedMatrix& w, std::size_t m, FunctionRef<void(std::size_t, std::size_t)> fn) {
  const std::size_t panels = (w.rows + kPanel - 1) / kPanel;
  parallel_for(panels, 2, [&](std::size_t p0, std::size_t p1) { fn(p0 * kPanel, std::min(w.rows, p1 * kPanel)); },
               useful_chunks(m * w.rows * w.cols));
}

void check_leading_dim(const char* kernel, const char* name, std::size_t ld, std::size_t cols) {
  if (ld < cols)  // (the message is built only on failure: this runs on every kernel call)
    throw Error(std::string(kernel) + ": leading dimension " + name + "=" + std::to_string(ld) +
                " is smaller than the row length " + std::to_string(cols));
}

}  // namespace

void select_simd_backend(const char* name) {
  const std::string choice = name ? name : "auto";
  if (choice == "auto") {
    g_table.store(auto_table(), std::memory_order_release);
    return;
  }
  if (choice == "sse2" || choice == sse2_table().name) {
    g_table.store(&sse2_table(), std::memory_order_release);
    return;
  }
#if defined(ATTNLENS_HAVE_AVX2) && !defined(__EMSCRIPTEN__)
  if (choice == "avx2+fma") {
    require(cpu_has_avx2_fma(), "select_simd_backend: this CPU lacks AVX2 or FMA; use \"sse2\" or \"auto\"");
    g_table.store(&avx2_table(), std::memory_order_release);
    return;
  }
#endif
  throw Error("select_simd_backend: unknown or unavailable backend \"" + choice +
              "\"; choose \"auto\", \"sse2\"" +
#if defined(ATTNLENS_HAVE_AVX2) && !defined(__EMSCRIPTEN__)
              " or \"avx2+fma\""
#else
              " (this build has no AVX2 kernels)"
#endif
  );
}

const char* simd_backend() { return table().name; }

void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
          std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  check_leading_dim("gemm", "lda", lda, k);
  check_leading_dim("gemm", "ldb", ldb, n);
  check_leading_dim("gemm", "ldc", ldc, n);
  run_gemm(m, n, k, a, lda, b, ldb, false, c, ldc, accumulate);
}

void gemm_nt(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
             std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  check_leading_dim("gemm_nt", "lda", lda, k);
  check_leading_dim("gemm_nt", "ldb", ldb, k);
  check_leading_dim("gemm_nt", "ldc", ldc, n);
  run_gemm(m, n, k, a, lda, b, ldb, true, c, ldc, accumulate);
}

void gemm_bias_act(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                   const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                   Activation act) {
  check_leading_dim("gemm_bias_act", "lda", lda, k);
  check_leading_dim("gemm_bias_act", "ldb", ldb, n);
  check_leading_dim("gemm_bias_act", "ldc", ldc, n);
  run_gemm(m, n, k, a, lda, b, ldb, false, c, ldc, false, bias, act);
}

void gemm_nt_bias_act(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                      const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                      Activation act) {
  check_leading_dim("gemm_nt_bias_act", "lda", lda, k);
  check_leading_dim("gemm_nt_bias_act", "ldb", ldb, k);
  check_leading_dim("gemm_nt_bias_act", "ldc", ldc, n);
  run_gemm(m, n, k, a, lda, b, ldb, true, c, ldc, false, bias, act);
}

void gemv(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
          bool accumulate) {
  check_leading_dim("gemv", "ldb", ldb, n);
  table().gemv(n, k, x, b, ldb, y, accumulate);
}

void gemv_nt(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
             bool accumulate) {
  check_leading_dim("gemv_nt", "ldb", ldb, k);
  table().gemv_nt(n, k, x, b, ldb, y, accumulate);
}

PackedMatrix pack_rows(std::size_t n, std::size_t k, const float* b, std::size_t ldb, Precision precision) {
  check_leading_dim("pack_rows", "ldb", ldb, k);
  require(n == 0 || k == 0 || b != nullptr, "pack_rows: the matrix is null");
  if (precision == Precision::int8) return detail::pack_rows_int8(n, k, b, ldb);
  PackedMatrix w;
  w.rows = n;
  w.cols = k;
  w.data.assign((n + kPanel - 1) / kPanel * kPanel * k, 0.0f);
  for (std::size_t j = 0; j < n; ++j) {
    float* dst = w.data.data() + (j / kPanel) * kPanel * k + j % kPanel;
    const float* src = b + j * ldb;
    for (std::size_t p = 0; p < k; ++p) dst[p * kPanel] = src[p];
  }
  return w;
}

void packed_row(const PackedMatrix& w, std::size_t j, float* out) {
  if (j >= w.rows) throw Error("packed_row: row " + std::to_string(j) + " of " + std::to_string(w.rows));
  if (w.precision == Precision::int8) return detail::packed_row_int8(w, j, out);
  const float* src = w.data.data() + (j / kPanel) * kPanel * w.cols + j % kPanel;
  for (std::size_t p = 0; p < w.cols; ++p) out[p] = src[p * kPanel];
}

namespace {

// linear_packed on int8 weights. Kept out of line: inlined into linear_packed, its extra branch made the float32
// path of every decoder step ~10 % slower in WASM (bench/previous.mjs, the Transformer).
[[gnu::noinline]] void linear_packed_int8(std::size_t m, const float* x, std::size_t ldx, const PackedMatrix& w,
                                          const float* bias, float* y, std::size_t ldy, Activation act) {
  constexpr std::size_t kInt8RowSplit = 64;
  if (m >= kInt8RowSplit) {
    // Many rows (a 1×1 convolution's pixels): threads take rows, not outputs, so that each row's input codes are
    // made once (the weights fit in cache); the rows are independent, the bits the same.
    parallel_for(m, 4, [&](std::size_t i0, std::size_t i1) {
      detail::linear_int8(i1 - i0, x + i0 * ldx, ldx, w, bias, y + i0 * ldy, ldy, act, 0, w.rows);
    }, useful_chunks(m * w.rows * w.cols));
    return;
  }
  for_panel_ranges(w, m, [&](std::size_t j0, std::size_t j1) {
    detail::linear_int8(m, x, ldx, w, bias, y, ldy, act, j0, j1);
  });
}

}  // namespace

void linear_packed(std::size_t m, const float* x, std::size_t ldx, const PackedMatrix& w, const float* bias,
                   float* y, std::size_t ldy, Activation act) {
  check_leading_dim("linear_packed", "ldx", ldx, w.cols);
  check_leading_dim("linear_packed", "ldy", ldy, w.rows);
  if (w.precision == Precision::int8) return linear_packed_int8(m, x, ldx, w, bias, y, ldy, act);
  if (w.data.size() != (w.rows + kPanel - 1) / kPanel * kPanel * w.cols)
    throw Error("linear_packed: the packed matrix does not hold rows × cols");
  const KernelTable& t = table();
  for_panel_ranges(w, m, [&](std::size_t j0, std::size_t j1) {
    const std::size_t rows = j1 - j0;
    const float* data = w.data.data() + j0 * w.cols;
    const float* b = bias ? bias + j0 : nullptr;
    std::size_t i = 0;
    for (; i + 2 <= m; i += 2)  // rows in pairs: the weights are read once for both
      t.gemv_packed2(rows, w.cols, x + i * ldx, x + (i + 1) * ldx, data, y + i * ldy + j0, y + (i + 1) * ldy + j0,
                     b, act);
    if (i < m) t.gemv_packed(rows, w.cols, x + i * ldx, data, y + i * ldy + j0, b, act);
  });
}

float dot(const float* a, const float* b, std::size_t n) { return table().dot(a, b, n); }
void axpy(float alpha, const float* x, float* y, std::size_t n) { table().axpy(alpha, x, y, n); }
void add(const float* x, float* y, std::size_t n) { table().add(x, y, n); }
void mul(const float* x, float* y, std::size_t n) { table().mul(x, y, n); }
void scale(float alpha, float* x, std::size_t n) { table().scale(alpha, x, n); }
float vsum(const float* x, std::size_t n) { return table().vsum(x, n); }
float vmax(const float* x, std::size_t n) { return table().vmax(x, n); }

void softmax(float* x, std::size_t n, const std::uint8_t* keep) { table().softmax(x, n, keep); }

void softmax_rows(float* x, std::size_t rows, std::size_t n, std::size_t ld, const std::uint8_t* keep) {
  check_leading_dim("softmax_rows", "ld", ld, n);
  const KernelTable& t = table();
  for (std::size_t r = 0; r < rows; ++r) t.softmax(x + r * ld, n, keep ? keep + r * n : nullptr);
}

void add_bias_rows(float* y, std::size_t m, std::size_t n, std::size_t ldy, const float* bias) {
  check_leading_dim("add_bias_rows", "ldy", ldy, n);
  require(bias != nullptr || m == 0 || n == 0, "add_bias_rows: bias is null");
  table().bias_activation(y, m, n, ldy, bias, Activation::none);
}

void log_softmax(float* x, std::size_t n) { table().log_softmax(x, n); }

void layer_norm(const float* x, float* y, std::size_t n, const float* gamma, const float* beta, float eps) {
  require(eps >= 0.0f, "layer_norm: eps must be non-negative");
  table().layer_norm(x, y, n, gamma, beta, eps);
}

void vtanh(float* x, std::size_t n) { table().vtanh(x, n); }
void vsigmoid(float* x, std::size_t n) { table().vsigmoid(x, n); }
void vrelu(float* x, std::size_t n) { table().vrelu(x, n); }
void vrelu6(float* x, std::size_t n) { table().vrelu6(x, n); }
void vgelu(float* x, std::size_t n) { table().vgelu(x, n); }
void vexp(float* x, std::size_t n) { table().vexp(x, n); }

// conv2d = im2col + GEMM (Chellapilla et al. 2006): each output pixel's receptive field, in (ky, kx, ci)
// order with zeros for the padding, is one row of the patch matrix, and patches[out_h·out_w × KH·KW·C_in]
// times the HWIO weights [KH·KW·C_in × C_out] is the HWC output. A 1×1 stride-1 unpadded conv needs no
// patches at all: the input already is that matrix. Patches are built in bands of output rows to bound the
// scratch memory.
void conv2d(const Conv2dParams& p, const float* input, const float* weights_hwio, const float* bias,
            float* output) {
  const ConvGeometry g = conv2d_geometry(p);
  require(p.out_c >= 1, "conv2d: out_c must be at least 1");
  const std::size_t pixels = g.out_h * g.out_w;
  if (pixels == 0) return;
  const std::size_t patch = p.kernel_h * p.kernel_w * p.in_c;
  if (p.kernel_h == 1 && p.kernel_w == 1 && p.stride == 1 && g.pad_top == 0 && g.pad_left == 0 &&
      g.out_h == p.in_h && g.out_w == p.in_w) {
    run_gemm(pixels, p.out_c, p.in_c, input, p.in_c, weights_hwio, p.out_c, false, output, p.out_c, false,
             bias, p.activation);
  } else {
    const std::size_t band_floats_max = std::size_t{1} << 20;  // 4 MB of patches per band
    const std::size_t band_rows = std::max<std::size_t>(1, band_floats_max / (g.out_w * patch));
    for (std::size_t oy0 = 0; oy0 < g.out_h; oy0 += band_rows) {
      const std::size_t rows = std::min(band_rows, g.out_h - oy0);
      float* patches = t_im2col_scratch.get(rows * g.out_w * patch);
      parallel_for(
          rows, 1,
          [&](std::size_t r0, std::size_t r1) {
            float* dst = patches + r0 * g.out_w * patch;
            for (std::size_t oy = oy0 + r0; oy < oy0 + r1; ++oy) {
              for (std::size_t ox = 0; ox < g.out_w; ++ox) {
                for (std::size_t ky = 0; ky < p.kernel_h; ++ky) {
                  const std::size_t yy = oy * p.stride + ky;  // row in padded coordinates
                  const bool row_inside = yy >= g.pad_top && yy - g.pad_top < p.in_h;
                  for (std::size_t kx = 0; kx < p.kernel_w; ++kx, dst += p.in_c) {
                    const std::size_t xx = ox * p.stride + kx;
                    const bool inside = row_inside && xx >= g.pad_left && xx - g.pad_left < p.in_w;
                    const float* src =
                        inside ? input + ((yy - g.pad_top) * p.in_w + (xx - g.pad_left)) * p.in_c : nullptr;
                    if (p.in_c == 3) {  // an RGB stem: three stores, not a call to memcpy per tap
                      dst[0] = inside ? src[0] : 0.0f;
                      dst[1] = inside ? src[1] : 0.0f;
                      dst[2] = inside ? src[2] : 0.0f;
                    } else if (inside) {
                      std::memcpy(dst, src, p.in_c * sizeof(float));
                    } else {
                      std::memset(dst, 0, p.in_c * sizeof(float));
                    }
                  }
                }
              }
            }
          },
          useful_chunks(rows * g.out_w * patch));
      run_gemm(rows * g.out_w, p.out_c, patch, patches, patch, weights_hwio, p.out_c, false,
               output + oy0 * g.out_w * p.out_c, p.out_c, false, bias, p.activation);
    }
  }
}

void depthwise_conv2d(const Conv2dParams& p, const float* input, const float* weights_hwc, const float* bias,
                      float* output) {
  const ConvGeometry g = conv2d_geometry(p);
  const KernelTable& t = table();
  parallel_for(g.out_h, 1, [&](std::size_t oy0, std::size_t oy1) {
    t.depthwise_conv2d(p, g, input, weights_hwc, bias, output, oy0, oy1);
  }, useful_chunks(g.out_h * g.out_w * p.in_c * p.kernel_h * p.kernel_w));
}

}  // namespace attnlens::kernels
