// Embind bindings of api::VisualQA (src/api/vqa.h); wasm/pipelines/vqa.js wraps them as the
// 'visual-question-answering' pipeline. Thin, as bindings_captioning.cpp: bytes in, plain objects out (results
// copied out of the heap), every C++ exception turned into a JS Error by guarded(). Pixels stay in JS: only the
// rows the 224×224 resize needs are copied into the heap (api::VisualQA::answer_rows).
#include "bindings_common.h"

using namespace attnlens::wasm_bind;  // also val and api

namespace {

class VisualQABinding : public ModelBinding<api::VisualQA> {
 public:
  using ModelBinding::ModelBinding;

  // data: Uint8Array | Uint8ClampedArray of exactly width·height·channels bytes (channels 4, 3 or 1).
  val answer(const val& data, double width, double height, double channels, const std::string& question,
             const std::string& params_json) const {
    return guarded([&] {
      const JsPixels px = js_pixels(data, width, height, channels, "vqa");
      const api::VqaParams params = api::vqa_params(params_json);
      std::vector<std::uint8_t> row(px.stride);
      const auto read_row = js_row_reader(data, px.stride, row);
      return to_js(model_->answer_rows(read_row, px.width, px.height, question, params, px.channels));
    });
  }
  // The two halves: pixels → grid Float32Array [g·g·D]; grid (Float32Array of side·side·D) → the result.
  val encode(const val& data, double width, double height, double channels) const {
    return guarded([&] {
      const JsPixels px = js_pixels(data, width, height, channels, "vqa encode");
      const std::vector<std::uint8_t> bytes = emscripten::convertJSArrayToNumberVector<std::uint8_t>(data);
      return js_copy(model_->encode(bytes.data(), bytes.size(), px.width, px.height, px.channels).data);
    });
  }
  val answer_grid(const val& grid, double side, const std::string& question, const std::string& params_json) const {
    return guarded([&] {
      const std::size_t g = js_dimension(side, "grid side");
      const api::Tensor t = js_grid(grid, g, g, "vqa answerGrid");
      return to_js(model_->answer_grid(t, question, api::vqa_params(params_json)));
    });
  }
  val answer_list() const {
    return guarded([&] { return string_array(model_->answer_list()); });
  }
  val vocabulary() const {
    return guarded([&] { return string_array(model_->vocabulary()); });
  }
  double max_question_words() const { return static_cast<double>(model_->max_question_words()); }
  std::string config_json() const { return model_->config_json(); }

  static constexpr const char* kJsName = "VisualQA";  // errors name it, bind_class registers it
};

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_vqa) {
  using B = VisualQABinding;
  bind_class<B>("fromBundles", &from_two_bundles<B, api::VisualQA>, "answer", &B::answer, "encode", &B::encode,
                "answerGrid", &B::answer_grid, "answerList", &B::answer_list, "vocabulary", &B::vocabulary,
                "maxQuestionWords", &B::max_question_words, "configJson", &B::config_json);
}
