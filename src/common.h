// Shared basics for every layer of attnlens: the error type and small checks.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace attnlens {

// Every failure the engine reports to a caller is an attnlens::Error with a message a person can act on
// (naming the file, tensor, option or input that is wrong). The engine never aborts: bindings turn Error into
// a JavaScript Error, the CLI prints it and exits non-zero.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Error(message) when `ok` is false. For argument and data validation, not for internal invariants.
// A literal message costs nothing when `ok` holds (the const char* overload builds no std::string); a message
// built with + is built on every call, so hot paths (kernels, decoder steps) write `if (!ok) throw Error(...)`.
inline void require(bool ok, const char* message) {
  if (!ok) throw Error(message);
}
inline void require(bool ok, const std::string& message) {
  if (!ok) throw Error(message);
}

// Index of the first NaN or ±Inf among p[0..n), or n when all are finite. For rejecting non-finite inputs and
// catching a NaN inside a model before it turns into a token, label or score.
inline std::size_t first_non_finite(const float* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return i;
  return n;
}

}  // namespace attnlens
