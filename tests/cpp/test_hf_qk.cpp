// The neuron view's data for the converted models (output_qk → `qk`): on every fixture of
// tests/fixtures/hf/<arch>-{tiny,small}/bundle, every map of a run is reproduced by its query and key vectors,
// softmax_j(q_i·k_j/√d_head) (j ≤ i for the causal kinds), within 1e-5; BERT's and DistilBERT's vectors equal
// the checkpoint's q/k projections of PyTorch's own layer inputs (the goldens' hidden states,
// models/training/hf/encoder_fixtures.py); the api tasks give `qk` only when asked, whatever output_attentions says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/hf_encoders.h"
#include "api/hf_generation.h"
#include "api/translation.h"
#include "api/translation_models.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "models/hf_bert.h"
#include "models/hf_gpt2.h"
#include "models/hf_marian.h"
#include "models/hf_vit.h"
#include "test_support.h"
#include "trace/trace.h"

namespace {

using attnlens::AttentionTrace;
using attnlens::testing::error_of;
using attnlens::testing::golden_tensor;
using attnlens::testing::max_qk_error;
using attnlens::testing::read_json;
using attnlens::testing::source_path;

using attnlens::testing::hf_bundle_dir;
using attnlens::testing::hf_golden;
std::vector<int> ints(const nlohmann::json& j) { return j.get<std::vector<int>>(); }

bool never(const std::string&) { return false; }
bool gpt2_causal(const std::string& kind) { return kind == "self-attention"; }
bool marian_causal(const std::string& kind) { return kind == "decoder_self" || kind == "decoder-self-attention"; }

// The vectors of `kind` ('<kind>.query' or '.key') at `layer`, heads side by side back into rows × d.
std::vector<float> joined(const AttentionTrace& qk, const std::string& name, int layer, std::size_t rows,
                          std::size_t d) {
  std::vector<float> out(rows * d, NAN);
  for (const attnlens::MapView m : qk)
    if (m.name == name && m.layer == layer) {
      const std::size_t dh = m.dims[1], h = static_cast<std::size_t>(m.head);
      REQUIRE(m.dims[0] == rows);
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t c = 0; c < dh; ++c) out[i * d + h * dh + c] = m.data.begin()[i * dh + c];
    }
  return out;
}

}  // namespace

TEST_CASE("hf-bert, hf-distilbert: qk reproduces every map and equals the projections of PyTorch's layer inputs") {
  for (const std::string name : {"bert-tiny", "bert-small", "distilbert-tiny", "distilbert-small"}) {
    CAPTURE(name);
    const auto golden = hf_golden(name);
    const nlohmann::json& golden_meta = golden.meta;
    const auto& cases = golden_meta.at("cases");
    REQUIRE(cases.size() >= 2);
    const auto bundle = attnlens::io::Bundle::load(hf_bundle_dir(name));
    const attnlens::models::HfBert model(bundle);
    const auto& g = golden.tensors;
    const std::size_t d = model.d_model();
    const bool distil = model.distilbert();
    double worst_map = 0, worst_vec = 0;
    for (std::size_t c = 0; c < cases.size(); ++c) {
      AttentionTrace trace, qk;
      const auto ids = ints(cases[c].at("input_ids"));
      model.forward(ids, &trace, nullptr, &qk);
      REQUIRE(qk.size() == 2 * trace.size());
      worst_map = std::max(worst_map, max_qk_error(trace, qk, never));
      // PyTorch's input to layer l's attention is hidden_states[l]: q = h·W_qᵀ + b_q, k = h·W_kᵀ + b_k (in double).
      const std::size_t n = ids.size();
      for (std::size_t l = 0; l < model.layers(); ++l) {
        const auto h = golden_tensor(g, "case" + std::to_string(c) + "/hidden_states." + std::to_string(l));
        const std::string p = distil ? "distilbert.transformer.layer." + std::to_string(l) + ".attention."
                                     : "bert.encoder.layer." + std::to_string(l) + ".attention.self.";
        for (const auto& [kind, proj] : {std::pair<const char*, const char*>{".query", distil ? "q_lin" : "query"},
                                         std::pair<const char*, const char*>{".key", distil ? "k_lin" : "key"}}) {
          const auto w = bundle.tensor(p + proj + ".weight", {d, d});
          const auto b = bundle.tensor(p + proj + ".bias", {d});
          const auto got = joined(qk, std::string("self-attention") + kind, static_cast<int>(l), n, d);
          for (std::size_t i = 0; i < n; ++i)
            for (std::size_t o = 0; o < d; ++o) {
              double ref = b[o];
              for (std::size_t j = 0; j < d; ++j) ref += double(h.data[i * d + j]) * w[o * d + j];
              worst_vec = std::max(worst_vec, std::abs(ref - got[i * d + o]));
            }
        }
      }
    }
    MESSAGE(name << ": maps from qk within " << worst_map << ", vectors within " << worst_vec << " of PyTorch's");
    CHECK(worst_map < 1e-5);
    CHECK(worst_vec < 1e-4);
  }
}

TEST_CASE("hf-vit, hf-gpt2: qk reproduces every map (GPT-2's causal rows over j ≤ i)") {
  for (const std::string name : {"vit-tiny", "vit-small"}) {
    CAPTURE(name);
    const auto golden = hf_golden(name);
    const nlohmann::json& golden_meta = golden.meta;
    const auto& cases = golden_meta.at("cases");
    REQUIRE(cases.size() >= 2);
    const attnlens::models::HfVit model(attnlens::io::Bundle::load(hf_bundle_dir(name)));
    const auto& g = golden.tensors;
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const auto pixels = golden_tensor(g, "case" + std::to_string(c) + "/pixel_values");
      AttentionTrace trace, qk;
      model.forward(pixels.data, pixels.dims[1], pixels.dims[2], &trace, nullptr, &qk);
      REQUIRE(qk.size() == 2 * trace.size());
      CHECK(max_qk_error(trace, qk, never) < 1e-5);
    }
  }
  for (const std::string name : {"gpt2-tiny", "gpt2-small"}) {
    CAPTURE(name);
    const auto golden = hf_golden(name);
    const nlohmann::json& golden_meta = golden.meta;
    const auto& cases = golden_meta.at("cases");
    REQUIRE(cases.size() >= 2);
    const attnlens::models::HfGpt2 model(attnlens::io::Bundle::load(hf_bundle_dir(name)));
    for (const auto& c : cases) {
      AttentionTrace trace, qk;
      model.forward(ints(c.at("input_ids")), &trace, nullptr, &qk);
      REQUIRE(qk.size() == 2 * trace.size());
      CHECK(max_qk_error(trace, qk, gpt2_causal) < 1e-5);
    }
  }
}

TEST_CASE("hf-marian: query_key_vectors reproduce the encoder, decoder and cross maps of a forward") {
  for (const std::string name : {"marian-tiny", "marian-small"}) {
    CAPTURE(name);
    const auto golden = hf_golden(name);
    const nlohmann::json& golden_meta = golden.meta;
    const auto& cases = golden_meta.at("cases");
    REQUIRE(cases.size() >= 2);
    const attnlens::models::HfMarian model(attnlens::io::Bundle::load(hf_bundle_dir(name)));
    REQUIRE(model.has_query_key_vectors());
    for (const auto& c : cases) {
      AttentionTrace trace, qk;
      model.forward(ints(c.at("src_ids")), ints(c.at("tgt_in")), &trace);
      model.query_key_vectors(ints(c.at("src_ids")), ints(c.at("tgt_in")), qk);
      REQUIRE(qk.size() == 2 * trace.size());
      CHECK(max_qk_error(trace, qk, marian_causal) < 1e-5);
    }
  }
}

TEST_CASE("translation: an hf-marian translator gives qk behind every map of its search (greedy and beams)") {
  attnlens::api::register_hf_architectures();
  for (const std::string name : {"marian-tiny", "marian-small"}) {
    CAPTURE(name);
    const auto tr = attnlens::api::Translator::load(hf_bundle_dir(name));
    attnlens::api::TranslationParams p;
    p.max_new_tokens = 12;
    p.restore_case = false;
    CHECK(tr->translate("Ein kleiner Hund.", p).qk.empty());  // off by default
    p.output_qk = true;
    for (int beams : {1, 3}) {
      CAPTURE(beams);
      p.num_beams = beams;
      const auto r = tr->translate("Ein kleiner Hund läuft über die Brücke.", p);
      REQUIRE(!r.attentions.empty());
      CHECK(r.qk.size() == 2 * r.attentions.size());
      CHECK(max_qk_error(r.attentions, r.qk, marian_causal) < 1e-5);
    }
  }
}

TEST_CASE("text-generation: qk over the positions fed, from one forward after generation, reproduces the maps") {
  for (const std::string name : {"gpt2-tiny", "gpt2-small"}) {
    CAPTURE(name);
    const auto golden = hf_golden(name);
    const nlohmann::json& golden_meta = golden.meta;
    const auto& generations = golden_meta.at("generations");
    REQUIRE(generations.size() >= 2);
    const auto gen = attnlens::api::TextGenerator::load(hf_bundle_dir(name));
    for (const auto& g : generations) {
      auto params = attnlens::api::text_generation_params(R"({"output_qk": true})");
      params.max_new_tokens = g.at("max_new_tokens").get<int>();
      const auto r = gen->generate_ids(ints(g.at("prompt_ids")), params);
      REQUIRE(!r.attentions.empty());
      CHECK(r.qk.size() == 2 * r.attentions.size());
      const std::size_t fed = r.prompt_ids.size() + r.new_ids.size() - 1;  // the last new id is never fed
      for (const attnlens::MapView m : r.qk) CHECK(m.dims[0] == fed);
      CHECK(max_qk_error(r.attentions, r.qk, gpt2_causal) < 1e-5);
    }
  }
  const auto gen = attnlens::api::TextGenerator::load(hf_bundle_dir("gpt2-tiny"));
  CHECK(gen->generate("Hello", attnlens::api::text_generation_params("")).qk.empty());  // off by default
  // output_qk does not need output_attentions: the vectors come without the maps.
  const auto r = gen->generate("Hello", attnlens::api::text_generation_params(
                                            R"({"output_qk": true, "output_attentions": false})"));
  CHECK(r.attentions.empty());
  CHECK(!r.qk.empty());
  CHECK(error_of([] { attnlens::api::text_generation_params(R"({"output_qk": 1})"); }).find("output_qk") !=
        std::string::npos);
}

TEST_CASE("hf encoder tasks: output_qk gives qk (with or without the maps); bad values are clear errors") {
  const auto clf = attnlens::api::HfTextClassifier::load(hf_bundle_dir("distilbert-tiny"));
  const auto& contract = attnlens::api::hf_text_classification_contract();
  CHECK(clf->classify("a fine film", {}).qk.empty());  // off by default
  const auto r = clf->classify("a fine film", attnlens::api::hf_encoder_params(contract, R"({"output_qk": true})"));
  REQUIRE(!r.attentions.empty());
  CHECK(r.qk.size() == 2 * r.attentions.size());
  CHECK(max_qk_error(r.attentions, r.qk, never) < 1e-5);
  const auto bare = clf->classify(
      "a fine film", attnlens::api::hf_encoder_params(contract, R"({"output_qk": true, "output_attentions": false})"));
  CHECK(bare.attentions.empty());
  CHECK(bare.qk.size() == r.qk.size());
  CHECK(bare.logits == r.logits);
  CHECK(error_of([&] { attnlens::api::hf_encoder_params(contract, R"({"output_qk": "yes"})"); }).find("output_qk") !=
        std::string::npos);

  const auto fx = attnlens::api::HfFeatureExtractor::load(hf_bundle_dir("bert-small"));
  const auto f = fx->extract(
      "a fine film", attnlens::api::hf_encoder_params(attnlens::api::hf_feature_extraction_contract(),
                                                      R"({"output_qk": true})"));
  CHECK(f.qk.size() == 2 * f.attentions.size());
  CHECK(max_qk_error(f.attentions, f.qk, never) < 1e-5);

  const auto img = attnlens::api::HfImageClassifier::load(hf_bundle_dir("vit-tiny"));
  std::vector<std::uint8_t> rgb(20 * 16 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 37 % 251);
  const auto c = img->classify(rgb.data(), rgb.size(), 20, 16, 3,
                               attnlens::api::hf_encoder_params(attnlens::api::hf_image_classification_contract(),
                                                                R"({"output_qk": true})"));
  CHECK(c.qk.size() == 2 * c.attentions.size());
  CHECK(max_qk_error(c.attentions, c.qk, never) < 1e-5);
}
