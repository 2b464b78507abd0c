#include "nn/linear.h"

namespace attnlens::nn {

Linear::Linear(const io::Bundle& b, const std::string& name, std::size_t out, std::size_t in,
               const std::string& bias_name, Rows rows)
    : out_(out), in_(in) {
  keep(b.tensor(name, {out, in}), b.weight_precision(), rows);
  if (!bias_name.empty()) bias_ = b.tensor(bias_name, {out});
}

Linear Linear::conv1d(const io::Bundle& b, const std::string& name, std::size_t in, std::size_t out,
                      const std::string& bias_name, Rows rows) {
  const std::vector<float> stored = b.tensor(name, {in, out});  // [in × out]
  std::vector<float> w(stored.size());                          // [out × in]
  for (std::size_t i = 0; i < in; ++i)
    for (std::size_t o = 0; o < out; ++o) w[o * in + i] = stored[i * out + o];
  Linear layer;
  layer.out_ = out;
  layer.in_ = in;
  layer.keep(std::move(w), b.weight_precision(), rows);
  if (!bias_name.empty()) layer.bias_ = b.tensor(bias_name, {out});
  return layer;
}

void Linear::keep(std::vector<float> w, kernels::Precision precision, Rows rows) {
  // The matrices an int8 bundle stores as codes (io::kInt8MinValues and up; smaller ones stay float there too).
  if (precision == kernels::Precision::int8 && out_ * in_ >= io::kInt8MinValues) {
    packed_ = kernels::pack_rows(out_, in_, w.data(), in_, kernels::Precision::int8);
  } else {
    if (rows != Rows::many) packed_ = kernels::pack_rows(out_, in_, w.data(), in_, kernels::Precision::f32);
    if (rows != Rows::few) w_ = std::move(w);
  }
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
