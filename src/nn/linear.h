// A Linear layer applied to many rows at once (every word pair of a sentence, every state of an encoded source):
//
//   y (m, out) = x (m, in) Wᵀ + b,   then the activation                       (W as PyTorch stores it: [out × in])
//
// float32 weights go through the blocked GEMM (kernels::gemm_nt_bias_act: the goldens' arithmetic). With int8
// weights (config "weight_precision": "int8") the layer keeps only the int8 codes of W (kernels.h, Precision::int8:
// one scale per output row, each input row quantised to int16 codes, exact integer sums; a matrix of fewer than
// io::kInt8MinValues weights stays float32, as in an int8 bundle) and multiplies through
// kernels::linear_packed, four rows per pass over the codes: 1.4–1.9× the float32 GEMM in WASM on the models'
// shapes with at least 96 inputs (`bench_kernels --only rows_int8`, bench/README.md). The result for a row does not
// depend on the other rows in either path.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "kernels/kernels.h"

namespace attnlens::nn {

class Linear {
 public:
  Linear() = default;
  // Weight `name` [out × in] (and `bias_name` [out], if not empty) from the bundle, kept by its weight precision.
  Linear(const io::Bundle& b, const std::string& name, std::size_t out, std::size_t in,
         const std::string& bias_name = "");

  std::size_t out() const { return out_; }
  std::size_t in() const { return in_; }
  bool int8() const { return !codes_.empty(); }

  // y (m × out, row stride ldy) = act(x (m × in, row stride ldx) Wᵀ + b).
  void forward(std::size_t m, const float* x, std::size_t ldx, float* y, std::size_t ldy,
               kernels::Activation act = kernels::Activation::none) const;

 private:
  std::size_t out_ = 0, in_ = 0;
  std::vector<float> w_;         // float32: [out × in]
  kernels::PackedMatrix codes_;  // int8: W's codes and row scales
  std::vector<float> bias_;      // [out] or empty
};

}  // namespace attnlens::nn
