// Small helpers the C++ tests share: reading a file or a JSON file of the source tree, the message of the
// attnlens::Error a call throws, golden tensors stored in a safetensors file with their strict comparison, and
// maps recomputed from their query/key vectors (the neuron view's `qk`).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "golden.h"
#include "io/safetensors.h"
#include "trace/trace.h"

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

// The converted Hugging Face fixtures (tests/fixtures/hf/<name>/bundle) and their PyTorch goldens
// (tests/goldens/hf/<name>.{json,safetensors}, written by models/training/hf/*_fixtures.py).
inline std::string hf_bundle_dir(const std::string& name) {
  return source_path("tests/fixtures/hf/" + name + "/bundle");
}

struct HfGolden {
  nlohmann::json meta;
  attnlens::io::SafeTensors tensors;
};

inline HfGolden hf_golden(const std::string& name) {
  return {read_json(source_path("tests/goldens/hf/" + name + ".json")),
          attnlens::io::SafeTensors::load(source_path("tests/goldens/hf/" + name + ".safetensors"))};
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

// Every map of `maps` recomputed from its vectors in `qk` ('<name>.query' [rows, d_head] and '<name>.key'
// [columns, d_head] of the same layer and head): softmax_j(query[i]·key[j] / √d_head), over j ≤ i (zero above)
// when causal(name). Returns the largest difference to the maps; a map without its vectors fails the test.
inline double max_qk_error(const attnlens::AttentionTrace& maps, const attnlens::AttentionTrace& qk,
                           const std::function<bool(const std::string&)>& causal) {
  const auto find = [&](const std::string& name, int layer, int head) -> const float* {
    for (const attnlens::MapView m : qk)
      if (m.name == name && m.layer == layer && m.head == head) return m.data.begin();
    return nullptr;
  };
  const auto d_head = [&](const std::string& name, int layer, int head, std::size_t rows) {
    for (const attnlens::MapView m : qk)
      if (m.name == name && m.layer == layer && m.head == head) {
        REQUIRE(m.dims.size() == 2);
        CHECK(m.dims[0] == rows);
        return m.dims[1];
      }
    return std::size_t{0};
  };
  double worst = 0;
  for (const attnlens::MapView map : maps) {
    INFO(map.name << " layer " << map.layer << " head " << map.head);
    const float* q = find(map.name + ".query", map.layer, map.head);
    const float* k = find(map.name + ".key", map.layer, map.head);
    REQUIRE(q != nullptr);
    REQUIRE(k != nullptr);
    const std::size_t rows = map.dims[0], cols = map.dims[1];
    const std::size_t dh = d_head(map.name + ".query", map.layer, map.head, rows);
    REQUIRE(dh > 0);
    REQUIRE(d_head(map.name + ".key", map.layer, map.head, cols) == dh);
    for (std::size_t i = 0; i < rows; ++i) {
      const std::size_t n = causal(map.name) ? std::min(i + 1, cols) : cols;
      std::vector<double> s(n);
      double mx = -1e300, sum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < dh; ++c) dot += double(q[i * dh + c]) * k[j * dh + c];
        s[j] = dot / std::sqrt(double(dh));
        mx = std::max(mx, s[j]);
      }
      for (double& v : s) sum += (v = std::exp(v - mx));
      for (std::size_t j = 0; j < cols; ++j)
        worst = std::max(worst, std::abs((j < n ? s[j] / sum : 0.0) - map.data.begin()[i * cols + j]));
    }
  }
  return worst;
}

}  // namespace attnlens::testing
