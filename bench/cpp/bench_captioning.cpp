// Captioning benchmark: images per second of api::Captioner, the encoder and the decoder separately, single-threaded
// — natively and, compiled with em++, under Node (node bench_captioning.js). JSON lines:
//   {"bench":"captioning","part":"encoder","model":…,"images":4,"images_per_s":…,"images_per_s_best":…,
//    "ms_per_image":…,"gflops":…,"backend":"avx2+fma","reps":5}
//   part "encoder": RGBA pixels → preprocessing (composite, resize to 224×224, normalise) → MobileNetV2 grid
//   part "decoder": grid → caption with its attention maps (one row per "beams" setting: 1 = greedy, 3, 5)
// Inputs: the four committed ImageNet sanity images (tests/goldens/captioning/sanity/*.ppm, 224×224), as RGBA.
// Method: one warm-up pass, then `reps` timed passes over all images; the median pass is the headline number, the
// fastest beside it (on a shared, loaded machine the closer estimate of the uncontended speed).
//
// Options (paths relative to the working directory; bench/run.mjs runs from the repo root):
//   --model DIR      captioning bundle (default models/flickr8k-mobilenet; when it is missing, the tiny test
//                    decoder tests/goldens/captioning/tiny-sat is timed and "model" says so)
//   --encoder DIR    encoder bundle (default: the one the bundle's config names, next to it; for the tiny decoder
//                    models/mobilenet-v2-imagenet)
//   --reps N         timed passes (default 5)
//   --backend NAME   kernels' SIMD backend (auto, sse2, avx2+fma)
//   --threads N      engine threads (kernels/parallel.h; default 1)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.h"
#include "image/pnm.h"
#include "kernels/kernels.h"

namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw attnlens::Error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Image {
  std::vector<std::uint8_t> rgba;
  std::size_t width = 0, height = 0;
};

template <typename Fn>
std::vector<double> time_passes(int reps, Fn&& pass) {
  pass();  // warm-up
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    pass();
    secs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  return secs;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = "models/flickr8k-mobilenet", encoder;
  int reps = 5;
  std::string backend;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_captioning: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--model") model = value();
    else if (a == "--encoder") encoder = value();
    else if (a == "--reps") reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--backend") backend = value();
    else if (a == "--threads") threads = std::max(1, std::atoi(value().c_str()));
    else {
      std::fprintf(stderr, "bench_captioning: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  try {
    if (!backend.empty()) attnlens::kernels::select_simd_backend(backend.c_str());
    threads = static_cast<int>(attnlens::api::set_threads(static_cast<std::size_t>(threads)));
    std::string model_name = model;
    if (!exists(model + "/config.json")) {
      model = "tests/goldens/captioning/tiny-sat";
      model_name = "tiny-sat (random test decoder; " + model_name + " not exported)";
      if (encoder.empty()) encoder = "models/mobilenet-v2-imagenet";
    }
    const auto t_load = Clock::now();
    const auto cap = attnlens::api::Captioner::load(model, encoder);
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_load).count();

    std::vector<Image> images;
    for (const char* name : {"cat", "hot_dog", "owl", "parrot"}) {
      const auto img = attnlens::image::decode_pnm(
          read_file(std::string("tests/goldens/captioning/sanity/") + name + ".ppm"), name);
      Image im;
      im.width = img.width;
      im.height = img.height;
      for (std::size_t i = 0; i < img.pixels.size(); i += 3)
        im.rgba.insert(im.rgba.end(), {img.pixels[i], img.pixels[i + 1], img.pixels[i + 2], 255});
      images.push_back(std::move(im));
    }
    const double n = static_cast<double>(images.size());
    const char* simd = attnlens::kernels::simd_backend();
    auto emit = [&](const std::string& part, int beams, const std::vector<double>& secs, double extra_tokens) {
      const double median = secs[secs.size() / 2], best = secs.front();
      nlohmann::json j = {{"bench", "captioning"},
                          {"part", part},
                          {"model", model_name},
                          {"images", images.size()},
                          {"images_per_s", n / median},
                          {"images_per_s_best", n / best},
                          {"ms_per_image", 1000.0 * median / n},
                          {"load_ms", load_ms},
                          {"backend", simd},
                          {"threads", threads},
                          {"reps", reps}};
      if (beams > 0) {
        j["beams"] = beams;
        j["steps_per_image"] = extra_tokens / n;
      } else {
        // MobileNetV2 1.0/224: ~300 M multiply-adds per image (2 FLOPs each)
        j["gflops"] = 2 * 300.8e6 * n / median / 1e9;
      }
      std::printf("%s\n", j.dump().c_str());
      std::fflush(stdout);
    };

    std::vector<attnlens::api::Tensor> grids(images.size());
    const auto enc_secs = time_passes(reps, [&] {
      for (std::size_t i = 0; i < images.size(); ++i)
        grids[i] = cap->encode(images[i].rgba.data(), images[i].rgba.size(), images[i].width, images[i].height);
    });
    emit("encoder", 0, enc_secs, 0);
    for (int beams : {1, 3, 5}) {  // 5: flickr8k-mobilenet's default decoding
      attnlens::api::CaptionParams p;
      p.num_beams = beams;
      double steps = 0;
      const auto dec_secs = time_passes(reps, [&] {
        steps = 0;
        for (const auto& g : grids) steps += static_cast<double>(cap->caption_grid(g, p).tokens.size());
      });
      emit("decoder", beams, dec_secs, steps);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_captioning: %s\n", e.what());
    return 1;
  }
  return 0;
}
