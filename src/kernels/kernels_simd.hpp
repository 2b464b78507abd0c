// SIMD kernels, written once over xsimd batches and instantiated per instruction set (kernel_table.h).
//
// Everything here lives in an anonymous namespace on purpose: each instantiating translation unit is compiled
// with different -m flags, and internal linkage guarantees the linker never swaps an AVX2 copy of a helper
// into the SSE2 path (the ODR trap of multi-ISA builds).
#pragma once

#include <emmintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "kernels/kernel_table.h"

namespace attnlens::kernels::detail {
namespace {

template <class Arch>
using Batch = xsimd::batch<float, Arch>;
template <class Arch>
using IntBatch = xsimd::batch<std::int32_t, Arch>;

inline std::size_t min_size(std::size_t a, std::size_t b) { return a < b ? a : b; }

// ============================================================================================ epilogues
// The activations a GEMM or convolution can fuse into its final store (MobileNetV2's ReLU6, plain ReLU).
template <class Arch>
Batch<Arch> activate(const Batch<Arch>& v, Activation act) {
  using B = Batch<Arch>;
  if (act == Activation::none) return v;
  B r = xsimd::select(v < B(0.0f), B(0.0f), v);
  if (act == Activation::relu6) r = xsimd::select(r > B(6.0f), B(6.0f), r);
  return r;
}

inline float activate_scalar(float v, Activation act) {
  if (act == Activation::none) return v;
  float r = v < 0.0f ? 0.0f : v;
  if (act == Activation::relu6 && r > 6.0f) r = 6.0f;
  return r;
}

// ============================================================================================ GEMM
//
// Goto & van de Geijn, "Anatomy of high-performance matrix multiplication" (2008): B is packed once per
// (kc × nc) block into panels of NR columns laid out k-major, A per (mc × kc) block into micro-panels of MR
// rows, and an MR×NR register tile of C is accumulated over kc rank-1 updates: every step loads NR/W vectors
// of B, broadcasts MR scalars of A and issues MR·NR/W multiply-adds with no loads of C.
//
// Register tiles (16 vector registers on x86-64; V8 maps WASM SIMD onto the same 16 xmm):
//   AVX2+FMA  6×16: 12 accumulators + 2 B vectors + 1 broadcast = 15.
//   SSE2/WASM 4×8 :  8 accumulators + 2 B vectors + 1 broadcast + 1 temporary for the product (no FMA) = 12.
// 6×8 would fit 16 registers on paper, but measured under Node 20 (V8) at 256³ it ran at about half the speed
// of 4×8 (best of 40 samples: 27 vs 52 GFLOP/s; 5×8, 3×12, 3×16 and 8×4 were 25–31): V8's register allocator
// spills once the tile leaves it no slack. Natively 4×8 and 6×8 SSE2 were equal (~40). The macros below are
// tuning knobs for such experiments (-DATTNLENS_GEMM_SSE_MR=6 …), not configuration.
#ifndef ATTNLENS_GEMM_SSE_MR
#define ATTNLENS_GEMM_SSE_MR 4
#endif
#ifndef ATTNLENS_GEMM_AVX_MR
#define ATTNLENS_GEMM_AVX_MR 6
#endif
#ifndef ATTNLENS_GEMM_AVX_NV
#define ATTNLENS_GEMM_AVX_NV 2
#endif
#ifndef ATTNLENS_GEMM_KC
#define ATTNLENS_GEMM_KC 256
#endif
#ifndef ATTNLENS_GEMM_MC_TILES
#define ATTNLENS_GEMM_MC_TILES 16
#endif
#ifndef ATTNLENS_GEMM_NC
#define ATTNLENS_GEMM_NC 1024
#endif
#ifndef ATTNLENS_GEMM_SSE_NV
#define ATTNLENS_GEMM_SSE_NV 2
#endif
template <class Arch>
struct GemmBlocking {
  static constexpr bool is_sse = std::is_same<Arch, xsimd::sse2>::value;
  static constexpr std::size_t width = Batch<Arch>::size;
  static constexpr std::size_t mr = is_sse ? ATTNLENS_GEMM_SSE_MR : ATTNLENS_GEMM_AVX_MR;
  static constexpr std::size_t nv =
      is_sse ? ATTNLENS_GEMM_SSE_NV : ATTNLENS_GEMM_AVX_NV;  // vectors per row of the register tile
  static constexpr std::size_t nr = nv * width;
  static constexpr std::size_t kc =
      256;  // a kc×nr panel of B (16 KB at nr=16) stays in L1 across the mr-loop
  static constexpr std::size_t mc =
      mr * ATTNLENS_GEMM_MC_TILES;  // the packed mc×kc block of A (64–96 KB) stays in L2
  static constexpr std::size_t nc = ATTNLENS_GEMM_NC;  // the packed kc×nc block of B (1 MB) stays in L2/L3
};

template <class Arch>
std::size_t gemm_workspace_floats(std::size_t, std::size_t, std::size_t) {
  using G = GemmBlocking<Arch>;
  return G::kc * G::nc + G::mc * G::kc;
}

// The MR×NR micro-kernel: c[rows×cols] (+)= pa[kc×MR]ᵀ·pb[kc×NR] over the packed panels, then (on the last
// k-block only; the caller passes bias = null and act = none before that) + bias[cols] and the activation.
// Partial tiles at the right/bottom edges are computed in full (the packing padded them with zeros) and only
// the valid part stored.
template <class Arch>
void gemm_micro_kernel(std::size_t kc, const float* pa, const float* pb, float* c, std::size_t ldc,
                       std::size_t rows, std::size_t cols, bool add_to_c, const float* bias, Activation act) {
  using B = Batch<Arch>;
  using G = GemmBlocking<Arch>;
  constexpr std::size_t mr = G::mr, nv = G::nv, nr = G::nr, w = G::width;
  B acc[mr][nv];
  for (std::size_t r = 0; r < mr; ++r)
    for (std::size_t v = 0; v < nv; ++v) acc[r][v] = B(0.0f);
  for (std::size_t p = 0; p < kc; ++p) {
    B bv[nv];
    for (std::size_t v = 0; v < nv; ++v) bv[v] = B::load_aligned(pb + p * nr + v * w);
    for (std::size_t r = 0; r < mr; ++r) {
      const B av(pa[p * mr + r]);
      for (std::size_t v = 0; v < nv; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
    }
  }
  if (rows == mr && cols == nr) {
    for (std::size_t r = 0; r < mr; ++r) {
      for (std::size_t v = 0; v < nv; ++v) {
        float* dst = c + r * ldc + v * w;
        B out = acc[r][v];
        if (add_to_c) out += B::load_unaligned(dst);
        if (bias) out += B::load_unaligned(bias + v * w);
        activate<Arch>(out, act).store_unaligned(dst);
      }
    }
    return;
  }
  alignas(64) float tile[mr * nr];
  for (std::size_t r = 0; r < mr; ++r)
    for (std::size_t v = 0; v < nv; ++v) acc[r][v].store_aligned(tile + r * nr + v * w);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < cols; ++j) {
      float v = add_to_c ? c[r * ldc + j] + tile[r * nr + j] : tile[r * nr + j];
      if (bias) v += bias[j];
      c[r * ldc + j] = activate_scalar(v, act);
    }
}

// A[mc×kc] (row stride lda) → micro-panels of MR rows: pa[ir·kc + p·MR + r] = A[ir + r][p], zero past row mc.
template <class Arch>
void gemm_pack_a(std::size_t mc, std::size_t kc, const float* a, std::size_t lda, float* pa) {
  constexpr std::size_t mr = GemmBlocking<Arch>::mr;
  for (std::size_t ir = 0; ir < mc; ir += mr) {
    const std::size_t rows = min_size(mr, mc - ir);
    float* dst = pa + ir * kc;
    for (std::size_t r = 0; r < rows; ++r) {
      const float* src = a + (ir + r) * lda;
      for (std::size_t p = 0; p < kc; ++p) dst[p * mr + r] = src[p];
    }
    for (std::size_t r = rows; r < mr; ++r)
      for (std::size_t p = 0; p < kc; ++p) dst[p * mr + r] = 0.0f;
  }
}

// dst[q][r] = src[r][q] for a 4×4 block (row strides in floats). Raw SSE intrinsics on purpose: they are
// always-inline builtins (no linker-visible symbol to be merged across instruction-set translation units),
// they compile to VEX code in the AVX2 unit and Emscripten lowers them to SIMD128 shuffles.
inline void transpose_4x4(const float* src, std::size_t src_stride, float* dst, std::size_t dst_stride) {
  const __m128 r0 = _mm_loadu_ps(src);
  const __m128 r1 = _mm_loadu_ps(src + src_stride);
  const __m128 r2 = _mm_loadu_ps(src + 2 * src_stride);
  const __m128 r3 = _mm_loadu_ps(src + 3 * src_stride);
  const __m128 t0 = _mm_unpacklo_ps(r0, r1);  // r0[0] r1[0] r0[1] r1[1]
  const __m128 t1 = _mm_unpacklo_ps(r2, r3);  // r2[0] r3[0] r2[1] r3[1]
  const __m128 t2 = _mm_unpackhi_ps(r0, r1);  // r0[2] r1[2] r0[3] r1[3]
  const __m128 t3 = _mm_unpackhi_ps(r2, r3);  // r2[2] r3[2] r2[3] r3[3]
  _mm_storeu_ps(dst, _mm_movelh_ps(t0, t1));
  _mm_storeu_ps(dst + dst_stride, _mm_movehl_ps(t1, t0));
  _mm_storeu_ps(dst + 2 * dst_stride, _mm_movelh_ps(t2, t3));
  _mm_storeu_ps(dst + 3 * dst_stride, _mm_movehl_ps(t3, t2));
}

// B[kc×nc] → panels of NR columns: pb[jr·kc + p·NR + j] = B[p][jr + j], zero past column nc. With
// b_transposed the source is Bᵀ stored as [nc×kc] (a PyTorch Linear weight, or K in Q·Kᵀ).
template <class Arch>
void gemm_pack_b(std::size_t kc, std::size_t nc, const float* b, std::size_t ldb, bool b_transposed,
                 float* pb) {
  using B = Batch<Arch>;
  using G = GemmBlocking<Arch>;
  constexpr std::size_t nr = G::nr, w = G::width;
  for (std::size_t jr = 0; jr < nc; jr += nr) {
    const std::size_t cols = min_size(nr, nc - jr);
    float* dst = pb + jr * kc;
    if (!b_transposed) {
      for (std::size_t p = 0; p < kc; ++p) {
        const float* src = b + p * ldb + jr;
        float* row = dst + p * nr;
        if (cols == nr) {
          for (std::size_t v = 0; v < G::nv; ++v) B::load_unaligned(src + v * w).store_aligned(row + v * w);
        } else {
          for (std::size_t j = 0; j < cols; ++j) row[j] = src[j];
          for (std::size_t j = cols; j < nr; ++j) row[j] = 0.0f;
        }
      }
    } else {
      // Bᵀ source: column j of the panel is row jr + j of b. Full 4×4 blocks go through a register transpose
      // (contiguous loads and stores instead of kc·NR strided scalar stores); the edges are copied one by
      // one.
      const std::size_t cols4 = cols - cols % 4, kc4 = kc - kc % 4;
      for (std::size_t j = 0; j < cols4; j += 4) {
        const float* s0 = b + (jr + j) * ldb;
        std::size_t p = 0;
        for (; p < kc4; p += 4) transpose_4x4(s0 + p, ldb, dst + p * nr + j, nr);
        for (; p < kc; ++p)
          for (std::size_t q = 0; q < 4; ++q) dst[p * nr + j + q] = s0[q * ldb + p];
      }
      for (std::size_t j = cols4; j < cols; ++j) {
        const float* src = b + (jr + j) * ldb;
        for (std::size_t p = 0; p < kc; ++p) dst[p * nr + j] = src[p];
      }
      for (std::size_t j = cols; j < nr; ++j)
        for (std::size_t p = 0; p < kc; ++p) dst[p * nr + j] = 0.0f;
    }
  }
}

// C = act([C +] A·op(B) [+ bias]) with the epilogue fused into the last k-block's store.
template <class Arch>
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
          std::size_t ldb, bool b_transposed, float* c, std::size_t ldc, bool accumulate, const float* bias,
          Activation act, float* workspace) {
  using G = GemmBlocking<Arch>;
  if (m == 0 || n == 0) return;
  if (k == 0) {  // empty sum: C = act([C +] bias)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        c[i * ldc + j] = activate_scalar((accumulate ? c[i * ldc + j] : 0.0f) + (bias ? bias[j] : 0.0f), act);
    return;
  }
  float* pb = workspace;
  float* pa = workspace + G::kc * G::nc;
  for (std::size_t jc = 0; jc < n; jc += G::nc) {
    const std::size_t nc = min_size(G::nc, n - jc);
    for (std::size_t pc = 0; pc < k; pc += G::kc) {
      const std::size_t kc = min_size(G::kc, k - pc);
      const bool add_to_c = accumulate || pc > 0;
      const bool last = pc + kc == k;
      if (b_transposed)
        gemm_pack_b<Arch>(kc, nc, b + jc * ldb + pc, ldb, true, pb);
      else
        gemm_pack_b<Arch>(kc, nc, b + pc * ldb + jc, ldb, false, pb);
      for (std::size_t ic = 0; ic < m; ic += G::mc) {
        const std::size_t mc = min_size(G::mc, m - ic);
        gemm_pack_a<Arch>(mc, kc, a + ic * lda + pc, lda, pa);
        for (std::size_t jr = 0; jr < nc; jr += G::nr) {
          const std::size_t cols = min_size(G::nr, nc - jr);
          for (std::size_t ir = 0; ir < mc; ir += G::mr) {
            const std::size_t rows = min_size(G::mr, mc - ir);
            gemm_micro_kernel<Arch>(kc, pa + ir * kc, pb + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc, rows,
                                    cols, add_to_c, last && bias ? bias + jc + jr : nullptr,
                                    last ? act : Activation::none);
          }
        }
      }
    }
  }
}

// ============================================================================================ GEMV
// y = x·B with B [k×n] row-major: stream R rows of B at a time (contiguous, prefetch-friendly) and update y
// (which stays in L1) with R multiply-adds per load/store of y. The product is memory-bound (every element of
// B is used once), so the aim is simply to keep the loads streaming. 8 rows measured slightly ahead of 4 and
// 2 in WASM (best-of-40 samples, 1×512·512×2048).
#ifndef ATTNLENS_GEMV_ROWS
#define ATTNLENS_GEMV_ROWS 8
#endif
template <class Arch>
void gemv(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
          bool accumulate) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  constexpr std::size_t rows = ATTNLENS_GEMV_ROWS;
  if (!accumulate)
    for (std::size_t j = 0; j < n; ++j) y[j] = 0.0f;
  const std::size_t n_vec = n - n % w;
  std::size_t p = 0;
  for (; p + rows <= k; p += rows) {
    const float* bp = b + p * ldb;
    B xs[rows];
    for (std::size_t r = 0; r < rows; ++r) xs[r] = B(x[p + r]);
    std::size_t j = 0;
    for (; j < n_vec; j += w) {
      B acc = B::load_unaligned(y + j);
      for (std::size_t r = 0; r < rows; ++r)
        acc = xsimd::fma(xs[r], B::load_unaligned(bp + r * ldb + j), acc);
      acc.store_unaligned(y + j);
    }
    for (; j < n; ++j) {
      float s = y[j];
      for (std::size_t r = 0; r < rows; ++r) s += x[p + r] * bp[r * ldb + j];
      y[j] = s;
    }
  }
  for (; p < k; ++p) {
    const float* b0 = b + p * ldb;
    const B x0(x[p]);
    std::size_t j = 0;
    for (; j < n_vec; j += w)
      xsimd::fma(x0, B::load_unaligned(b0 + j), B::load_unaligned(y + j)).store_unaligned(y + j);
    for (; j < n; ++j) y[j] += x[p] * b0[j];
  }
}

// y[j] = B[j]·x with B [n×k]: four rows at a time share each load of x; horizontal sums at the end (xsimd 8.1
// has no reduce_add: hadd).
template <class Arch>
void gemv_nt(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
             bool accumulate) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  const std::size_t k_vec = k - k % w;
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* r0 = b + j * ldb;
    const float* r1 = r0 + ldb;
    const float* r2 = r1 + ldb;
    const float* r3 = r2 + ldb;
    B a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
    std::size_t p = 0;
    for (; p < k_vec; p += w) {
      const B xv = B::load_unaligned(x + p);
      a0 = xsimd::fma(B::load_unaligned(r0 + p), xv, a0);
      a1 = xsimd::fma(B::load_unaligned(r1 + p), xv, a1);
      a2 = xsimd::fma(B::load_unaligned(r2 + p), xv, a2);
      a3 = xsimd::fma(B::load_unaligned(r3 + p), xv, a3);
    }
    float s0 = xsimd::hadd(a0), s1 = xsimd::hadd(a1), s2 = xsimd::hadd(a2), s3 = xsimd::hadd(a3);
    for (; p < k; ++p) {
      s0 += r0[p] * x[p];
      s1 += r1[p] * x[p];
      s2 += r2[p] * x[p];
      s3 += r3[p] * x[p];
    }
    y[j] = accumulate ? y[j] + s0 : s0;
    y[j + 1] = accumulate ? y[j + 1] + s1 : s1;
    y[j + 2] = accumulate ? y[j + 2] + s2 : s2;
    y[j + 3] = accumulate ? y[j + 3] + s3 : s3;
  }
  for (; j < n; ++j) {
    const float* r0 = b + j * ldb;
    B a0(0.0f);
    std::size_t p = 0;
    for (; p < k_vec; p += w) a0 = xsimd::fma(B::load_unaligned(r0 + p), B::load_unaligned(x + p), a0);
    float s0 = xsimd::hadd(a0);
    for (; p < k; ++p) s0 += r0[p] * x[p];
    y[j] = accumulate ? y[j] + s0 : s0;
  }
}

// y = act(B·x + bias) with B in panels of kPanel outputs, k-major (kernels.h). Per panel, for every p: one
// broadcast of x[p] and kPanel/W loads, straight down the panel; even and odd p go to two sets of accumulators
// (SSE2/WASM: 4 chains of 4 lanes, AVX2: 2 of 8), so the adds' latency overlaps. No horizontal sums.
// gemv_packed2 does two rows with one pass over the weights (a beam's rows): each row's sums are formed in
// exactly the same order as gemv_packed's, so a row gives the same bits alone or paired.
template <class Arch>
void store_panel(const Batch<Arch>* even, const Batch<Arch>* odd, std::size_t j0, std::size_t n, float* y,
                 const float* bias, Activation act) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  constexpr std::size_t V = kPanel / w;
  if (j0 + kPanel <= n) {
    for (std::size_t v = 0; v < V; ++v) {
      B r = even[v] + odd[v];
      if (bias != nullptr) r += B::load_unaligned(bias + j0 + v * w);
      activate<Arch>(r, act).store_unaligned(y + j0 + v * w);
    }
  } else {  // the zero-padded last panel: only its first n − j0 outputs exist
    alignas(64) float out[kPanel];
    for (std::size_t v = 0; v < V; ++v) (even[v] + odd[v]).store_unaligned(out + v * w);
    for (std::size_t i = 0; j0 + i < n; ++i)
      y[j0 + i] = activate_scalar(out[i] + (bias != nullptr ? bias[j0 + i] : 0.0f), act);
  }
}

template <class Arch>
void gemv_packed(std::size_t n, std::size_t k, const float* x, const float* panels, float* y, const float* bias,
                 Activation act) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  constexpr std::size_t V = kPanel / w;
  static_assert(kPanel % w == 0, "a panel is a whole number of vectors");
  const std::size_t k2 = k - k % 2;
  for (std::size_t j0 = 0; j0 < n; j0 += kPanel) {
    const float* q = panels + j0 * k;
    B even[V], odd[V];
    for (std::size_t v = 0; v < V; ++v) even[v] = odd[v] = B(0.0f);
    std::size_t p = 0;
    for (; p < k2; p += 2) {
      const B x0(x[p]), x1(x[p + 1]);
      const float* w0 = q + p * kPanel;
      for (std::size_t v = 0; v < V; ++v) even[v] = xsimd::fma(x0, B::load_unaligned(w0 + v * w), even[v]);
      for (std::size_t v = 0; v < V; ++v) odd[v] = xsimd::fma(x1, B::load_unaligned(w0 + kPanel + v * w), odd[v]);
    }
    if (p < k) {
      const B x0(x[p]);
      for (std::size_t v = 0; v < V; ++v)
        even[v] = xsimd::fma(x0, B::load_unaligned(q + p * kPanel + v * w), even[v]);
    }
    store_panel<Arch>(even, odd, j0, n, y, bias, act);
  }
}

template <class Arch>
void gemv_packed2(std::size_t n, std::size_t k, const float* xa, const float* xb, const float* panels, float* ya,
                  float* yb, const float* bias, Activation act) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  constexpr std::size_t V = kPanel / w;
  const std::size_t k2 = k - k % 2;
  for (std::size_t j0 = 0; j0 < n; j0 += kPanel) {
    const float* q = panels + j0 * k;
    B ea[V], oa[V], eb[V], ob[V];
    for (std::size_t v = 0; v < V; ++v) ea[v] = oa[v] = eb[v] = ob[v] = B(0.0f);
    std::size_t p = 0;
    for (; p < k2; p += 2) {
      const B a0(xa[p]), b0(xb[p]);
      const float* w0 = q + p * kPanel;
      for (std::size_t v = 0; v < V; ++v) {
        const B wv = B::load_unaligned(w0 + v * w);
        ea[v] = xsimd::fma(a0, wv, ea[v]);
        eb[v] = xsimd::fma(b0, wv, eb[v]);
      }
      const B a1(xa[p + 1]), b1(xb[p + 1]);
      for (std::size_t v = 0; v < V; ++v) {
        const B wv = B::load_unaligned(w0 + kPanel + v * w);
        oa[v] = xsimd::fma(a1, wv, oa[v]);
        ob[v] = xsimd::fma(b1, wv, ob[v]);
      }
    }
    if (p < k) {
      const B a0(xa[p]), b0(xb[p]);
      for (std::size_t v = 0; v < V; ++v) {
        const B wv = B::load_unaligned(q + p * kPanel + v * w);
        ea[v] = xsimd::fma(a0, wv, ea[v]);
        eb[v] = xsimd::fma(b0, wv, eb[v]);
      }
    }
    store_panel<Arch>(ea, oa, j0, n, ya, bias, act);
    store_panel<Arch>(eb, ob, j0, n, yb, bias, act);
  }
}

// ============================================================================================ vector ops
template <class Arch>
float dot(const float* a, const float* b, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  B s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);  // four chains hide the add latency
  std::size_t i = 0;
  for (; i + 4 * w <= n; i += 4 * w) {
    s0 = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), s0);
    s1 = xsimd::fma(B::load_unaligned(a + i + w), B::load_unaligned(b + i + w), s1);
    s2 = xsimd::fma(B::load_unaligned(a + i + 2 * w), B::load_unaligned(b + i + 2 * w), s2);
    s3 = xsimd::fma(B::load_unaligned(a + i + 3 * w), B::load_unaligned(b + i + 3 * w), s3);
  }
  for (; i + w <= n; i += w) s0 = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), s0);
  float s = xsimd::hadd((s0 + s1) + (s2 + s3));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

template <class Arch>
float vsum(const float* x, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  B s0(0.0f), s1(0.0f);
  std::size_t i = 0;
  for (; i + 2 * w <= n; i += 2 * w) {
    s0 += B::load_unaligned(x + i);
    s1 += B::load_unaligned(x + i + w);
  }
  for (; i + w <= n; i += w) s0 += B::load_unaligned(x + i);
  float s = xsimd::hadd(s0 + s1);
  for (; i < n; ++i) s += x[i];
  return s;
}

template <class Arch>
float vmax(const float* x, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  float m = -std::numeric_limits<float>::infinity();
  std::size_t i = 0;
  if (n >= w) {
    B mv = B::load_unaligned(x);
    for (i = w; i + w <= n; i += w) mv = xsimd::max(mv, B::load_unaligned(x + i));
    alignas(64) float lanes[B::size];
    mv.store_aligned(lanes);
    for (std::size_t l = 0; l < w; ++l) m = lanes[l] > m ? lanes[l] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// Applies f to every element in place: full vectors through f(batch), the tail through a zero-padded vector
// so the scalar remainder computes exactly the same function as the vector lanes.
template <class Arch, class F>
void map_inplace(float* x, std::size_t n, F f) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w) f(B::load_unaligned(x + i)).store_unaligned(x + i);
  if (i < n) {
    alignas(64) float tail[B::size] = {};
    for (std::size_t j = 0; j < n - i; ++j) tail[j] = x[i + j];
    f(B::load_aligned(tail)).store_aligned(tail);
    for (std::size_t j = 0; j < n - i; ++j) x[i + j] = tail[j];
  }
}

template <class Arch>
void axpy(float alpha, const float* x, float* y, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  const B av(alpha);
  std::size_t i = 0;
  for (; i + w <= n; i += w)
    xsimd::fma(av, B::load_unaligned(x + i), B::load_unaligned(y + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] += alpha * x[i];
}

template <class Arch>
void add(const float* x, float* y, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w) (B::load_unaligned(x + i) + B::load_unaligned(y + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] += x[i];
}

template <class Arch>
void mul(const float* x, float* y, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w) (B::load_unaligned(x + i) * B::load_unaligned(y + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] *= x[i];
}

template <class Arch>
void scale(float alpha, float* x, std::size_t n) {
  const Batch<Arch> av(alpha);
  map_inplace<Arch>(x, n, [&](const Batch<Arch>& v) { return v * av; });
}

// ============================================================================================ math
// exp(x) = 2ⁿ·exp(r), n = round(x·log2(e)), r = x − n·ln2 ∈ [−ln2/2, ln2/2] (Cody & Waite 1980: ln2 split
// into ln2_hi, whose 9 significant bits make n·ln2_hi exact for |n| ≤ 2⁸, plus the remainder ln2_lo). exp(r)
// is its Taylor polynomial to r⁷: the truncation error |r|⁸/8! ≤ 5.3e-9 relative is below float rounding. 2ⁿ
// is built in the exponent bits as 2^(n−n/2)·2^(n/2) so that n down to −150 (denormal results) and up to 128
// never leave the exponent range.
template <class Arch>
Batch<Arch> exp_batch(const Batch<Arch>& x_in) {
  using B = Batch<Arch>;
  using I = IntBatch<Arch>;
  const B overflow(88.72283935546875f);  // ln(FLT_MAX), rounded up: beyond it exp(x) is +inf
  const B underflow(-103.97207708f);     // ln(2^-150): below it exp(x) rounds to 0
  const B x = xsimd::min(xsimd::max(x_in, B(-104.0f)), B(89.0f));
  // Rounding by the magic constant 1.5·2²³: adding it pushes the fraction bits out, leaving round(t) in the
  // low mantissa bits (valid for |t| < 2²²), with no float→int conversion instruction needed.
  const B magic(12582912.0f);
  const B t = xsimd::fma(x, B(1.44269504088896341f), magic);
  const B n = t - magic;
  const I ni = xsimd::bitwise_cast<I>(t) - xsimd::bitwise_cast<I>(magic);
  B r = xsimd::fma(n, B(-0.693359375f), x);
  r = xsimd::fma(n, B(2.12194440e-4f), r);
  B p(1.0f / 5040.0f);
  p = xsimd::fma(p, r, B(1.0f / 720.0f));
  p = xsimd::fma(p, r, B(1.0f / 120.0f));
  p = xsimd::fma(p, r, B(1.0f / 24.0f));
  p = xsimd::fma(p, r, B(1.0f / 6.0f));
  p = xsimd::fma(p, r, B(0.5f));
  p = xsimd::fma(p, r, B(1.0f));
  p = xsimd::fma(p, r, B(1.0f));
  const I half = ni >> 1;
  const I rest = ni - half;
  const B scale_a = xsimd::bitwise_cast<B>((half + I(127)) << 23);
  const B scale_b = xsimd::bitwise_cast<B>((rest + I(127)) << 23);
  B result = (p * scale_a) * scale_b;
  result = xsimd::select(x_in > overflow, B(std::numeric_limits<float>::infinity()), result);
  result = xsimd::select(x_in < underflow, B(0.0f), result);
  return xsimd::select(xsimd::isnan(x_in), x_in, result);
}

// tanh(x) ≈ x·P(x²)/Q(x²) with P of degree 5 and Q of degree 3 in x², P(0) = Q(0) = 1, for |x| ≤ 7.9 and
// ±tanh(7.9) beyond (1 − tanh 7.9 = 2.7e-7). The coefficients minimise the largest relative error on [0, 7.9]
// (1.8e-8 before rounding them to float; `python3 scripts/fit-tanh.py 5 3 7.9` prints them); evaluated in float
// without FMA the worst relative error over every 7th float in [1e-7, 12] is 3.4e-7. Odd in x by construction,
// so tanh(−0) = −0, and a small x gives x·1/1. About 23 SIMD128 instructions per four values (two Horner chains,
// one division), half the cost of the form through expm1 it replaced (2026-12-03, bench/README.md).
template <class Arch>
Batch<Arch> tanh_batch(const Batch<Arch>& x) {
  using B = Batch<Arch>;
  const B xc = xsimd::min(xsimd::max(x, B(-7.9f)), B(7.9f));
  const B s = xc * xc;
  B p = xsimd::fma(s, B(2.4290187916609085e-11f), B(-1.4976505369190818e-08f));
  p = xsimd::fma(p, s, B(9.96246308204718e-06f));
  p = xsimd::fma(p, s, B(0.0029946647118777037f));
  p = xsimd::fma(p, s, B(0.1298731565475464f));
  p = xsimd::fma(p, s, B(1.0f));
  B q = xsimd::fma(s, B(0.0002384402323514223f), B(0.024063650518655777f));
  q = xsimd::fma(q, s, B(0.46320638060569763f));
  q = xsimd::fma(q, s, B(1.0f));
  return xsimd::select(xsimd::isnan(x), x, (xc * p) / q);
}

// σ(x) = 1/(1 + e^(−x)) for x ≥ 0 and e^x/(1 + e^x) for x < 0: only e^(−|x|) is evaluated, so nothing
// overflows and the negative tail keeps its relative precision.
template <class Arch>
Batch<Arch> sigmoid_batch(const Batch<Arch>& x) {
  using B = Batch<Arch>;
  const B e = exp_batch<Arch>(-xsimd::abs(x));
  const B inv = B(1.0f) / (B(1.0f) + e);
  return xsimd::select(x >= B(0.0f), inv, e * inv);
}

// GELU(x) = x·Φ(x) = ½·x·erfc(−x/√2) (Hendrycks & Gimpel 2016, the exact form of torch.nn.GELU()). erfc
// rather than 1 + erf keeps the negative tail (Φ(x) ≪ 1) relatively accurate; xsimd's erfc is a rational
// approximation accurate to a few ulp.
template <class Arch>
Batch<Arch> gelu_batch(const Batch<Arch>& x) {
  using B = Batch<Arch>;
  return B(0.5f) * x * xsimd::erfc(x * B(-0.70710678118654752f));
}

template <class Arch>
void vexp(float* x, std::size_t n) {
  map_inplace<Arch>(x, n, [](const Batch<Arch>& v) { return exp_batch<Arch>(v); });
}
template <class Arch>
void vtanh(float* x, std::size_t n) {
  map_inplace<Arch>(x, n, [](const Batch<Arch>& v) { return tanh_batch<Arch>(v); });
}
template <class Arch>
void vsigmoid(float* x, std::size_t n) {
  map_inplace<Arch>(x, n, [](const Batch<Arch>& v) { return sigmoid_batch<Arch>(v); });
}
template <class Arch>
void vgelu(float* x, std::size_t n) {
  map_inplace<Arch>(x, n, [](const Batch<Arch>& v) { return gelu_batch<Arch>(v); });
}
// max(x, 0) with the comparison written out so that NaN stays NaN (as torch.relu) on every backend.
template <class Arch>
void vrelu(float* x, std::size_t n) {
  using B = Batch<Arch>;
  map_inplace<Arch>(x, n, [](const B& v) { return xsimd::select(v < B(0.0f), B(0.0f), v); });
}
template <class Arch>
void vrelu6(float* x, std::size_t n) {
  using B = Batch<Arch>;
  map_inplace<Arch>(x, n, [](const B& v) {
    return xsimd::select(v > B(6.0f), B(6.0f), xsimd::select(v < B(0.0f), B(0.0f), v));
  });
}

// ============================================================================================ normalisation
// softmax(x)_i = exp(x_i − m)/Σ_j exp(x_j − m), m = max over kept entries: every exponent is ≤ 0, so nothing
// overflows whatever the inputs (Bridle 1990; the usual max-shift). Masked entries are set to −inf first, so
// exp gives exactly 0 for them and they take no part in max or sum.
template <class Arch>
void softmax(float* x, std::size_t n, const std::uint8_t* keep) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  if (n == 0) return;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  if (keep)
    for (std::size_t i = 0; i < n; ++i)
      if (!keep[i]) x[i] = neg_inf;
  const float mx = vmax<Arch>(x, n);
  if (mx == neg_inf) {  // all masked: the contract asks for zeros
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.0f;
    return;
  }
  const B mv(mx);
  B sum_v(0.0f);
  std::size_t i = 0;
  for (; i + w <= n; i += w) {
    const B e = exp_batch<Arch>(B::load_unaligned(x + i) - mv);
    e.store_unaligned(x + i);
    sum_v += e;
  }
  float sum = xsimd::hadd(sum_v);
  if (i < n) {
    alignas(64) float tail[B::size];
    for (std::size_t j = 0; j < w; ++j) tail[j] = i + j < n ? x[i + j] - mx : neg_inf;
    exp_batch<Arch>(B::load_aligned(tail)).store_aligned(tail);
    for (std::size_t j = 0; i + j < n; ++j) {
      x[i + j] = tail[j];
      sum += tail[j];
    }
  }
  scale<Arch>(1.0f / sum, x, n);
}

// log_softmax(x)_i = x_i − m − log Σ_j exp(x_j − m).
template <class Arch>
void log_softmax(float* x, std::size_t n) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  if (n == 0) return;
  const float mx = vmax<Arch>(x, n);
  if (std::isinf(mx) || std::isnan(mx)) {
    // +inf dominates (log-prob 0 there, −inf elsewhere); all −inf has no distribution (NaN, as PyTorch).
    for (std::size_t i = 0; i < n; ++i)
      x[i] = mx > 0 ? (x[i] == mx ? 0.0f : -std::numeric_limits<float>::infinity())
                    : std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const B mv(mx);
  B sum_v(0.0f);
  std::size_t i = 0;
  for (; i + w <= n; i += w) sum_v += exp_batch<Arch>(B::load_unaligned(x + i) - mv);
  float sum = xsimd::hadd(sum_v);
  if (i < n) {
    alignas(64) float tail[B::size];
    for (std::size_t j = 0; j < w; ++j)
      tail[j] = i + j < n ? x[i + j] - mx : -std::numeric_limits<float>::infinity();
    exp_batch<Arch>(B::load_aligned(tail)).store_aligned(tail);
    for (std::size_t j = 0; i + j < n; ++j) sum += tail[j];
  }
  const B shift(mx + std::log(sum));
  map_inplace<Arch>(x, n, [&](const B& v) { return v - shift; });
}

// LayerNorm (Ba et al. 2016) as torch.nn.LayerNorm: biased variance, computed in two passes around the mean
// (the one-pass E[x²] − E[x]² loses digits when |mean| ≫ std).
template <class Arch>
void layer_norm(const float* x, float* y, std::size_t n, const float* gamma, const float* beta, float eps) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  if (n == 0) return;
  const float mean = vsum<Arch>(x, n) / static_cast<float>(n);
  const B mv(mean);
  B var_v(0.0f);
  std::size_t i = 0;
  for (; i + w <= n; i += w) {
    const B d = B::load_unaligned(x + i) - mv;
    var_v = xsimd::fma(d, d, var_v);
  }
  float var = xsimd::hadd(var_v);
  for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(n);
  const float inv = 1.0f / std::sqrt(var + eps);
  const B iv(inv);
  for (i = 0; i + w <= n; i += w) {
    B v = (B::load_unaligned(x + i) - mv) * iv;
    if (gamma) v *= B::load_unaligned(gamma + i);
    if (beta) v += B::load_unaligned(beta + i);
    v.store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - mean) * inv;
    if (gamma) v *= gamma[i];
    if (beta) v += beta[i];
    y[i] = v;
  }
}

// ============================================================================================ conv epilogue
template <class Arch>
void bias_activation(float* y, std::size_t m, std::size_t n, std::size_t ldy, const float* bias,
                     Activation act) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  if (!bias && act == Activation::none) return;
  for (std::size_t i = 0; i < m; ++i) {
    float* row = y + i * ldy;
    std::size_t j = 0;
    for (; j + w <= n; j += w) {
      B v = B::load_unaligned(row + j);
      if (bias) v += B::load_unaligned(bias + j);
      activate<Arch>(v, act).store_unaligned(row + j);
    }
    for (; j < n; ++j) row[j] = activate_scalar(bias ? row[j] + bias[j] : row[j], act);
  }
}

// Depthwise convolution on HWC data: each output pixel sums its valid taps (those inside the unpadded input)
// with the channels as the vector lanes. Every output is bias (or 0), then + input·weight over the valid taps in
// (ky, kx) order, whichever path computes it, so the paths below give the same bits.
//
// 3×3 kernels (MobileNetV2) whose window lies wholly inside the input take a path of their own: the nine taps
// unrolled at fixed offsets from one pointer, two vectors of channels at a time — in WASM about a quarter less time
// than the general loop, whose per-pixel tap bounds and per-tap index arithmetic cost as much as the taps
// (bench/README.md, "MobileNetV2's depthwise 3×3, its RGB stem and the int8 epilogue"). The general loop serves the
// borders, other kernel sizes and channel counts that are not a multiple of the vector width.
template <class Arch>
void depthwise_pixels(const Conv2dParams& p, const ConvGeometry& g, const float* input, const float* weights,
                      const float* bias, float* output, std::size_t oy, std::size_t ky_begin, std::size_t ky_end,
                      std::size_t ox_begin, std::size_t ox_end) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  const std::size_t ch = p.in_c;
  const std::size_t c_vec = ch - ch % w;
  const std::size_t y0 = oy * p.stride;
  for (std::size_t ox = ox_begin; ox < ox_end; ++ox) {
    const std::size_t x0 = ox * p.stride;
    const std::size_t kx_begin = x0 < g.pad_left ? g.pad_left - x0 : 0;
    const std::size_t kx_end =
        min_size(p.kernel_w, p.in_w + g.pad_left > x0 ? p.in_w + g.pad_left - x0 : 0);
    float* out = output + (oy * g.out_w + ox) * ch;
    std::size_t c = 0;
    for (; c + 4 * w <= ch; c += 4 * w) {
      B a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
      if (bias) {
        a0 = B::load_unaligned(bias + c);
        a1 = B::load_unaligned(bias + c + w);
        a2 = B::load_unaligned(bias + c + 2 * w);
        a3 = B::load_unaligned(bias + c + 3 * w);
      }
      for (std::size_t ky = ky_begin; ky < ky_end; ++ky) {
        const std::size_t iy = y0 + ky - g.pad_top;
        for (std::size_t kx = kx_begin; kx < kx_end; ++kx) {
          const std::size_t ix = x0 + kx - g.pad_left;
          const float* in = input + (iy * p.in_w + ix) * ch + c;
          const float* wt = weights + (ky * p.kernel_w + kx) * ch + c;
          a0 = xsimd::fma(B::load_unaligned(in), B::load_unaligned(wt), a0);
          a1 = xsimd::fma(B::load_unaligned(in + w), B::load_unaligned(wt + w), a1);
          a2 = xsimd::fma(B::load_unaligned(in + 2 * w), B::load_unaligned(wt + 2 * w), a2);
          a3 = xsimd::fma(B::load_unaligned(in + 3 * w), B::load_unaligned(wt + 3 * w), a3);
        }
      }
      activate<Arch>(a0, p.activation).store_unaligned(out + c);
      activate<Arch>(a1, p.activation).store_unaligned(out + c + w);
      activate<Arch>(a2, p.activation).store_unaligned(out + c + 2 * w);
      activate<Arch>(a3, p.activation).store_unaligned(out + c + 3 * w);
    }
    for (; c < c_vec; c += w) {
      B a0 = bias ? B::load_unaligned(bias + c) : B(0.0f);
      for (std::size_t ky = ky_begin; ky < ky_end; ++ky) {
        const std::size_t iy = y0 + ky - g.pad_top;
        for (std::size_t kx = kx_begin; kx < kx_end; ++kx) {
          const std::size_t ix = x0 + kx - g.pad_left;
          a0 = xsimd::fma(B::load_unaligned(input + (iy * p.in_w + ix) * ch + c),
                          B::load_unaligned(weights + (ky * p.kernel_w + kx) * ch + c), a0);
        }
      }
      activate<Arch>(a0, p.activation).store_unaligned(out + c);
    }
    for (; c < ch; ++c) {
      float s = bias ? bias[c] : 0.0f;
      for (std::size_t ky = ky_begin; ky < ky_end; ++ky) {
        const std::size_t iy = y0 + ky - g.pad_top;
        for (std::size_t kx = kx_begin; kx < kx_end; ++kx) {
          const std::size_t ix = x0 + kx - g.pad_left;
          s += input[(iy * p.in_w + ix) * ch + c] * weights[(ky * p.kernel_w + kx) * ch + c];
        }
      }
      out[c] = activate_scalar(s, p.activation);
    }
  }
}

// The 3×3 interior of output row oy, columns [ox_begin, ox_end): every tap inside the input.
template <class Arch>
void depthwise_row_3x3(const Conv2dParams& p, const ConvGeometry& g, const float* input, const float* weights,
                       const float* bias, float* output, std::size_t oy, std::size_t ox_begin, std::size_t ox_end) {
  using B = Batch<Arch>;
  constexpr std::size_t w = B::size;
  const std::size_t ch = p.in_c, step = p.stride * ch, row = p.in_w * ch;
  const float* a = input + (oy * p.stride - g.pad_top) * row + (ox_begin * p.stride - g.pad_left) * ch;
  float* o = output + (oy * g.out_w + ox_begin) * ch;
  const Activation act = p.activation;
  for (std::size_t ox = ox_begin; ox < ox_end; ++ox, a += step, o += ch) {
    std::size_t c = 0;
    for (; c + 2 * w <= ch; c += 2 * w) {
      B s0 = bias ? B::load_unaligned(bias + c) : B(0.0f);
      B s1 = bias ? B::load_unaligned(bias + c + w) : B(0.0f);
      const float* t = a + c;
      const float* k = weights + c;
      for (std::size_t ky = 0; ky < 3; ++ky, t += row, k += 3 * ch) {
        s0 = xsimd::fma(B::load_unaligned(t), B::load_unaligned(k), s0);
        s1 = xsimd::fma(B::load_unaligned(t + w), B::load_unaligned(k + w), s1);
        s0 = xsimd::fma(B::load_unaligned(t + ch), B::load_unaligned(k + ch), s0);
        s1 = xsimd::fma(B::load_unaligned(t + ch + w), B::load_unaligned(k + ch + w), s1);
        s0 = xsimd::fma(B::load_unaligned(t + 2 * ch), B::load_unaligned(k + 2 * ch), s0);
        s1 = xsimd::fma(B::load_unaligned(t + 2 * ch + w), B::load_unaligned(k + 2 * ch + w), s1);
      }
      activate<Arch>(s0, act).store_unaligned(o + c);
      activate<Arch>(s1, act).store_unaligned(o + c + w);
    }
    for (; c < ch; c += w) {
      B s0 = bias ? B::load_unaligned(bias + c) : B(0.0f);
      const float* t = a + c;
      const float* k = weights + c;
      for (std::size_t ky = 0; ky < 3; ++ky, t += row, k += 3 * ch) {
        s0 = xsimd::fma(B::load_unaligned(t), B::load_unaligned(k), s0);
        s0 = xsimd::fma(B::load_unaligned(t + ch), B::load_unaligned(k + ch), s0);
        s0 = xsimd::fma(B::load_unaligned(t + 2 * ch), B::load_unaligned(k + 2 * ch), s0);
      }
      activate<Arch>(s0, act).store_unaligned(o + c);
    }
  }
}

template <class Arch>
void depthwise_conv2d(const Conv2dParams& p, const ConvGeometry& g, const float* input, const float* weights,
                      const float* bias, float* output, std::size_t oy_begin, std::size_t oy_end) {
  constexpr std::size_t w = Batch<Arch>::size;
  // Columns whose 3×3 window is inside the input: pad_left ≤ ox·stride and ox·stride − pad_left + 3 ≤ in_w.
  std::size_t ix_lo = 0, ix_hi = 0;
  const bool fast = p.kernel_h == 3 && p.kernel_w == 3 && p.in_c % w == 0 && p.in_w + g.pad_left >= 3;
  if (fast) {
    ix_lo = min_size((g.pad_left + p.stride - 1) / p.stride, g.out_w);
    ix_hi = min_size((p.in_w + g.pad_left - 3) / p.stride + 1, g.out_w);
    if (ix_hi < ix_lo) ix_hi = ix_lo;
  }
  for (std::size_t oy = oy_begin; oy < oy_end; ++oy) {
    // Valid kernel rows: 0 ≤ oy·stride + ky − pad_top < in_h.
    const std::size_t y0 = oy * p.stride;
    const std::size_t ky_begin = y0 < g.pad_top ? g.pad_top - y0 : 0;
    const std::size_t ky_end = min_size(p.kernel_h, p.in_h + g.pad_top > y0 ? p.in_h + g.pad_top - y0 : 0);
    if (fast && ky_begin == 0 && ky_end == 3 && ix_lo < ix_hi) {
      depthwise_pixels<Arch>(p, g, input, weights, bias, output, oy, ky_begin, ky_end, 0, ix_lo);
      depthwise_row_3x3<Arch>(p, g, input, weights, bias, output, oy, ix_lo, ix_hi);
      depthwise_pixels<Arch>(p, g, input, weights, bias, output, oy, ky_begin, ky_end, ix_hi, g.out_w);
    } else {
      depthwise_pixels<Arch>(p, g, input, weights, bias, output, oy, ky_begin, ky_end, 0, g.out_w);
    }
  }
}

// Backend names as simd_backend() reports them.
template <class Arch>
const char* backend_name() {
#ifdef __EMSCRIPTEN__
  return "wasm-simd128";  // xsimd's SSE2 code, lowered by Emscripten to SIMD128
#else
  return std::is_same<Arch, xsimd::sse2>::value ? "sse2" : "avx2+fma";
#endif
}

}  // namespace

// The table for one architecture. Explicitly instantiated once per instruction set, in a translation unit
// compiled with that instruction set's flags (kernels_avx2.cpp, kernels_sse2.cpp).
template <class Arch>
KernelTable make_kernel_table() {
  KernelTable t{};
  t.name = backend_name<Arch>();
  t.gemm = &gemm<Arch>;
  t.gemm_workspace_floats = &gemm_workspace_floats<Arch>;
  t.gemv = &gemv<Arch>;
  t.gemv_nt = &gemv_nt<Arch>;
  t.gemv_packed = &gemv_packed<Arch>;
  t.gemv_packed2 = &gemv_packed2<Arch>;
  t.dot = &dot<Arch>;
  t.axpy = &axpy<Arch>;
  t.add = &add<Arch>;
  t.mul = &mul<Arch>;
  t.scale = &scale<Arch>;
  t.vsum = &vsum<Arch>;
  t.vmax = &vmax<Arch>;
  t.softmax = &softmax<Arch>;
  t.log_softmax = &log_softmax<Arch>;
  t.layer_norm = &layer_norm<Arch>;
  t.vtanh = &vtanh<Arch>;
  t.vsigmoid = &vsigmoid<Arch>;
  t.vrelu = &vrelu<Arch>;
  t.vrelu6 = &vrelu6<Arch>;
  t.vgelu = &vgelu<Arch>;
  t.vexp = &vexp<Arch>;
  t.bias_activation = &bias_activation<Arch>;
  t.depthwise_conv2d = &depthwise_conv2d<Arch>;
  return t;
}

}  // namespace attnlens::kernels::detail
