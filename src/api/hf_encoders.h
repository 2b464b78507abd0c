// attnlens C++ API: the tasks of converted encoder bundles (config "architecture" "hf-bert", "hf-distilbert",
// "hf-vit"), as transformers' pipelines compute them for one input:
//
//   auto clf = attnlens::api::HfTextClassifier::load("tests/fixtures/hf/bert-tiny/bundle");
//   auto r = clf->classify("a fine film", {});       // r.label, r.score, r.scores (every label),
//   r.attentions auto fx = attnlens::api::HfFeatureExtractor::load("tests/fixtures/hf/bert-small/bundle");
//   auto f = fx->extract("a fine film", {});          // f.features [T, d] (last hidden state), f.pooled
//   auto img = attnlens::api::HfImageClassifier::load("tests/fixtures/hf/vit-tiny/bundle");
//   auto c = img->classify(rgb, width, height, 3, {});
//
// text-classification: text → ids with the bundle's tokenizer.json ([CLS] … [SEP]); scores = softmax of the
// logits (a single-label head: sigmoid), as the pipeline's default function_to_apply. feature-extraction: the
// last hidden state (HF's pipeline output) and the pooled vector where the model has one.
// image-classification: an RGB(A) or grey uint8 image → ViTImageProcessor's pixel values (alpha over white;
// resize to config image.size by half-pixel bilinear interpolation without antialiasing — PIL's resample,
// which the processor uses, antialiases when it shrinks, so a larger image differs slightly; an image already
// of the model's size is exact; rescale, normalise with image.mean / image.std) → softmax of the logits.
// Inputs longer than max_position_embeddings are an Error naming both numbers (nothing is cut silently).
// Maps: "self-attention", one per layer × head, [T, T] (ViT: [N + 1, N + 1], index 0 the CLS token). With
// output_qk, `qk` holds the vectors they come from, "self-attention.query" [T, d_head] and "self-attention.key"
// [T, d_head] per layer × head (after the projections' bias), so that row i of a map is softmax_j(q[i]·k[j]/√d_head).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/contract.h"
#include "trace/trace.h"

namespace attnlens::io {
class Bundle;
}

namespace attnlens::api {

struct HfEncoderParams {
  bool output_attentions = true;  // false: `attentions` stays empty
  // The neuron view's data: `qk`, the query and key vectors behind every map, given whatever output_attentions says.
  bool output_qk = false;
};
const Contract& hf_text_classification_contract();
const Contract& hf_feature_extraction_contract();
const Contract& hf_image_classification_contract();
// {"output_attentions": b, "output_qk": b}, checked against `contract`.
HfEncoderParams hf_encoder_params(const Contract& contract, const std::string& params_json);

struct LabelScore {
  std::string label;
  double score = 0;
  template <class F>
  void fields(F&& f) const {
    f("label", label), f("score", score);
  }
};

struct HfClassificationResult {
  std::string label;                // the most probable label (the first on a tie)
  double score = 0;                 // its probability
  std::vector<LabelScore> scores;   // every label, most probable first
  std::vector<float> logits;        // one per label, in the model's order
  std::vector<int> ids;             // text tasks: the ids the model saw (special tokens included)
  std::vector<std::string> tokens;  // and their tokens
  AttentionTrace attentions;
  AttentionTrace qk;  // with output_qk: "self-attention.query" / ".key" per layer and head, [rows, d_head]

  template <class F>
  void fields(F&& f) const {
    f("label", label), f("score", score), f("scores", scores), f("logits", logits), f("ids", ids);
    f("tokens", tokens), f("attentions", attentions), f("qk", present_if(!qk.empty(), qk));
  }
};

struct HfFeatureResult {
  std::vector<float> features;  // the last hidden state, row-major [rows, d]
  std::vector<int> dims;        // {rows, d}
  std::vector<float> pooled;    // [d]; empty when the model has no pooler
  std::vector<int> ids;
  std::vector<std::string> tokens;
  AttentionTrace attentions;
  AttentionTrace qk;  // with output_qk, as HfClassificationResult::qk

  template <class F>
  void fields(F&& f) const {
    f("features", features), f("dims", dims), f("pooled", pooled), f("ids", ids), f("tokens", tokens);
    f("attentions", attentions), f("qk", present_if(!qk.empty(), qk));
  }
};

// text-classification (hf-bert, hf-distilbert with a classification head).
class HfTextClassifier {
 public:
  static std::unique_ptr<HfTextClassifier> load(const std::string& dir);
  static std::unique_ptr<HfTextClassifier> from_bundle(const io::Bundle& bundle);
  // From the same files as bytes (the WASM build): config.json text, the weights file, other files by name.
  static std::unique_ptr<HfTextClassifier> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                  std::map<std::string, std::string> files,
                                                  const std::string& name = "<memory>");
  ~HfTextClassifier();
  HfClassificationResult classify(const std::string& text, const HfEncoderParams& params = {}) const;
  HfClassificationResult classify_ids(const std::vector<int>& ids, const HfEncoderParams& params = {}) const;
  const std::vector<std::string>& labels() const;

 private:
  struct Impl;
  explicit HfTextClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// feature-extraction (hf-bert, hf-distilbert; any head).
class HfFeatureExtractor {
 public:
  static std::unique_ptr<HfFeatureExtractor> load(const std::string& dir);
  static std::unique_ptr<HfFeatureExtractor> from_bundle(const io::Bundle& bundle);
  // From the same files as bytes (the WASM build): config.json text, the weights file, other files by name.
  static std::unique_ptr<HfFeatureExtractor> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                  std::map<std::string, std::string> files,
                                                  const std::string& name = "<memory>");
  ~HfFeatureExtractor();
  HfFeatureResult extract(const std::string& text, const HfEncoderParams& params = {}) const;
  HfFeatureResult extract_ids(const std::vector<int>& ids, const HfEncoderParams& params = {}) const;

 private:
  struct Impl;
  explicit HfFeatureExtractor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// image-classification (hf-vit with a classification head).
class HfImageClassifier {
 public:
  static std::unique_ptr<HfImageClassifier> load(const std::string& dir);
  static std::unique_ptr<HfImageClassifier> from_bundle(const io::Bundle& bundle);
  // From the same files as bytes (the WASM build): config.json text, the weights file, other files by name.
  static std::unique_ptr<HfImageClassifier> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                  std::map<std::string, std::string> files,
                                                  const std::string& name = "<memory>");
  ~HfImageClassifier();
  // pixels: height rows of width·channels bytes (channels 1, 3 or 4).
  HfClassificationResult classify(const std::uint8_t* pixels, std::size_t size, std::size_t width,
                                  std::size_t height, std::size_t channels,
                                  const HfEncoderParams& params = {}) const;
  // The model's pixel values [3, h, w] (ViTImageProcessor as above) of an image.
  std::vector<float> pixel_values(const std::uint8_t* pixels, std::size_t size, std::size_t width,
                                  std::size_t height, std::size_t channels) const;
  const std::vector<std::string>& labels() const;

 private:
  struct Impl;
  explicit HfImageClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
