// Embind bindings of api::SentimentClassifier (src/api/sentiment.h); wasm/pipelines/sentiment.js wraps them as the
// 'sentiment-analysis' pipeline. Thin on purpose: bytes in, plain objects out (results copied out of the heap),
// every C++ exception turned into a JS Error by guarded().
#include "bindings_common.h"

using emscripten::val;
namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

class SentimentBinding {
 public:
  explicit SentimentBinding(std::unique_ptr<api::SentimentClassifier> clf) : clf_(std::move(clf)) {}

  // text: a string (or UTF-8 bytes as a Uint8Array; ill-formed sequences become U+FFFD) → plain result object.
  val classify(const std::string& text) const {
    return guarded([&] { return to_js(clf_->classify(text)); });
  }
  // A JS array of texts (strings or UTF-8 bytes) classified as one list (api::SentimentClassifier::classify_many:
  // shared among the engine's threads in the threaded module) → an array of results in the same order.
  val classify_many(const val& texts) const {
    return guarded([&] { return to_js_list(clf_->classify_many(emscripten::vecFromJSArray<std::string>(texts))); });
  }
  val labels() const {
    return guarded([&] { return string_array(clf_->labels()); });
  }
  std::string architecture() const { return clf_->architecture(); }
  double max_tokens() const { return static_cast<double>(clf_->max_tokens()); }
  double vocab_size() const { return static_cast<double>(clf_->vocab_size()); }

 private:
  std::unique_ptr<api::SentimentClassifier> clf_;
};

// fromBundle(configText, weights: Uint8Array, files: {[name]: string | Uint8Array}, paramsJson, name)
SentimentBinding* from_bundle(const std::string& config_text, const std::string& weights, const val& files,
                              const std::string& params_json, const std::string& name) {
  return guarded([&] {
    std::map<std::string, std::string> file_map = js_bundle_files(files, "SentimentClassifier.fromBundle");
    auto clf = api::SentimentClassifier::from_memory(config_text, js_bytes(weights), std::move(file_map),
                                                     api::sentiment_params(params_json), js_bundle_name(name));
    return new SentimentBinding(std::move(clf));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_sentiment) {
  emscripten::class_<SentimentBinding>("SentimentClassifier")
      .class_function("fromBundle", &from_bundle, emscripten::allow_raw_pointers())
      .function("classify", &SentimentBinding::classify)
      .function("classifyMany", &SentimentBinding::classify_many)
      .function("labels", &SentimentBinding::labels)
      .function("architecture", &SentimentBinding::architecture)
      .function("maxTokens", &SentimentBinding::max_tokens)
      .function("vocabSize", &SentimentBinding::vocab_size);
}
