// Scalar reference kernels: straightforward loops over the definitions (see kernels.h for the maths).
#include "kernels/kernels_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common.h"

namespace attnlens::kernels {

namespace {
float apply_activation(float v, Activation act) {
  switch (act) {
    case Activation::relu:
      return v > 0.0f ? v : 0.0f;
    case Activation::relu6:
      return std::min(std::max(v, 0.0f), 6.0f);
    case Activation::none:
      break;
  }
  return v;
}
}  // namespace

void gemm_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
              std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (std::size_t p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + s : s;
    }
  }
}

void gemm_nt_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
                 std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (std::size_t p = 0; p < k; ++p) s += a[i * lda + p] * b[j * ldb + p];
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + s : s;
    }
  }
}

void gemm_bias_act_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                       const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                       Activation act) {
  gemm_ref(m, n, k, a, lda, b, ldb, c, ldc, false);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      c[i * ldc + j] = apply_activation(c[i * ldc + j] + (bias ? bias[j] : 0.0f), act);
}

void gemm_nt_bias_act_ref(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                          const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                          Activation act) {
  gemm_nt_ref(m, n, k, a, lda, b, ldb, c, ldc, false);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      c[i * ldc + j] = apply_activation(c[i * ldc + j] + (bias ? bias[j] : 0.0f), act);
}

void gemv_ref(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
              bool accumulate) {
  gemm_ref(1, n, k, x, k, b, ldb, y, n, accumulate);
}

void gemv_nt_ref(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
                 bool accumulate) {
  for (std::size_t j = 0; j < n; ++j) {
    const float s = dot_ref(b + j * ldb, x, k);
    y[j] = accumulate ? y[j] + s : s;
  }
}

void gemv_packed_ref(const PackedMatrix& w, const float* x, const float* bias, float* y, Activation act) {
  for (std::size_t j = 0; j < w.rows; ++j) {
    const float* col = w.data.data() + (j / kPanel) * kPanel * w.cols + j % kPanel;
    float s = bias != nullptr ? bias[j] : 0.0f;
    for (std::size_t p = 0; p < w.cols; ++p) s += col[p * kPanel] * x[p];
    if (act != Activation::none) s = s < 0.0f ? 0.0f : s;
    if (act == Activation::relu6 && s > 6.0f) s = 6.0f;
    y[j] = s;
  }
}

void linear_int8_ref(const PackedMatrix& w, const float* x, const float* bias, float* y, Activation act) {
  const std::size_t k2 = w.cols + (w.cols & 1u);
  std::vector<std::int16_t> c(k2);
  const float sx = quantize_input_int16_ref(x, w.cols, c.data());
  for (std::size_t j = 0; j < w.rows; ++j) {
    const std::int8_t* q = w.qdata.data() + (j / kPanel) * kPanel * k2 + (j % kPanel) * 2;
    long long acc = 0;
    for (std::size_t p = 0; p < w.cols; ++p) acc += static_cast<long long>(q[(p / 2) * 2 * kPanel + p % 2]) * c[p];
    float s = static_cast<float>(acc) * (sx * w.qscale[j]);
    if (bias != nullptr) s += bias[j];
    if (act != Activation::none) s = s < 0.0f ? 0.0f : s;
    if (act == Activation::relu6 && s > 6.0f) s = 6.0f;
    y[j] = s;
  }
}

float dot_ref(const float* a, const float* b, std::size_t n) {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void axpy_ref(float alpha, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void add_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}
void mul_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] *= x[i];
}
void scale_ref(float alpha, float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= alpha;
}
float vsum_ref(const float* x, std::size_t n) {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
float vmax_ref(const float* x, std::size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}
void add_bias_rows_ref(float* y, std::size_t m, std::size_t n, std::size_t ldy, const float* bias) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) y[i * ldy + j] += bias[j];
}

// softmax(x)_i = exp(x_i − max_j x_j) / Σ_j exp(x_j − max): subtracting the max keeps every exp ≤ 1.
void softmax_ref(float* x, std::size_t n, const std::uint8_t* keep) {
  float mx = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i)
    if (!keep || keep[i]) mx = std::max(mx, x[i]);
  if (mx == -std::numeric_limits<float>::infinity()) {
    // Every entry masked (or every kept entry is −inf): no distribution exists; the contract says zeros.
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = (!keep || keep[i]) ? std::exp(x[i] - mx) : 0.0f;
    sum += x[i];
  }
  for (std::size_t i = 0; i < n; ++i) x[i] /= sum;
}

void softmax_rows_ref(float* x, std::size_t rows, std::size_t n, std::size_t ld, const std::uint8_t* keep) {
  for (std::size_t r = 0; r < rows; ++r) softmax_ref(x + r * ld, n, keep ? keep + r * n : nullptr);
}

// log_softmax(x)_i = x_i − max − log Σ_j exp(x_j − max).
void log_softmax_ref(float* x, std::size_t n) {
  if (n == 0) return;
  const float mx = vmax_ref(x, n);
  if (std::isinf(mx)) {
    // +inf dominates (log-prob 0 for the +inf entries, −inf elsewhere); all −inf has no distribution: NaN,
    // as torch.log_softmax gives.
    for (std::size_t i = 0; i < n; ++i)
      x[i] = mx > 0 ? (x[i] == mx ? 0.0f : -std::numeric_limits<float>::infinity())
                    : std::numeric_limits<float>::quiet_NaN();
    return;
  }
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += std::exp(x[i] - mx);
  const float lse = mx + std::log(sum);
  for (std::size_t i = 0; i < n; ++i) x[i] -= lse;
}

void layer_norm_ref(const float* x, float* y, std::size_t n, const float* gamma, const float* beta,
                    float eps) {
  if (n == 0) return;
  float mean = 0.0f;
  for (std::size_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<float>(n);
  float var = 0.0f;
  for (std::size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(n);
  const float inv = 1.0f / std::sqrt(var + eps);
  for (std::size_t i = 0; i < n; ++i) {
    const float g = gamma ? gamma[i] : 1.0f;
    const float bb = beta ? beta[i] : 0.0f;
    y[i] = (x[i] - mean) * inv * g + bb;
  }
}

void vtanh_ref(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}
void vsigmoid_ref(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    // exp of −|x| only, so neither branch overflows.
    const float e = std::exp(-std::fabs(x[i]));
    x[i] = x[i] >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
  }
}
void vrelu_ref(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
void vrelu6_ref(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], 0.0f), 6.0f);
}
// GELU(x) = x·Φ(x) = ½·x·erfc(−x/√2) (Hendrycks & Gimpel 2016); erfc keeps the negative tail accurate.
void vgelu_ref(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * std::erfc(-x[i] * 0.70710678118654752f);
}
void vexp_ref(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

void conv2d_ref(const Conv2dParams& p, const float* input, const float* weights_hwio, const float* bias,
                float* output) {
  const ConvGeometry g = conv2d_geometry(p);
  for (std::size_t oy = 0; oy < g.out_h; ++oy) {
    for (std::size_t ox = 0; ox < g.out_w; ++ox) {
      for (std::size_t co = 0; co < p.out_c; ++co) {
        float s = bias ? bias[co] : 0.0f;
        for (std::size_t ky = 0; ky < p.kernel_h; ++ky) {
          // Signed arithmetic: the tap may fall into the padding (negative or past the edge) and reads zero.
          const long iy = static_cast<long>(oy * p.stride + ky) - static_cast<long>(g.pad_top);
          if (iy < 0 || iy >= static_cast<long>(p.in_h)) continue;
          for (std::size_t kx = 0; kx < p.kernel_w; ++kx) {
            const long ix = static_cast<long>(ox * p.stride + kx) - static_cast<long>(g.pad_left);
            if (ix < 0 || ix >= static_cast<long>(p.in_w)) continue;
            const float* in =
                input + (static_cast<std::size_t>(iy) * p.in_w + static_cast<std::size_t>(ix)) * p.in_c;
            const float* w = weights_hwio + (ky * p.kernel_w + kx) * p.in_c * p.out_c + co;
            for (std::size_t ci = 0; ci < p.in_c; ++ci) s += in[ci] * w[ci * p.out_c];
          }
        }
        output[(oy * g.out_w + ox) * p.out_c + co] = apply_activation(s, p.activation);
      }
    }
  }
}

void depthwise_conv2d_ref(const Conv2dParams& p, const float* input, const float* weights_hwc,
                          const float* bias, float* output) {
  const ConvGeometry g = conv2d_geometry(p);
  const std::size_t c_n = p.in_c;
  for (std::size_t oy = 0; oy < g.out_h; ++oy) {
    for (std::size_t ox = 0; ox < g.out_w; ++ox) {
      for (std::size_t c = 0; c < c_n; ++c) {
        float s = bias ? bias[c] : 0.0f;
        for (std::size_t ky = 0; ky < p.kernel_h; ++ky) {
          const long iy = static_cast<long>(oy * p.stride + ky) - static_cast<long>(g.pad_top);
          if (iy < 0 || iy >= static_cast<long>(p.in_h)) continue;
          for (std::size_t kx = 0; kx < p.kernel_w; ++kx) {
            const long ix = static_cast<long>(ox * p.stride + kx) - static_cast<long>(g.pad_left);
            if (ix < 0 || ix >= static_cast<long>(p.in_w)) continue;
            s += input[(static_cast<std::size_t>(iy) * p.in_w + static_cast<std::size_t>(ix)) * c_n + c] *
                 weights_hwc[(ky * p.kernel_w + kx) * c_n + c];
          }
        }
        output[(oy * g.out_w + ox) * c_n + c] = apply_activation(s, p.activation);
      }
    }
  }
}

}  // namespace attnlens::kernels
