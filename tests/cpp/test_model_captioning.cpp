// Captioning engine against PyTorch (tests/goldens/captioning/make_captioning_goldens.py, models/training/captioning):
//   - preprocessing (alpha over white, half-pixel bilinear resize, x/127.5 − 1) on odd sizes, 1×1 and a tall image;
//   - MobileNetV2 on the four ImageNet sanity images: logits vs PyTorch and the expected top-5 (expected_top5.json);
//   - the Show-Attend-Tell decoder (a seeded random tiny one over the real encoder): greedy logits, attention and
//     gates per step, greedy and beam (3) tokens and attention;
//   - the trained bundles' goldens, and their forced-caption goldens (Captioner::attend vs sat.forced_decode);
//   - bad input: empty, 1×1, 8000×8000, grey, fully transparent, short buffers, broken bundles; for attend() empty,
//     200-word and out-of-vocabulary captions and an all-black image.
// Tolerance: abs ≤ 1e-4 or rel ≤ 1e-3 (docs/DESIGN.md §12).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "api.h"
#include "image/pnm.h"
#include "image/preprocess.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "models/mobilenet_v2.h"
#include "models/show_attend_tell.h"
#include "text/words.h"
#include "test_support.h"

namespace {

using attnlens::Error;
using attnlens::first_non_finite;
namespace api = attnlens::api;
namespace io = attnlens::io;
namespace image = attnlens::image;
namespace models = attnlens::models;

const std::string kSource = ATTNLENS_SOURCE_DIR;
const std::string kGoldenDir = kSource + "/tests/goldens/captioning";
const std::string kEncoderDir = kSource + "/models/mobilenet-v2-imagenet";
const std::string kTinyDir = kGoldenDir + "/tiny-sat";

using attnlens::testing::read_file;

const io::SafeTensors& golden() {
  static const io::SafeTensors g = io::SafeTensors::load(kGoldenDir + "/golden.safetensors");
  return g;
}
const nlohmann::json& golden_json() {
  static const nlohmann::json j = nlohmann::json::parse(read_file(kGoldenDir + "/golden.json"));
  return j;
}
const models::MobileNetV2& encoder() {
  static const models::MobileNetV2 m = models::MobileNetV2::from_bundle(io::Bundle::load(kEncoderDir));
  return m;
}

// |a − e| ≤ 1e-4 or ≤ 1e-3·|e| for every element; reports the worst one.
void check_close(const std::string& what, const float* actual, std::size_t n_actual, const std::string& golden_name) {
  const std::vector<float> expected = golden().to_float(golden_name);
  REQUIRE_MESSAGE(n_actual == expected.size(), what << ": " << n_actual << " values, golden has " << expected.size());
  double worst = 0;
  std::size_t worst_i = 0;
  bool ok = true;
  for (std::size_t i = 0; i < n_actual; ++i) {
    const double d = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    if (d > worst) {
      worst = d;
      worst_i = i;
    }
    if (!(d <= 1e-4 || d <= 1e-3 * std::fabs(expected[i]))) ok = false;
  }
  CHECK_MESSAGE(ok, what << ": max |diff| " << worst << " at " << worst_i);
}

std::vector<std::uint8_t> golden_pixels(const std::string& name, std::size_t& h, std::size_t& w) {
  const io::TensorInfo& info = golden().info(name);
  REQUIRE(info.shape.size() == 3);
  REQUIRE(info.shape[2] == 4);
  h = info.shape[0];
  w = info.shape[1];
  std::vector<std::uint8_t> px;
  for (float v : golden().to_float(name)) px.push_back(static_cast<std::uint8_t>(v));
  return px;
}


}  // namespace

TEST_CASE("captioning: resize axis follows the half-pixel formula") {
  // in 4 → out 2: s = (d + 0.5)·2 − 0.5 = 0.5, 2.5
  const image::ResizeAxis a = image::resize_axis(4, 2);
  CHECK(a.i0 == std::vector<std::size_t>{0, 2});
  CHECK(a.i1 == std::vector<std::size_t>{1, 3});
  CHECK(a.w == std::vector<float>{0.5f, 0.5f});
  // upscale 2 → 4: s = (d + 0.5)/2 − 0.5 = −0.25 (→ 0), 0.25, 0.75, 1.25 (i0 = 1, i1 clamped to 1)
  const image::ResizeAxis b = image::resize_axis(2, 4);
  CHECK(b.i0 == std::vector<std::size_t>{0, 0, 0, 1});
  CHECK(b.i1 == std::vector<std::size_t>{1, 1, 1, 1});
  CHECK(b.w == std::vector<float>{0.0f, 0.25f, 0.75f, 0.25f});
  CHECK(image::rows_needed(8000, 224).size() <= 448);
  CHECK(image::rows_needed(1, 224) == std::vector<std::size_t>{0});
}

TEST_CASE("captioning: preprocessing composites over white and normalises") {
  // 1×1 RGBA (0, 0, 0, 0) → white (255) → 1.0 everywhere; (0, 128, 255, 255) → −1, 128/127.5 − 1, 1
  const std::uint8_t clear[4] = {0, 0, 0, 0};
  for (float v : image::preprocess(clear, 4, 1, 1, 4, 8)) CHECK(v == 1.0f);
  const std::uint8_t px[4] = {0, 128, 255, 255};
  const std::vector<float> x = image::preprocess(px, 4, 1, 1, 4, 4);
  CHECK(x[0] == -1.0f);
  CHECK(x[1] == 128.0f / 127.5f - 1.0f);
  CHECK(x[2] == 1.0f);
  // grey and RGB forms of the same picture give the same tensor as RGBA with alpha 255
  const std::uint8_t grey[6] = {0, 50, 100, 150, 200, 250};
  std::vector<std::uint8_t> rgba;
  for (std::uint8_t g : grey) rgba.insert(rgba.end(), {g, g, g, 255});
  CHECK(image::preprocess(grey, 6, 3, 2, 1, 5) == image::preprocess(rgba.data(), rgba.size(), 3, 2, 4, 5));
  // bad sizes
  CHECK_THROWS_AS(image::preprocess(nullptr, 0, 0, 0, 4), Error);
  CHECK_THROWS_WITH_AS(image::preprocess(px, 3, 1, 1, 4), doctest::Contains("needs exactly 4"), Error);
  CHECK_THROWS_AS(image::preprocess(px, 4, 1, 1, 2), Error);
  CHECK_THROWS_WITH_AS(image::check_image_dims(70000, 1, 4), doctest::Contains("too large"), Error);
}

TEST_CASE("captioning: MobileNetV2 classifies the four ImageNet sanity images like PyTorch") {
  const nlohmann::json& sanity = golden_json().at("sanity");
  REQUIRE(sanity.size() == 4);
  const models::MobileNetV2& enc = encoder();
  REQUIRE(enc.has_classifier());
  CHECK(enc.num_classes() == 1000);
  for (auto it = sanity.begin(); it != sanity.end(); ++it) {
    const std::string name = it.key();
    const nlohmann::json& meta = it.value();
    CAPTURE(name);
    const image::DecodedImage img = image::decode_pnm(read_file(kGoldenDir + "/" + meta.at("ppm").get<std::string>()),
                                                      name);
    REQUIRE(img.width == 224);
    REQUIRE(img.channels == 3);
    const std::vector<float> x = image::preprocess(img.pixels.data(), img.pixels.size(), img.width, img.height, 3);
    const std::vector<float> grid = enc.features(x.data(), 224);
    REQUIRE(grid.size() == 49 * 1280);
    const std::vector<float> logits = enc.classify(grid.data(), 49);
    check_close("sanity " + name + " logits", logits.data(), logits.size(), "sanity/" + name + "/imagenet_logits");
    std::vector<int> order(logits.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int a, int b) { return logits[a] > logits[b]; });
    order.resize(5);
    CHECK(order == meta.at("top5").get<std::vector<int>>());  // = expected_top5.json "torch_tf_same_padding_top5"
    CHECK(order[0] == meta.at("tflite_reference_top1").get<int>());  // and the TFLite reference's top-1
  }
}

TEST_CASE("captioning: int8 1×1 convolutions stay within their stated deviation and keep the labels") {
  // weight_precision int8: the pointwise convolutions run on int8 codes (the published codes where they fit ±127,
  // models/mobilenet_v2.h). Against the float32 encoder on the four sanity images: the same top-1 label (also
  // the TFLite reference's), the grid within 1.0 of float32 (ReLU6 values in [0, 6]) and on average within 0.02.
  const std::string config_text = read_file(kEncoderDir + "/config.json");
  nlohmann::json config = nlohmann::json::parse(config_text);
  config["weight_precision"] = "int8";
  const std::string weights = read_file(kEncoderDir + "/weights.safetensors");
  const io::Bundle bundle = io::Bundle::from_memory(
      config.dump(), std::vector<std::uint8_t>(weights.begin(), weights.end()), {}, "mobilenet-v2-imagenet");
  const models::MobileNetV2 int8 = models::MobileNetV2::from_bundle(bundle, "", bundle.weight_precision());
  const nlohmann::json& sanity = golden_json().at("sanity");
  double grid_max = 0, grid_sum = 0;
  std::size_t count = 0;
  for (auto it = sanity.begin(); it != sanity.end(); ++it) {
    CAPTURE(it.key());
    const image::DecodedImage img =
        image::decode_pnm(read_file(kGoldenDir + "/" + it.value().at("ppm").get<std::string>()), it.key());
    const std::vector<float> x = image::preprocess(img.pixels.data(), img.pixels.size(), img.width, img.height, 3);
    const std::vector<float> f32 = encoder().features(x.data(), 224), q = int8.features(x.data(), 224);
    REQUIRE(q.size() == f32.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
      const double d = std::fabs(static_cast<double>(q[i]) - f32[i]);
      grid_max = std::max(grid_max, d);
      grid_sum += d;
    }
    count += q.size();
    const std::vector<float> logits = int8.classify(q.data(), 49);
    const auto top1 = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    CHECK(top1 == it.value().at("tflite_reference_top1").get<int>());
  }
  const double grid_mean = grid_sum / static_cast<double>(count);
  MESSAGE("MobileNetV2 int8 1x1 convs against float32, 4 sanity images: grid max |d| " << grid_max << ", mean |d| "
                                                                                      << grid_mean);
  CHECK(grid_max <= 1.0);
  CHECK(grid_mean <= 0.02);
}

// The encoder bundle as an image classifier with one config.json value replaced (key: a path such as
// {"image", "input_size"}).
std::unique_ptr<api::ImageClassifier> classifier_with(const std::vector<std::string>& key,
                                                      const nlohmann::json& value) {
  nlohmann::json cfg = nlohmann::json::parse(read_file(kEncoderDir + "/config.json"));
  nlohmann::json* at = &cfg;
  for (const std::string& k : key) at = &(*at)[k];
  *at = value;
  const std::string w = read_file(kEncoderDir + "/weights.safetensors");
  return api::ImageClassifier::from_memory(cfg.dump(), std::vector<std::uint8_t>(w.begin(), w.end()), {}, "mnv2");
}

TEST_CASE("captioning: the encoder bundle as an ImageNet classifier (api::ImageClassifier)") {
  const auto clf = api::ImageClassifier::load(kEncoderDir);
  CHECK(clf->num_classes() == 1000);
  const image::DecodedImage img = image::decode_pnm(read_file(kGoldenDir + "/sanity/cat.ppm"), "cat");
  const auto top = clf->classify(img.pixels.data(), img.pixels.size(), img.width, img.height, 3, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].index == 285);
  CHECK(top[0].label == "Egyptian cat");
  CHECK(top[0].probability > 0.9f);  // expected_top5.json: 0.9379 (PyTorch), 0.9451 (TFLite)
  CHECK(top[0].probability >= top[1].probability);
  CHECK_THROWS_WITH_AS(api::ImageClassifier::load(kTinyDir), doctest::Contains("not a mobilenet-v2"), Error);

  // config.json image.input_size is the classifier's too (the logits pool any grid): a 288² copy classifies the
  // resized photo (different numbers, same class), and a side that is not a multiple of 32 is refused by name.
  auto with_size = [](const nlohmann::json& size) { return classifier_with({"image", "input_size"}, size); };
  const auto top288 =
      with_size({288, 288})->classify(img.pixels.data(), img.pixels.size(), img.width, img.height, 1, 3);
  REQUIRE(top288.size() == 1);
  CHECK(top288[0].index == 285);
  CHECK(top288[0].logit != top[0].logit);
  CHECK_THROWS_WITH_AS(with_size({100, 100}), doctest::Contains("image.input_size"), Error);
}

TEST_CASE("captioning: pixels to caption matches PyTorch (tiny random decoder over the real encoder)") {
  const io::Bundle tiny = io::Bundle::load(kTinyDir);
  const models::ShowAttendTell dec = models::ShowAttendTell::from_bundle(tiny);
  tiny.check_all_tensors_used();
  const auto captioner = api::Captioner::load(kTinyDir, kEncoderDir);
  const nlohmann::json& cases = golden_json().at("cases");
  REQUIRE(cases.size() >= 3);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const nlohmann::json& c = cases[ci];
    const std::string p = "case" + std::to_string(ci) + "/";
    const std::string name = c.at("name").get<std::string>();
    CAPTURE(name);
    std::size_t h = 0, w = 0;
    const std::vector<std::uint8_t> px = golden_pixels(p + "pixels", h, w);
    const std::vector<float> x = image::preprocess(px.data(), px.size(), w, h, 4);
    std::vector<float> rows;
    for (int r : c.at("input_rows").get<std::vector<int>>())
      rows.insert(rows.end(), x.begin() + r * 224 * 3, x.begin() + (r + 1) * 224 * 3);
    check_close(name + " input rows", rows.data(), rows.size(), p + "input_rows");
    const std::vector<float> grid = encoder().features(x.data(), 224);
    std::vector<float> cells;
    for (int cell : c.at("grid_cells").get<std::vector<int>>())
      cells.insert(cells.end(), grid.begin() + cell * 1280, grid.begin() + (cell + 1) * 1280);
    check_close(name + " grid cells", cells.data(), cells.size(), p + "grid_cells");
    const std::vector<float> logits_in = encoder().classify(grid.data(), 49);
    check_close(name + " imagenet logits", logits_in.data(), logits_in.size(), p + "imagenet_logits");

    const models::ShowAttendTell::Encoded e = dec.encode(grid.data(), 49);
    const models::SatDecodeResult g = dec.greedy(e);
    CHECK(g.tokens == c.at("greedy").at("token_ids").get<std::vector<int>>());
    CHECK(g.steps == c.at("greedy").at("steps").get<std::size_t>());
    check_close(name + " greedy logits", g.logits.data(), g.logits.size(), p + "greedy/logits");
    check_close(name + " greedy attention", g.alphas.data(), g.alphas.size(), p + "greedy/attention");
    check_close(name + " greedy beta", g.betas.data(), g.betas.size(), p + "greedy/beta");

    const models::SatDecodeResult b = dec.beam(e, 3);
    CHECK(b.tokens == c.at("beam").at("token_ids").get<std::vector<int>>());
    CHECK(b.steps == c.at("beam").at("steps").get<std::size_t>());
    CHECK(std::fabs(b.score - c.at("beam").at("score").get<double>()) <= 1e-3);
    check_close(name + " beam attention", b.alphas.data(), b.alphas.size(), p + "beam/attention");

    // the same through the API, from RGBA pixels
    api::CaptionParams greedy_params;
    greedy_params.num_beams = 1;
    const api::CaptionResult rg = captioner->caption(px.data(), px.size(), w, h, greedy_params);
    CHECK(rg.text == c.at("greedy").at("text").get<std::string>());
    REQUIRE(rg.attentions.at(0).dims == std::vector<std::size_t>{g.steps, 7, 7});
    CHECK(rg.tokens.size() == g.steps);
    check_close(name + " api greedy attention", rg.attentions.at(0).data.data(), rg.attentions.at(0).data.size(), p + "greedy/attention");
    const api::CaptionResult rb = captioner->caption(px.data(), px.size(), w, h);  // bundle default: 3 beams
    CHECK(rb.num_beams == 3);
    CHECK(rb.text == c.at("beam").at("text").get<std::string>());
    check_close(name + " api beam attention", rb.attentions.at(0).data.data(), rb.attentions.at(0).data.size(), p + "beam/attention");
  }
}

TEST_CASE("captioning: bad images give a caption or a clear Error") {
  const auto cap = api::Captioner::load(kTinyDir, kEncoderDir);
  api::CaptionParams prm;
  prm.num_beams = 1;
  prm.max_new_tokens = 4;
  // 0×0 and short buffers
  CHECK_THROWS_WITH_AS(cap->caption(nullptr, 0, 0, 0, prm), doctest::Contains("empty"), Error);
  std::vector<std::uint8_t> buf(10 * 10 * 4 - 1, 128);
  CHECK_THROWS_WITH_AS(cap->caption(buf.data(), buf.size(), 10, 10, prm), doctest::Contains("needs exactly 400"),
                       Error);
  CHECK_THROWS_AS(cap->caption(buf.data(), buf.size(), 10, 10, prm, 2), Error);
  // 1×1
  const std::uint8_t one[4] = {10, 200, 30, 255};
  const api::CaptionResult r1 = cap->caption(one, 4, 1, 1, prm);
  CHECK(!r1.tokens.empty());
  CHECK(r1.attentions.at(0).dims[0] == r1.tokens.size());
  // fully transparent == white, whatever the colour under alpha 0
  std::vector<std::uint8_t> clear(16 * 9 * 4, 0), white(16 * 9 * 4, 255);
  for (std::size_t i = 0; i < clear.size(); i += 4) clear[i] = 77;
  CHECK(cap->caption(clear.data(), clear.size(), 16, 9, prm).token_ids ==
        cap->caption(white.data(), white.size(), 16, 9, prm).token_ids);
  // grey (1 channel) == the same picture as RGBA
  std::vector<std::uint8_t> grey(30 * 20), grey_rgba;
  for (std::size_t i = 0; i < grey.size(); ++i) grey[i] = static_cast<std::uint8_t>(i * 7);
  for (std::uint8_t g : grey) grey_rgba.insert(grey_rgba.end(), {g, g, g, 255});
  const api::CaptionResult rg1 = cap->caption(grey.data(), grey.size(), 30, 20, prm, 1);
  const api::CaptionResult rg4 = cap->caption(grey_rgba.data(), grey_rgba.size(), 30, 20, prm);
  CHECK(rg1.token_ids == rg4.token_ids);
  CHECK(rg1.attentions.at(0).data == rg4.attentions.at(0).data);
  // 8000×8000 through the row interface: only ≤ 448 rows are read, no 256 MB buffer is needed
  std::vector<std::uint8_t> row(8000 * 4);
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = static_cast<std::uint8_t>((i * 13) % 256);
  std::size_t rows_read = 0;
  const api::CaptionResult big = cap->caption_rows(
      [&](std::size_t y) {
        ++rows_read;
        REQUIRE(y < 8000);
        return row.data();
      },
      8000, 8000, prm);
  CHECK(rows_read <= 448);
  CHECK(!big.tokens.empty());
  CHECK_THROWS_WITH_AS(cap->caption_rows([&](std::size_t) { return row.data(); }, 70000, 10, prm),
                       doctest::Contains("too large"), Error);
  // options
  CHECK_THROWS_WITH_AS(api::caption_params("{\"num_beam\": 2}"), doctest::Contains("caption options: unknown param 'num_beam'"), Error);
  CHECK(api::caption_params("{\"num_beams\": 2, \"max_new_tokens\": 5}").num_beams == 2);
  CHECK(!api::caption_params("{}").allow_unk);
  CHECK(api::caption_params("{\"allow_unk\": true}").allow_unk);
  CHECK_THROWS_WITH_AS(api::caption_params("{\"allow_unk\": 1}"), doctest::Contains("param 'allow_unk' must be true or false"),
                       Error);
  prm.output_attentions = false;
  CHECK(cap->caption(one, 4, 1, 1, prm).attentions.empty());
  prm.max_new_tokens = 2;
  CHECK(cap->caption(one, 4, 1, 1, prm).tokens.size() <= 2);
}

TEST_CASE("captioning: broken bundles are reported") {
  // the encoder bundle is found next to the captioning bundle by name; here it is not there
  CHECK_THROWS_WITH_AS(api::Captioner::load(kTinyDir), doctest::Contains("mobilenet-v2-imagenet"), Error);
  const std::string no_encoder = "captioning bundle " + kTinyDir + ": cannot load its encoder bundle";
  CHECK_THROWS_WITH_AS(api::Captioner::load(kTinyDir), doctest::Contains(no_encoder.c_str()), Error);
  // an encoder where the decoder should be, and vice versa
  CHECK_THROWS_WITH_AS(api::Captioner::load(kEncoderDir, kEncoderDir), doctest::Contains("not an image captioner"),
                       Error);
  CHECK_THROWS_AS(api::Captioner::load(kTinyDir, kTinyDir), Error);
  // the grid's extra channels (encoder.cell_colour / cell_position): unknown values and a feat_dim that does not
  // count them are reported
  {
    const std::string enc_cfg = read_file(kEncoderDir + "/config.json");
    const std::string enc_w = read_file(kEncoderDir + "/weights.safetensors");
    const std::string w = read_file(kTinyDir + "/weights.safetensors");
    const std::map<std::string, std::string> files = {{"vocab.txt", read_file(kTinyDir + "/vocab.txt")}};
    auto load_with = [&](const std::string& key, const std::string& value) {
      nlohmann::json cfg = nlohmann::json::parse(read_file(kTinyDir + "/config.json"));
      cfg["encoder"][key] = value;
      return api::Captioner::from_memory(cfg.dump(), std::vector<std::uint8_t>(w.begin(), w.end()), files,
                                         enc_cfg, std::vector<std::uint8_t>(enc_w.begin(), enc_w.end()), "tiny");
    };
    CHECK_THROWS_WITH_AS(load_with("cell_colour", "mean_hsv"), doctest::Contains("cell_colour must be"), Error);
    CHECK_THROWS_WITH_AS(load_with("cell_position", "polar"), doctest::Contains("cell_position must be"), Error);
    CHECK_THROWS_WITH_AS(load_with("cell_colour", "mean_rgb"), doctest::Contains("feat_dim must be 1283"), Error);
    CHECK_THROWS_WITH_AS(load_with("cell_position", "xy"), doctest::Contains("feat_dim must be 1282"), Error);
    nlohmann::json cfg = nlohmann::json::parse(read_file(kTinyDir + "/config.json"));
    cfg["decoding"]["length_norm"] = -1;
    CHECK_THROWS_WITH_AS(api::Captioner::from_memory(cfg.dump(), std::vector<std::uint8_t>(w.begin(), w.end()), files,
                                                     enc_cfg, std::vector<std::uint8_t>(enc_w.begin(), enc_w.end())),
                         doctest::Contains("length_norm"), Error);
  }
  // image.input_size: the side the photo is resized to, a multiple of 32 (the grid is s/32 cells a side)
  {
    const std::string enc_cfg = read_file(kEncoderDir + "/config.json");
    const std::string enc_w = read_file(kEncoderDir + "/weights.safetensors");
    const std::string w = read_file(kTinyDir + "/weights.safetensors");
    const std::map<std::string, std::string> files = {{"vocab.txt", read_file(kTinyDir + "/vocab.txt")}};
    auto load_size = [&](const nlohmann::json& size) {
      nlohmann::json cfg = nlohmann::json::parse(read_file(kTinyDir + "/config.json"));
      cfg["image"]["input_size"] = size;
      return api::Captioner::from_memory(cfg.dump(), std::vector<std::uint8_t>(w.begin(), w.end()), files,
                                         enc_cfg, std::vector<std::uint8_t>(enc_w.begin(), enc_w.end()), "tiny");
    };
    for (const char* bad : {"[225, 225]", "[224, 256]", "[544, 544]", "[0, 0]", "[224]", "[\"224\", 224]", "[224.5, 224.5]"})
      CHECK_THROWS_WITH_AS(load_size(nlohmann::json::parse(bad)),
                           doctest::Contains("key \"image.input_size\": expected [s, s] with s a multiple of 32"), Error);
    CHECK_THROWS_WITH_AS(load_size("224"), doctest::Contains("image.input_size"), Error);
    const auto big = load_size(nlohmann::json::parse("[288, 288]"));
    const std::uint8_t one[4] = {10, 200, 30, 255};
    const api::Tensor g = big->encode(one, 4, 1, 1, 4);
    CHECK(g.dims == std::vector<std::size_t>{9, 9, 1280});
    api::CaptionParams prm;
    prm.num_beams = 2;
    prm.max_new_tokens = 3;
    const api::CaptionResult r = big->caption(one, 4, 1, 1, prm);
    REQUIRE(!r.attentions.empty());
    CHECK(r.attentions.at(0).dims == std::vector<std::size_t>{r.tokens.size(), 9, 9});
    // the same grid through caption_grid, and the default size without the key
    CHECK(big->caption_grid(g, prm).token_ids == r.token_ids);
    CHECK(load_size(nlohmann::json::parse("[224, 224]"))->encode(one, 4, 1, 1, 4).dims[0] == 7);
  }
  // the PNM reader
  CHECK_THROWS_WITH_AS(image::decode_pnm("\x89PNG....", "x.png"), doctest::Contains("P5/P6"), Error);
  CHECK_THROWS_WITH_AS(image::decode_pnm("P6\n4 4\n255\nabc", "short.ppm"), doctest::Contains("truncated"), Error);
  CHECK_THROWS_AS(image::decode_pnm("P6\n0 4\n255\n", "empty.ppm"), Error);
  const image::DecodedImage ok = image::decode_pnm("P5\n# c\n2 1\n255\n\x01\x02", "ok.pgm");
  CHECK(ok.width == 2);
  CHECK(ok.pixels == std::vector<std::uint8_t>{1, 2});
}

namespace {

// Parity of a trained captioning bundle with the goldens its export wrote (models/training/captioning/export.py:
// models/<name>/golden.json + golden.safetensors). Skipped while the bundle is not exported yet.
void check_bundle_goldens(const std::string& dir, const std::string& encoder_dir = "") {
  const std::string golden_json_path = dir + "/golden.json";
  if (!std::ifstream(golden_json_path).good()) {
    MESSAGE("no goldens in " << dir << " (bundle not exported yet): skipped");
    return;
  }
  const nlohmann::json meta = nlohmann::json::parse(read_file(golden_json_path));
  const io::SafeTensors g = io::SafeTensors::load(dir + "/golden.safetensors");
  const io::Bundle cap_bundle = io::Bundle::load(dir);
  const models::ShowAttendTell dec = models::ShowAttendTell::from_bundle(cap_bundle);
  // without encoder_dir, the captioner finds its encoder bundle (e.g. ../mobilenet-v2-imagenet) itself
  const auto captioner = encoder_dir.empty() ? api::Captioner::load(dir) : api::Captioner::load(dir, encoder_dir);
  // forced-caption goldens (models/training/captioning/forced_goldens.py), when the bundle has them
  nlohmann::json forced_meta;
  io::SafeTensors fg;
  if (std::ifstream(dir + "/golden_forced.json").good()) {
    forced_meta = nlohmann::json::parse(read_file(dir + "/golden_forced.json"));
    fg = io::SafeTensors::load(dir + "/golden_forced.safetensors");
  } else {
    MESSAGE("no forced-caption goldens in " << dir << ": skipped");
  }
  auto close_abs = [&](const std::string& what, const std::vector<float>& actual, const std::vector<float>& expected) {
    REQUIRE_MESSAGE(actual.size() == expected.size(), what << ": size " << actual.size() << " vs " << expected.size());
    double worst = 0;
    for (std::size_t i = 0; i < actual.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(actual[i]) - expected[i]));
    CHECK_MESSAGE(worst <= 1e-4, what << ": max |diff| " << worst);
  };
  auto close = [&](const std::string& what, const std::vector<float>& actual, const std::string& name) {
    const std::vector<float> expected = g.to_float(name);
    REQUIRE_MESSAGE(actual.size() == expected.size(), what << ": size " << actual.size() << " vs " << expected.size());
    double worst = 0;
    bool ok = true;
    for (std::size_t i = 0; i < actual.size(); ++i) {
      const double d = std::fabs(static_cast<double>(actual[i]) - expected[i]);
      worst = std::max(worst, d);
      if (!(d <= 1e-4 || d <= 1e-3 * std::fabs(expected[i]))) ok = false;
    }
    CHECK_MESSAGE(ok, what << ": max |diff| " << worst);
  };
  const auto& cases = meta.at("cases");
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& c = cases[ci];
    const std::string p = "case" + std::to_string(ci) + "/";
    const std::string what = dir + " " + c.at("name").get<std::string>();
    CAPTURE(what);
    std::vector<std::uint8_t> px;
    std::size_t w = 0, h = 0;
    if (c.contains("pixels_ppm") && !c["pixels_ppm"].is_null()) {
      const image::DecodedImage img =
          image::decode_pnm(read_file(kSource + "/" + c["pixels_ppm"].get<std::string>()), what);
      w = img.width;
      h = img.height;
      for (std::size_t i = 0; i < img.pixels.size(); i += 3) px.insert(px.end(), {img.pixels[i], img.pixels[i + 1],
                                                                                 img.pixels[i + 2], 255});
    } else {
      const io::TensorInfo& info = g.info(p + "pixels");
      REQUIRE(info.shape.size() == 3);
      h = info.shape[0];
      w = info.shape[1];
      for (float v : g.to_float(p + "pixels")) px.push_back(static_cast<std::uint8_t>(v));
    }
    // the grid the decoder attends over, from the API: [g, g, 1280] (g = image.input_size / 32: 7 at 224), + 3
    // channels with encoder.cell_colour (mean
    // input colour of the cell, golden "cell_colour"), + 2 with encoder.cell_position (the cell centre in [-1, 1])
    const api::Tensor dg = captioner->encode(px.data(), px.size(), w, h, 4);
    REQUIRE(dg.dims.size() == 3);
    REQUIRE(dg.dims[0] == dg.dims[1]);
    const std::size_t D = dg.dims[2], side = dg.dims[0], cells_n = side * side;
    const auto& ecfg = cap_bundle.config().at("encoder");
    const bool cell_colour = ecfg.contains("cell_colour");
    const bool cell_position = ecfg.contains("cell_position");
    REQUIRE(cell_colour == g.contains(p + "cell_colour"));
    REQUIRE(D == 1280u + (cell_colour ? 3u : 0u) + (cell_position ? 2u : 0u));
    REQUIRE(dec.config().feat_dim == D);
    if (cell_position) {
      const double g = static_cast<double>(side);
      for (std::size_t cell = 0; cell < cells_n; ++cell) {
        const float x = dg.data[cell * D + D - 2], y = dg.data[cell * D + D - 1];
        CHECK(std::fabs(x - (static_cast<double>(cell % side) + 0.5) / g * 2 + 1) < 1e-6);
        CHECK(std::fabs(y - (static_cast<double>(cell / side) + 0.5) / g * 2 + 1) < 1e-6);
      }
    }
    std::vector<float> cells, colours;
    for (int cell : c.at("grid_cells").get<std::vector<int>>())
      cells.insert(cells.end(), dg.data.begin() + cell * static_cast<std::ptrdiff_t>(D),
                   dg.data.begin() + cell * static_cast<std::ptrdiff_t>(D) + 1280);
    close(what + " grid cells", cells, p + "grid_cells");
    if (cell_colour) {
      for (std::size_t cell = 0; cell < cells_n; ++cell)
        colours.insert(colours.end(), dg.data.begin() + static_cast<std::ptrdiff_t>(cell * D + 1280),
                       dg.data.begin() + static_cast<std::ptrdiff_t>(cell * D + 1283));
      close(what + " cell colours", colours, p + "cell_colour");
    }
    const models::ShowAttendTell::Encoded e = dec.encode(dg.data.data(), cells_n);
    const models::SatDecodeResult gr = dec.greedy(e);
    CHECK(gr.tokens == c.at("greedy").at("token_ids").get<std::vector<int>>());
    close(what + " greedy logits", gr.logits, p + "greedy/logits");
    close(what + " greedy attention", gr.alphas, p + "greedy/attention");
    close(what + " greedy beta", gr.betas, p + "greedy/beta");
    const int beams = c.at("beam").at("num_beams").get<int>();
    const double length_norm = c.at("beam").value("length_norm", 0.0);  // the bundle's decoding.length_norm
    const models::SatDecodeResult b = dec.beam(e, static_cast<std::size_t>(beams), 0, length_norm);
    CHECK(b.tokens == c.at("beam").at("token_ids").get<std::vector<int>>());
    close(what + " beam attention", b.alphas, p + "beam/attention");
    api::CaptionParams prm;
    prm.num_beams = beams;
    prm.allow_unk = true;  // the reference search (sat.beam_decode) may choose <unk>
    CHECK(captioner->caption(px.data(), px.size(), w, h, prm).text == c.at("beam").at("text").get<std::string>());
    // By default <unk> is banned from the search (CaptionParams.allow_unk = false). Greedy: the golden caption up
    // to its first <unk>, where the best other word of the golden logits is chosen instead (the flickr8k cat
    // golden says "... sitting on a <unk> .", so this fails when nothing is banned).
    {
      const int unk = 3;  // config.json tokenizer.unk_id
      REQUIRE(captioner->vocabulary().at(3) == "<unk>");
      CHECK_THROWS_WITH_AS(dec.greedy(e, 0, {dec.config().end_id}), doctest::Contains("cannot be banned"), Error);
      CHECK_THROWS_WITH_AS(dec.beam(e, 2, 0, 0, {static_cast<int>(dec.config().vocab_size)}),
                           doctest::Contains("outside the vocabulary"), Error);
      const std::vector<int> gold = c.at("greedy").at("token_ids").get<std::vector<int>>();
      const std::vector<float> gold_logits = g.to_float(p + "greedy/logits");
      const std::size_t V = dec.config().vocab_size;
      const auto first_unk = std::find(gold.begin(), gold.end(), unk);
      const models::SatDecodeResult gs = dec.greedy(e, 0, {unk});
      CHECK(std::find(gs.tokens.begin(), gs.tokens.end(), unk) == gs.tokens.end());
      if (first_unk != gold.end()) {
        const std::size_t t = static_cast<std::size_t>(first_unk - gold.begin());
        REQUIRE(gs.tokens.size() > t);
        CHECK(std::vector<int>(gs.tokens.begin(), gs.tokens.begin() + static_cast<std::ptrdiff_t>(t)) ==
              std::vector<int>(gold.begin(), first_unk));
        std::size_t best = V;
        for (std::size_t v = 0; v < V; ++v)
          if (static_cast<int>(v) != unk && (best == V || gold_logits[t * V + v] > gold_logits[t * V + best])) best = v;
        CHECK(gs.tokens[t] == static_cast<int>(best));
      } else {
        CHECK(gs.tokens == gold);  // nothing to ban: the same search
      }
      const models::SatDecodeResult bs = dec.beam(e, static_cast<std::size_t>(beams), 0, length_norm, {unk});
      CHECK(std::find(bs.tokens.begin(), bs.tokens.end(), unk) == bs.tokens.end());
      for (int nb : {1, beams}) {
        api::CaptionParams def;
        def.num_beams = nb;
        const api::CaptionResult r = captioner->caption(px.data(), px.size(), w, h, def);
        CHECK(std::find(r.tokens.begin(), r.tokens.end(), "<unk>") == r.tokens.end());
        std::vector<int> words = r.token_ids;  // without the final <end>
        if (r.finished) words.pop_back();
        CHECK(words == (nb == 1 ? gs.tokens : bs.tokens));
      }
    }
    if (forced_meta.is_null()) continue;
    // forced captions (Captioner::attend) against PyTorch teacher forcing (sat.forced_decode), abs ≤ 1e-4
    const auto& fc = forced_meta.at("cases").at(ci);
    REQUIRE(fc.at("name") == c.at("name"));
    const auto& forced = fc.at("forced");
    REQUIRE(forced.size() >= 1);
    for (std::size_t k = 0; k < forced.size(); ++k) {
      const auto& f = forced[k];
      const std::string fp = p + "forced" + std::to_string(k) + "/";
      const std::string caption = f.at("caption").get<std::string>();
      CAPTURE(caption);
      const api::CaptionResult r = captioner->attend(px.data(), px.size(), w, h, caption);
      CHECK(r.token_ids == f.at("token_ids").get<std::vector<int>>());
      CHECK(r.tokens.size() == f.at("steps").get<std::size_t>());
      CHECK(r.tokens.back() == "<end>");
      CHECK(r.finished);
      CHECK(r.num_beams == 0);
      const auto& unknown = f.at("unknown_words");
      REQUIRE(r.unknown_words.size() == unknown.size());
      for (std::size_t u = 0; u < unknown.size(); ++u) {
        CHECK(r.unknown_words[u].word == unknown[u].at("word").get<std::string>());
        CHECK(r.unknown_words[u].position == unknown[u].at("position").get<std::size_t>());
        CHECK(r.tokens[r.unknown_words[u].position] == "<unk>");
      }
      std::vector<std::string> words;
      for (const auto& wd : f.at("words")) words.push_back(wd.get<std::string>());
      std::string joined;
      for (const auto& wd : words) joined += (joined.empty() ? "" : " ") + wd;
      CHECK(r.text == joined);
      REQUIRE(r.attentions.at(0).dims == std::vector<std::size_t>{r.tokens.size(), side, side});
      close_abs(what + " forced logprobs", r.token_logprobs, fg.to_float(fp + "logprobs"));
      close_abs(what + " forced attention", r.attentions.at(0).data.to_vector(), fg.to_float(fp + "attention"));
      close_abs(what + " forced beta", r.betas, fg.to_float(fp + "beta"));
      CHECK(std::fabs(r.score - f.at("score").get<double>()) <= 1e-3);
      // the grid route gives the same numbers
      const api::CaptionResult rg = captioner->attend_grid(dg, caption);
      CHECK(rg.token_logprobs == r.token_logprobs);
    }
  }
}

}  // namespace

TEST_CASE("captioning: trained bundles match their PyTorch goldens (flickr8k-mobilenet, shapes)") {
  check_bundle_goldens(kSource + "/models/flickr8k-mobilenet");
  check_bundle_goldens(kSource + "/models/shapes");
  // decoder.context = "output" (the LSTM reads words only; attention after it, logits from [h ; β·z]): a random tiny
  // decoder over the real encoder, goldens from sat.py (make_captioning_goldens.py --only-context-output)
  check_bundle_goldens(kGoldenDir + "/tiny-sat-output", kEncoderDir);
  // developer aid: another exported bundle (its encoder bundle must sit next to it)
  if (const char* extra = std::getenv("ATTNLENS_CAPTION_BUNDLE")) check_bundle_goldens(extra);
}

// Regression: a NaN/Inf grid gave the caption "<pad> <pad> …" with score NaN (argmax over NaN logits picks id 0) or
// an empty finished caption, and NaN ImageNet logits; now non-finite input is refused, and a NaN that arises inside
// (finite features so large that the projections overflow) is caught before it becomes a caption or a label.
TEST_CASE("captioning: non-finite features are an Error, never a caption or a label") {
  const auto cap = api::Captioner::load(kTinyDir, kEncoderDir);
  const io::Bundle tiny = io::Bundle::load(kTinyDir);
  const models::ShowAttendTell dec = models::ShowAttendTell::from_bundle(tiny);
  std::vector<float> ok_grid(7 * 7 * 1280, 0.25f);
  for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    CAPTURE(bad);
    api::Tensor grid({7, 7, 1280}, ok_grid);
    grid.data[3 * 1280 + 17] = bad;  // cell 3, channel 17
    for (const int beams : {1, 3}) {
      api::CaptionParams prm;
      prm.num_beams = beams;
      CHECK_THROWS_WITH_AS(cap->caption_grid(grid, prm), doctest::Contains("non-finite value"), Error);
    }
    CHECK_THROWS_WITH_AS(cap->classify_grid(grid), doctest::Contains("non-finite value"), Error);
    CHECK_THROWS_WITH_AS(dec.encode(grid.data.data(), 49), doctest::Contains("cell 3, channel 17"), Error);
    CHECK_THROWS_WITH_AS(encoder().classify(grid.data.data(), 49), doctest::Contains("non-finite"), Error);
  }
  // Finite but huge features: NaN inside the decoder and the classifier (Inf − Inf), caught at the logits.
  const api::Tensor huge({7, 7, 1280}, std::vector<float>(7 * 7 * 1280, 3.0e38f));
  for (const int beams : {1, 3}) {
    api::CaptionParams prm;
    prm.num_beams = beams;
    CHECK_THROWS_WITH_AS(cap->caption_grid(huge, prm), doctest::Contains("non-finite logit"), Error);
  }
  CHECK_THROWS_WITH_AS(cap->classify_grid(huge), doctest::Contains("non-finite logit"), Error);
  // The finite grid still captions.
  api::CaptionParams prm;
  prm.num_beams = 1;
  CHECK(cap->caption_grid(api::Tensor({7, 7, 1280}, ok_grid), prm).tokens.size() >= 1);
}

// Regression: encoder.bn_eps of -1 (sqrt of a negative variance: NaN) or 1e300 (Inf as float) loaded silently.
TEST_CASE("captioning: MobileNetV2 encoder.bn_eps must be in (0, 1]") {
  auto load_with = [](const nlohmann::json& eps) { return classifier_with({"encoder", "bn_eps"}, eps); };
  for (const double bad : {-1.0, 0.0, 1e300, 2.0, -1e-5}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(load_with(bad), doctest::Contains("key \"encoder.bn_eps\": expected a number in (0, 1]"),
                         Error);
  }
  CHECK_THROWS_WITH_AS(load_with("1e-5"), doctest::Contains("encoder.bn_eps"), Error);
  CHECK_NOTHROW(load_with(1e-3));
  CHECK_NOTHROW(load_with(1.0));
}

// Captioner::attend (forced caption, teacher forcing): consistency with greedy search, the split and <unk>, and the
// bad inputs of issue 20 (empty caption, 200 words, words outside the vocabulary, 1×1 and 0×0 images, an all-black
// image that must give finite numbers).
TEST_CASE("captioning: forced captions — consistency, unknown words and bad input") {
  const auto cap = api::Captioner::load(kTinyDir, kEncoderDir);
  std::vector<std::uint8_t> img(20 * 12 * 4);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<std::uint8_t>((i * 37) % 251);
  // forcing the greedy caption reproduces greedy's steps: same α, β and score (the search chose these words)
  api::CaptionParams greedy;
  greedy.num_beams = 1;
  const api::CaptionResult g = cap->caption(img.data(), img.size(), 20, 12, greedy);
  if (g.finished && !g.text.empty()) {
    const api::CaptionResult f = cap->attend(img.data(), img.size(), 20, 12, g.text);
    CHECK(f.tokens == g.tokens);
    CHECK(f.token_ids == g.token_ids);
    CHECK(f.attentions.at(0).dims == g.attentions.at(0).dims);
    CHECK(f.attentions.at(0).data == g.attentions.at(0).data);
    CHECK(f.betas == g.betas);
    CHECK(std::fabs(f.score - g.score) <= 1e-4);
    CHECK(f.unknown_words.empty());
  }
  // the training split: lowercase, \w+|[^\w\s]; unknown words → <unk> with their positions; log-probs ≤ 0, sum = score
  const api::CaptionResult r = cap->attend(img.data(), img.size(), 20, 12, "Two DOGS run: on the grass.");
  CHECK(r.text == "two dogs run : on the grass .");
  CHECK(r.tokens == std::vector<std::string>{"two", "<unk>", "<unk>", "<unk>", "on", "the", "grass", ".", "<end>"});
  REQUIRE(r.unknown_words.size() == 3);
  CHECK(r.unknown_words[0].word == "dogs");
  CHECK(r.unknown_words[0].position == 1);
  CHECK(r.unknown_words[2].word == ":");
  CHECK(r.unknown_words[2].position == 3);
  REQUIRE(r.token_logprobs.size() == r.tokens.size());
  REQUIRE(r.betas.size() == r.tokens.size());
  const std::vector<std::size_t>& dims = r.attentions.at(0).dims;  // [steps, g, g]: the bundle's grid
  REQUIRE(dims.size() == 3);
  REQUIRE(dims[0] == r.tokens.size());
  REQUIRE(dims[1] == dims[2]);
  const std::size_t cells = dims[1] * dims[2];
  double sum = 0;
  for (float lp : r.token_logprobs) {
    CHECK(lp <= 0.0f);
    sum += lp;
  }
  CHECK(std::fabs(sum - r.score) <= 1e-3);
  for (std::size_t t = 0; t < r.tokens.size(); ++t) {
    double row = 0;
    for (std::size_t k = 0; k < cells; ++k) row += r.attentions.at(0).data[t * cells + k];
    CHECK(std::fabs(row - 1) < 1e-5);
  }
  // options: output_attentions false leaves the maps out, the rest is unchanged; beams do not apply
  api::CaptionParams no_maps;
  no_maps.output_attentions = false;
  no_maps.num_beams = 5;
  const api::CaptionResult rn = cap->attend(img.data(), img.size(), 20, 12, "Two DOGS run: on the grass.", no_maps);
  CHECK(rn.attentions.empty());
  CHECK(rn.token_logprobs == r.token_logprobs);
  // empty captions: nothing to score
  for (const char* empty : {"", "   ", "\t\n"})
    CHECK_THROWS_WITH_AS(cap->attend(img.data(), img.size(), 20, 12, empty), doctest::Contains("caption is empty"),
                         Error);
  // 200 words: a defined result, one row per word and <end>, every number finite
  std::string long_caption;
  for (int i = 0; i < 200; ++i) long_caption += i % 2 ? "dog " : "a ";
  const api::CaptionResult lr = cap->attend(img.data(), img.size(), 20, 12, long_caption);
  CHECK(lr.tokens.size() == 201);
  CHECK(lr.attentions.at(0).dims[0] == 201);
  CHECK(first_non_finite(lr.token_logprobs.data(), lr.token_logprobs.size()) == lr.token_logprobs.size());
  // more than kMaxCaptionWords words: a clear Error
  std::string too_long;
  for (std::size_t i = 0; i <= api::Captioner::kMaxCaptionWords; ++i) too_long += "a ";
  CHECK_THROWS_WITH_AS(cap->attend(img.data(), img.size(), 20, 12, too_long), doctest::Contains("more than 1000 words"),
                       Error);
  // all words unknown (and ill-formed UTF-8): every one is <unk>, still finite
  const api::CaptionResult ru = cap->attend(img.data(), img.size(), 20, 12, "zzz qqq \xff");
  CHECK(ru.tokens == std::vector<std::string>{"<unk>", "<unk>", "<unk>", "<end>"});
  CHECK(ru.unknown_words.size() == 3);
  CHECK(ru.unknown_words[2].word == "\xEF\xBF\xBD");  // U+FFFD
  // images: 0×0 is an Error, 1×1 works, an all-black image gives finite numbers
  CHECK_THROWS_WITH_AS(cap->attend(nullptr, 0, 0, 0, "a dog"), doctest::Contains("empty"), Error);
  const std::uint8_t one[4] = {10, 200, 30, 255};
  const api::CaptionResult r1 = cap->attend(one, 4, 1, 1, "a dog");
  CHECK(r1.tokens.size() == 3);
  const std::vector<std::uint8_t> black(64 * 48 * 4, 0);
  std::vector<std::uint8_t> opaque_black = black;
  for (std::size_t i = 3; i < opaque_black.size(); i += 4) opaque_black[i] = 255;
  const api::CaptionResult rb = cap->attend(opaque_black.data(), opaque_black.size(), 64, 48, "a dog runs on the grass");
  CHECK(first_non_finite(rb.token_logprobs.data(), rb.token_logprobs.size()) == rb.token_logprobs.size());
  CHECK(first_non_finite(rb.attentions.at(0).data.data(), rb.attentions.at(0).data.size()) == rb.attentions.at(0).data.size());
  CHECK(first_non_finite(rb.betas.data(), rb.betas.size()) == rb.betas.size());
  CHECK(std::isfinite(rb.score));
  // the grid route refuses a wrong grid like caption_grid does
  CHECK_THROWS_WITH_AS(cap->attend_grid(api::Tensor({7, 7, 10}, std::vector<float>(490, 0.0f)), "a dog"),
                       doctest::Contains("attend: the grid must have dims"), Error);
  // the split itself
  CHECK(attnlens::text::tokenize_caption("A dog's ball_2, Ünder!") ==
        std::vector<std::string>{"a", "dog", "'", "s", "ball_2", ",", "ünder", "!"});
  CHECK(attnlens::text::tokenize_caption("a b c d", 2) == std::vector<std::string>{"a", "b"});
}
