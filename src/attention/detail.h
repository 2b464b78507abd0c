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

// C[m×n] = A[m×k]·B on dense row-major blocks, B [k×n] or, with b_transposed, [n×k] read as Bᵀ; k = 0 gives
// zeros (an empty sum).
inline void matmul_dense(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                         bool b_transposed) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m * n; ++i) c[i] = 0.0f;
  } else if (b_transposed) {
    kernels::gemm_nt(m, n, k, a, k, b, k, c, n);
  } else {
    kernels::gemm(m, n, k, a, k, b, n, c, n);
  }
}

// C[m×n] = A[m×k]·B[n×k]ᵀ.
inline void matmul_nt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  matmul_dense(m, n, k, a, b, c, true);
}

// C[m×n] = A[m×k]·B[k×n].
inline void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  matmul_dense(m, n, k, a, b, c, false);
}

// There is no linear() here: a torch.nn.Linear over dense rows is kernels::gemm_nt_bias_act with the weight as
// PyTorch stores it ([out × in]), the one dense linear that nn::Linear also wraps (attention sits below nn).

}  // namespace attnlens::attention::detail
