// Internal: the table of per-instruction-set kernels that dispatch.cpp chooses from at run time.
//
// xsimd's dispatch pattern: every kernel is a template on the xsimd architecture (kernels_simd.hpp); one
// translation unit per instruction set instantiates make_kernel_table<Arch>() with its own compiler flags
// (kernels_avx2.cpp: -mavx2 -mfma; kernels_sse2.cpp: the portable baseline, and the WASM SIMD128 path under
// Emscripten). Scratch memory is allocated here by the caller (dispatch.cpp), so the AVX2 translation unit
// instantiates no standard-library code that the linker could merge into the SSE2 path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace attnlens::kernels::detail {

struct KernelTable {
  const char* name;
  // C = act([C +] A·B [+ bias]) or with Bᵀ (b_transposed); B and A are packed into `workspace`
  // (gemm_workspace_floats() floats, 64-byte aligned). bias may be null.
  void (*gemm)(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
               std::size_t ldb, bool b_transposed, float* c, std::size_t ldc, bool accumulate,
               const float* bias, Activation act, float* workspace);
  std::size_t (*gemm_workspace_floats)(std::size_t m, std::size_t n, std::size_t k);
  void (*gemv)(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
               bool accumulate);
  void (*gemv_nt)(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
                  bool accumulate);
  // y[n] = act(B·x + bias), B packed in panels (kernels.h, PackedMatrix); bias may be null.
  void (*gemv_packed)(std::size_t n, std::size_t k, const float* x, const float* panels, float* y,
                      const float* bias, Activation act);
  // The same for two rows xa, xb with one pass over the weights; each row's bits equal gemv_packed's.
  void (*gemv_packed2)(std::size_t n, std::size_t k, const float* xa, const float* xb, const float* panels,
                       float* ya, float* yb, const float* bias, Activation act);
  float (*dot)(const float* a, const float* b, std::size_t n);
  void (*axpy)(float alpha, const float* x, float* y, std::size_t n);
  void (*add)(const float* x, float* y, std::size_t n);
  void (*mul)(const float* x, float* y, std::size_t n);
  void (*scale)(float alpha, float* x, std::size_t n);
  float (*vsum)(const float* x, std::size_t n);
  float (*vmax)(const float* x, std::size_t n);
  void (*softmax)(float* x, std::size_t n, const std::uint8_t* keep);
  void (*log_softmax)(float* x, std::size_t n);
  void (*layer_norm)(const float* x, float* y, std::size_t n, const float* gamma, const float* beta,
                     float eps);
  void (*vtanh)(float* x, std::size_t n);
  void (*vsigmoid)(float* x, std::size_t n);
  void (*vrelu)(float* x, std::size_t n);
  void (*vrelu6)(float* x, std::size_t n);
  void (*vgelu)(float* x, std::size_t n);
  void (*vexp)(float* x, std::size_t n);
  // y[i·ldy + j] = act(y[i·ldy + j] + bias[j]) (bias may be null): the GEMM/conv epilogue.
  void (*bias_activation)(float* y, std::size_t m, std::size_t n, std::size_t ldy, const float* bias,
                          Activation act);
  // Depthwise conv on HWC data with precomputed geometry: output rows [oy_begin, oy_end).
  void (*depthwise_conv2d)(const Conv2dParams& p, const ConvGeometry& g, const float* input,
                           const float* weights_hwc, const float* bias, float* output, std::size_t oy_begin,
                           std::size_t oy_end);
};

template <class Arch>
KernelTable make_kernel_table();

// int8 weights (int8.cpp): one implementation per build, chosen at compile time (the sums are integers).
PackedMatrix pack_rows_int8(std::size_t n, std::size_t k, const float* b, std::size_t ldb);
void packed_row_int8(const PackedMatrix& w, std::size_t j, float* out);
// Output rows [j_begin, j_end) of every input row; j_begin a multiple of kPanel.
void linear_int8(std::size_t m, const float* x, std::size_t ldx, const PackedMatrix& w, const float* bias,
                 float* y, std::size_t ldy, Activation act, std::size_t j_begin, std::size_t j_end);

}  // namespace attnlens::kernels::detail
