// Embind bindings of the converted Hugging Face models' tasks (src/api/hf_generation.h, src/api/hf_encoders.h; hf-marian through
// api::Translator, bound by wasm/bindings_translation.cpp), linked only into the attnlens-hf module (wasm/CMakeLists.txt,
// wasm/core.js initHf()). wasm/pipelines/hf.js wraps them as pipelines. Thin on purpose, as every binding: bytes in,
// plain objects out (to_js through the results' field lists), every C++ exception turned into a JS Error by guarded().
//
// The module's start (the EMSCRIPTEN_BINDINGS block below runs when the module is instantiated) registers what only
// this module has: the hf-marian translation architecture (api::register_hf_architectures()) and the HF tasks'
// contracts, so this module's contracts() export lists them (wasm/pipelines/contract.js reads it).
#include "../bindings_common.h"

using namespace attnlens::wasm_bind;  // also val and api

namespace {

class TextGeneratorBinding : public ModelBinding<api::TextGenerator> {
 public:
  using ModelBinding::ModelBinding;

  // prompt: a string (or UTF-8 bytes); paramsJson: the call's engine options (api::text_generation_params).
  val generate(const std::string& prompt, const std::string& params_json) const {
    return guarded([&] { return to_js(model_->generate(prompt, api::text_generation_params(params_json))); });
  }
  // ids: a JS array (or Int32Array) of token ids in the vocabulary; empty: bos_token_id.
  val generate_ids(const val& ids, const std::string& params_json) const {
    return guarded([&] {
      return to_js(model_->generate_ids(emscripten::convertJSArrayToNumberVector<int>(ids),
                                        api::text_generation_params(params_json)));
    });
  }

  static constexpr const char* kJsName = "TextGenerator";  // errors name it, bind_class registers it
};

// fromBundle(configText, weights: Uint8Array, files: {[name]: string | Uint8Array}, name)
TextGeneratorBinding* generator_from_bundle(const std::string& config_text, const std::string& weights,
                                            const val& files, const std::string& name) {
  return new_binding<TextGeneratorBinding>("fromBundle", [&](const std::string& what) {
    return api::TextGenerator::from_memory(config_text, js_bytes(weights), js_bundle_files(files, what),
                                           js_bundle_name(name));
  });
}

// The encoders' tasks (api/hf_encoders.h): one binding class per task, each taking text or token ids (text tasks)
// or checked pixels (image-classification), the call's engine options as JSON.
class TextClassifierBinding : public ModelBinding<api::HfTextClassifier> {
 public:
  using ModelBinding::ModelBinding;
  val classify(const std::string& text, const std::string& params_json) const {
    return guarded([&] { return to_js(model_->classify(text, params(params_json))); });
  }
  val classify_ids(const val& ids, const std::string& params_json) const {
    return guarded([&] {
      return to_js(model_->classify_ids(emscripten::convertJSArrayToNumberVector<int>(ids), params(params_json)));
    });
  }
  val labels() const {
    return guarded([&] { return string_array(model_->labels()); });
  }
  static api::HfEncoderParams params(const std::string& json) {
    return api::hf_encoder_params(api::hf_text_classification_contract(), json);
  }
  static constexpr const char* kJsName = "HfTextClassifier";
};

class FeatureExtractorBinding : public ModelBinding<api::HfFeatureExtractor> {
 public:
  using ModelBinding::ModelBinding;
  val extract(const std::string& text, const std::string& params_json) const {
    return guarded([&] { return to_js(model_->extract(text, params(params_json))); });
  }
  val extract_ids(const val& ids, const std::string& params_json) const {
    return guarded([&] {
      return to_js(model_->extract_ids(emscripten::convertJSArrayToNumberVector<int>(ids), params(params_json)));
    });
  }
  static api::HfEncoderParams params(const std::string& json) {
    return api::hf_encoder_params(api::hf_feature_extraction_contract(), json);
  }
  static constexpr const char* kJsName = "HfFeatureExtractor";
};

class ImageClassifierBinding : public ModelBinding<api::HfImageClassifier> {
 public:
  using ModelBinding::ModelBinding;
  // data: width·height·channels bytes (Uint8Array / Uint8ClampedArray), checked as every image call's pixels.
  val classify(const val& data, double width, double height, double channels, const std::string& params_json) const {
    return guarded([&] {
      const JsPixels px = js_pixels(data, width, height, channels, "classify");
      const std::vector<std::uint8_t> bytes = emscripten::convertJSArrayToNumberVector<std::uint8_t>(data);
      return to_js(model_->classify(bytes.data(), bytes.size(), px.width, px.height, px.channels,
                                    api::hf_encoder_params(api::hf_image_classification_contract(), params_json)));
    });
  }
  val labels() const {
    return guarded([&] { return string_array(model_->labels()); });
  }
  static constexpr const char* kJsName = "HfImageClassifier";
};

// fromBundle(configText, weights: Uint8Array, files: {[name]: string | Uint8Array}, name), one per encoder task.
template <class Binding, class Model>
Binding* encoder_from_bundle(const std::string& config_text, const std::string& weights, const val& files,
                             const std::string& name) {
  return new_binding<Binding>("fromBundle", [&](const std::string& what) {
    return Model::from_memory(config_text, js_bytes(weights), js_bundle_files(files, what), js_bundle_name(name));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_hf) {
  api::register_hf_architectures();
  api::add_contract(api::text_generation_contract());
  api::add_contract(api::hf_text_classification_contract());
  api::add_contract(api::hf_feature_extraction_contract());
  api::add_contract(api::hf_image_classification_contract());
  using G = TextGeneratorBinding;
  bind_class<G>("fromBundle", &generator_from_bundle, "generate", &G::generate, "generateIds", &G::generate_ids);
  using T = TextClassifierBinding;
  bind_class<T>("fromBundle", &encoder_from_bundle<T, api::HfTextClassifier>, "classify", &T::classify,
                "classifyIds", &T::classify_ids, "labels", &T::labels);
  using F = FeatureExtractorBinding;
  bind_class<F>("fromBundle", &encoder_from_bundle<F, api::HfFeatureExtractor>, "extract", &F::extract,
                "extractIds", &F::extract_ids);
  using I = ImageClassifierBinding;
  bind_class<I>("fromBundle", &encoder_from_bundle<I, api::HfImageClassifier>, "classify", &I::classify,
                "labels", &I::labels);
}
