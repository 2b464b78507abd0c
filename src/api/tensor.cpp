// attnlens C++ API: Tensor (see api/tensor.h).
#include "api/tensor.h"

#include <limits>
#include <sstream>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attnlens::api {

std::string dims_to_string(const std::vector<std::size_t>& dims) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < dims.size(); ++i) out << (i ? "," : "") << dims[i];
  out << ']';
  return out.str();
}

Tensor::Tensor(std::vector<std::size_t> dims_) : dims(std::move(dims_)), data(element_count(dims), 0.0f) {}

void Tensor::validate(const std::string& what) const {
  const std::size_t n = element_count(dims);
  require(data.size() == n, what + " has dims " + dims_to_string(dims) + " (" + std::to_string(n) +
                                " elements) but holds " + std::to_string(data.size()) + " values");
}

std::size_t element_count(const std::vector<std::size_t>& dims) {
  std::size_t n = 1;
  for (std::size_t d : dims) {
    require(d == 0 || n <= std::numeric_limits<std::size_t>::max() / d,
            "tensor dims " + dims_to_string(dims) + " overflow the address space");
    n *= d;
  }
  return n;
}

const char* version() { return "0.1.0"; }

const char* simd_backend() { return kernels::simd_backend(); }

std::size_t set_threads(std::size_t n) { return kernels::set_threads(n); }
std::size_t threads() { return kernels::threads(); }
bool threads_supported() { return kernels::threads_supported(); }

}  // namespace attnlens::api
