// Loading the golden JSON files of tests/goldens (format in tests/goldens/README.md) and comparing engine
// output with them: an element passes when |actual − expected| ≤ 1e-4 or ≤ 1e-3·|expected|. Failures report
// the op, case, tensor, worst index and max abs diff.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlens::testing {

struct GoldenTensor {
  std::vector<std::size_t> dims;
  std::vector<float> data;

  std::size_t dim(std::size_t i) const {
    if (i >= dims.size()) throw std::runtime_error("golden tensor has no dimension " + std::to_string(i));
    return dims[i];
  }
  // 0/1 float masks as the uint8 keep-masks the engine takes.
  std::vector<std::uint8_t> as_mask() const {
    std::vector<std::uint8_t> m(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) m[i] = data[i] != 0.0f ? 1 : 0;
    return m;
  }
};

struct GoldenCase {
  std::string name;
  nlohmann::json params;
  std::map<std::string, GoldenTensor> inputs;
  std::map<std::string, GoldenTensor> outputs;

  bool has_input(const std::string& key) const { return inputs.count(key) != 0; }
  const GoldenTensor& input(const std::string& key) const { return get(inputs, key, "input"); }
  const GoldenTensor& output(const std::string& key) const { return get(outputs, key, "output"); }
  // Pointer to an optional input's data, or null when the case does not have it.
  const float* optional(const std::string& key) const {
    auto it = inputs.find(key);
    return it == inputs.end() ? nullptr : it->second.data.data();
  }

 private:
  const GoldenTensor& get(const std::map<std::string, GoldenTensor>& m, const std::string& key,
                          const char* kind) const {
    auto it = m.find(key);
    if (it == m.end())
      throw std::runtime_error("golden case '" + name + "' has no " + kind + " '" + key + "'");
    return it->second;
  }
};

struct GoldenFile {
  std::string op;
  std::vector<GoldenCase> cases;
};

inline std::string golden_path(const std::string& relative) {
  return std::string(ATTNLENS_SOURCE_DIR) + "/tests/goldens/" + relative;
}

inline GoldenTensor parse_tensor(const nlohmann::json& j, const std::string& where) {
  GoldenTensor t;
  t.dims = j.at("dims").get<std::vector<std::size_t>>();
  const auto& data = j.at("data");
  t.data.reserve(data.size());
  for (const auto& v : data) t.data.push_back(static_cast<float>(v.get<double>()));
  std::size_t count = 1;
  for (std::size_t d : t.dims) count *= d;
  if (count != t.data.size()) {
    throw std::runtime_error(where + ": dims give " + std::to_string(count) + " values but data has " +
                             std::to_string(t.data.size()));
  }
  return t;
}

// Throws std::runtime_error naming the file when it is missing or malformed.
inline GoldenFile load_golden(const std::string& relative) {
  const std::string path = golden_path(relative);
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("golden file " + path + " is not valid JSON: " + e.what());
  }
  GoldenFile file;
  file.op = doc.at("op").get<std::string>();
  for (const auto& c : doc.at("cases")) {
    GoldenCase gc;
    gc.name = c.at("name").get<std::string>();
    gc.params = c.value("params", nlohmann::json::object());
    for (const auto& [key, value] : c.at("inputs").items())
      gc.inputs[key] = parse_tensor(value, path + " " + key);
    for (const auto& [key, value] : c.at("outputs").items())
      gc.outputs[key] = parse_tensor(value, path + " " + key);
    file.cases.push_back(std::move(gc));
  }
  if (file.cases.empty()) throw std::runtime_error("golden file " + path + " has no cases");
  return file;
}

struct Comparison {
  bool ok = true;
  bool size_ok = true;
  double max_abs_diff = 0.0;
  std::size_t worst = 0;
  std::string report;
};

inline Comparison compare(const float* actual, std::size_t count, const GoldenTensor& expected,
                          const std::string& label, double abs_tol = 1e-4, double rel_tol = 1e-3) {
  Comparison c;
  if (count != expected.data.size()) {
    c.ok = c.size_ok = false;
    c.report =
        label + ": size " + std::to_string(count) + " vs golden " + std::to_string(expected.data.size());
    return c;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const double a = actual[i];
    const double e = expected.data[i];
    const double diff = std::fabs(a - e);
    const bool pass = diff <= abs_tol || diff <= rel_tol * std::fabs(e);  // NaN fails both
    if (!pass) c.ok = false;
    if (!(diff <= c.max_abs_diff)) {
      c.max_abs_diff = diff;
      c.worst = i;
    }
  }
  std::ostringstream os;
  os << label << ": max abs diff " << c.max_abs_diff << " at index " << c.worst << " of " << count;
  if (count > 0) os << " (got " << actual[c.worst] << ", golden " << expected.data[c.worst] << ")";
  c.report = os.str();
  return c;
}

inline Comparison compare(const std::vector<float>& actual, const GoldenTensor& expected,
                          const std::string& label, double abs_tol = 1e-4, double rel_tol = 1e-3) {
  return compare(actual.data(), actual.size(), expected, label, abs_tol, rel_tol);
}

}  // namespace attnlens::testing

// CHECK that `actual` (a std::vector<float>, or pointer + count) matches golden output `key` of case `gc`,
// printing the max diff on failure.
#define CHECK_GOLDEN(gc, key, ...)                                                                       \
  do {                                                                                                   \
    const auto golden_cmp_ =                                                                             \
        ::attnlens::testing::compare(__VA_ARGS__, (gc).output(key), (gc).name + "/" + std::string(key)); \
    INFO(golden_cmp_.report);                                                                            \
    CHECK(golden_cmp_.ok);                                                                               \
  } while (0)
