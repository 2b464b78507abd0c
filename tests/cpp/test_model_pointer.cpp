// The number-sorting pointer network (src/models/pointer_net, src/api/pointer) against the PyTorch goldens of
// models/pointer-sort/golden.{json,safetensors} written by models/training/pointer/export.py: output order exactly,
// the preprocessed inputs, every step's pointer distribution, every encoder self-attention map and the encoder
// states within abs 1e-4. Also: bad input (empty, NaN/inf, too long, non-numbers in text), the equal-value rule,
// and bundles with bad configs. Runs natively and, compiled with em++, under Node.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.h"
#include "golden.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "models/pointer_net.h"
#include "test_support.h"

using attnlens::Error;
using attnlens::api::PointerSorter;
using attnlens::api::PointerSortResult;
using attnlens::testing::GoldenTensor;
using nlohmann::json;

namespace {

const std::string kDir = std::string(ATTNLENS_SOURCE_DIR) + "/models/pointer-sort/";

using attnlens::testing::check_close;
using attnlens::testing::error_of;
using attnlens::testing::golden_tensor;
using attnlens::testing::read_file;

// Invariants of any result: a permutation, rows of the pointer map sum to 1 and give 0 to positions already
// pointed at, and equal values come out in input order.
void check_result_sane(const PointerSortResult& r) {
  const std::size_t n = r.values.size();
  REQUIRE(r.order.size() == n);
  std::vector<std::size_t> seen(r.order);
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < n; ++i) CHECK(seen[i] == i);
  REQUIRE(!r.attentions.empty());
  const auto& p = r.attentions[0];
  CHECK(p.name == "pointer");
  REQUIRE(p.dims == std::vector<std::size_t>{n, n});
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) sum += p.data[i * n + j];
    CHECK(std::fabs(sum - 1.0) < 1e-4);
    for (std::size_t k = 0; k < i; ++k) CHECK(p.data[i * n + r.order[k]] == 0.0f);
    CHECK(r.step_probabilities[i] == p.data[i * n + r.order[i]]);
    CHECK(r.sorted[i] == r.values[r.order[i]]);
  }
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b)
      if (r.sorted[a] == r.sorted[b]) CHECK(r.order[a] < r.order[b]);
  bool ok = true;
  for (std::size_t i = 1; i < n; ++i) ok = ok && r.sorted[i - 1] <= r.sorted[i];
  CHECK(r.sorted_ok == ok);
}

}  // namespace

TEST_CASE("pointer-sort: engine forward equals PyTorch on the goldens (order, pointer maps, encoder maps)") {
  const json golden = json::parse(read_file(kDir + "golden.json"));
  const auto gst = attnlens::io::SafeTensors::load(kDir + "golden.safetensors");
  const auto sorter = PointerSorter::load(kDir);
  const attnlens::models::PointerNet net(attnlens::io::Bundle::load(kDir));
  const auto& cases = golden.at("cases");
  REQUIRE(cases.size() >= 8);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& c = cases[ci];
    const std::string key = "case" + std::to_string(ci) + "/";
    CAPTURE(ci);
    const auto values = c.at("values").get<std::vector<double>>();
    const PointerSortResult r = sorter->sort(values);
    check_result_sane(r);
    CHECK(r.order == c.at("order").get<std::vector<std::size_t>>());
    CHECK(r.sorted == c.at("sorted").get<std::vector<double>>());
    CHECK(r.sorted_ok == c.at("sorted_ok").get<bool>());
    check_close(r.inputs, golden_tensor(gst, key + "inputs"), key + "inputs");
    check_close(r.attentions[0].data.to_vector(), golden_tensor(gst, key + "pointer"), key + "pointer");
    const GoldenTensor enc_maps = golden_tensor(gst, key + "encoder_self");  // [layers, heads, n, n]
    REQUIRE(enc_maps.dims.size() == 4);
    const std::size_t layers = enc_maps.dims[0], heads = enc_maps.dims[1], n = values.size();
    REQUIRE(r.attentions.size() == 1 + layers * heads);
    std::vector<float> got;
    for (std::size_t m = 1; m < r.attentions.size(); ++m) {
      const auto& map = r.attentions[m];
      CHECK(map.name == "encoder_self");
      CHECK(map.layer == static_cast<int>((m - 1) / heads));
      CHECK(map.head == static_cast<int>((m - 1) % heads));
      CHECK(map.dims == std::vector<std::size_t>{n, n});
      got.insert(got.end(), map.data.begin(), map.data.end());
    }
    check_close(got, enc_maps, key + "encoder_self");
    attnlens::AttentionTrace trace(false);
    const auto f = net.forward(values, trace);
    CHECK(trace.size() == 0);
    check_close(f.encoder, golden_tensor(gst, key + "encoder"), key + "encoder");
    // Without the encoder maps only the pointer map is returned, and the result is the same.
    attnlens::api::PointerSortParams p;
    p.output_attentions = false;
    const auto r2 = sorter->sort(values, p);
    REQUIRE(r2.attentions.size() == 1);
    CHECK(r2.order == r.order);
    CHECK(r2.attentions[0].data == r.attentions[0].data);
  }
}

TEST_CASE("pointer-sort: the shipped model sorts small lists and keeps equal values in input order") {
  const auto sorter = PointerSorter::load(kDir);
  const auto r = sorter->sort({5, 3, 9, 1});
  CHECK(r.sorted == std::vector<double>{1, 3, 5, 9});
  CHECK(r.order == std::vector<std::size_t>{3, 1, 0, 2});
  const auto single = sorter->sort({-7.5});
  CHECK(single.order == std::vector<std::size_t>{0});
  CHECK(single.attentions[0].data == std::vector<float>{1.0f});
  const auto equal = sorter->sort({4, 4, 4});
  CHECK(equal.order == std::vector<std::size_t>{0, 1, 2});
  CHECK(equal.inputs == std::vector<float>{0, 0, 0});
  // Random lists of every length up to the maximum: always a valid, sane result (sorted or not).
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1000.0, 1000.0);
  for (std::size_t n = 1; n <= sorter->max_length(); n += 7) {
    std::vector<double> v(n);
    for (auto& x : v) x = std::round(u(rng)) / 4;  // quarters: ties happen
    check_result_sane(sorter->sort(v));
  }
  // Extreme magnitudes: the span overflows a double and is halved first.
  const auto huge = sorter->sort({1e308, -1e308, 0});
  check_result_sane(huge);
  CHECK(huge.inputs[1] == 0.0f);
  CHECK(huge.inputs[0] == 1.0f);
  CHECK(huge.inputs[2] == 0.5f);
}

TEST_CASE("pointer-sort: bad input is a clear Error") {
  const auto sorter = PointerSorter::load(kDir);
  CHECK(error_of([&] { sorter->sort({}); }).find("empty input") != std::string::npos);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(error_of([&] { sorter->sort({1, nan}); }).find("number 2 is NaN") != std::string::npos);
  CHECK(error_of([&] { sorter->sort({-inf, 1}); }).find("number 1 is -Infinity") != std::string::npos);
  std::vector<double> too_long(sorter->max_length() + 1, 1.0);
  CHECK(error_of([&] { sorter->sort(too_long); }).find("too many numbers: got 51, this model sorts at most 50") !=
        std::string::npos);
  too_long.pop_back();
  CHECK(sorter->sort(too_long).order.size() == sorter->max_length());

  using attnlens::api::parse_number_list;
  CHECK(parse_number_list("5, 3 9;1\t-2.5e3") == std::vector<double>{5, 3, 9, 1, -2500});
  CHECK(parse_number_list(" ,; ").empty());
  CHECK(error_of([] { parse_number_list("1 abc 3"); }) == "pointer-sort: item 2 ('abc') is not a number");
  CHECK(error_of([] { parse_number_list("nan"); }).find("is not a number") != std::string::npos);
  CHECK(error_of([] { parse_number_list("inf"); }).find("is not a number") != std::string::npos);
  CHECK(error_of([] { parse_number_list("0x10"); }).find("is not a number") != std::string::npos);
  CHECK(error_of([] { parse_number_list("1.2.3"); }).find("is not a number") != std::string::npos);
  CHECK(error_of([] { parse_number_list("1e999"); }).find("too large") != std::string::npos);

  using attnlens::api::pointer_sort_params;
  CHECK(pointer_sort_params("").output_attentions);
  CHECK_FALSE(pointer_sort_params("{\"output_attentions\": false}").output_attentions);
  CHECK_FALSE(pointer_sort_params("{\"encoder_attentions\": false}").output_attentions);  // the deprecated name
  CHECK(error_of([] { pointer_sort_params("{\"encoder_attentions\": 1}"); }).find("true or false") != std::string::npos);
  CHECK(error_of([] { pointer_sort_params("{\"beams\": 1}"); }).find("unknown param 'beams' (known: encoder_attentions, output_attentions)") != std::string::npos);
  CHECK(error_of([] { pointer_sort_params("[1"); }).find("not valid JSON") != std::string::npos);
}

TEST_CASE("pointer-sort: bundles with bad configs are refused with the key named") {
  const std::string config = read_file(kDir + "config.json");
  const std::string weights_text = read_file(kDir + "weights.safetensors");
  const std::vector<std::uint8_t> weights(weights_text.begin(), weights_text.end());
  const auto with = [&](const std::string& key, const json& value) {
    json c = json::parse(config);
    c[key] = value;
    return error_of([&] { PointerSorter::from_memory(c.dump(), weights, "edited"); });
  };
  CHECK(with("max_length", 0).find("\"max_length\" must be a positive integer") != std::string::npos);
  CHECK(with("max_length", 100000).find("at most 1000") != std::string::npos);
  CHECK(with("heads", 3).find("must divide") != std::string::npos);
  CHECK(with("d_model", 32).find("embed.weight") != std::string::npos);
  CHECK(with("enc_layers", 1).find("layers.1.") != std::string::npos);  // an unused tensor is named
  CHECK(with("task", "translation").find("expected \"number-sorting\"") != std::string::npos);
  CHECK(with("architecture", "selfattn-classifier").find("not a pointer network") != std::string::npos);
  CHECK(error_of([&] { PointerSorter::from_memory(config, weights, "ok"); }) == "(no error)");
}
