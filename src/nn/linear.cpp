#include "nn/linear.h"

namespace attnlens::nn {

Linear::Linear(const io::Bundle& b, const std::string& name, std::size_t out, std::size_t in,
               const std::string& bias_name, Rows rows)
    : out_(out), in_(in) {
  std::vector<float> w = b.tensor(name, {out, in});
  // The matrices an int8 bundle stores as codes (io::kInt8MinValues and up; smaller ones stay float there too).
  if (b.weight_precision() == kernels::Precision::int8 && out * in >= io::kInt8MinValues) {
    packed_ = kernels::pack_rows(out, in, w.data(), in, kernels::Precision::int8);
  } else {
    if (rows != Rows::many) packed_ = kernels::pack_rows(out, in, w.data(), in, kernels::Precision::f32);
    if (rows != Rows::few) w_ = std::move(w);
  }
  if (!bias_name.empty()) bias_ = b.tensor(bias_name, {out});
}

void Linear::forward(std::size_t m, const float* x, std::size_t ldx, float* y, std::size_t ldy,
                     kernels::Activation act) const {
  const float* bias = bias_.empty() ? nullptr : bias_.data();
  if (!packed_.empty() && (m <= kFewRows || w_.empty()))
    kernels::linear_packed(m, x, ldx, packed_, bias, y, ldy, act);
  else
    kernels::gemm_nt_bias_act(m, out_, in_, x, ldx, w_.data(), in_, y, ldy, bias, act);
}

}  // namespace attnlens::nn
