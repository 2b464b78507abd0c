// Visual question answering (src/models/vqa, src/api/vqa) against PyTorch (models/training/vqa/export.py):
//   - both shipped bundles (shapes-vqa-coattn, shapes-vqa-aoa) on their goldens: the encoder's grid of each scene PPM
//     of tests/goldens/vqa against PyTorch's; the VQA forward on PyTorch's grid (the model's exact input): the answer
//     logits, the count and every recorded map (region and word attention of both levels, the co-attention affinity
//     or the AoA matching/α/β matrices, the count density); and the answer end to end from the pixels;
//   - bad input: an empty question, one of only unknown words, a 200-word question, unknown options, bad images
//     and grids; the model keeps answering afterwards.
// Tolerance: abs ≤ 1e-4 or rel ≤ 1e-3 (docs/DESIGN.md §12).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "api.h"
#include "image/pnm.h"
#include "io/safetensors.h"
#include "test_support.h"

namespace {

using attnlens::Error;
namespace api = attnlens::api;
namespace io = attnlens::io;

const std::string kSource = ATTNLENS_SOURCE_DIR;
const char* kBundles[] = {"shapes-vqa-coattn", "shapes-vqa-aoa"};

using attnlens::testing::read_file;

void check_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  REQUIRE_MESSAGE(got.size() == want.size(), what << ": " << got.size() << " values, golden has " << want.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    const bool ok = diff <= 1e-4 || diff <= 1e-3 * std::fabs(static_cast<double>(want[i]));
    if (!ok) worst = std::max(worst, diff);
    CHECK_MESSAGE(ok, what << "[" << i << "]: engine " << got[i] << ", PyTorch " << want[i]);
    if (!ok) break;
  }
  CHECK(worst == 0);
}


const attnlens::image::DecodedImage& scene(const std::string& rel) {
  static std::map<std::string, attnlens::image::DecodedImage> cache;
  auto it = cache.find(rel);
  if (it == cache.end())
    it = cache.emplace(rel, attnlens::image::decode_pnm(read_file(kSource + "/" + rel), rel)).first;
  return it->second;
}

// The bundles are written by models/training/vqa/export.py; a checkout without them skips these tests (false,
// with a message saying so).
bool exported() {
  for (const char* name : kBundles) {
    if (!std::ifstream(kSource + "/models/" + name + "/golden.json").good()) {
      MESSAGE("skipped: the shapes-vqa bundles are not exported");
      return false;
    }
  }
  return true;
}

const api::VisualQA& model(const std::string& name) {
  static std::map<std::string, std::unique_ptr<api::VisualQA>> cache;
  auto& m = cache[name];
  if (!m) m = api::VisualQA::load(kSource + "/models/" + name);
  return *m;
}

}  // namespace

TEST_CASE("vqa bundles equal their PyTorch goldens (answer logits and every map)") {
  if (!exported()) return;
  for (const char* name : kBundles) {
    const std::string dir = kSource + "/models/" + name;
    const nlohmann::json gj = nlohmann::json::parse(read_file(dir + "/golden.json"));
    const io::SafeTensors g = io::SafeTensors::load(dir + "/golden.safetensors");
    const api::VisualQA& vqa = model(name);
    REQUIRE(gj["cases"].size() >= 8);
    for (const auto& c : gj["cases"]) {
      const std::string p = c["name"].get<std::string>() + "/";
      const std::string what = std::string(name) + " " + p + " '" + c["question"].get<std::string>() + "'";
      CAPTURE(what);
      const auto& img = scene(c["scene"].get<std::string>());
      // The encoder: the engine's grid of the scene equals PyTorch's (the whole grid, abs 1e-4 / rel 1e-3).
      const api::Tensor grid = vqa.encode(img.pixels.data(), img.pixels.size(), img.width, img.height, img.channels);
      REQUIRE(grid.dims == std::vector<std::size_t>{7, 7, 1285});
      const std::vector<float> golden_grid = g.to_float(c["grid"].get<std::string>());
      check_close(grid.data, golden_grid, what + " grid");
      // The VQA forward on PyTorch's own grid (the same input): logits and every map.
      const api::VqaResult r = vqa.answer_grid(api::Tensor({7, 7, 1285}, golden_grid), c["question"].get<std::string>());
      // End to end from the pixels: the same answer.
      const api::VqaResult e2e = vqa.answer(img.pixels.data(), img.pixels.size(), img.width, img.height,
                                            c["question"].get<std::string>(), {}, img.channels);
      CHECK(e2e.answer == c["answer"].get<std::string>());
      CHECK(r.answer == c["answer"].get<std::string>());
      CHECK(r.tokens == c["tokens"].get<std::vector<std::string>>());
      CHECK(r.token_ids == c["token_ids"].get<std::vector<int>>());
      check_close(r.logits, g.to_float(p + "logits"), what + " logits");
      check_close({r.count}, g.to_float(p + "count"), what + " count");
      std::size_t compared = 0;
      for (const auto& m : r.attentions) {
        const std::string key = p + m.name + "/" + std::to_string(m.layer);
        REQUIRE_MESSAGE(g.contains(key), "no golden for map " << key);
        check_close(m.data.to_vector(), g.to_float(key), what + " " + m.name + " layer " + std::to_string(m.layer));
        ++compared;
      }
      // every golden map was recorded by the engine: 2 levels × the variant's maps + the count density
      const std::size_t want = 2 * (c["maps"].size() - 1) + 1;
      CHECK(compared == want);
      double sum = 0;
      for (float s : r.scores) sum += s;
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("vqa: the maps' shapes and the answer list") {
  if (!exported()) return;
  const api::VisualQA& vqa = model("shapes-vqa-coattn");
  const auto& img = scene("tests/goldens/vqa/shapes-1.ppm");
  const api::VqaResult r = vqa.answer(img.pixels.data(), img.pixels.size(), img.width, img.height,
                                      "What COLOUR is the square?", {}, img.channels);
  CHECK(r.tokens == std::vector<std::string>{"what", "colour", "is", "the", "square", "?"});
  CHECK(r.answers == vqa.answer_list());
  CHECK(r.attention == "parallel-co-attention");
  for (const auto& m : r.attentions) {
    if (m.name == "affinity") CHECK(m.dims == std::vector<std::size_t>{6, 49});
    if (m.name == "region_attention" || m.name == "count_density") CHECK(m.dims == std::vector<std::size_t>{7, 7});
    if (m.name == "word_attention") CHECK(m.dims == std::vector<std::size_t>{6});
  }
  api::VqaParams off;
  off.output_attentions = false;
  const api::VqaResult r2 = vqa.answer(img.pixels.data(), img.pixels.size(), img.width, img.height,
                                       "what colour is the square ?", off, img.channels);
  CHECK(r2.attentions.empty());
  CHECK(r2.logits == r.logits);
}

TEST_CASE("vqa: bad input is an Error with a clear message, and the model keeps working") {
  if (!exported()) return;
  const api::VisualQA& vqa = model("shapes-vqa-aoa");
  const auto& img = scene("tests/goldens/vqa/shapes-2.ppm");
  auto ask = [&](const std::string& q) {
    return vqa.answer(img.pixels.data(), img.pixels.size(), img.width, img.height, q, {}, img.channels);
  };
  CHECK_THROWS_WITH_AS(ask(""), doctest::Contains("the question is empty"), Error);
  CHECK_THROWS_WITH_AS(ask("   \t "), doctest::Contains("the question is empty"), Error);
  CHECK_THROWS_WITH_AS(ask("zebra giraffe quokka"), doctest::Contains("none of the question's words"), Error);
  std::string long_q;
  for (int i = 0; i < 200; ++i) long_q += "circle ";
  CHECK_THROWS_WITH_AS(ask(long_q), doctest::Contains("more than 24 words"), Error);
  // unknown words among known ones are read as <unk> and listed
  const api::VqaResult r = ask("what colour is the zebra circle ?");
  REQUIRE(r.unknown_words.size() == 1);
  CHECK(r.unknown_words[0].word == "zebra");
  CHECK(r.tokens[r.unknown_words[0].position] == "<unk>");
  // images: short buffer, zero size, wrong channel count
  std::vector<std::uint8_t> px(10 * 10 * 4, 255);
  CHECK_THROWS_AS(vqa.answer(px.data(), px.size() - 1, 10, 10, "how many circles are there ?"), Error);
  CHECK_THROWS_AS(vqa.answer(px.data(), px.size(), 0, 10, "how many circles are there ?"), Error);
  CHECK_THROWS_AS(vqa.answer(px.data(), px.size(), 10, 10, "how many circles are there ?", {}, 2), Error);
  CHECK_NOTHROW(vqa.answer(px.data(), px.size(), 10, 10, "how many circles are there ?"));  // a blank image is fine
  // grids: wrong dims, NaN
  api::Tensor grid = vqa.encode(img.pixels.data(), img.pixels.size(), img.width, img.height, img.channels);
  api::Tensor bad({7, 7, 1280});
  CHECK_THROWS_WITH_AS(vqa.answer_grid(bad, "how many circles are there ?"), doctest::Contains("[g, g, 1285]"), Error);
  grid.data[100] = std::nanf("");
  CHECK_THROWS_WITH_AS(vqa.answer_grid(grid, "how many circles are there ?"), doctest::Contains("non-finite"), Error);
  // options
  CHECK_THROWS_WITH_AS(api::vqa_params("{\"num_beams\": 2}"), doctest::Contains("vqa options: unknown param 'num_beams' (known: output_attentions)"), Error);
  CHECK_THROWS_AS(api::vqa_params("{\"output_attentions\": 1}"), Error);
  CHECK_THROWS_AS(api::vqa_params("[1]"), Error);
  CHECK(api::vqa_params("{\"output_attentions\": false}").output_attentions == false);
  // still answers afterwards
  CHECK_FALSE(ask("how many purple objects are there ?").answer.empty());
}

TEST_CASE("vqa: broken bundles are refused with the file and key named") {
  if (!exported()) return;
  const std::string dir = kSource + "/models/shapes-vqa-coattn";
  const std::string enc = kSource + "/models/mobilenet-v2-imagenet";
  const std::string config = read_file(dir + "/config.json");
  const std::string w = read_file(dir + "/weights.safetensors");
  const std::string ew = read_file(enc + "/weights.safetensors");
  const std::string ecfg = read_file(enc + "/config.json");
  auto bytes = [](const std::string& s) { return std::vector<std::uint8_t>(s.begin(), s.end()); };
  const std::map<std::string, std::string> files = {{"vocab.txt", read_file(dir + "/vocab.txt")},
                                                    {"answers.txt", read_file(dir + "/answers.txt")}};
  CHECK_NOTHROW(api::VisualQA::from_memory(config, bytes(w), files, ecfg, bytes(ew), "vqa"));
  nlohmann::json j = nlohmann::json::parse(config);
  j["vqa"]["attention"] = "hard";
  CHECK_THROWS_WITH_AS(api::VisualQA::from_memory(j.dump(), bytes(w), files, ecfg, bytes(ew), "vqa"),
                       doctest::Contains("vqa.attention"), Error);
  j = nlohmann::json::parse(config);
  j["vqa"]["num_answers"] = 3;
  CHECK_THROWS_AS(api::VisualQA::from_memory(j.dump(), bytes(w), files, ecfg, bytes(ew), "vqa"), Error);
  std::map<std::string, std::string> short_answers = files;
  short_answers["answers.txt"] = "yes\nno\n";
  CHECK_THROWS_WITH_AS(api::VisualQA::from_memory(config, bytes(w), short_answers, ecfg, bytes(ew), "vqa"),
                       doctest::Contains("answer list"), Error);
  CHECK_THROWS_AS(api::VisualQA::from_memory(config, bytes(w), {}, ecfg, bytes(ew), "vqa"), Error);
  // the encoder bundle: named in errors after the VQA bundle, whether read from memory or looked for on disk
  CHECK_THROWS_WITH_AS(api::VisualQA::from_memory(config, bytes(w), files, "{}", bytes(ew), "vqa"),
                       doctest::Contains("vqa (encoder mobilenet-v2-imagenet)"), Error);
  const std::string no_encoder = "vqa bundle " + dir + ": cannot load its encoder bundle";
  CHECK_THROWS_WITH_AS(api::VisualQA::load(dir, dir + "/no-such-encoder"), doctest::Contains(no_encoder.c_str()),
                       Error);
}
