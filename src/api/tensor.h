// attnlens C++ API: the value types every part of the API shares (Tensor, TensorMap) and the library's
// identity (version, SIMD backend). Included by src/api.h.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common.h"

namespace attnlens::api {

// A dense row-major float32 tensor. Invariant checked by validate(): data.size() == product(dims); a scalar has
// dims {} and one element.
struct Tensor {
  std::vector<std::size_t> dims;
  std::vector<float> data;

  Tensor() = default;
  Tensor(std::vector<std::size_t> dims_, std::vector<float> data_) : dims(std::move(dims_)), data(std::move(data_)) {}
  // A zero-filled tensor of these dims.
  explicit Tensor(std::vector<std::size_t> dims_);

  std::size_t size() const { return data.size(); }
  std::size_t rank() const { return dims.size(); }
  // Throws Error naming `what` when data.size() does not match dims.
  void validate(const std::string& what) const;
};

using TensorMap = std::map<std::string, Tensor>;

// Product of dims (1 for a scalar); throws Error on overflow of size_t.
std::size_t element_count(const std::vector<std::size_t>& dims);
// Dims as text for messages: "[2,3]".
std::string dims_to_string(const std::vector<std::size_t>& dims);

// "0.1.0"
const char* version();
// The SIMD instruction set the kernels use on this machine ("avx2+fma", "sse2", "wasm-simd128").
const char* simd_backend();
// Threads the engine uses for kernels and for lists of inputs (kernels/parallel.h), the calling thread included:
// set_threads(0) = the hardware's count; a build without threads (the default WebAssembly module) stays at 1.
// Results are the same for any count. threads_supported(): whether this build has threads.
std::size_t set_threads(std::size_t n);
std::size_t threads();
bool threads_supported();

}  // namespace attnlens::api
