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
    const attnlens::MapView first = trace[0];
    CHECK(first.name == "cross");
    CHECK(first.layer == 2);
    CHECK(first.head == 3);
    CHECK(first.step == 7);
    CHECK(first.dims == std::vector<std::size_t>{2, 3});
    CHECK(first.data == std::vector<float>{0.25f, 0.75f, 0.5f, 0.5f, 1.0f, 0.0f});
    CHECK(trace[1].step == -1);  // default: computed once for the whole input

    const auto cross = trace.find("cross");
    REQUIRE(cross.size() == 2);
    CHECK(cross[0].step == 7);
    CHECK(cross[1].step == 8);
    CHECK(cross[1].data == std::vector<float>{1.0f});
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
    CHECK(trace[0].data.empty());
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
    CHECK(trace.empty());
    CHECK(trace.add("cross", 0, 0, 0, {1, 2}) == nullptr);
    CHECK(trace.values().empty());
  }

  TEST_CASE("select_maps: kinds by name, the mean of each layer's heads, clear errors") {
    AttentionTrace maps;
    for (int layer = 0; layer < 2; ++layer)
      for (int head = 0; head < 3; ++head) {
        maps.record({"cross", layer, head, -1, {1, 2}, {float(head), float(layer)}});
        maps.record({"decoder_self", layer, head, -1, {1, 1}, {1.0f}});
      }
    maps.record({"visual", -1, -1, 0, {1, 1}, {1.0f}});  // no heads: kept as it is under head_mean
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
    CHECK(attnlens::select_maps(AttentionTrace(), {{"anything"}, true}).empty());
  }

  TEST_CASE("the arena: every map's values back to back, one index entry per map, written once in place") {
    AttentionTrace trace;
    trace.reserve(4, 2 * 6 + 2 * 3);
    const float* before = trace.values().data();
    // Two heads of a [2,3] kind, then two heads of a [1,3] kind: each kind one [head, rows, columns] block.
    for (int h = 0; h < 2; ++h) {
      float* out = trace.add("decoder_self", 0, h, -1, {2, 3});
      REQUIRE(out != nullptr);
      for (int i = 0; i < 6; ++i) CHECK(out[i] == 0.0f);  // zeroed
      for (int i = 0; i < 6; ++i) out[i] = static_cast<float>(10 * h + i);
    }
    for (int h = 0; h < 2; ++h) {
      float* out = trace.add("cross", 0, h, -1, {1, 3});
      for (int i = 0; i < 3; ++i) out[i] = static_cast<float>(100 + 10 * h + i);
    }
    CHECK(trace.values().data() == before);  // reserved: no reallocation while recording
    REQUIRE(trace.kinds() == std::vector<std::string>{"decoder_self", "cross"});
    const auto& e = trace.entries();
    REQUIRE(e.size() == 4);
    std::size_t offset = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
      CHECK(e[i].offset == offset);  // back to back
      offset += e[i].count;
    }
    CHECK(offset == trace.values().size());
    CHECK(e[1].kind == 0);
    CHECK(e[1].head == 1);
    CHECK(e[1].rank == 2);
    CHECK(e[1].dims[0] == 2);
    CHECK(e[1].dims[1] == 3);
    CHECK(e[2].kind == 1);
    CHECK(e[3].count == 3);
    CHECK(trace[1].data == std::vector<float>{10, 11, 12, 13, 14, 15});
    CHECK(trace[3].data == std::vector<float>{110, 111, 112});
    CHECK(trace.values()[6] == 10.0f);  // head 1 of decoder_self follows head 0 directly
    // Iteration, at(), append() and a copy out of the arena.
    int n = 0;
    for (const attnlens::MapView m : trace) n += m.name == "cross";
    CHECK(n == 2);
    CHECK_THROWS_AS(trace.at(4), attnlens::Error);
    AttentionTrace more;
    more.record("visual", -1, -1, 2, {1, 1}, trace[3].data.data());
    more.append(trace);
    REQUIRE(more.size() == 5);
    CHECK(more.kinds() == std::vector<std::string>{"visual", "decoder_self", "cross"});
    CHECK(more[4].data == trace[3].data);
    CHECK(more[4].head == 1);
    const AttentionMap copy = more[0].copy();
    CHECK(copy.name == "visual");
    CHECK(copy.step == 2);
    CHECK(copy.data == std::vector<float>{110});
    CHECK_THROWS_AS(trace.add("too_many_dims", 0, 0, 0, {1, 1, 1, 1, 1}), attnlens::Error);
  }
}
