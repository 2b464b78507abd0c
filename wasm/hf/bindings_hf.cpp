// Embind bindings of the converted Hugging Face models' tasks (src/api/hf_generation.h; hf-marian through
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

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_hf) {
  api::register_hf_architectures();
  api::add_contract(api::text_generation_contract());
  using G = TextGeneratorBinding;
  bind_class<G>("fromBundle", &generator_from_bundle, "generate", &G::generate, "generateIds", &G::generate_ids);
}
