// Embind bindings of api::SentimentClassifier (src/api/sentiment.h); wasm/pipelines/sentiment.js wraps them as the
// 'sentiment-analysis' pipeline. Thin on purpose: bytes in, plain objects out (results copied out of the heap),
// every C++ exception turned into a JS Error by guarded().
#include "bindings_common.h"

using namespace attnlens::wasm_bind;  // also val and api

namespace {

class SentimentBinding : public ModelBinding<api::SentimentClassifier> {
 public:
  using ModelBinding::ModelBinding;

  // text: a string (or UTF-8 bytes as a Uint8Array; ill-formed sequences become U+FFFD) → plain result object.
  val classify(const std::string& text) const {
    return guarded([&] { return to_js(model_->classify(text)); });
  }
  // A JS array of texts (strings or UTF-8 bytes) classified as one list (api::SentimentClassifier::classify_many:
  // shared among the engine's threads in the threaded module) → an array of results in the same order.
  val classify_many(const val& texts) const {
    return guarded([&] { return to_js_list(model_->classify_many(emscripten::vecFromJSArray<std::string>(texts))); });
  }
  val labels() const {
    return guarded([&] { return string_array(model_->labels()); });
  }
  std::string architecture() const { return model_->architecture(); }
  double max_tokens() const { return static_cast<double>(model_->max_tokens()); }
  double vocab_size() const { return static_cast<double>(model_->vocab_size()); }

  static constexpr const char* kJsName = "SentimentClassifier";  // errors name it, bind_class registers it
};

// fromBundle(configText, weights: Uint8Array, files: {[name]: string | Uint8Array}, paramsJson, name)
SentimentBinding* from_bundle(const std::string& config_text, const std::string& weights, const val& files,
                              const std::string& params_json, const std::string& name) {
  return new_binding<SentimentBinding>("fromBundle", [&](const std::string& what) {
    return api::SentimentClassifier::from_memory(config_text, js_bytes(weights), js_bundle_files(files, what),
                                                 api::sentiment_params(params_json), js_bundle_name(name));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_sentiment) {
  using B = SentimentBinding;
  bind_class<B>("fromBundle", &from_bundle, "classify", &B::classify, "classifyMany", &B::classify_many, "labels",
                &B::labels, "architecture", &B::architecture, "maxTokens", &B::max_tokens, "vocabSize",
                &B::vocab_size);
}
