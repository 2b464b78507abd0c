// Embind bindings of api::VisualQA (src/api/vqa.h); wasm/pipelines/vqa.js wraps them as the
// 'visual-question-answering' pipeline. Thin, as bindings_captioning.cpp: bytes in, plain objects out (results
// copied out of the heap), every C++ exception turned into a JS Error by guarded(). Pixels stay in JS: only the
// rows the 224×224 resize needs are copied into the heap (api::VisualQA::answer_rows).
#include "bindings_common.h"
#include "image/preprocess.h"

using emscripten::val;
namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

val strings(const std::vector<std::string>& v) {
  val out = val::array();
  for (const auto& s : v) out.call<void>("push", s);
  return out;
}

val result_to_js(const api::VqaResult& r) {
  val out = val::object();
  out.set("answer", r.answer);
  out.set("score", r.score);
  out.set("answers", strings(r.answers));
  out.set("scores", js_copy(r.scores));
  out.set("logits", js_copy(r.logits));
  out.set("tokens", strings(r.tokens));
  out.set("tokenIds", js_copy(r.token_ids));
  val unknown = val::array();
  for (const auto& u : r.unknown_words) {
    val w = val::object();
    w.set("word", u.word);
    w.set("position", static_cast<double>(u.position));
    unknown.call<void>("push", w);
  }
  out.set("unknownWords", unknown);
  out.set("count", r.count);
  out.set("where", js_copy(r.where));
  out.set("attention", r.attention);
  out.set("attentions", js_maps(r.attentions));
  return out;
}

class VisualQABinding {
 public:
  explicit VisualQABinding(std::unique_ptr<api::VisualQA> m) : vqa_(std::move(m)) {}

  // data: Uint8Array | Uint8ClampedArray of exactly width·height·channels bytes (channels 4, 3 or 1).
  val answer(const val& data, double width, double height, double channels, const std::string& question,
             const std::string& params_json) const {
    return guarded([&] {
      const std::size_t w = js_dimension(width, "width"), h = js_dimension(height, "height");
      const std::size_t c = js_dimension(channels, "channels");
      attnlens::require(data.instanceof(val::global("Uint8Array")) || data.instanceof(val::global("Uint8ClampedArray")),
                        "vqa: the pixels must be a Uint8Array or Uint8ClampedArray");
      attnlens::image::check_image_dims(w, h, c);
      const double length = data["length"].as<double>();
      const double needed = static_cast<double>(w) * static_cast<double>(h) * static_cast<double>(c);
      attnlens::require(length == needed, "vqa: the pixel buffer holds " + std::to_string(static_cast<long long>(length)) +
                                              " bytes but the image needs exactly " +
                                              std::to_string(static_cast<long long>(needed)));
      const api::VqaParams params = api::vqa_params(params_json);
      const std::size_t stride = w * c;
      std::vector<std::uint8_t> row(stride);
      const auto read_row = [&](std::size_t y) {
        const val src = data.call<val>("subarray", static_cast<double>(y * stride), static_cast<double>((y + 1) * stride));
        // the view is made right before the copy: nothing can grow the heap in between
        val(emscripten::typed_memory_view(stride, row.data())).call<void>("set", src);
        return static_cast<const std::uint8_t*>(row.data());
      };
      return result_to_js(vqa_->answer_rows(read_row, w, h, question, params, c));
    });
  }
  // The two halves: pixels → grid Float32Array [g·g·D]; grid (Float32Array of side·side·D) → the result.
  val encode(const val& data, double width, double height, double channels) const {
    return guarded([&] {
      const std::size_t w = js_dimension(width, "width"), h = js_dimension(height, "height");
      const std::size_t c = js_dimension(channels, "channels");
      attnlens::require(data.instanceof(val::global("Uint8Array")) || data.instanceof(val::global("Uint8ClampedArray")),
                        "vqa encode: the pixels must be a Uint8Array or Uint8ClampedArray");
      attnlens::image::check_image_dims(w, h, c);
      attnlens::require(data["length"].as<double>() == static_cast<double>(w) * static_cast<double>(h) * static_cast<double>(c),
                        "vqa encode: the pixel buffer length must be width*height*channels");
      const std::vector<std::uint8_t> px = emscripten::convertJSArrayToNumberVector<std::uint8_t>(data);
      return js_copy(vqa_->encode(px.data(), px.size(), w, h, c).data);
    });
  }
  val answer_grid(const val& grid, double side, const std::string& question, const std::string& params_json) const {
    return guarded([&] {
      attnlens::require(grid.instanceof(val::global("Float32Array")), "vqa answerGrid: the grid must be a Float32Array");
      const std::size_t g = js_dimension(side, "grid side");
      const double len = grid["length"].as<double>();
      attnlens::require(g > 0 && len > 0 && static_cast<std::size_t>(len) % (g * g) == 0,
                        "vqa answerGrid: the grid length must be a positive multiple of side * side");
      api::Tensor t({g, g, static_cast<std::size_t>(len) / (g * g)}, emscripten::convertJSArrayToNumberVector<float>(grid));
      return result_to_js(vqa_->answer_grid(t, question, api::vqa_params(params_json)));
    });
  }
  val answer_list() const {
    return guarded([&] { return strings(vqa_->answer_list()); });
  }
  val vocabulary() const {
    return guarded([&] { return strings(vqa_->vocabulary()); });
  }
  double max_question_words() const { return static_cast<double>(vqa_->max_question_words()); }
  std::string config_json() const { return vqa_->config_json(); }

 private:
  std::unique_ptr<api::VisualQA> vqa_;
};

// fromBundles(configText, weights, files: {[name]: string | Uint8Array}, encoderConfigText, encoderWeights, name)
VisualQABinding* from_bundles(const std::string& config_text, const std::string& weights, const val& files,
                              const std::string& encoder_config_text, const std::string& encoder_weights,
                              const std::string& name) {
  return guarded([&] {
    const std::map<std::string, std::string> file_map = js_bundle_files(files, "VisualQA.fromBundles");
    auto m = api::VisualQA::from_memory(config_text, js_bytes(weights), file_map, encoder_config_text,
                                        js_bytes(encoder_weights), js_bundle_name(name));
    return new VisualQABinding(std::move(m));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_vqa) {
  emscripten::class_<VisualQABinding>("VisualQA")
      .class_function("fromBundles", &from_bundles, emscripten::allow_raw_pointers())
      .function("answer", &VisualQABinding::answer)
      .function("encode", &VisualQABinding::encode)
      .function("answerGrid", &VisualQABinding::answer_grid)
      .function("answerList", &VisualQABinding::answer_list)
      .function("vocabulary", &VisualQABinding::vocabulary)
      .function("maxQuestionWords", &VisualQABinding::max_question_words)
      .function("configJson", &VisualQABinding::config_json);
}
