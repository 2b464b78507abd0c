// Internal helpers shared by the attention sources: argument checks with messages a person can act on.
// Not part of the public API (attention.h does not include it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::attention::detail {

// A pointer may be null only when it would address zero elements.
// (These checks run on every op call: their messages are built only on failure, never on the happy path.)
inline void require_data(const void* p, std::size_t count, const char* op, const char* what) {
  if (p == nullptr && count != 0)
    throw Error(std::string(op) + ": '" + what + "' is null but " + std::to_string(count) + " values are needed");
}

inline void require_positive(std::size_t n, const char* op, const char* what) {
  if (n == 0) throw Error(std::string(op) + ": '" + what + "' must be at least 1 (got 0)");
}

// a·b with an overflow check, for sizes computed from user-supplied dimensions.
inline std::size_t checked_mul(std::size_t a, std::size_t b, const char* op) {
  if (a != 0 && b > static_cast<std::size_t>(-1) / a)
    throw Error(std::string(op) + ": tensor size overflows (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  return a * b;
}

// C[m×n] = A[m×k]·B[n×k]ᵀ on dense row-major blocks; k = 0 gives zeros (an empty sum).
inline void matmul_nt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m * n; ++i) c[i] = 0.0f;
    return;
  }
  kernels::gemm_nt(m, n, k, a, k, b, k, c, n);
}

// C[m×n] = A[m×k]·B[k×n] on dense row-major blocks.
inline void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m * n; ++i) c[i] = 0.0f;
    return;
  }
  kernels::gemm(m, n, k, a, k, b, n, c, n);
}

// torch.nn.Linear on n rows: y[n × d_out] = x[n × d_in]·Wᵀ + b, W is [d_out × d_in], b may be null.
inline void linear(const float* x, std::size_t n, std::size_t d_in, const float* weight, const float* bias,
                   std::size_t d_out, float* y) {
  matmul_nt(n, d_out, d_in, x, weight, y);
  if (bias == nullptr) return;
  for (std::size_t i = 0; i < n; ++i) kernels::add(bias, y + i * d_out, d_out);
}

}  // namespace attnlens::attention::detail
