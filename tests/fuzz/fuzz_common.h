// Shared by the libFuzzer harnesses of tests/fuzz (see README.md there).
//
// The rule every harness checks: whatever the bytes, the engine either succeeds or throws attnlens::Error. Any other
// exception (nlohmann::json::type_error, std::out_of_range, std::bad_alloc, ...) escapes LLVMFuzzerTestOneInput and
// libFuzzer reports it as a crash, as it does every ASan/UBSan report, timeout and out-of-memory.
//
// Tiny bundles: tests/fuzz/tiny/ holds one small config.json per architecture (the shipped configs with tiny
// dimensions) and tiny vocabularies. Their weights are never committed: synthesize_weights() builds them from the
// engine's own error messages ("tensor 'x' is missing (the ... model needs it with shape [a, b])", "... has shape
// [..] but ... expects [a, b]", "... is not used by ..."), so any config, mutated or not, gets weights of the shapes
// it implies, and the fuzzer reaches the model code behind the shape checks.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"

namespace fuzz {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz harness: cannot read %s\n", path.c_str());
    std::abort();
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string source_path(const std::string& rel) { return std::string(ATTNLENS_SOURCE_DIR) + "/" + rel; }
inline std::string tiny_file(const std::string& name) { return read_file(source_path("tests/fuzz/tiny/" + name)); }

// Splits `data` at every occurrence of `sep` (at most max_parts parts; the last takes the rest).
inline std::vector<std::string> split(const std::uint8_t* data, std::size_t size, const std::string& sep,
                                      std::size_t max_parts) {
  std::vector<std::string> parts;
  const std::string s(reinterpret_cast<const char*>(data), size);
  std::size_t pos = 0;
  while (parts.size() + 1 < max_parts) {
    const std::size_t hit = s.find(sep, pos);
    if (hit == std::string::npos) break;
    parts.push_back(s.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  parts.push_back(s.substr(pos));
  return parts;
}

// The separator the multi-part harnesses use (also in their .dict files).
inline const std::string kSep = "\n#~#\n";

// Runs fn; attnlens::Error is an expected outcome, anything else escapes (a finding).
template <typename Fn>
bool ok_or_error(Fn&& fn, std::string* message = nullptr) {
  try {
    fn();
    return true;
  } catch (const attnlens::Error& e) {
    if (message) *message = e.what();
    return false;
  }
}

// ---- safetensors writer ----
struct TensorSpec {
  std::string dtype = "F32";  // F32 | F16 | BF16 | I32 | I64
  std::vector<std::size_t> shape;
  std::map<std::size_t, float> values;  // elements that differ from the default pattern (NaN, Inf, huge, ...)
};

inline std::size_t product(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

// The element encodings write_safetensors knows (any other dtype name is written as I64, 8 bytes).
enum class Encoding { f32, bf16, f16, i32, i64 };

inline Encoding encoding_of(const std::string& dtype) {
  if (dtype == "F32") return Encoding::f32;
  if (dtype == "BF16") return Encoding::bf16;
  if (dtype == "F16") return Encoding::f16;
  if (dtype == "I32") return Encoding::i32;
  return Encoding::i64;
}

inline std::size_t encoded_bytes(Encoding e) {
  return e == Encoding::bf16 || e == Encoding::f16 ? 2 : e == Encoding::i64 ? 8 : 4;
}

// One element's bytes at `out` (encoded_bytes(e) of them): `v` in the encoding (integers: v truncated and clamped).
inline void put_element(char* out, Encoding e, float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  switch (e) {
    case Encoding::f32:
      std::memcpy(out, &v, 4);
      return;
    case Encoding::bf16:
      out[0] = static_cast<char>((bits >> 16) & 0xff);
      out[1] = static_cast<char>(bits >> 24);
      return;
    case Encoding::f16: {
      // Normal halves by hand; tiny values flush to zero, large ones and NaN/Inf become Inf/NaN.
      const std::uint32_t sign = bits >> 31;
      const int ex = static_cast<int>((bits >> 23) & 0xff);
      const std::uint32_t mant = (bits >> 13) & 0x3ff;
      std::uint16_t half;
      if (ex == 0xff) {
        half = static_cast<std::uint16_t>((sign << 15) | 0x7c00 | (mant ? 0x200 : 0));
      } else if (ex - 127 + 15 >= 31) {
        half = static_cast<std::uint16_t>((sign << 15) | 0x7c00);
      } else if (ex - 127 + 15 <= 0) {
        half = static_cast<std::uint16_t>(sign << 15);
      } else {
        half = static_cast<std::uint16_t>((sign << 15) | (static_cast<std::uint32_t>(ex - 127 + 15) << 10) | mant);
      }
      out[0] = static_cast<char>(half & 0xff);
      out[1] = static_cast<char>(half >> 8);
      return;
    }
    case Encoding::i32: {
      const std::int32_t x = std::isfinite(v) && std::fabs(v) < 2e9f ? static_cast<std::int32_t>(v) : 0;
      std::memcpy(out, &x, 4);
      return;
    }
    case Encoding::i64: {
      const std::int64_t x = std::isfinite(v) && std::fabs(v) < 9e18f ? static_cast<std::int64_t>(v) : 0;
      std::memcpy(out, &x, 8);
      return;
    }
  }
}

// Deterministic small values in [-0.1, 0.1] (no NaN/Inf) unless spec.values says otherwise.
inline float default_value(std::size_t i, std::uint32_t seed) {
  const std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u + seed * 40503u;
  return (static_cast<float>(h % 2001u) - 1000.0f) / 10000.0f;
}

// The file's bytes in one allocation: offsets and header first, then each tensor's default pattern with the
// elements of `values` written over it (perf showed the per-element appends, the growth copies and a tree lookup per
// element as most of bundle_structured's own time; the bytes are the same as before).
inline std::string write_safetensors(const std::map<std::string, TensorSpec>& tensors, std::uint32_t seed = 1,
                                     const nlohmann::json& metadata = nlohmann::json()) {
  nlohmann::json header = nlohmann::json::object();
  std::size_t total = 0;
  for (const auto& [name, t] : tensors) {
    const std::size_t n = product(t.shape) * encoded_bytes(encoding_of(t.dtype));
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {total, total + n}}};
    total += n;
  }
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string h = header.dump();
  while (h.size() % 8) h.push_back(' ');
  std::string out(8 + h.size() + total, '\0');
  const std::uint64_t len = h.size();
  std::memcpy(&out[0], &len, 8);
  std::memcpy(&out[8], h.data(), h.size());
  char* p = &out[0] + 8 + h.size();
  for (const auto& [name, t] : tensors) {
    const Encoding e = encoding_of(t.dtype);
    const std::size_t n = product(t.shape), b = encoded_bytes(e);
    for (std::size_t i = 0; i < n; ++i) put_element(p + i * b, e, default_value(i, seed));
    for (const auto& [i, v] : t.values)
      if (i < n) put_element(p + i * b, e, v);
    p += n * b;
  }
  return out;
}

inline std::vector<std::uint8_t> bytes(const std::string& s) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
  return std::vector<std::uint8_t>(p, p + s.size());  // one memmove, no zero fill (the iterator copy was ~5 % of a run)
}

// ---- weights from the engine's error messages ----
inline bool parse_shape(const std::string& s, std::size_t pos, std::vector<std::size_t>& shape) {
  if (pos >= s.size() || s[pos] != '[') return false;
  shape.clear();
  ++pos;
  while (pos < s.size() && s[pos] != ']') {
    std::size_t v = 0;
    bool digit = false;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (v > (std::size_t(1) << 40)) return false;
      v = v * 10 + static_cast<std::size_t>(s[pos] - '0');
      ++pos;
      digit = true;
    }
    if (!digit) return false;
    shape.push_back(v);
    if (pos < s.size() && s[pos] == ',') ++pos;
    if (pos < s.size() && s[pos] == ' ') ++pos;
  }
  return pos < s.size();
}

// Adjusts `tensors` by one message of the engine; false when the message is about something else (or the shape it
// asks for is larger than max_elements: the config is then too large to be worth building weights for).
inline bool apply_weights_message(const std::string& msg, std::map<std::string, TensorSpec>& tensors,
                                  std::size_t max_elements) {
  const std::size_t t = msg.find("tensor '");
  if (t == std::string::npos) return false;
  const std::size_t name_begin = t + 8;
  // Names never hold "' " in our tiny bundles: the first "' " after the opening quote closes the name.
  const std::size_t name_end = msg.find("' ", name_begin);
  if (name_end == std::string::npos) return false;
  const std::string name = msg.substr(name_begin, name_end - name_begin);
  const std::string rest = msg.substr(name_end + 2);
  std::vector<std::size_t> shape;
  if (rest.rfind("is missing", 0) == 0) {
    const std::size_t s = rest.find("with shape ");
    if (s == std::string::npos || !parse_shape(rest, s + 11, shape)) return false;
  } else if (rest.rfind("has shape", 0) == 0) {
    const std::size_t s = rest.find(" expects ");
    if (s == std::string::npos || !parse_shape(rest, s + 9, shape)) return false;
  } else if (rest.rfind("is not used", 0) == 0) {
    return tensors.erase(name) != 0;
  } else {
    return false;
  }
  std::size_t n = 1;
  for (std::size_t d : shape) {
    if (d != 0 && n > max_elements / d) return false;
    n *= d;
  }
  if (n > max_elements) return false;
  std::size_t total = n;
  for (const auto& [other, spec] : tensors)
    if (other != name) total += product(spec.shape);
  if (total > 4 * max_elements) return false;
  TensorSpec& spec = tensors[name];
  if (rest.rfind("has shape", 0) == 0 && spec.shape == shape) return false;  // no progress
  spec.shape = shape;
  return true;
}

// Calls construct(weights) until it stops complaining about tensors (or gives up). Returns the final weights;
// `error` holds the last message ("" when construct succeeded).
inline std::string synthesize_weights(std::map<std::string, TensorSpec>& tensors,
                                      const std::function<void(const std::string&)>& construct, int max_rounds,
                                      std::size_t max_elements, std::string& error) {
  std::string weights;
  for (int round = 0; round < max_rounds; ++round) {
    weights = write_safetensors(tensors);
    error.clear();
    if (ok_or_error([&] { construct(weights); }, &error)) return weights;
    if (!apply_weights_message(error, tensors, max_elements)) return weights;
  }
  return weights;
}

}  // namespace fuzz
