// GPT-2 and MarianMT against their PyTorch references (models/training/hf/gpt2.py, marian.py) on the seeded
// fixtures tests/fixtures/hf/{gpt2,marian}-{tiny,small}/bundle (converted by wasm/convert from the HF folders next
// to them) and the goldens tests/goldens/hf/<fixture>.{json,safetensors} (models/training/hf/decoder_fixtures.py):
// teacher-forced logits, every attention map and hidden state within 1e-4, incremental (cached) decoding equal to
// the full forward, greedy generations identical.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/hf_generation.h"
#include "api/translation.h"
#include "api/translation_models.h"
#include "decode/search.h"
#include "golden.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "models/hf_gpt2.h"
#include "models/hf_marian.h"
#include "test_support.h"
#include "trace/trace.h"

namespace {

using attnlens::AttentionTrace;
using attnlens::testing::check_close;
using attnlens::testing::error_of;
using attnlens::testing::golden_tensor;
using attnlens::testing::GoldenTensor;
using attnlens::testing::read_json;
using attnlens::testing::source_path;

struct Fixture {
  attnlens::io::Bundle bundle;
  nlohmann::json meta;
  attnlens::io::SafeTensors goldens;
};

Fixture fixture(const std::string& name) {
  auto golden = attnlens::testing::hf_golden(name);
  return {attnlens::io::Bundle::load(attnlens::testing::hf_bundle_dir(name)), std::move(golden.meta),
          std::move(golden.tensors)};
}

// The maps of `kind` and `layer`, heads in order, side by side: [H, rows, columns] as the goldens store them.
std::vector<float> heads_of(const AttentionTrace& trace, const std::string& kind, int layer) {
  std::vector<float> out;
  int next = 0;
  for (const attnlens::MapView m : trace)
    if (m.name == kind && m.layer == layer) {
      CHECK(m.head == next++);
      out.insert(out.end(), m.data.begin(), m.data.end());
    }
  return out;
}

std::vector<int> ints(const nlohmann::json& j) { return j.get<std::vector<int>>(); }

}  // namespace

TEST_CASE("hf-gpt2: teacher-forced logits, every self-attention map and hidden state equal PyTorch's") {
  for (const std::string name : {"gpt2-tiny", "gpt2-small"}) {
    CAPTURE(name);
    const Fixture f = fixture(name);
    const attnlens::models::HfGpt2 model(f.bundle);
    const auto& cases = f.meta.at("cases");
    REQUIRE(cases.size() == 3);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string c = "case" + std::to_string(i) + "/";
      AttentionTrace trace;
      std::vector<std::vector<float>> hidden;
      const auto logits = model.forward(ints(cases[i].at("input_ids")), &trace, &hidden);
      check_close(logits, golden_tensor(f.goldens, c + "logits"), name + " " + c + "logits");
      REQUIRE(trace.size() == model.layers() * model.heads());
      REQUIRE(hidden.size() == model.layers() + 1);
      for (std::size_t l = 0; l < model.layers(); ++l)
        check_close(heads_of(trace, "self-attention", static_cast<int>(l)),
                    golden_tensor(f.goldens, c + "attention." + std::to_string(l)), name + " " + c + "attention");
      for (std::size_t l = 0; l <= model.layers(); ++l)
        check_close(hidden[l], golden_tensor(f.goldens, c + "hidden_states." + std::to_string(l)),
                    name + " " + c + "hidden_states." + std::to_string(l));
    }
  }
}

TEST_CASE("hf-gpt2: feeding position by position through the KV cache gives the full forward's logits and maps") {
  const Fixture f = fixture("gpt2-small");
  const attnlens::models::HfGpt2 model(f.bundle);
  const auto ids = ints(f.meta.at("cases")[2].at("input_ids"));
  const std::size_t T = ids.size(), V = model.vocab_size();
  AttentionTrace full_trace;
  const auto full = model.forward(ids, &full_trace);
  auto state = model.start();
  std::vector<float> step(V);
  for (std::size_t t = 0; t < T; ++t) {
    AttentionTrace row;
    model.feed(state, &ids[t], 1, step.data(), &row);
    for (std::size_t v = 0; v < V; ++v) REQUIRE(std::fabs(step[v] - full[t * V + v]) <= 1e-5f);
    std::size_t m = 0;
    for (const attnlens::MapView map : row) {  // row t of each [T, T] map: the cache's t + 1 positions
      const attnlens::MapView whole = full_trace.at(m++);
      REQUIRE(map.dims == std::vector<std::size_t>{1, t + 1});
      for (std::size_t j = 0; j <= t; ++j) REQUIRE(std::fabs(map.data[j] - whole.data[t * T + j]) <= 1e-6f);
    }
  }
  CHECK(state.length() == T);
}

TEST_CASE("hf-marian: teacher-forced logits and every encoder, decoder and cross map equal PyTorch's") {
  for (const std::string name : {"marian-tiny", "marian-small"}) {
    CAPTURE(name);
    const Fixture f = fixture(name);
    const attnlens::models::HfMarian model(f.bundle);
    const auto& cases = f.meta.at("cases");
    REQUIRE(cases.size() == 3);
    const std::size_t V = model.vocab_size(), pad = static_cast<std::size_t>(model.pad_token_id());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string c = "case" + std::to_string(i) + "/";
      AttentionTrace trace;
      auto logits = model.forward(ints(cases[i].at("src_ids")), ints(cases[i].at("tgt_in")), &trace);
      const GoldenTensor expected = golden_tensor(f.goldens, c + "logits");
      // The pad logit is −∞ (never generated, as MarianMTModel's generation); the golden has the raw value.
      for (std::size_t t = 0; t * V < logits.size(); ++t) {
        CHECK(logits[t * V + pad] == -std::numeric_limits<float>::infinity());
        logits[t * V + pad] = expected.data[t * V + pad];
      }
      check_close(logits, expected, name + " " + c + "logits");
      for (const auto& [kind, key] : std::vector<std::pair<std::string, std::string>>{
               {"encoder-self-attention", "encoder_attention"},
               {"decoder-self-attention", "decoder_attention"},
               {"cross-attention", "cross_attention"}}) {
        for (int l = 0;; ++l) {
          const std::string g = c + key + "." + std::to_string(l);
          if (!f.goldens.contains(g)) {
            CHECK(heads_of(trace, kind, l).empty());
            CHECK(l > 0);
            break;
          }
          check_close(heads_of(trace, kind, l), golden_tensor(f.goldens, g), name + " " + g);
        }
      }
    }
  }
}

TEST_CASE("hf-marian: greedy search from decoder_start_token_id gives PyTorch's generations") {
  for (const std::string name : {"marian-tiny", "marian-small"}) {
    CAPTURE(name);
    const Fixture f = fixture(name);
    const attnlens::models::HfMarian model(f.bundle);
    CHECK(model.decoder_start_token_id() == f.meta.at("decoder_start_token_id").get<int>());
    for (const auto& g : f.meta.at("generations")) {
      auto decoder = model.start(ints(g.at("src_ids")), nullptr);
      attnlens::decode::SearchParams params;
      params.max_new_tokens = g.at("max_new_tokens").get<int>();
      params.bos_id = model.decoder_start_token_id();
      params.eos_id = model.eos_token_id();
      CHECK(attnlens::decode::greedy_search(*decoder, params).tokens == ints(g.at("output_ids")));
    }
  }
}

TEST_CASE("hf decoders: bad ids and over-long inputs are clear errors") {
  const Fixture g = fixture("gpt2-tiny");
  const attnlens::models::HfGpt2 gpt2(g.bundle);
  CHECK(error_of([&] { gpt2.forward({1, 1000}); }).find("token id 1000 outside the vocabulary [0, 1000)") !=
        std::string::npos);
  CHECK(error_of([&] { gpt2.forward({-1}); }).find("token id -1") != std::string::npos);
  CHECK(error_of([&] { gpt2.forward(std::vector<int>(gpt2.max_positions() + 1, 5)); }).find("exceed n_positions") !=
        std::string::npos);
  const Fixture m = fixture("marian-tiny");
  const attnlens::models::HfMarian marian(m.bundle);
  CHECK(error_of([&] { marian.forward({}, {835}, nullptr); }).find("source is empty") != std::string::npos);
  CHECK(error_of([&] { marian.forward({3, 836}, {835}, nullptr); }).find("source id 836") != std::string::npos);
  CHECK(error_of([&] { marian.forward({3, 0}, {835, -2}, nullptr); }).find("target id -2") != std::string::npos);
}

TEST_CASE("text-generation: greedy generations equal PyTorch's; their maps equal a teacher-forced forward's") {
  for (const std::string name : {"gpt2-tiny", "gpt2-small"}) {
    CAPTURE(name);
    const Fixture f = fixture(name);
    const auto gen = attnlens::api::TextGenerator::load(source_path("tests/fixtures/hf/" + name + "/bundle"));
    const attnlens::models::HfGpt2 model(f.bundle);
    for (const auto& g : f.meta.at("generations")) {
      attnlens::api::TextGenerationParams params;
      params.max_new_tokens = g.at("max_new_tokens").get<int>();
      const auto r = gen->generate_ids(ints(g.at("prompt_ids")), params);
      CHECK(r.new_ids == ints(g.at("output_ids")));
      CHECK(r.stopped == (r.new_ids.back() == model.eos_token_id() ? "eos" : "length"));
      CHECK(r.tokens.size() == r.prompt_ids.size() + r.new_ids.size());
      // The positions fed: the prompt and every new id but the last.
      std::vector<int> fed = r.prompt_ids;
      fed.insert(fed.end(), r.new_ids.begin(), r.new_ids.end() - 1);
      AttentionTrace expected;
      model.forward(fed, &expected);
      REQUIRE(r.attentions.size() == expected.size());
      for (std::size_t m = 0; m < expected.size(); ++m) {
        const auto a = r.attentions.at(m), e = expected.at(m);
        REQUIRE(a.dims == e.dims);
        REQUIRE(a.dims[0] == fed.size());
        for (std::size_t i = 0; i < e.data.size(); ++i) REQUIRE(std::fabs(a.data[i] - e.data[i]) <= 1e-5f);
      }
    }
  }
}

TEST_CASE("text-generation: text in and out through the bundle's tokenizer; options checked") {
  const auto gen = attnlens::api::TextGenerator::load(source_path("tests/fixtures/hf/gpt2-tiny/bundle"));
  const auto params = attnlens::api::text_generation_params(R"({"max_new_tokens": 5, "output_attentions": false})");
  CHECK(params.max_new_tokens == 5);
  const auto r = gen->generate("Hello world", params);
  CHECK(r.prompt_ids.size() >= 2);
  CHECK(r.new_ids.size() <= 5);
  CHECK(r.attentions.empty());
  CHECK(r.generated_text.rfind("Hello world", 0) == 0);
  CHECK(r.generated_text == "Hello world" + r.new_text);
  CHECK(r.new_ids == gen->generate_ids(r.prompt_ids, params).new_ids);
  const auto empty = gen->generate("", params);  // generate() without input ids starts from bos_token_id
  CHECK(empty.prompt_ids == std::vector<int>{999});
  CHECK(error_of([] { attnlens::api::text_generation_params(R"({"do_sample": true})"); }).find("do_sample") !=
        std::string::npos);
  CHECK(error_of([] { attnlens::api::text_generation_params(R"({"max_new_tokens": 0})"); }).find("max_new_tokens") !=
        std::string::npos);
  CHECK(error_of([&] { gen->generate_ids(std::vector<int>(32, 7)); }).find("context (n_positions) is 32") !=
        std::string::npos);
  CHECK(error_of([] { attnlens::api::TextGenerator::load(source_path("tests/fixtures/hf/marian-tiny/bundle")); })
            .find("takes an hf-gpt2 bundle") != std::string::npos);
}

TEST_CASE("translation: an hf-marian bundle translates through api::Translator once registered") {
  const std::string dir = source_path("tests/fixtures/hf/marian-small/bundle");
  const Fixture f = fixture("marian-small");
  const attnlens::models::HfMarian model(f.bundle);
  attnlens::api::register_hf_architectures();
  const auto tr = attnlens::api::Translator::load(dir);
  attnlens::api::TranslationParams params;
  params.num_beams = 1;
  params.max_new_tokens = 12;
  params.restore_case = false;
  const auto r = tr->translate("Ein kleiner Hund.", params);
  // The source: MarianTokenizer's pieces through vocab.json, </s> last.
  REQUIRE(r.source_ids.size() >= 2);
  CHECK(r.source_ids.back() == model.eos_token_id());
  CHECK(r.source_tokens.back() == "</s>");
  CHECK(r.source_tokens.front().rfind("\xe2\x96\x81", 0) == 0);  // "▁Ein…": the first piece carries the marker
  // The search is the model's greedy search from decoder_start_token_id.
  auto decoder = model.start(r.source_ids, nullptr);
  attnlens::decode::SearchParams sp;
  sp.max_new_tokens = 12;
  sp.bos_id = model.decoder_start_token_id();
  sp.eos_id = model.eos_token_id();
  CHECK(r.target_ids == attnlens::decode::greedy_search(*decoder, sp).tokens);
  CHECK(std::find(r.target_ids.begin(), r.target_ids.end(), model.pad_token_id()) == r.target_ids.end());
  // Maps under the translation task's names: encoder_self [S, S], decoder_self [T, T], cross [T, S] per layer × head.
  const std::size_t S = r.source_ids.size(), T = r.target_ids.size();
  std::size_t cross = 0;
  for (const attnlens::MapView m : r.attentions) {
    if (m.name == "cross") {
      ++cross;
      CHECK(m.dims == std::vector<std::size_t>{T, S});
    } else if (m.name == "decoder_self") {
      CHECK(m.dims == std::vector<std::size_t>{T, T});
    } else {
      CHECK(m.name == "encoder_self");
      CHECK(m.dims == std::vector<std::size_t>{S, S});
    }
  }
  CHECK(cross == 2 * 2);  // decoder_layers × decoder_attention_heads
  CHECK_FALSE(r.alignment.empty());
}

TEST_CASE("translation: a bundle of an architecture that is not a translator is a clear error") {
  const std::string msg = error_of([] {
    attnlens::api::Translator::load(source_path("tests/fixtures/hf/gpt2-tiny/bundle"));
  });
  CHECK(msg.find("architecture 'hf-gpt2' is not a translator") != std::string::npos);
}
