// Tiny bundles for the model harnesses: the templates of tests/fuzz/tiny/, construction of a model from bundle
// bytes through the public API (the same entry points the WASM bindings call), and one short run of a model.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api.h"
#include "fuzz_common.h"
#include "io/bundle.h"
#include "models/show_attend_tell.h"

namespace fuzz {

enum class Family { translator, sentiment, captioner, encoder, other };

inline Family family_of_architecture(const std::string& a) {
  if (a == "transformer-seq2seq" || a == "rnn-seq2seq") return Family::translator;
  if (a == "selfattn-classifier" || a == "relation-classifier") return Family::sentiment;
  if (a == "show-attend-tell") return Family::captioner;
  if (a == "mobilenet-v2") return Family::encoder;
  return Family::other;
}

// The architecture a config names, without throwing ("" when it names none).
inline std::string architecture_of(const std::string& config_text) {
  const nlohmann::json j = nlohmann::json::parse(config_text, nullptr, false);
  if (j.is_object() && j.contains("architecture") && j["architecture"].is_string())
    return j["architecture"].get<std::string>();
  return "";
}

struct Template {
  std::string name;    // file name in tests/fuzz/tiny without .json
  std::string config;  // config.json text
  std::map<std::string, std::string> files;
  Family family = Family::other;
};

inline std::string labels_text() {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += "class " + std::to_string(i) + "\n";
  return s;
}

// Files every bundle of this family may ask for by name (configs name them; a mutated config may name others).
inline std::map<std::string, std::string> family_files(Family f) {
  static const std::string bpe_vocab = tiny_file("bpe.vocab"), bpe_merges = tiny_file("bpe.merges"),
                           words = tiny_file("words.txt"), captions = tiny_file("captions.txt");
  static const std::string labels = labels_text();
  switch (f) {
    case Family::translator: return {{"bpe.vocab", bpe_vocab}, {"bpe.merges", bpe_merges}};
    case Family::sentiment: return {{"vocab.txt", words}};
    case Family::captioner: return {{"vocab.txt", captions}};
    case Family::encoder: return {{"labels.txt", labels}};
    default: return {};
  }
}

inline const std::vector<Template>& templates() {
  static const std::vector<Template> all = [] {
    std::vector<Template> t;
    for (const char* name : {"transformer-seq2seq", "transformer-seq2seq-head", "rnn-seq2seq-additive",
                             "rnn-seq2seq-general", "selfattn-classifier", "relation-classifier", "show-attend-tell",
                             "show-attend-tell-flickr", "mobilenet-v2"}) {
      Template x;
      x.name = name;
      x.config = tiny_file(std::string(name) + ".json");
      x.family = family_of_architecture(architecture_of(x.config));
      x.files = family_files(x.family);
      t.push_back(std::move(x));
    }
    return t;
  }();
  return all;
}

// Which template byte 0 of an input picks (fuzz_model_config): each fast template twice as often as the MobileNetV2
// one (the last template: ~0.2 s per input under ASan, 15–25× a tiny decoder), so most inputs exercise the decoders.
inline std::size_t pick_template(std::uint8_t byte) {
  const std::size_t n_fast = templates().size() - 1;
  const std::size_t pick = byte % (2 * n_fast + 1);
  return pick == 2 * n_fast ? templates().size() - 1 : pick % n_fast;
}

// The real MobileNetV2 encoder (7 MB, F16): its shapes are fixed by the architecture, not by config.json.
inline const std::string& encoder_weights() {
  static const std::string w = read_file(source_path("models/mobilenet-v2-imagenet/weights.safetensors"));
  return w;
}
inline const std::vector<std::uint8_t>& encoder_weight_bytes() {
  static const std::vector<std::uint8_t> w = bytes(encoder_weights());
  return w;
}
inline const std::string& encoder_config() {
  static const std::string c = tiny_file("mobilenet-v2.json");
  return c;
}

// A constructed model of any family.
struct Model {
  Family family = Family::other;
  std::unique_ptr<attnlens::api::Translator> translator;
  std::unique_ptr<attnlens::api::SentimentClassifier> sentiment;
  std::unique_ptr<attnlens::api::Captioner> captioner;
  std::unique_ptr<attnlens::api::ImageClassifier> classifier;
  std::unique_ptr<attnlens::models::ShowAttendTell> sat;
};

// Builds the model `config_text` describes through the public API. full_captioner: a show-attend-tell bundle goes
// through api::Captioner with the real MobileNetV2 encoder (slow: ~7 MB of weights) instead of the decoder alone.
// Throws attnlens::Error like the API.
inline Model construct(const std::string& config_text, const std::string& weights,
                       const std::map<std::string, std::string>& files, bool full_captioner = false) {
  namespace api = attnlens::api;
  Model m;
  m.family = family_of_architecture(architecture_of(config_text));
  switch (m.family) {
    case Family::translator:
      m.translator = api::Translator::from_memory(config_text, bytes(weights), files, "fuzz");
      break;
    case Family::sentiment:
      m.sentiment = api::SentimentClassifier::from_memory(config_text, bytes(weights), files, {}, "fuzz");
      break;
    case Family::captioner:
      if (full_captioner) {
        m.captioner = api::Captioner::from_memory(config_text, bytes(weights), files, encoder_config(),
                                                  encoder_weight_bytes(), "fuzz");
      } else {
        const auto b = attnlens::io::Bundle::from_memory(config_text, bytes(weights), files, "fuzz");
        m.sat = std::make_unique<attnlens::models::ShowAttendTell>(attnlens::models::ShowAttendTell::from_bundle(b));
        b.check_all_tensors_used();
      }
      break;
    case Family::encoder:
      m.classifier = api::ImageClassifier::from_memory(config_text, bytes(weights), files, "fuzz");
      break;
    default:
      attnlens::io::Bundle::from_memory(config_text, bytes(weights), files, "fuzz");
      break;
  }
  return m;
}

// One short use of the model; `knob` varies the call (beams, lengths, maps; for a translator bits 7–8 pick the text
// and bit 9 adds an align() call, so a knob of one byte never aligns). Throws attnlens::Error like the API.
inline void run(const Model& m, unsigned knob) {
  namespace api = attnlens::api;
  if (m.translator) {
    api::TranslationParams p;
    p.num_beams = 1 + static_cast<int>(knob % 3);
    p.max_new_tokens = 1 + static_cast<int>((knob >> 2) % 4);
    p.output_attentions = (knob >> 4) % 4 != 0;
    p.word_maps = (knob >> 6) & 1;
    static const char* const texts[] = {"ein hund", "", "aaa bbb  x!", "\xe2\x96\x81\xff d\xc3\xa4n"};
    m.translator->translate(texts[(knob >> 7) % 4], p);
    if ((knob >> 9) & 1) m.translator->align("ein hund", "a dog .", p);
  }
  if (m.sentiment) {
    static const char* const texts[] = {"good movie", "it's not a great movie .", "x", "''''' `` bad"};
    m.sentiment->classify(texts[knob % 4]);
  }
  if (m.captioner) {
    // The grid's channel count is the captioner's; try the shapes' 1285 and the plain 1280.
    for (std::size_t d : {std::size_t(1285), std::size_t(1280)}) {
      api::Tensor grid({2, 3, d});
      for (std::size_t i = 0; i < grid.data.size(); ++i) grid.data[i] = static_cast<float>(i % 7) * 0.1f;
      api::CaptionParams p;
      p.num_beams = 1 + static_cast<int>(knob % 3);
      p.max_new_tokens = 1 + static_cast<int>((knob >> 2) % 3);
      std::string ignored;
      ok_or_error([&] { m.captioner->caption_grid(grid, p); }, &ignored);
    }
  }
  if (m.sat) {
    const auto& c = m.sat->config();
    if (c.feat_dim > 0 && c.feat_dim <= 4096) {
      std::vector<float> grid(4 * c.feat_dim);
      for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>(i % 5) * 0.2f - 0.4f;
      const auto enc = m.sat->encode(grid.data(), 4);
      if (knob & 1)
        m.sat->beam(enc, 1 + (knob >> 1) % 3, 3);
      else
        m.sat->greedy(enc, 3);
    }
  }
  if (m.classifier) {
    std::vector<std::uint8_t> px(3 * 5 * 4, static_cast<std::uint8_t>(knob));
    m.classifier->classify(px.data(), px.size(), 3, 5, 1 + knob % 5, 4);
  }
}

// Weights for a config, from the engine's own messages (see fuzz_common.h); the encoder family uses the real
// MobileNetV2 weights. `cache` carries the tensors of the previous call so that a config that differs a little
// converges in a few rounds.
// `built`, when given, receives the model of the round that constructed (family `other` when none did): the same
// model a construct() of the returned weights gives, the decoder alone for a captioner.
inline std::string weights_for(const std::string& config_text, const std::map<std::string, std::string>& files,
                               std::map<std::string, TensorSpec>& cache, int max_rounds = 80, Model* built = nullptr) {
  const Family f = family_of_architecture(architecture_of(config_text));
  if (f == Family::encoder) return encoder_weights();
  std::string error;
  return synthesize_weights(
      cache,
      [&](const std::string& w) {
        Model m = construct(config_text, w, files, false);
        if (built != nullptr) *built = std::move(m);
      },
      max_rounds, 20000, error);
}

// The tensors of each template's own config (built once): the starting point for a mutated config.
inline const std::map<std::string, TensorSpec>& base_tensors(std::size_t template_index) {
  static const std::vector<std::map<std::string, TensorSpec>> all = [] {
    std::vector<std::map<std::string, TensorSpec>> v;
    for (const Template& t : templates()) {
      std::map<std::string, TensorSpec> tensors;
      if (t.family != Family::encoder) {
        weights_for(t.config, t.files, tensors, 1000);
        std::string error;
        if (!ok_or_error([&] { construct(t.config, write_safetensors(tensors), t.files); }, &error)) {
          std::fprintf(stderr, "fuzz harness: the tiny template %s does not load: %s\n", t.name.c_str(), error.c_str());
          std::abort();
        }
      }
      v.push_back(std::move(tensors));
    }
    return v;
  }();
  return all[template_index];
}

}  // namespace fuzz
