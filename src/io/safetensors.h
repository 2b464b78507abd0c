// Reader for the safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian unsigned
// header length N, N bytes of JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}}, then the data region; offsets are relative to the start of the data region,
// tensors are raw little-endian, row-major.
//
// Everything is validated before any tensor is handed out, and every problem is an attnlens::Error that starts
// with `source` (e.g. "weights.safetensors in models/x") and names the tensor:
//   - the buffer holds at least the 8-byte length; the header length is at most 100 MB (the format's own limit)
//     and fits in the buffer; the header is valid JSON, an object, every entry an object with a known dtype
//     (F32, F16, BF16, I32, I64, I8), a shape of non-negative integers and data_offsets [begin, end];
//   - begin ≤ end ≤ size of the data region; end − begin == product(shape) · dtype size (overflow-checked);
//   - tensors do not overlap and, as the format requires, cover the data region without holes;
//   - every F32/F16/BF16 value is finite (a NaN or Inf weight is reported with its tensor and element index).
// The host must be little-endian (x86-64 and WebAssembly are).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnlens::io {

enum class DType { kF32, kF16, kBF16, kI32, kI64, kI8 };
const char* dtype_name(DType d);
std::size_t dtype_size(DType d);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::size_t> shape;
  std::size_t begin = 0, end = 0;  // byte offsets into the data region
  std::size_t element_count() const;
};

std::string shape_to_string(const std::vector<std::size_t>& shape);  // "[2, 3]"

// IEEE 754 half precision and bfloat16 → float (exact: every such value is representable as a float).
float f16_to_float(std::uint16_t bits);
float bf16_to_float(std::uint16_t bits);

class SafeTensors {
 public:
  SafeTensors() = default;
  // Takes the whole file's bytes (the WASM build passes what JS fetched).
  static SafeTensors from_buffer(std::vector<std::uint8_t> bytes, const std::string& source);
  static SafeTensors load(const std::string& path);

  const std::string& source() const { return source_; }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  const TensorInfo& info(const std::string& name) const;  // Error naming the tensor when absent
  std::vector<std::string> names() const;                 // sorted
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // Values converted to float (F32, F16, BF16) or to int64 (I32, I64); Error for the other kind.
  std::vector<float> to_float(const std::string& name) const;
  std::vector<std::int64_t> to_int64(const std::string& name) const;
  // Raw little-endian bytes of a tensor.
  const std::uint8_t* data(const std::string& name) const;

 private:
  std::string source_;
  std::vector<std::uint8_t> bytes_;
  std::size_t data_start_ = 0;
  std::map<std::string, TensorInfo> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace attnlens::io
