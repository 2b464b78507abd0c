// The C++ API (src/api.h) that the WASM bindings and the CLI use: every golden op through the uniform run_op()
// entry (natively and, in the WASM build of this binary, under Node), plus the errors a caller gets for bad input.
#include <doctest/doctest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "api.h"
#include "golden.h"

namespace api = attnlens::api;
using attnlens::testing::GoldenCase;

namespace {

std::vector<std::string> golden_ops() {
  std::vector<std::string> ops;
  const std::string dir = attnlens::testing::golden_path("attention");
  DIR* d = opendir(dir.c_str());
  REQUIRE_MESSAGE(d != nullptr, "cannot list " << dir);
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) ops.push_back(name.substr(0, name.size() - 5));
  }
  closedir(d);
  std::sort(ops.begin(), ops.end());
  return ops;
}

api::TensorMap inputs_of(const GoldenCase& gc) {
  api::TensorMap m;
  for (const auto& [name, t] : gc.inputs) m.emplace(name, api::Tensor(t.dims, t.data));
  return m;
}

api::Tensor tensor(std::vector<std::size_t> dims, std::vector<float> data) { return api::Tensor(std::move(dims), std::move(data)); }

}  // namespace

TEST_CASE("api: every golden op runs through run_op and matches PyTorch") {
  const auto ops = golden_ops();
  REQUIRE(ops.size() >= 20);
  for (const auto& op : ops) {
    CAPTURE(op);
    REQUIRE_MESSAGE(api::has_op(op), "golden op " << op << " is not in the API registry");
    const auto file = attnlens::testing::load_golden("attention/" + op + ".json");
    for (const auto& gc : file.cases) {
      CAPTURE(gc.name);
      const api::TensorMap out = api::run_op(op, inputs_of(gc), gc.params.dump());
      // (No structured binding here: clang 14, behind em++, cannot capture one in doctest's message lambdas.)
      for (const auto& entry : gc.outputs) {
        const std::string& name = entry.first;
        const auto it = out.find(name);
        REQUIRE_MESSAGE(it != out.end(), op << "/" << gc.name << " returned no '" << name << "'");
        CHECK(it->second.dims == entry.second.dims);
        CHECK_GOLDEN(gc, name, it->second.data);
      }
    }
  }
}

TEST_CASE("api: list_ops describes every op with a formula, a paper, inputs and outputs") {
  const auto ops = api::list_ops();
  CHECK(ops.size() >= golden_ops().size());
  for (const auto& op : ops) {
    CAPTURE(op.name);
    CHECK(!op.formula.empty());
    CHECK(!op.paper.empty());
    CHECK(!op.inputs.empty());
    CHECK(!op.outputs.empty());
  }
}

TEST_CASE("api: bad input is an attnlens::Error naming what is wrong") {
  const api::TensorMap ok = {{"q", tensor({2, 2}, {1, 0, 0, 1})}, {"keys", tensor({3, 2}, {1, 2, 3, 4, 5, 6})}};
  CHECK(api::run_op("score_dot", ok).at("scores").data == std::vector<float>{1, 3, 5, 2, 4, 6});

  CHECK_THROWS_WITH_AS(api::run_op("no_such_op", ok), doctest::Contains("unknown attention op 'no_such_op'"),
                       attnlens::Error);
  api::TensorMap bad = ok;
  bad["keys"] = tensor({3, 1}, {1, 2, 3});
  CHECK_THROWS_WITH_AS(api::run_op("score_dot", bad), doctest::Contains("input 'keys' has dims [3,1], expected [*,2]"),
                       attnlens::Error);
  bad = ok;
  bad["keys"].data.pop_back();
  CHECK_THROWS_WITH_AS(api::run_op("score_dot", bad), doctest::Contains("holds 5 values"), attnlens::Error);
  bad = ok;
  bad.erase("keys");
  CHECK_THROWS_WITH_AS(api::run_op("score_dot", bad), doctest::Contains("missing input 'keys'"), attnlens::Error);
  CHECK_THROWS_WITH_AS(api::run_op("score_dot", ok, "{\"causal\": true}"), doctest::Contains("unknown param 'causal'"),
                       attnlens::Error);
  CHECK_THROWS_WITH_AS(api::run_op("score_dot", ok, "{not json"), doctest::Contains("not valid JSON"), attnlens::Error);
  CHECK_THROWS_WITH_AS(api::run_op("score_dot", ok, "[1]"), doctest::Contains("must be a JSON object"), attnlens::Error);
  const api::TensorMap scores = {{"scores", tensor({2, 2}, {1, 2, 3, 4})}};
  CHECK_THROWS_WITH_AS(api::run_op("align_soft", scores, "{\"causal\": \"yes\"}"),
                       doctest::Contains("'causal' must be true or false"), attnlens::Error);
  CHECK_THROWS_WITH_AS(api::run_op("align_local_m", {{"scores", tensor({4}, {1, 2, 3, 4})}}, "{\"t\": 1}"),
                       doctest::Contains("missing param 'D'"), attnlens::Error);
  CHECK_THROWS_WITH_AS(api::run_op("align_hard_argmax", {{"weights", tensor({0}, {})}}),
                       doctest::Contains("at least one position"), attnlens::Error);
}

TEST_CASE("api: MultiHeadKvCache checks its weights, its capacity and its inputs") {
  const std::size_t e = 4;
  api::TensorMap w = {{"in_proj_weight", api::Tensor({3 * e, e})}, {"out_proj_weight", api::Tensor({e, e})}};
  api::MultiHeadKvCacheParams p;
  p.num_heads = 2;
  p.capacity = 2;
  api::MultiHeadKvCache cache(w, p);
  CHECK(cache.embed_dim() == e);
  const api::Tensor row({1, e});
  cache.append(row, row);
  const auto out = cache.attend(row);
  CHECK(out.at("weights").dims == std::vector<std::size_t>{2, 1, 1});
  CHECK(out.at("out").dims == std::vector<std::size_t>{1, e});
  cache.append(row, row);
  CHECK_THROWS_WITH_AS(cache.append(row, row), doctest::Contains("exceeds the capacity 2"), attnlens::Error);
  CHECK_THROWS_WITH_AS(cache.attend(api::Tensor({1, e + 1})), doctest::Contains("query must be [n, 4] or [4]"),
                       attnlens::Error);
  p.num_heads = 3;
  CHECK_THROWS_WITH_AS(api::MultiHeadKvCache(w, p), doctest::Contains("num_heads = 3 must divide embed_dim = 4"),
                       attnlens::Error);
  CHECK_THROWS_WITH_AS(api::multi_head_kv_cache_params("{\"heads\": 2}"), doctest::Contains("unknown param 'heads'"),
                       attnlens::Error);
  CHECK(api::multi_head_kv_cache_params("{\"num_heads\": 4, \"capacity\": 9}").capacity == 9);
  // A huge capacity is an Error before anything is allocated (tests/fuzz/regressions/options/kv-cache-capacity).
  p.num_heads = 2;
  p.capacity = api::kMaxKvCacheCapacity + 1;  // fits a 32-bit size_t (wasm32)
  CHECK_THROWS_WITH_AS(api::MultiHeadKvCache(w, p), doctest::Contains("capacity must be at most 1048576 positions"),
                       attnlens::Error);
  p.capacity = api::kMaxKvCacheCapacity;
  api::TensorMap wide = {{"in_proj_weight", api::Tensor({3 * 512, 512})}, {"out_proj_weight", api::Tensor({512, 512})}};
  CHECK_THROWS_WITH_AS(api::MultiHeadKvCache(wide, p), doctest::Contains("cached floats per keys/values buffer"),
                       attnlens::Error);
}

TEST_CASE("api: one option reader for every task's JSON options (api/options.h)") {
  using attnlens::api::OptionReader;
  OptionReader o("demo", "{\"n\": 3, \"on\": true, \"kind\": \"b\", \"big\": 18446744073709551615}");
  CHECK(o.integer("n", 0, 1, 5) == 3);
  CHECK(o.integer("missing", 7, 1, 5) == 7);  // absent: the caller's default, unchecked
  CHECK(o.boolean("on", false));
  CHECK(o.text("kind", "a", {"a", "b"}) == "b");
  CHECK_THROWS_WITH_AS(o.integer("big", 0, 0, 100), doctest::Contains("demo: param 'big' must be an integer in [0, 100]"),
                       attnlens::Error);
  o.finish();  // every key was read
  CHECK_THROWS_WITH_AS(OptionReader("demo", "{\"n\": 9}").integer("n", 0, 1, 5),
                       doctest::Contains("must be an integer in [1, 5], got 9"), attnlens::Error);
  CHECK_THROWS_WITH_AS(OptionReader("demo", "{\"n\": 1.5}").integer("n", 0, 1, 5), doctest::Contains("got 1.5"),
                       attnlens::Error);
  CHECK_THROWS_WITH_AS(OptionReader("demo", "{\"on\": 1}").boolean("on", false),
                       doctest::Contains("'on' must be true or false"), attnlens::Error);
  CHECK(OptionReader("demo", "{\"on\": 1}").flag("on", false));  // flag() takes 0/1 too (the catalogue ops)
  OptionReader extra("demo", "{\"n\": 1, \"typo\": 2}");
  extra.integer("n", 0, 0, 5);
  CHECK_THROWS_WITH_AS(extra.finish(), doctest::Contains("demo: unknown param 'typo' (known: n)"), attnlens::Error);
  CHECK_THROWS_WITH_AS(OptionReader("demo", "[1]"), doctest::Contains("must be a JSON object"), attnlens::Error);
  CHECK_THROWS_WITH_AS(OptionReader("demo", "{"), doctest::Contains("not valid JSON"), attnlens::Error);
  // The tasks read through it.
  CHECK_THROWS_WITH_AS(attnlens::api::sentiment_params("{\"max_tokens\": 0}"),
                       doctest::Contains("sentiment params: param 'max_tokens' must be an integer in [1, 1024]"),
                       attnlens::Error);
  CHECK(attnlens::api::sentiment_params("{\"max_tokens\": 12}").max_tokens == 12);
  const auto tp = attnlens::api::translation_params(
      "{\"num_beams\": 3, \"alpha\": 0.5, \"output_attentions\": [\"cross\"], \"head_mean\": true, \"alignment_layer\": 1}");
  CHECK(tp.num_beams == 3);
  CHECK(tp.alpha.value() == 0.5);
  CHECK(!tp.coverage_beta.has_value());
  CHECK(tp.output_attentions);
  CHECK(tp.attention_selection.kinds == std::vector<std::string>{"cross"});
  CHECK(tp.attention_selection.head_mean);
  CHECK(tp.alignment_layer == 1);
  CHECK(tp.alignment_head == -1);
  CHECK(!attnlens::api::translation_params("{\"output_attentions\": false}").output_attentions);
  CHECK_THROWS_WITH_AS(attnlens::api::translation_params("{\"num_beams\": 65}"),
                       doctest::Contains("translation options: param 'num_beams' must be an integer in [1, 64]"),
                       attnlens::Error);
  CHECK(tp.candidates_per_beam == 0);  // the bundle's
  CHECK(attnlens::api::translation_params("{\"candidates_per_beam\": 2}").candidates_per_beam == 2);
  CHECK_THROWS_WITH_AS(attnlens::api::translation_params("{\"candidates_per_beam\": 9}"),
                       doctest::Contains("param 'candidates_per_beam' must be an integer in [1, 8]"), attnlens::Error);
  CHECK_THROWS_WITH_AS(attnlens::api::translation_params("{\"beams\": 2}"), doctest::Contains("unknown param 'beams'"),
                       attnlens::Error);
  CHECK_THROWS_WITH_AS(attnlens::api::translation_params("{\"output_attentions\": [1]}"),
                       doctest::Contains("must hold strings"), attnlens::Error);
}

TEST_CASE("api: what the CLI reads goes through the API (bundles, PGM/PPM images, BPE files)") {
  const std::string root = ATTNLENS_SOURCE_DIR;
  const api::BundleSummary b = api::inspect_bundle(root + "/models/sst2-selfattn");
  CHECK(b.architecture == "selfattn-classifier");
  REQUIRE(!b.tensors.empty());
  std::size_t values = 0;
  for (const auto& t : b.tensors) {
    std::size_t n = 1;
    for (std::size_t d : t.shape) n *= d;
    CHECK(n == t.values);
    CHECK((t.dtype == "F32" || t.dtype == "F16" || t.dtype == "I8"));
    values += t.values;
  }
  CHECK(values == b.values);
  CHECK_THROWS_AS(api::inspect_bundle(root + "/models/no-such-bundle"), attnlens::Error);

  const std::string ppm = std::string("P6\n# a comment\n2 1\n255\n") + std::string("\x01\x02\x03\xff\x00\x7f", 6);
  const api::DecodedImage img = api::decode_pnm(ppm, "tiny.ppm");
  CHECK(img.width == 2);
  CHECK(img.height == 1);
  CHECK(img.channels == 3);
  CHECK(img.pixels == std::vector<std::uint8_t>{1, 2, 3, 255, 0, 127});
  CHECK_THROWS_WITH_AS(api::decode_pnm("P6\n2 1\n255\n\x01", "short.ppm"), doctest::Contains("short.ppm"),
                       attnlens::Error);

  const std::string dir = "/tmp";  // natively and under Node (NODERAWFS), as test_text_bpe.cpp
  const std::string text = dir + "/attnlens_test_api_bpe_input.txt";
  {
    std::FILE* f = std::fopen(text.c_str(), "wb");
    REQUIRE(f != nullptr);
    const std::string lines = "ein hund rennt\nein hund schläft\nzwei hunde rennen\n";
    std::fwrite(lines.data(), 1, lines.size(), f);
    std::fclose(f);
  }
  api::BpeLearnParams params;
  params.num_merges = 10;
  const auto learned = api::BpeTokenizer::learn_files({text}, params);
  CHECK(learned->num_merges() == 10);
  learned->save(dir + "/attnlens_test_api_bpe");
  const auto loaded = api::BpeTokenizer::load(dir + "/attnlens_test_api_bpe");
  const api::BpeEncoding e = loaded->encode("ein hund rennt");
  CHECK(e.ids == learned->encode("ein hund rennt").ids);
  CHECK(loaded->decode_pieces(e.pieces) == "ein hund rennt");
  CHECK(loaded->decode(e.ids) == "ein hund rennt");
  CHECK_THROWS_WITH_AS(api::BpeTokenizer::learn_files({dir + "/no-such-file.txt"}, params),
                       doctest::Contains("no-such-file.txt"), attnlens::Error);
}
