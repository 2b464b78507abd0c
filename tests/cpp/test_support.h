// Small helpers the C++ tests share: reading a file or a JSON file of the source tree, and the message of the
// attnlens::Error a call throws.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "common.h"

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

}  // namespace attnlens::testing
