// Embind bindings of api::Captioner (src/api/captioning.h); wasm/pipelines/captioning.js wraps them as the
// 'image-to-text' pipeline. Thin: bytes in, plain objects out (results copied out of the heap), every C++
// exception turned into a JS Error by guarded().
//
// Pixels stay in JS: caption() reads the image through api::Captioner::caption_rows, copying only the ≤ 2s rows
// the s×s resize needs (s = the bundle's input size) (one row at a time, into one reused heap buffer). An 8000×8000 RGBA ImageData (256 MB
// in JS) therefore costs the WASM heap one row (32 KB), never a copy of the image.
#include "bindings_common.h"

using namespace attnlens::wasm_bind;  // also val and api

namespace {

class CaptionerBinding : public ModelBinding<api::Captioner> {
 public:
  using ModelBinding::ModelBinding;

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
      const JsPixels px = js_pixels(data, width, height, channels, "encode");
      const std::vector<std::uint8_t> bytes = emscripten::convertJSArrayToNumberVector<std::uint8_t>(data);
      const api::Tensor g = model_->encode(bytes.data(), bytes.size(), px.width, px.height, px.channels);
      return js_copy(g.data);
    });
  }
  val caption_grid(const val& grid, double grid_h, double grid_w, const std::string& params_json) const {
    return guarded([&] {
      const std::size_t gh = js_dimension(grid_h, "grid height"), gw = js_dimension(grid_w, "grid width");
      // Channels follow from the length (1280 for flickr8k-mobilenet, 1285 for shapes: + mean colour + position).
      const api::Tensor t = js_grid(grid, gh, gw, "captionGrid");
      return to_js(model_->caption_grid(t, api::caption_params(params_json)));
    });
  }
  double vocab_size() const { return static_cast<double>(model_->vocab_size()); }
  std::string config_json() const { return model_->config_json(); }

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
        const JsPixels px = js_pixels(data.back(), im["width"].as<double>(), im["height"].as<double>(),
                                      im["channels"].as<double>(), what);
        rows[i].resize(px.stride);
        list[i] = {js_row_reader(data.back(), px.stride, rows[i]), px.width, px.height, px.channels};
      }
      const auto results = model_->caption_many(list, api::caption_params(params_json));
      return to_js_list(results);
    });
  }

 private:
  // caption == nullptr: search (caption_rows); else teacher forcing of *caption (attend_rows).
  val run(const val& data, double width, double height, double channels, const std::string& params_json,
          const std::string* caption, const std::string& what) const {
    const JsPixels px = js_pixels(data, width, height, channels, what);
    const api::CaptionParams params = caption ? api::attend_params(params_json) : api::caption_params(params_json);
    std::vector<std::uint8_t> row(px.stride);
    const auto read_row = js_row_reader(data, px.stride, row);
    const std::size_t w = px.width, h = px.height, c = px.channels;
    return to_js(caption ? model_->attend_rows(read_row, w, h, *caption, params, c)
                                : model_->caption_rows(read_row, w, h, params, c));
  }

 public:
  static constexpr const char* kJsName = "Captioner";  // errors name it, bind_class registers it
};

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_captioning) {
  using B = CaptionerBinding;
  bind_class<B>("fromBundles", &from_two_bundles<B, api::Captioner>, "caption", &B::caption, "captionMany",
                &B::caption_many, "attend", &B::attend, "encode", &B::encode, "captionGrid", &B::caption_grid,
                "vocabSize", &B::vocab_size, "configJson", &B::config_json);
}
