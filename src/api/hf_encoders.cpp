#include "api/hf_encoders.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "api/hf_tokenizer_file.h"
#include "common.h"
#include "image/preprocess.h"
#include "io/bundle.h"
#include "models/hf_bert.h"
#include "models/hf_vit.h"

namespace attnlens::api {

namespace {

Contract encoder_contract(const std::string& task, std::vector<FieldSpec> result) {
  result.push_back(qk_field("'self-attention'"));
  return Contract{task,
                  "",
                  {output_attentions_option("false: `attentions` comes back empty"), output_qk_option()},
                  std::move(result)};
}

std::vector<FieldSpec> classification_fields(const std::string& ids_doc) {
  return {
      {"label", "string", "the most probable label (the first on a tie)"},
      {"score", "number", "its probability"},
      {"scores", "LabelScore[]", "every label with its probability, most probable first"},
      {"logits", "float32[]", "the classifier's logits, one per label in the model's order"},
      {"ids", "int32[]", ids_doc},
      {"tokens", "string[]", "the tokens of `ids`"},
      {"attentions", "maps", "'self-attention' per layer and head, [T, T]"},
  };
}

io::Bundle checked(io::Bundle b, const std::string& task, const std::vector<std::string>& archs) {
  const bool ok = std::find(archs.begin(), archs.end(), b.architecture()) != archs.end();
  require(ok, task + ": bundle " + b.name() + " is '" + b.architecture() + "'; " + task + " takes " +
                  (archs.size() == 1 ? archs[0] : archs[0] + " or " + archs[1]) + " bundles");
  return b;
}

std::vector<std::string> labels_of(const io::Bundle& b, std::size_t n, const std::string& task) {
  require(n > 0, task + ": bundle " + b.name() + " has no classification head (classifier.weight)");
  std::vector<std::string> labels;
  const auto it = b.config().find("labels");
  if (it != b.config().end() && it->is_array()) {
    for (const auto& l : *it) {
      require(l.is_string(), "config.json in " + b.name() + ": \"labels\" must be strings");
      labels.push_back(l.get<std::string>());
    }
  }
  require(labels.size() == n, "config.json in " + b.name() + ": \"labels\" has " +
                                  std::to_string(labels.size()) + " entries; the classifier has " +
                                  std::to_string(n));
  return labels;
}

// The pipeline's default function_to_apply: softmax over two or more labels, sigmoid for a single one.
void classify(const std::vector<float>& logits, const std::vector<std::string>& labels,
              HfClassificationResult& r) {
  std::vector<double> p(logits.size());
  if (logits.size() == 1) {
    p[0] = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[0])));
  } else {
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(static_cast<double>(logits[i]) - top);
    for (double& v : p) v /= sum;
  }
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
  for (std::size_t i : order) r.scores.push_back({labels[i], p[i]});
  r.label = r.scores.front().label;
  r.score = r.scores.front().score;
  r.logits = logits;
}

}  // namespace

const Contract& hf_text_classification_contract() {
  static const Contract c = encoder_contract(
      "text-classification", classification_fields("the ids the model saw, special tokens included"));
  return c;
}

const Contract& hf_image_classification_contract() {
  static const Contract c = [] {
    auto fields = classification_fields("empty (an image has no ids)");
    fields.back().doc =
        "'self-attention' per layer and head, [N + 1, N + 1] over the CLS token and the patches";
    return encoder_contract("image-classification", fields);
  }();
  return c;
}

const Contract& hf_feature_extraction_contract() {
  static const Contract c = encoder_contract(
      "feature-extraction",
      {
          {"features", "float32[]", "the last hidden state, row-major [T, d]"},
          {"dims", "int32[]", "[T, d]"},
          {"pooled", "float32[]", "the pooled vector [d]; empty when the model has no pooler"},
          {"ids", "int32[]", "the ids the model saw, special tokens included"},
          {"tokens", "string[]", "the tokens of `ids`"},
          {"attentions", "maps", "'self-attention' per layer and head, [T, T]"},
      });
  return c;
}

HfEncoderParams hf_encoder_params(const Contract& contract, const std::string& params_json) {
  const OptionValues v = read_options(contract, OptionTime::kCall, contract.task + " params", params_json);
  HfEncoderParams p;
  p.output_attentions = v.boolean("output_attentions", p.output_attentions);
  p.output_qk = v.boolean("output_qk", p.output_qk);
  return p;
}

// ---------------------------------------------------------------------------------------------- text models

namespace {

struct TextModel {
  explicit TextModel(const io::Bundle& b) : model(b), tokenizer(load_hf_tokenizer(b)) {}
  models::HfBert model;
  text::HfTokenizer tokenizer;

  models::HfEncoderOutput run(const std::vector<int>& ids, const HfEncoderParams& params,
                              std::vector<std::string>& tokens, AttentionTrace& trace, AttentionTrace& qk) const {
    for (int id : ids) tokens.push_back(tokenizer.id_to_token(id));
    return model.forward(ids, params.output_attentions ? &trace : nullptr, nullptr, params.output_qk ? &qk : nullptr);
  }
};

const std::vector<std::string> kTextArchitectures = {"hf-bert", "hf-distilbert"};

}  // namespace

struct HfTextClassifier::Impl {
  explicit Impl(const io::Bundle& b)
      : text(b), labels(labels_of(b, text.model.num_labels(), "text-classification")) {}
  TextModel text;
  std::vector<std::string> labels;
};

HfTextClassifier::HfTextClassifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HfTextClassifier::~HfTextClassifier() = default;

std::unique_ptr<HfTextClassifier> HfTextClassifier::load(const std::string& dir) {
  return from_bundle(io::Bundle::load(dir));
}

std::unique_ptr<HfTextClassifier> HfTextClassifier::from_memory(const std::string& config_json,
                                                        std::vector<std::uint8_t> weights,
                                                        std::map<std::string, std::string> files,
                                                        const std::string& name) {
  return from_bundle(io::Bundle::from_memory(config_json, std::move(weights), std::move(files), name));
}

std::unique_ptr<HfTextClassifier> HfTextClassifier::from_bundle(const io::Bundle& bundle) {
  const io::Bundle b = checked(bundle, "text-classification", kTextArchitectures);
  return std::unique_ptr<HfTextClassifier>(new HfTextClassifier(std::make_unique<Impl>(b)));
}

HfClassificationResult HfTextClassifier::classify(const std::string& text,
                                                  const HfEncoderParams& params) const {
  return classify_ids(impl_->text.tokenizer.encode(text).ids, params);
}

HfClassificationResult HfTextClassifier::classify_ids(const std::vector<int>& ids,
                                                      const HfEncoderParams& params) const {
  HfClassificationResult r;
  r.ids = ids;
  const auto out = impl_->text.run(ids, params, r.tokens, r.attentions, r.qk);
  attnlens::api::classify(out.logits, impl_->labels, r);
  return r;
}

const std::vector<std::string>& HfTextClassifier::labels() const { return impl_->labels; }

struct HfFeatureExtractor::Impl {
  explicit Impl(const io::Bundle& b) : text(b) {}
  TextModel text;
};

HfFeatureExtractor::HfFeatureExtractor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HfFeatureExtractor::~HfFeatureExtractor() = default;

std::unique_ptr<HfFeatureExtractor> HfFeatureExtractor::load(const std::string& dir) {
  return from_bundle(io::Bundle::load(dir));
}

std::unique_ptr<HfFeatureExtractor> HfFeatureExtractor::from_memory(const std::string& config_json,
                                                        std::vector<std::uint8_t> weights,
                                                        std::map<std::string, std::string> files,
                                                        const std::string& name) {
  return from_bundle(io::Bundle::from_memory(config_json, std::move(weights), std::move(files), name));
}

std::unique_ptr<HfFeatureExtractor> HfFeatureExtractor::from_bundle(const io::Bundle& bundle) {
  const io::Bundle b = checked(bundle, "feature-extraction", kTextArchitectures);
  return std::unique_ptr<HfFeatureExtractor>(new HfFeatureExtractor(std::make_unique<Impl>(b)));
}

HfFeatureResult HfFeatureExtractor::extract(const std::string& text, const HfEncoderParams& params) const {
  return extract_ids(impl_->text.tokenizer.encode(text).ids, params);
}

HfFeatureResult HfFeatureExtractor::extract_ids(const std::vector<int>& ids,
                                                const HfEncoderParams& params) const {
  HfFeatureResult r;
  r.ids = ids;
  auto out = impl_->text.run(ids, params, r.tokens, r.attentions, r.qk);
  r.dims = {static_cast<int>(ids.size()), static_cast<int>(impl_->text.model.d_model())};
  r.features = std::move(out.last_hidden_state);
  r.pooled = std::move(out.pooled);
  return r;
}

// ---------------------------------------------------------------------------------------------- images

struct HfImageClassifier::Impl {
  explicit Impl(const io::Bundle& b)
      : model(b), labels(labels_of(b, model.num_labels(), "image-classification")) {
    const std::string where = "config.json in " + b.name() + ": \"image\"";
    require(b.config().contains("image") && b.config()["image"].is_object(),
            where + " is missing or not an object");
    const auto& image = b.config()["image"];
    const auto three = [&](const char* key) {
      require(image.contains(key), where + "." + key + " is missing");
      const auto& v = image[key];
      require(v.is_array() && v.size() == 3 && v[0].is_number() && v[1].is_number() && v[2].is_number(),
              where + "." + key + " must be three numbers");
      return std::vector<double>{v[0].get<double>(), v[1].get<double>(), v[2].get<double>()};
    };
    mean = three("mean");
    std = three("std");
    for (double s : std) require(s > 0, where + ".std must be positive");
    require(image.contains("rescale_factor") && image["rescale_factor"].is_number() &&
                image["rescale_factor"].get<double>() > 0,
            where + ".rescale_factor must be a positive number");
    rescale = image["rescale_factor"].get<double>();
    require(model.image_height() == model.image_width(),
            where + ": a non-square image_size is not supported by image-classification");
  }
  models::HfVit model;
  std::vector<std::string> labels;
  std::vector<double> mean, std;
  double rescale = 1.0 / 255;
};

HfImageClassifier::HfImageClassifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HfImageClassifier::~HfImageClassifier() = default;

std::unique_ptr<HfImageClassifier> HfImageClassifier::load(const std::string& dir) {
  return from_bundle(io::Bundle::load(dir));
}

std::unique_ptr<HfImageClassifier> HfImageClassifier::from_memory(const std::string& config_json,
                                                        std::vector<std::uint8_t> weights,
                                                        std::map<std::string, std::string> files,
                                                        const std::string& name) {
  return from_bundle(io::Bundle::from_memory(config_json, std::move(weights), std::move(files), name));
}

std::unique_ptr<HfImageClassifier> HfImageClassifier::from_bundle(const io::Bundle& bundle) {
  const io::Bundle b = checked(bundle, "image-classification", {"hf-vit"});
  return std::unique_ptr<HfImageClassifier>(new HfImageClassifier(std::make_unique<Impl>(b)));
}

std::vector<float> HfImageClassifier::pixel_values(const std::uint8_t* pixels, std::size_t size,
                                                   std::size_t width, std::size_t height,
                                                   std::size_t channels) const {
  const std::size_t s = impl_->model.image_height();
  // hwc (s, s, 3) = v/127.5 − 1 of the alpha-composited, bilinearly resized image (image/preprocess.h)
  const std::vector<float> hwc = image::preprocess(pixels, size, width, height, channels, s);
  // pixel_values (3, s, s) = (v·rescale_factor − mean[c]) / std[c],  v = (x + 1)·127.5
  std::vector<float> chw(3 * s * s);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < s * s; ++i) {
      const double v = (static_cast<double>(hwc[i * 3 + c]) + 1.0) * 127.5;
      chw[c * s * s + i] = static_cast<float>((v * impl_->rescale - impl_->mean[c]) / impl_->std[c]);
    }
  return chw;
}

HfClassificationResult HfImageClassifier::classify(const std::uint8_t* pixels, std::size_t size,
                                                   std::size_t width, std::size_t height,
                                                   std::size_t channels,
                                                   const HfEncoderParams& params) const {
  const std::size_t s = impl_->model.image_height();
  HfClassificationResult r;
  const auto out = impl_->model.forward(pixel_values(pixels, size, width, height, channels), s, s,
                                        params.output_attentions ? &r.attentions : nullptr, nullptr,
                                        params.output_qk ? &r.qk : nullptr);
  attnlens::api::classify(out.logits, impl_->labels, r);
  return r;
}

const std::vector<std::string>& HfImageClassifier::labels() const { return impl_->labels; }

}  // namespace attnlens::api
