// Embind bindings of api::Translator (src/api/translation.h); wasm/pipelines/translation.js wraps them as the
// 'translation' pipeline. Thin on purpose: bytes in, plain objects out (results converted through their field
// lists by to_js, every array copied out of the heap), every C++ exception turned into a JS Error by guarded().
#include "bindings_common.h"

using namespace attnlens::wasm_bind;  // also val and api

namespace {

class TranslatorBinding : public ModelBinding<api::Translator> {
 public:
  using ModelBinding::ModelBinding;

  // paramsJson: the pipeline's options as JSON (api::translation_params reads them; unknown keys are an error).
  val translate(const std::string& text, const std::string& params_json) const {
    return guarded([&] { return to_js(model_->translate(text, api::translation_params(params_json))); });
  }

  // A JS array of strings, translated as one list (api::Translator::translate_many: shared among the engine's
  // threads in the threaded module); a JS array of results in the same order.
  val translate_many(const val& texts, const std::string& params_json) const {
    return guarded([&] {
      return to_js_list(
          model_->translate_many(emscripten::vecFromJSArray<std::string>(texts), api::translation_params(params_json)));
    });
  }

  val align(const std::string& source, const std::string& target, const std::string& params_json) const {
    return guarded([&] { return to_js(model_->align(source, target, api::translation_params(params_json))); });
  }

  std::string name() const { return model_->name(); }
  std::string architecture() const { return model_->architecture(); }
  double vocab_size() const { return static_cast<double>(model_->vocab_size()); }
  double max_source_tokens() const { return static_cast<double>(model_->max_source_tokens()); }
  int default_num_beams() const { return model_->default_num_beams(); }

  static constexpr const char* kJsName = "Translator";  // errors name it, bind_class registers it
};

// fromBundle(configText, weights: Uint8Array, files: {[name]: string | Uint8Array}, name)
TranslatorBinding* from_bundle(const std::string& config_text, const std::string& weights, const val& files,
                               const std::string& name) {
  return new_binding<TranslatorBinding>("fromBundle", [&](const std::string& what) {
    return api::Translator::from_memory(config_text, js_bytes(weights), js_bundle_files(files, what),
                                        js_bundle_name(name));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_translation) {
  using B = TranslatorBinding;
  bind_class<B>("fromBundle", &from_bundle, "translate", &B::translate, "translateMany", &B::translate_many, "align",
                &B::align, "name", &B::name, "architecture", &B::architecture, "vocabSize", &B::vocab_size,
                "maxSourceTokens", &B::max_source_tokens, "defaultNumBeams", &B::default_num_beams);
}
