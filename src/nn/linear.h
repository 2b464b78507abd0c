// A Linear layer:
//
//   y (m, out) = x (m, in) Wᵀ + b,   then the activation                       (W as PyTorch stores it: [out × in])
//
// How its rows come decides what the layer keeps and which kernel multiplies (`Rows`):
//   many  whole sequences, every word pair: W as stored, through the blocked GEMM (kernels::gemm_nt_bias_act: the
//         goldens' arithmetic);
//   few   a decoding step's one to a few rows: W packed in panels of outputs (kernels::pack_rows), multiplied by
//         kernels::linear_packed, rows in pairs, streaming W once per pair;
//   any   both (W held twice): up to kFewRows rows through the packed W, more through the GEMM — the encoder's
//         layers, whose short sentences run best packed and long ones through the GEMM.
// With int8 weights (config "weight_precision": "int8") every use keeps only W's int8 codes (kernels.h,
// Precision::int8: one scale per output row, each input row quantised to int16 codes, exact integer sums) and
// multiplies through kernels::linear_packed, four rows a pass (1.4–1.9× the float32 GEMM in WASM on the models'
// shapes with at least 96 inputs, `bench_kernels --only rows_int8`); a matrix of fewer than io::kInt8MinValues
// weights stays float32, as in an int8 bundle. The result for a row never depends on the other rows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "kernels/kernels.h"

namespace attnlens::nn {

class Linear {
 public:
  enum class Rows { many, few, any };
  // Up to this many rows go through the packed weights with Rows::any (measured in WASM: the blocked GEMM, which
  // packs its operands on every call, ran 3–8-row Tatoeba sentences at 0.87× the packed speed).
  static constexpr std::size_t kFewRows = 8;

  Linear() = default;
  // Weight `name` [out × in] (and `bias_name` [out], if not empty) from the bundle, kept for `rows` and by the
  // bundle's weight precision.
  Linear(const io::Bundle& b, const std::string& name, std::size_t out, std::size_t in,
         const std::string& bias_name = "", Rows rows = Rows::many);
  // Hugging Face's Conv1D (GPT-2): y = x W + b with W stored [in × out], the transpose of the above; kept as [out ×
  // in] like every other Linear. In an int8 bundle the stored codes are per row of [in × out]: the weights are read
  // back as code·scale and, being a matrix of the int8 size, coded again per output row.
  static Linear conv1d(const io::Bundle& b, const std::string& name, std::size_t in, std::size_t out,
                       const std::string& bias_name, Rows rows = Rows::many);

  std::size_t out() const { return out_; }
  std::size_t in() const { return in_; }
  bool int8() const { return packed_.precision == kernels::Precision::int8 && !packed_.empty(); }

  // y (m × out, row stride ldy) = act(x (m × in, row stride ldx) Wᵀ + b).
  void forward(std::size_t m, const float* x, std::size_t ldx, float* y, std::size_t ldy,
               kernels::Activation act = kernels::Activation::none) const;

 private:
  void keep(std::vector<float> w, kernels::Precision precision, Rows rows);

  std::size_t out_ = 0, in_ = 0;
  std::vector<float> w_;           // float32 [out × in] (Rows::many and Rows::any)
  kernels::PackedMatrix packed_;   // W packed: float32 (Rows::few and Rows::any) or int8 codes (every use)
  std::vector<float> bias_;        // [out] or empty
};

}  // namespace attnlens::nn
