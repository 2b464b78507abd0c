// Embind bindings of api::Captioner (src/api/captioning.h); wasm/pipelines/captioning.js wraps them as the
// 'image-to-text' pipeline. Thin: bytes in, plain objects out (results copied out of the heap), every C++
// exception turned into a JS Error by guarded().
//
// Pixels stay in JS: caption() reads the image through api::Captioner::caption_rows, copying only the ≤ 2s rows
// the s×s resize needs (s = the bundle's input size) (one row at a time, into one reused heap buffer). An 8000×8000 RGBA ImageData (256 MB
// in JS) therefore costs the WASM heap one row (32 KB), never a copy of the image.
#include <cmath>

#include "bindings_common.h"
#include "image/preprocess.h"

using emscripten::val;
namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

val result_to_js(const api::CaptionResult& r) {
  val out = val::object();
  out.set("text", r.text);
  out.set("tokens", string_array(r.tokens));
  out.set("tokenIds", js_copy(r.token_ids));
  out.set("finished", r.finished);
  out.set("score", r.score);
  out.set("numBeams", r.num_beams);
  out.set("betas", js_copy(r.betas));
  if (r.num_beams == 0) {  // attend(): forced caption
    out.set("tokenLogprobs", js_copy(r.token_logprobs));
    val unknown = val::array();
    for (const auto& u : r.unknown_words) {
      val w = val::object();
      w.set("word", u.word);
      w.set("position", static_cast<double>(u.position));
      unknown.call<void>("push", w);
    }
    out.set("unknownWords", unknown);
  }
  out.set("attentions", js_maps(r.attentions));
  return out;
}

class CaptionerBinding {
 public:
  explicit CaptionerBinding(std::unique_ptr<api::Captioner> c) : cap_(std::move(c)) {}

  // data: Uint8Array | Uint8ClampedArray of exactly width·height·channels bytes (channels 4, 3 or 1).
  val caption(const val& data, double width, double height, double channels, const std::string& params_json) const {
    return guarded([&] { return run(data, width, height, channels, params_json, nullptr, "caption"); });
  }
  // Forced caption (api::Captioner::attend_rows): the same pixels, and the caption to score.
  val attend(const val& data, double width, double height, double channels, const std::string& caption,
             const std::string& params_json) const {
    return guarded([&] { return run(data, width, height, channels, params_json, &caption, "attend"); });
  }

  // The two halves, for benchmarks: pixels → grid Float32Array [7·7·1280]; grid → caption.
  val encode(const val& data, double width, double height, double channels) const {
    return guarded([&] {
      const Pixels px = check_pixels(data, width, height, channels, "encode");
      const std::vector<std::uint8_t> bytes = emscripten::convertJSArrayToNumberVector<std::uint8_t>(data);
      const api::Tensor g = cap_->encode(bytes.data(), bytes.size(), px.width, px.height, px.channels);
      return js_copy(g.data);
    });
  }
  val caption_grid(const val& grid, double grid_h, double grid_w, const std::string& params_json) const {
    return guarded([&] {
      attnlens::require(grid.instanceof(val::global("Float32Array")), "captionGrid: the grid must be a Float32Array");
      const std::size_t gh = js_dimension(grid_h, "grid height"), gw = js_dimension(grid_w, "grid width");
      const double len = grid["length"].as<double>();
      // Channels follow from the length (1280 for flickr8k-mobilenet, 1285 for shapes: + mean colour + position).
      attnlens::require(gh > 0 && gw > 0 && len > 0 && std::fmod(len, static_cast<double>(gh * gw)) == 0.0,
                        "captionGrid: the grid length must be a positive multiple of grid height * grid width");
      api::Tensor t({gh, gw, static_cast<std::size_t>(len) / (gh * gw)},
                    emscripten::convertJSArrayToNumberVector<float>(grid));
      return result_to_js(cap_->caption_grid(t, api::caption_params(params_json)));
    });
  }
  double vocab_size() const { return static_cast<double>(cap_->vocab_size()); }
  std::string config_json() const { return cap_->config_json(); }

  // images: a JS array of {data, width, height, channels} (checked like caption()'s) → an array of results
  // (api::Captioner::caption_many: the images shared among the engine's threads in the threaded module).
  val caption_many(const val& images, const std::string& params_json) const {
    return guarded([&] {
      const std::size_t n = js_dimension(images["length"].as<double>(), "number of images");
      std::vector<val> data;  // kept alive (and never reallocated) while the row readers refer to them
      data.reserve(n);
      std::vector<std::vector<std::uint8_t>> rows(n);
      std::vector<api::Captioner::ImageRows> list(n);
      for (std::size_t i = 0; i < n; ++i) {
        const val im = images[i];
        const std::string what = "captionMany: image " + std::to_string(i);
        data.push_back(im["data"]);
        const Pixels px = check_pixels(data.back(), im["width"].as<double>(), im["height"].as<double>(),
                                       im["channels"].as<double>(), what);
        rows[i].resize(px.stride);
        list[i] = {row_reader(data.back(), px.stride, rows[i]), px.width, px.height, px.channels};
      }
      const auto results = cap_->caption_many(list, api::caption_params(params_json));
      val out = val::array();
      for (const auto& r : results) out.call<void>("push", result_to_js(r));
      return out;
    });
  }

 private:
  struct Pixels {
    std::size_t width, height, channels, stride;
  };
  // The checks of every call that takes pixels from JS: a byte array of exactly width·height·channels bytes.
  static Pixels check_pixels(const val& data, double width, double height, double channels, const std::string& what) {
    const std::size_t w = js_dimension(width, "width"), h = js_dimension(height, "height");
    const std::size_t c = js_dimension(channels, "channels");
    attnlens::require(data.instanceof(val::global("Uint8Array")) || data.instanceof(val::global("Uint8ClampedArray")),
                      what + ": the pixels must be a Uint8Array or Uint8ClampedArray");
    attnlens::image::check_image_dims(w, h, c);
    const double length = data["length"].as<double>();
    const double needed = static_cast<double>(w) * static_cast<double>(h) * static_cast<double>(c);
    attnlens::require(length == needed, what + ": the pixel buffer holds " + std::to_string(static_cast<long long>(length)) +
                                            " bytes but a " + std::to_string(w) + "x" + std::to_string(h) +
                                            " image with " + std::to_string(c) + " channels needs exactly " +
                                            std::to_string(static_cast<long long>(needed)));
    return {w, h, c, w * c};
  }
  // Row y of a JS pixel array, copied into `row` (stride bytes): only the rows the resize needs cross into the heap.
  static std::function<const std::uint8_t*(std::size_t)> row_reader(const val& data, std::size_t stride,
                                                                    std::vector<std::uint8_t>& row) {
    return [&data, stride, &row](std::size_t y) {
      const val src = data.call<val>("subarray", static_cast<double>(y * stride), static_cast<double>((y + 1) * stride));
      // the view is made right before the copy: nothing can grow the heap in between
      val(emscripten::typed_memory_view(stride, row.data())).call<void>("set", src);
      return static_cast<const std::uint8_t*>(row.data());
    };
  }

  // caption == nullptr: search (caption_rows); else teacher forcing of *caption (attend_rows).
  val run(const val& data, double width, double height, double channels, const std::string& params_json,
          const std::string* caption, const std::string& what) const {
    const Pixels px = check_pixels(data, width, height, channels, what);
    const api::CaptionParams params = api::caption_params(params_json);
    std::vector<std::uint8_t> row(px.stride);
    const auto read_row = row_reader(data, px.stride, row);
    const std::size_t w = px.width, h = px.height, c = px.channels;
    return result_to_js(caption ? cap_->attend_rows(read_row, w, h, *caption, params, c)
                                : cap_->caption_rows(read_row, w, h, params, c));
  }

  std::unique_ptr<api::Captioner> cap_;
};

// fromBundles(configText, weights, files: {[name]: string | Uint8Array}, encoderConfigText, encoderWeights, name)
CaptionerBinding* from_bundles(const std::string& config_text, const std::string& weights, const val& files,
                               const std::string& encoder_config_text, const std::string& encoder_weights,
                               const std::string& name) {
  return guarded([&] {
    const std::map<std::string, std::string> file_map = js_bundle_files(files, "Captioner.fromBundles");
    auto cap = api::Captioner::from_memory(config_text, js_bytes(weights), file_map, encoder_config_text,
                                           js_bytes(encoder_weights), js_bundle_name(name));
    return new CaptionerBinding(std::move(cap));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_captioning) {
  emscripten::class_<CaptionerBinding>("Captioner")
      .class_function("fromBundles", &from_bundles, emscripten::allow_raw_pointers())
      .function("caption", &CaptionerBinding::caption)
      .function("captionMany", &CaptionerBinding::caption_many)
      .function("attend", &CaptionerBinding::attend)
      .function("encode", &CaptionerBinding::encode)
      .function("captionGrid", &CaptionerBinding::caption_grid)
      .function("vocabSize", &CaptionerBinding::vocab_size)
      .function("configJson", &CaptionerBinding::config_json);
}
