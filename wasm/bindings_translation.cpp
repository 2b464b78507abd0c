// Embind bindings of api::Translator (src/api/translation.h); wasm/pipelines/translation.js wraps them as the
// 'translation' pipeline. Thin on purpose: bytes in, plain objects out (every array copied out of the heap), every
// C++ exception turned into a JS Error by guarded().
#include <algorithm>

#include "bindings_common.h"

using emscripten::val;
namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

// Words as {text, begin, end} with UTF-8 byte offsets (the JS pipeline turns them into string indices).
val words_to_js(const std::vector<attnlens::text::WordSpan>& words) {
  val out = val::array();
  for (const auto& w : words) {
    val jw = val::object();
    jw.set("text", w.text);
    jw.set("begin", static_cast<double>(w.byte_begin));
    jw.set("end", static_cast<double>(w.byte_end));
    jw.set("firstPiece", static_cast<double>(w.first_piece));
    jw.set("endPiece", static_cast<double>(w.end_piece));
    out.call<void>("push", jw);
  }
  return out;
}

class TranslatorBinding {
 public:
  explicit TranslatorBinding(std::unique_ptr<api::Translator> tr) : tr_(std::move(tr)) {}

  // paramsJson: the pipeline's options as JSON (api::translation_params reads them; unknown keys are an error).
  val translate(const std::string& text, const std::string& params_json) const {
    return guarded([&] { return result_to_js(tr_->translate(text, api::translation_params(params_json))); });
  }

  // A JS array of strings, translated as one list (api::Translator::translate_many: shared among the engine's
  // threads in the threaded module); a JS array of results in the same order.
  val translate_many(const val& texts, const std::string& params_json) const {
    return guarded([&] {
      const auto results =
          tr_->translate_many(emscripten::vecFromJSArray<std::string>(texts), api::translation_params(params_json));
      val out = val::array();
      for (const auto& r : results) out.call<void>("push", result_to_js(r));
      return out;
    });
  }

  val align(const std::string& source, const std::string& target, const std::string& params_json) const {
    return guarded([&] { return result_to_js(tr_->align(source, target, api::translation_params(params_json))); });
  }

  std::string name() const { return tr_->name(); }
  std::string architecture() const { return tr_->architecture(); }
  double vocab_size() const { return static_cast<double>(tr_->vocab_size()); }
  double max_source_tokens() const { return static_cast<double>(tr_->max_source_tokens()); }
  int default_num_beams() const { return tr_->default_num_beams(); }

 private:
  static val result_to_js(const api::TranslationResult& r) {
    val out = val::object();
    out.set("text", r.text);
    out.set("sourceTokens", string_array(r.source_tokens));
    out.set("targetTokens", string_array(r.target_tokens));
    out.set("sourceIds", js_copy(r.source_ids));
    out.set("targetIds", js_copy(r.target_ids));
    out.set("attentions", js_maps(r.attentions));
    out.set("sourceWords", words_to_js(r.source_words));
    out.set("targetWords", words_to_js(r.target_words));
    val links = val::array();
    for (const auto& l : r.alignment) {
      val pair = val::array();
      pair.call<void>("push", l.source);
      pair.call<void>("push", l.target);
      links.call<void>("push", pair);
    }
    out.set("alignment", links);
    out.set("alignmentMethod", r.alignment_method);
    out.set("alignmentMap", js_copy(r.alignment_map));
    out.set("wordAttentions", js_maps(r.word_attentions));
    out.set("tokenLogprobs", js_copy(r.token_logprobs));
    out.set("qk", js_maps(r.qk));
    val copies = val::array();
    for (const auto& c : r.number_copies) {
      val jc = val::object();
      jc.set("sourceNumber", c.source_number);
      jc.set("targetWord", c.target_word);
      jc.set("model", c.model_text);
      jc.set("text", c.text);
      jc.set("weight", c.weight);
      copies.call<void>("push", jc);
    }
    out.set("numberCopies", copies);
    out.set("truncated", r.truncated);
    out.set("score", r.score);
    out.set("numBeams", r.num_beams);
    return out;
  }

  std::unique_ptr<api::Translator> tr_;
};

// fromBundle(configText, weights: Uint8Array, files: {[name]: string | Uint8Array}, name)
TranslatorBinding* from_bundle(const std::string& config_text, const std::string& weights, const val& files,
                               const std::string& name) {
  return guarded([&] {
    std::map<std::string, std::string> file_map = js_bundle_files(files, "Translator.fromBundle");
    auto tr =
        api::Translator::from_memory(config_text, js_bytes(weights), std::move(file_map), js_bundle_name(name));
    return new TranslatorBinding(std::move(tr));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_translation) {
  emscripten::class_<TranslatorBinding>("Translator")
      .class_function("fromBundle", &from_bundle, emscripten::allow_raw_pointers())
      .function("translate", &TranslatorBinding::translate)
      .function("translateMany", &TranslatorBinding::translate_many)
      .function("align", &TranslatorBinding::align)
      .function("name", &TranslatorBinding::name)
      .function("architecture", &TranslatorBinding::architecture)
      .function("vocabSize", &TranslatorBinding::vocab_size)
      .function("maxSourceTokens", &TranslatorBinding::max_source_tokens)
      .function("defaultNumBeams", &TranslatorBinding::default_num_beams);
}
