#include "io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "common.h"

namespace attnlens::io {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the format's limit (safetensors' MAX_HEADER_SIZE)

bool parse_dtype(const std::string& s, DType& out) {
  static const std::pair<const char*, DType> table[] = {
      {"F32", DType::kF32}, {"F16", DType::kF16}, {"BF16", DType::kBF16}, {"I32", DType::kI32}, {"I64", DType::kI64},
      {"I8", DType::kI8}};
  for (const auto& [name, d] : table) {
    if (s == name) {
      out = d;
      return true;
    }
  }
  return false;
}

// a·b, or false on overflow of size_t.
bool checked_mul(std::size_t a, std::size_t b, std::size_t& out) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return false;
  out = a * b;
  return true;
}

// A JSON number that is a non-negative integer fitting in size_t.
bool as_size(const nlohmann::json& v, std::size_t& out) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > std::numeric_limits<std::size_t>::max()) return false;
    out = static_cast<std::size_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0) return false;
    out = static_cast<std::size_t>(i);
    return true;
  }
  return false;
}

// The index of the first element of a float tensor whose exponent bits are all ones (±Inf or NaN), or n when
// every element is finite. Reads the bits without converting: one mask and compare per element.
template <typename Bits>
std::size_t first_non_finite_bits(const std::uint8_t* p, std::size_t n, Bits exponent_mask) {
  for (std::size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, p + sizeof(Bits) * i, sizeof(Bits));
    if ((b & exponent_mask) == exponent_mask) return i;
  }
  return n;
}

// One element as a float (F32, F16, BF16).
float value_at(const std::uint8_t* p, DType d, std::size_t i) {
  std::uint16_t h = 0;
  if (d != DType::kF32) std::memcpy(&h, p + 2 * i, 2);
  switch (d) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case DType::kF16: return f16_to_float(h);
    case DType::kBF16: return bf16_to_float(h);
    default: return 0.0f;
  }
}

std::size_t first_non_finite(const std::uint8_t* p, DType d, std::size_t n) {
  switch (d) {
    case DType::kF32: return first_non_finite_bits<std::uint32_t>(p, n, 0x7F800000u);
    case DType::kF16: return first_non_finite_bits<std::uint16_t>(p, n, 0x7C00u);
    case DType::kBF16: return first_non_finite_bits<std::uint16_t>(p, n, 0x7F80u);
    default: return n;
  }
}

bool is_float(DType d) { return d == DType::kF32 || d == DType::kF16 || d == DType::kBF16; }

}  // namespace

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
    case DType::kI64: return "I64";
    case DType::kI8: return "I8";
  }
  return "?";
}

std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kF32:
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kI8: return 1;
  }
  return 0;
}

std::size_t TensorInfo::element_count() const {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;  // validated not to overflow when the tensor was read
  return n;
}

std::string shape_to_string(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float f16_to_float(std::uint16_t h) {
  // IEEE 754 binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1F;
  std::uint32_t mant = h & 0x3FF;
  std::uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // Inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // ±0
  } else {
    // Subnormal: value = mant · 2^-24; normalise it into a float.
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400) == 0);
    bits = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;  // bfloat16 is the top half of a float
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

SafeTensors SafeTensors::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require(static_cast<bool>(in), path + ": cannot open the file for reading (does it exist?)");
  std::vector<std::uint8_t> bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  require(size >= 0, path + ": cannot determine the file size");
  in.seekg(0, std::ios::beg);
  bytes.resize(static_cast<std::size_t>(size));
  if (size > 0) in.read(reinterpret_cast<char*>(bytes.data()), size);
  require(static_cast<bool>(in), path + ": error while reading the file");
  return from_buffer(std::move(bytes), path);
}

SafeTensors SafeTensors::from_buffer(std::vector<std::uint8_t> bytes, const std::string& source) {
  const std::string& src = source;
  require(bytes.size() >= 8, src + ": the file is " + std::to_string(bytes.size()) +
                                 " bytes long, too short for the 8-byte header length (truncated or not a "
                                 "safetensors file)");
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];  // little-endian
  require(header_len <= kMaxHeaderBytes,
          src + ": header length " + std::to_string(header_len) + " is larger than the format's limit of " +
              std::to_string(kMaxHeaderBytes) + " bytes (corrupt or not a safetensors file)");
  require(header_len <= bytes.size() - 8, src + ": header length " + std::to_string(header_len) +
                                              " is larger than the rest of the file (" +
                                              std::to_string(bytes.size() - 8) + " bytes): the file is truncated");
  const std::string header_text(reinterpret_cast<const char*>(bytes.data() + 8), static_cast<std::size_t>(header_len));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(src + ": the header is not valid JSON (" + e.what() + ")");
  }
  require(header.is_object(), src + ": the header must be a JSON object of tensors");

  SafeTensors st;
  st.source_ = source;
  st.data_start_ = 8 + static_cast<std::size_t>(header_len);
  const std::size_t data_size = bytes.size() - st.data_start_;

  // Every check below is `if (!ok) throw`, never require(ok, message): a message built with + (and a JSON dump)
  // for every tensor of every bundle load cost more than the checks themselves.
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw Error(src + ": \"__metadata__\" must be an object of strings");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw Error(src + ": \"__metadata__\" entry '" + k + "' must be a string");
        st.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string& tensor = name;  // (a structured binding cannot be captured in C++17)
    const nlohmann::json& fields = entry;
    const auto what = [&] { return src + ": tensor '" + tensor + "'"; };
    if (!entry.is_object())
      throw Error(what() + ": the header entry must be an object with dtype, shape and data_offsets");
    if (!entry.contains("dtype") || !entry["dtype"].is_string())
      throw Error(what() + ": \"dtype\" is missing or not a string");
    TensorInfo info;
    info.name = name;
    const std::string dtype = entry["dtype"].get<std::string>();
    if (!parse_dtype(dtype, info.dtype))
      throw Error(what() + ": unsupported dtype '" + dtype + "' (supported: F32, F16, BF16, I32, I64, I8)");
    if (!entry.contains("shape") || !entry["shape"].is_array())
      throw Error(what() + ": \"shape\" is missing or not an array");
    std::size_t count = 1;
    for (const auto& d : entry["shape"]) {
      std::size_t dim = 0;
      if (!as_size(d, dim))
        throw Error(what() + ": shape " + entry["shape"].dump() + " must hold non-negative integers");
      info.shape.push_back(dim);
      if (!checked_mul(count, dim, count)) throw Error(what() + ": shape " + entry["shape"].dump() + " is too large");
    }
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      throw Error(what() + ": \"data_offsets\" must be [begin, end]");
    const auto offsets = [&] { return what() + ": data_offsets " + fields["data_offsets"].dump(); };
    if (!as_size(entry["data_offsets"][0], info.begin) || !as_size(entry["data_offsets"][1], info.end))
      throw Error(offsets() + " must be non-negative integers");
    if (info.begin > info.end) throw Error(offsets() + " have begin > end");
    if (info.end > data_size)
      throw Error(offsets() + " point past the end of the data region (" + std::to_string(data_size) +
                  " bytes): the header lies or the file is truncated");
    std::size_t expected_bytes = 0;
    if (!checked_mul(count, dtype_size(info.dtype), expected_bytes)) throw Error(what() + ": shape is too large");
    if (info.end - info.begin != expected_bytes)
      throw Error(offsets() + " span " + std::to_string(info.end - info.begin) + " bytes but shape " +
                  shape_to_string(info.shape) + " of " + dtype + " needs " + std::to_string(expected_bytes));
    for (const auto& [other_name, other] : entry.items()) {
      if (other_name != "dtype" && other_name != "shape" && other_name != "data_offsets")
        throw Error(what() + ": unexpected field \"" + other_name + "\" in the header entry");
    }
    st.index_.emplace(name, std::move(info));
  }

  // No overlaps and no holes: sorted by offset, each tensor starts where the previous one ended.
  std::vector<const TensorInfo*> by_offset;
  for (const auto& [name, info] : st.index_) by_offset.push_back(&info);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::size_t covered = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->begin == t->end) continue;  // empty tensors occupy no bytes
    if (t->begin < covered)
      throw Error(src + ": tensor '" + t->name + "' (bytes " + std::to_string(t->begin) + ".." +
                  std::to_string(t->end) + ") overlaps tensor '" + (previous ? previous->name : std::string("?")) +
                  "' (bytes up to " + std::to_string(covered) + ")");
    if (t->begin != covered)
      throw Error(src + ": bytes " + std::to_string(covered) + ".." + std::to_string(t->begin) +
                  " of the data region belong to no tensor (the format allows no holes)");
    covered = t->end;
    previous = t;
  }
  require(covered == data_size, src + ": the last " + std::to_string(data_size - covered) +
                                    " bytes of the file belong to no tensor (the format allows no trailing data)");

  st.bytes_ = std::move(bytes);
  // Every float weight must be finite: a NaN/Inf would silently poison every output.
  for (const auto& [name, info] : st.index_) {
    if (!is_float(info.dtype)) continue;
    const std::uint8_t* p = st.bytes_.data() + st.data_start_ + info.begin;
    const std::size_t n = info.element_count();
    const std::size_t i = first_non_finite(p, info.dtype, n);
    // The message is built only on failure: this check visits every weight of every bundle load.
    if (i != n) {
      const float v = value_at(p, info.dtype, i);
      throw Error(src + ": tensor '" + name + "' element " + std::to_string(i) + " is " +
                  (std::isnan(v) ? "NaN" : "infinite") + ": the weights are corrupt");
    }
  }
  return st;
}

const TensorInfo& SafeTensors::info(const std::string& name) const {
  auto it = index_.find(name);
  require(it != index_.end(), source_ + ": tensor '" + name + "' is missing");
  return it->second;
}

std::vector<std::string> SafeTensors::names() const {
  std::vector<std::string> out;
  for (const auto& [name, info] : index_) out.push_back(name);
  return out;
}

const std::uint8_t* SafeTensors::data(const std::string& name) const {
  return bytes_.data() + data_start_ + info(name).begin;
}

std::vector<float> SafeTensors::to_float(const std::string& name) const {
  const TensorInfo& t = info(name);
  require(is_float(t.dtype), source_ + ": tensor '" + name + "' has dtype " + dtype_name(t.dtype) +
                                 " but a floating-point tensor (F32, F16, BF16) is expected");
  const std::size_t n = t.element_count();
  std::vector<float> out(n);
  const std::uint8_t* p = data(name);
  if (t.dtype == DType::kF32) {
    if (n) std::memcpy(out.data(), p, 4 * n);
  } else if (t.dtype == DType::kF16) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = f16_to_float(h);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = bf16_to_float(h);
    }
  }
  return out;
}

std::vector<std::int64_t> SafeTensors::to_int64(const std::string& name) const {
  const TensorInfo& t = info(name);
  require(t.dtype == DType::kI32 || t.dtype == DType::kI64, source_ + ": tensor '" + name + "' has dtype " +
                                                                dtype_name(t.dtype) +
                                                                " but an integer tensor (I32, I64) is expected");
  const std::size_t n = t.element_count();
  std::vector<std::int64_t> out(n);
  const std::uint8_t* p = data(name);
  for (std::size_t i = 0; i < n; ++i) {
    if (t.dtype == DType::kI32) {
      std::int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out[i] = v;
    } else {
      std::memcpy(&out[i], p + 8 * i, 8);
    }
  }
  return out;
}

}  // namespace attnlens::io
