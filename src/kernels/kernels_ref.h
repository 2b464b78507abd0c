// Scalar reference twins of every kernel in kernels.h: the plainest loops that implement the definition, in
// float. Tests compare both these and the SIMD kernels against double-precision loops written in the tests;
// other layers may use them to cross-check. Same argument conventions as kernels.h.
#pragma once

#include "kernels/kernels.h"

namespace attnlens::kernels {

void gemm_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
              std::size_t ldb, float* c, std::size_t ldc, bool accumulate = false);
void gemm_nt_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
                 std::size_t ldb, float* c, std::size_t ldc, bool accumulate = false);
void gemv_ref(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
              bool accumulate = false);
void gemv_nt_ref(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
                 bool accumulate = false);
void gemm_bias_act_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                       const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                       Activation act);
void gemm_nt_bias_act_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                          const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                          Activation act);
// y = act(B·x + bias) with B packed (kernels.h): the plain loop over the packed layout.
void gemv_packed_ref(const PackedMatrix& w, const float* x, const float* bias, float* y,
                     Activation act = Activation::none);
// The int8 product's input codes (kernels.h quantize_input_int16) as a plain loop; the SIMD one must give the same
// (defined in int8.cpp beside it, which also uses it where there is no SIMD).
float quantize_input_int16_ref(const float* x, std::size_t k, std::int16_t* codes);
// The int8 product (kernels.h, Precision::int8) as plain loops: input codes by quantize_input_int16_ref, int64 sums
// over the packed layout, the same float epilogue.
void linear_int8_ref(const PackedMatrix& w, const float* x, const float* bias, float* y,
                     Activation act = Activation::none);
float dot_ref(const float* a, const float* b, std::size_t n);
void axpy_ref(float alpha, const float* x, float* y, std::size_t n);
void add_ref(const float* x, float* y, std::size_t n);
void mul_ref(const float* x, float* y, std::size_t n);
void scale_ref(float alpha, float* x, std::size_t n);
float vsum_ref(const float* x, std::size_t n);
float vmax_ref(const float* x, std::size_t n);
void add_bias_rows_ref(float* y, std::size_t m, std::size_t n, std::size_t ldy, const float* bias);

void softmax_ref(float* x, std::size_t n, const std::uint8_t* keep = nullptr);
void softmax_rows_ref(float* x, std::size_t rows, std::size_t n, std::size_t ld,
                      const std::uint8_t* keep = nullptr);
void log_softmax_ref(float* x, std::size_t n);
void layer_norm_ref(const float* x, float* y, std::size_t n, const float* gamma, const float* beta,
                    float eps);

void vtanh_ref(float* x, std::size_t n);
void vsigmoid_ref(float* x, std::size_t n);
void vrelu_ref(float* x, std::size_t n);
void vrelu6_ref(float* x, std::size_t n);
void vgelu_ref(float* x, std::size_t n);
void vexp_ref(float* x, std::size_t n);

void conv2d_ref(const Conv2dParams& p, const float* input, const float* weights_hwio, const float* bias,
                float* output);
void depthwise_conv2d_ref(const Conv2dParams& p, const float* input, const float* weights_hwc,
                          const float* bias, float* output);

}  // namespace attnlens::kernels
