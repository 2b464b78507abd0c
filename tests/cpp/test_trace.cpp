// Tests of AttentionTrace (src/trace): maps are recorded with their coordinates, in order, copied, checked
// against their dims, and nothing is recorded when tracing is off.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common.h"
#include "trace/trace.h"

using attnlens::AttentionMap;
using attnlens::AttentionTrace;

TEST_SUITE("trace") {
  TEST_CASE("records maps with name, layer, head, step and dims, in order") {
    AttentionTrace trace;
    CHECK(trace.enabled());
    CHECK(trace.size() == 0);
    std::vector<float> weights = {0.25f, 0.75f, 0.5f, 0.5f, 1.0f, 0.0f};
    trace.record("cross", 2, 3, 7, {2, 3}, weights.data());
    weights[0] = 99.0f;  // the trace holds a copy, not a view
    AttentionMap m;
    m.name = "encoder_self";
    m.layer = 0;
    m.head = 1;
    m.dims = {1, 2};
    m.data = {0.4f, 0.6f};
    trace.record(std::move(m));
    trace.record("cross", 2, 3, 8, {1, 1}, weights.data() + 4);

    REQUIRE(trace.size() == 3);
    const AttentionMap& first = trace.maps()[0];
    CHECK(first.name == "cross");
    CHECK(first.layer == 2);
    CHECK(first.head == 3);
    CHECK(first.step == 7);
    CHECK(first.dims == std::vector<std::size_t>{2, 3});
    CHECK(first.data == std::vector<float>{0.25f, 0.75f, 0.5f, 0.5f, 1.0f, 0.0f});
    CHECK(trace.maps()[1].step == -1);  // default: computed once for the whole input

    const auto cross = trace.find("cross");
    REQUIRE(cross.size() == 2);
    CHECK(cross[0]->step == 7);
    CHECK(cross[1]->step == 8);
    CHECK(cross[1]->data == std::vector<float>{1.0f});
    CHECK(trace.find("decoder_self").empty());

    trace.clear();
    CHECK(trace.size() == 0);
    CHECK(trace.find("cross").empty());
  }

  TEST_CASE("maps whose data does not match their dims are rejected with a clear message") {
    AttentionTrace trace;
    AttentionMap m;
    m.name = "visual";
    m.dims = {2, 7, 7};
    m.data.assign(97, 0.0f);
    try {
      trace.record(std::move(m));
      FAIL("a map with 97 values for dims 2×7×7 was accepted");
    } catch (const attnlens::Error& e) {
      CHECK(std::string(e.what()) == "AttentionTrace: map 'visual' has 97 values but its dims hold 98");
    }
    CHECK(trace.size() == 0);
    CHECK_THROWS_AS(trace.record("cross", 0, 0, 0, {2, 2}, nullptr), attnlens::Error);
    // Zero-sized maps (e.g. an empty source sentence) are legitimate and need no data.
    trace.record("cross", 0, 0, 0, {0, 5}, nullptr);
    REQUIRE(trace.size() == 1);
    CHECK(trace.maps()[0].data.empty());
  }

  TEST_CASE("a disabled trace records nothing") {
    AttentionTrace trace(false);
    CHECK(!trace.enabled());
    const float w[2] = {0.5f, 0.5f};
    trace.record("cross", 0, 0, 0, {1, 2}, w);
    AttentionMap m;
    m.name = "selfattn";
    m.dims = {1, 2};
    m.data = {0.5f, 0.5f};
    trace.record(std::move(m));
    CHECK(trace.size() == 0);
    CHECK(trace.maps().empty());
  }

  TEST_CASE("select_maps: kinds by name, the mean of each layer's heads, clear errors") {
    std::vector<AttentionMap> maps;
    for (int layer = 0; layer < 2; ++layer)
      for (int head = 0; head < 3; ++head) {
        maps.push_back({"cross", layer, head, -1, {1, 2}, {float(head), float(layer)}});
        maps.push_back({"decoder_self", layer, head, -1, {1, 1}, {1.0f}});
      }
    maps.push_back({"visual", -1, -1, 0, {1, 1}, {1.0f}});  // no heads: kept as it is under head_mean
    CHECK(attnlens::select_maps(maps, {}).size() == maps.size());
    const auto cross = attnlens::select_maps(maps, {{"cross"}, false});
    REQUIRE(cross.size() == 6);
    for (const auto& m : cross) CHECK(m.name == "cross");
    const auto mean = attnlens::select_maps(maps, {{"cross", "visual"}, true});
    REQUIRE(mean.size() == 3);
    CHECK(mean[0].layer == 0);
    CHECK(mean[0].head == -1);
    CHECK(mean[0].data == std::vector<float>{1.0f, 0.0f});  // mean of heads 0, 1, 2; layer 0
    CHECK(mean[1].data == std::vector<float>{1.0f, 1.0f});
    CHECK(mean[2].name == "visual");
    CHECK(attnlens::select_maps(maps, {{}, true}).size() == 5);  // every kind, one map per layer
    CHECK_THROWS_WITH_AS(attnlens::select_maps(maps, {{"encoder_self"}, false}),
                         doctest::Contains("no 'encoder_self' maps (it has 'cross', 'decoder_self', 'visual')"),
                         attnlens::Error);
    CHECK(attnlens::select_maps({}, {{"anything"}, true}).empty());
  }
}
