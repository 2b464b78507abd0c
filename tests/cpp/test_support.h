// Small helpers the C++ tests share: reading a file or a JSON file of the source tree, the message of the
// attnlens::Error a call throws, and golden tensors stored in a safetensors file with their strict comparison.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "golden.h"
#include "io/safetensors.h"

namespace attnlens::testing {

// ATTNLENS_SOURCE_DIR + "/" + relative.
inline std::string source_path(const std::string& relative) {
  return std::string(ATTNLENS_SOURCE_DIR) + "/" + relative;
}

// The whole file as bytes; the test fails when it cannot be opened.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(static_cast<bool>(in), "cannot open " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

// The what() of the attnlens::Error that f throws, or "(no error)" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const attnlens::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A golden tensor stored in a safetensors file (golden.safetensors of a model bundle), widened to float.
inline GoldenTensor golden_tensor(const attnlens::io::SafeTensors& st, const std::string& name) {
  GoldenTensor t;
  t.dims = st.info(name).shape;
  t.data = st.to_float(name);
  return t;
}

// Strict parity: |actual − expected| ≤ 1e-4 (no relative slack).
inline void check_close(const std::vector<float>& actual, const GoldenTensor& expected, const std::string& label) {
  const auto cmp = compare(actual, expected, label, 1e-4, 0.0);
  INFO(cmp.report);
  CHECK(cmp.ok);
}

}  // namespace attnlens::testing
