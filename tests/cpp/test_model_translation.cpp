// Translation parity with PyTorch (models/training/translation): the engine's forward pass, incremental decoder and
// search against golden dumps made by the recipe from the same bundle.
//   Transformer: models/de-en-transformer/golden.{json,safetensors} (make_goldens.py): 20 val sentences, every
//     encoder-self, decoder-self and cross-attention map of every layer and head, teacher-forced logits (full for
//     case 0; top-16, logsumexp and mean for all), greedy and beam-4 outputs.
//   RNNs: tiny randomly initialised bundles + goldens under tests/goldens/translation/ (make_rnn_goldens.py).
// Tolerance: |engine − golden| ≤ 1e-4 or ≤ 1e-3·|golden| (golden.h), the goldens' own "tolerance".
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api.h"
#include "decode/search.h"
#include "golden.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "models/rnn_seq2seq.h"
#include "models/transformer_seq2seq.h"
#include "test_support.h"
#include "trace/trace.h"

namespace {

using attnlens::AttentionTrace;
using attnlens::testing::GoldenTensor;

std::string source_path(const std::string& relative) { return std::string(ATTNLENS_SOURCE_DIR) + "/" + relative; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(static_cast<bool>(in), "cannot open " << path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(static_cast<bool>(in), "cannot open " << path);
  nlohmann::json j;
  in >> j;
  return j;
}

GoldenTensor golden_tensor(const attnlens::io::SafeTensors& st, const std::string& name) {
  GoldenTensor t;
  t.dims = st.info(name).shape;
  if (st.info(name).dtype == attnlens::io::DType::kI32 || st.info(name).dtype == attnlens::io::DType::kI64) {
    for (auto v : st.to_int64(name)) t.data.push_back(static_cast<float>(v));
  } else {
    t.data = st.to_float(name);
  }
  return t;
}

void check_close(const float* actual, std::size_t count, const GoldenTensor& expected, const std::string& label) {
  const auto cmp = attnlens::testing::compare(actual, count, expected, label);
  INFO(cmp.report);
  CHECK(cmp.ok);
}

std::optional<attnlens::MapView> find_map(const AttentionTrace& trace, const std::string& name, int layer, int head) {
  for (const attnlens::MapView m : trace)
    if (m.name == name && m.layer == layer && m.head == head) return m;
  return std::nullopt;
}

std::vector<int> ids_of(const nlohmann::json& j) { return j.get<std::vector<int>>(); }

std::unique_ptr<attnlens::models::Seq2SeqModel> make_model(const attnlens::io::Bundle& bundle) {
  if (bundle.architecture() == "transformer-seq2seq") return std::make_unique<attnlens::models::TransformerSeq2Seq>(bundle);
  return attnlens::models::make_rnn_seq2seq(bundle);
}

// Teacher-forced logits (full / top-16 / logsumexp / mean) and every attention map of one golden case.
void check_teacher_forced_case(const attnlens::models::Seq2SeqModel& model, const nlohmann::json& c,
                               const attnlens::io::SafeTensors& golden, std::size_t vocab) {
  const std::string key = c["name"].get<std::string>();
  const std::vector<int> src = ids_of(c["source_ids"]);
  const std::vector<int> tgt_in = ids_of(c["target_in_ids"]);
  AttentionTrace trace;
  const std::vector<float> logits = model.forward(src, tgt_in, &trace);
  const std::size_t T = tgt_in.size();
  REQUIRE(logits.size() == T * vocab);
  if (c.value("full_logits", false)) check_close(logits.data(), logits.size(), golden_tensor(golden, key + "/logits"), key + "/logits");

  // At the golden top-16 ids the engine's logits equal the golden values; its own arg max is the golden one.
  const GoldenTensor top_ids = golden_tensor(golden, key + "/logits_top_ids");
  const GoldenTensor top_values = golden_tensor(golden, key + "/logits_top_values");
  const std::size_t K = top_ids.dim(1);
  std::vector<float> at_ids(T * K), lse(T), mean(T);
  for (std::size_t t = 0; t < T; ++t) {
    const float* row = logits.data() + t * vocab;
    for (std::size_t j = 0; j < K; ++j) at_ids[t * K + j] = row[static_cast<std::size_t>(top_ids.data[t * K + j])];
    const std::size_t arg = static_cast<std::size_t>(std::max_element(row, row + vocab) - row);
    const float gap = top_values.data[t * K] - top_values.data[t * K + 1];
    if (gap > 1e-3f) CHECK_MESSAGE(arg == static_cast<std::size_t>(top_ids.data[t * K]), key << " step " << t);
    double mx = row[0], sum = 0, total = 0;
    for (std::size_t w = 0; w < vocab; ++w) mx = std::max(mx, static_cast<double>(row[w]));
    for (std::size_t w = 0; w < vocab; ++w) {
      sum += std::exp(static_cast<double>(row[w]) - mx);
      total += row[w];
    }
    lse[t] = static_cast<float>(mx + std::log(sum));
    mean[t] = static_cast<float>(total / static_cast<double>(vocab));
  }
  check_close(at_ids.data(), at_ids.size(), top_values, key + "/logits_top_values");
  check_close(lse.data(), T, golden_tensor(golden, key + "/logits_logsumexp"), key + "/logits_logsumexp");
  check_close(mean.data(), T, golden_tensor(golden, key + "/logits_mean"), key + "/logits_mean");

  // Every attention map the golden holds: Transformer (H, Q, K) per layer, RNN (T, S).
  std::size_t compared = 0;
  for (const auto& a : c["attentions"]) {
    const GoldenTensor g = golden_tensor(golden, a["key"].get<std::string>());
    const std::string name = a["name"].get<std::string>();
    const int layer = a["layer"].get<int>();
    if (g.dims.size() == 3) {
      const std::size_t H = g.dims[0], Q = g.dims[1], Kd = g.dims[2];
      for (std::size_t h = 0; h < H; ++h) {
        const auto m = find_map(trace, name, layer, static_cast<int>(h));
        REQUIRE_MESSAGE(m.has_value(), key << ": no map " << name << " layer " << layer << " head " << h);
        REQUIRE(m->dims == std::vector<std::size_t>{Q, Kd});
        GoldenTensor head;
        head.dims = {Q, Kd};
        head.data.assign(g.data.begin() + static_cast<std::ptrdiff_t>(h * Q * Kd),
                         g.data.begin() + static_cast<std::ptrdiff_t>((h + 1) * Q * Kd));
        check_close(m->data.data(), m->data.size(), head, a["key"].get<std::string>() + "/head" + std::to_string(h));
        ++compared;
      }
    } else {
      const auto m = find_map(trace, name, layer, -1);
      REQUIRE_MESSAGE(m.has_value(), key << ": no map " << name);
      CHECK(m->dims == g.dims);
      check_close(m->data.data(), m->data.size(), g, a["key"].get<std::string>());
      ++compared;
    }
  }
  CHECK(compared > 0);
  CHECK(compared == trace.size());  // the engine records exactly the maps PyTorch computed, no more
}

void check_search_case(const attnlens::models::Seq2SeqModel& model, const nlohmann::json& c, const nlohmann::json& dec) {
  const std::vector<int> src = ids_of(c["source_ids"]);
  const auto limit = [&](const nlohmann::json& d) {
    int m = d["max_len_a"].get<int>() * static_cast<int>(src.size()) + d["max_len_b"].get<int>();
    return std::min(m, static_cast<int>(model.max_target_positions()));
  };
  {
    attnlens::decode::SearchParams p;
    p.num_beams = 1;
    p.max_new_tokens = limit(dec["greedy"]);
    auto step = model.start(src, nullptr);
    const auto r = attnlens::decode::search(*step, p);
    CHECK_MESSAGE(r.tokens == ids_of(c["greedy"]["ids"]), c["name"].get<std::string>() << " greedy");
  }
  {
    const auto& b = dec["beam"];
    attnlens::decode::SearchParams p;
    p.num_beams = b["num_beams"].get<int>();
    p.alpha = b["alpha"].get<double>();
    p.coverage_beta = b["coverage_penalty_beta"].get<double>();
    p.candidates_per_beam = b.value("candidates_per_beam", 1);
    p.max_new_tokens = limit(b);
    auto step = model.start(src, nullptr);
    const auto r = attnlens::decode::search(*step, p);
    const std::string beam_key = "beam" + std::to_string(p.num_beams);
    CHECK_MESSAGE(r.tokens == ids_of(c[beam_key]["ids"]), c["name"].get<std::string>() << " " << beam_key);
    // Where the golden has them: the chosen hypothesis' log-probability and its normalised score
    // (score / lp + coverage penalty), which pins the length and coverage penalties themselves.
    if (c[beam_key].contains("normalised")) {
      CHECK(r.score == doctest::Approx(c[beam_key]["score"].get<double>()).epsilon(1e-4));
      CHECK(r.normalised == doctest::Approx(c[beam_key]["normalised"].get<double>()).epsilon(1e-4));
      // The engine stops once no live hypothesis can win (decode/search.h), the reference only at k finished.
      CHECK(r.hypotheses >= 1);
      CHECK(r.hypotheses <= c[beam_key]["finished"].get<int>());
    }
  }
}

}  // namespace

TEST_CASE("translation: Transformer parity with PyTorch on the golden sentences (logits, every map)") {
  // de-en-transformer: 20 Multi30k val sentences; de-en-general: 20 val + 10 everyday Tatoeba dev sentences.
  for (const char* name : {"de-en-transformer", "de-en-general"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("models/") + name);
    const auto bundle = attnlens::io::Bundle::load(dir);
    const attnlens::models::TransformerSeq2Seq model(bundle);
    const auto golden_json = read_json(dir + "/golden.json");
    const auto golden = attnlens::io::SafeTensors::load(dir + "/golden.safetensors");
    REQUIRE(golden_json["cases"].size() >= 20);
    for (const auto& c : golden_json["cases"]) {
      CAPTURE(c["name"].get<std::string>());
      check_teacher_forced_case(model, c, golden, model.vocab_size());
    }
  }
}

TEST_CASE("translation: Transformer greedy and beam-4 outputs equal the PyTorch decoder's") {
  for (const char* name : {"de-en-transformer", "de-en-general"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("models/") + name);
    const auto bundle = attnlens::io::Bundle::load(dir);
    const attnlens::models::TransformerSeq2Seq model(bundle);
    const auto golden_json = read_json(dir + "/golden.json");
    for (const auto& c : golden_json["cases"]) check_search_case(model, c, golden_json["decoding"]);
  }
}

TEST_CASE("translation: de-en-general translates the everyday examples exactly as its PyTorch original") {
  // golden.json "examples": everyday German (models/training/translation/examples_everyday.de) decoded by PyTorch
  // from this bundle, greedy and beam 4 — the shipped bundle's output, not hand-written English.
  const std::string dir = source_path("models/de-en-general");
  const auto tr = attnlens::api::Translator::load(dir);
  const auto golden_json = read_json(dir + "/golden.json");
  REQUIRE(golden_json["examples"].size() >= 5);
  for (const auto& e : golden_json["examples"]) {
    const std::string src = e["source"].get<std::string>();
    CAPTURE(src);
    // The model's own text (copy_numbers false; with it, numbers may be copied: test_number_copy.cpp).
    attnlens::api::TranslationParams greedy;
    greedy.num_beams = 1;
    greedy.output_attentions = false;
    greedy.copy_numbers = false;
    CHECK(tr->translate(src, greedy).text == e["greedy"]["text"].get<std::string>());
    attnlens::api::TranslationParams beam;  // the bundle's defaults: beam 4
    beam.copy_numbers = false;
    const auto r = tr->translate(src, beam);
    CHECK(r.text == e["beam4"]["text"].get<std::string>());
    CHECK(r.target_ids == ids_of(e["beam4"]["ids"]));
    beam.copy_numbers = true;
    CHECK(tr->translate(src, beam).target_ids == r.target_ids);  // the copy never changes the search
  }
}

TEST_CASE("translation: RNN parity with PyTorch on tiny random bundles (additive GRU, general LSTM)") {
  for (const char* name : {"rnn-additive", "rnn-general"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("tests/goldens/translation/") + name);
    const auto bundle = attnlens::io::Bundle::load(dir);
    const auto model = attnlens::models::make_rnn_seq2seq(bundle);
    const auto golden_json = read_json(dir + "/golden.json");
    const auto golden = attnlens::io::SafeTensors::load(dir + "/golden.safetensors");
    REQUIRE(golden_json["cases"].size() >= 5);
    for (const auto& c : golden_json["cases"]) {
      CAPTURE(c["name"].get<std::string>());
      check_teacher_forced_case(*model, c, golden, model->vocab_size());
      check_search_case(*model, c, golden_json["decoding"]);
    }
  }
}

TEST_CASE("translation: api::Translator end to end on the tiny RNN bundles") {
  for (const char* name : {"rnn-additive", "rnn-general"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("tests/goldens/translation/") + name);
    const auto golden_json = read_json(dir + "/golden.json");
    const auto& c0 = golden_json["cases"][0];
    const auto tr = attnlens::api::Translator::load(dir);
    CHECK(tr->architecture() == "rnn-seq2seq");
    attnlens::api::TranslationParams p;  // bundle defaults: its beam width, alpha and coverage penalty
    p.restore_case = false;              // the goldens' text as typed (lower case), not re-cased
    const auto out = tr->translate(c0["text"].get<std::string>(), p);
    CHECK(out.source_ids == ids_of(c0["source_ids"]));  // the engine's BPE, then </s>
    const std::string beam_key = "beam" + std::to_string(golden_json["decoding"]["beam"]["num_beams"].get<int>());
    CHECK(out.target_ids == ids_of(c0[beam_key]["ids"]));
    CHECK(out.num_beams == golden_json["decoding"]["beam"]["num_beams"].get<int>());
    REQUIRE(out.attentions.size() == 1);
    const auto& m = out.attentions[0];
    CHECK(m.name == "cross");
    CHECK(m.dims == std::vector<std::size_t>{out.target_ids.size(), out.source_ids.size()});
    for (std::size_t t = 0; t < m.dims[0]; ++t) {
      double sum = 0;
      for (std::size_t s = 0; s < m.dims[1]; ++s) sum += m.data[t * m.dims[1] + s];
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
    p.num_beams = 1;
    CHECK(tr->translate(c0["text"].get<std::string>(), p).target_ids == ids_of(c0["greedy"]["ids"]));
  }
}

TEST_CASE("translation: api::Translator on the Transformer bundle (golden outputs, maps, bad input)") {
  const auto tr = attnlens::api::Translator::load(source_path("models/de-en-transformer"));
  const auto golden_json = read_json(source_path("models/de-en-transformer/golden.json"));
  CHECK(tr->architecture() == "transformer-seq2seq");
  const auto config = read_json(source_path("models/de-en-transformer/config.json"));
  const std::size_t max_src = config["max_positions"].get<std::size_t>();
  CHECK(tr->max_source_tokens() == max_src);

  SUBCASE("golden sentences: the text, tokens and beam-4 output PyTorch produced") {
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& c = golden_json["cases"][i];
      const auto out = tr->translate(c["source"].get<std::string>(), {});
      CHECK(out.source_ids == ids_of(c["source_ids"]));
      std::vector<std::string> pieces = c["source_pieces"].get<std::vector<std::string>>();
      pieces.push_back("</s>");
      CHECK(out.source_tokens == pieces);
      CHECK(out.target_ids == ids_of(c["beam4"]["ids"]));
      CHECK(out.text == c["beam4"]["text"].get<std::string>());
      CHECK(out.num_beams == 4);
      CHECK_FALSE(out.truncated);
      // Every layer and head of encoder self, decoder self and cross attention (as many maps as the golden's
      // per-layer [H, ., .] dumps hold), rows summing to 1.
      const std::size_t S = out.source_ids.size(), T = out.target_ids.size();
      std::size_t expected_maps = 0;
      for (const auto& a : c["attentions"]) expected_maps += a["dims"][0].get<std::size_t>();
      REQUIRE(out.attentions.size() == expected_maps);
      for (const auto& m : out.attentions) {
        CAPTURE(m.name);
        if (m.name == "encoder_self") CHECK(m.dims == std::vector<std::size_t>{S, S});
        else if (m.name == "decoder_self") CHECK(m.dims == std::vector<std::size_t>{T, T});
        else CHECK(m.dims == std::vector<std::size_t>{T, S});
        for (std::size_t r = 0; r < m.dims[0]; ++r) {
          double sum = 0;
          for (std::size_t k = 0; k < m.dims[1]; ++k) sum += m.data[r * m.dims[1] + k];
          CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        }
      }
    }
  }
  SUBCASE("greedy through the API equals the PyTorch greedy decoder") {
    attnlens::api::TranslationParams p;
    p.num_beams = 1;
    p.output_attentions = false;
    const auto& c = golden_json["cases"][1];
    const auto out = tr->translate(c["source"].get<std::string>(), p);
    CHECK(out.target_ids == ids_of(c["greedy"]["ids"]));
    CHECK(out.attentions.empty());
  }
  SUBCASE("empty and blank input give an empty translation") {
    for (const char* text : {"", "   \n\t "}) {
      const auto out = tr->translate(text, {});
      CHECK(out.text.empty());
      CHECK(out.source_tokens.empty());
      CHECK(out.target_tokens.empty());
      CHECK(out.attentions.empty());
      CHECK_FALSE(out.truncated);
    }
  }
  SUBCASE("characters outside the vocabulary come back as <unk> pieces") {
    const auto out = tr->translate("Ein Hund \xE2\x98\x83 \xF0\x9F\x90\x89", {});  // snowman, dragon
    CHECK(std::count(out.source_tokens.begin(), out.source_tokens.end(), "<unk>") >= 2);
    CHECK(out.source_tokens.back() == "</s>");
  }
  SUBCASE("5,000 characters: truncated to the model's positions, bounded decoding") {
    std::string text;  // one sentence (several share the positions whole: test_translation_text.cpp)
    while (text.size() < 5000) text += "Ein Mann mit einem roten Hut sitzt auf einer Bank, ";
    text.resize(5000);
    attnlens::api::TranslationParams p;
    p.num_beams = 2;
    const auto out = tr->translate(text, p);
    CHECK(out.truncated);
    CHECK(out.source_pieces > max_src);
    CHECK(out.source_ids.size() == max_src);
    CHECK(out.source_ids.back() == 3);
    CHECK(out.target_ids.size() <= max_src - 1);
    CHECK_FALSE(out.text.empty());
  }
  SUBCASE("max_new_tokens caps the output; bad parameters are errors") {
    attnlens::api::TranslationParams p;
    p.max_new_tokens = 3;
    CHECK(tr->translate("Ein Hund rennt über die Wiese.", p).target_ids.size() <= 3);
    attnlens::api::TranslationParams bad;
    bad.num_beams = -1;
    CHECK_THROWS_AS(tr->translate("Hallo", bad), attnlens::Error);
    bad = {};
    bad.num_beams = 1000;
    CHECK_THROWS_AS(tr->translate("Hallo", bad), attnlens::Error);
    bad = {};
    bad.alpha = std::nan("");
    CHECK_THROWS_AS(tr->translate("Hallo", bad), attnlens::Error);
  }
}

TEST_CASE("translation: bundles that do not fit are clear errors") {
  CHECK_THROWS_AS(attnlens::api::Translator::load(source_path("tests/goldens/translation/no-such-bundle")),
                  attnlens::Error);
  const std::string dir = source_path("tests/goldens/translation/rnn-additive");
  std::ifstream cfg_in(dir + "/config.json");
  nlohmann::json cfg;
  cfg_in >> cfg;
  std::ifstream w_in(dir + "/weights.safetensors", std::ios::binary);
  std::vector<std::uint8_t> weights((std::istreambuf_iterator<char>(w_in)), std::istreambuf_iterator<char>());
  std::ifstream v_in(dir + "/bpe.vocab");
  const std::string vocab((std::istreambuf_iterator<char>(v_in)), std::istreambuf_iterator<char>());
  const std::map<std::string, std::string> files = {{"bpe.vocab", vocab}, {"bpe.merges", ""}};
  // From memory, as the WASM build loads it.
  CHECK(attnlens::api::Translator::from_memory(cfg.dump(), weights, files)->translate("ein hund", {}).text.size() > 0);
  auto broken = cfg;
  broken["attention"] = "dot";
  CHECK_THROWS_WITH_AS(attnlens::api::Translator::from_memory(broken.dump(), weights, files),
                       doctest::Contains("attention"), attnlens::Error);
  broken = cfg;
  broken["attention_dim"] = 9;
  CHECK_THROWS_WITH_AS(attnlens::api::Translator::from_memory(broken.dump(), weights, files),
                       doctest::Contains("attn_key.weight"), attnlens::Error);
  broken = cfg;
  broken["vocab_size"] = 40;
  CHECK_THROWS_AS(attnlens::api::Translator::from_memory(broken.dump(), weights, files), attnlens::Error);
  for (const nlohmann::json& pool : {nlohmann::json(0), nlohmann::json(9), nlohmann::json(2.5)}) {
    broken = cfg;
    broken["decoding"]["candidates_per_beam"] = pool;
    CHECK_THROWS_WITH_AS(attnlens::api::Translator::from_memory(broken.dump(), weights, files),
                         doctest::Contains("candidates_per_beam must be an integer in [1, 8]"), attnlens::Error);
  }
  broken = cfg;
  broken["decoding"]["candidates_per_beam"] = 2;
  const auto pooled = attnlens::api::Translator::from_memory(broken.dump(), weights, files);
  CHECK(pooled->translate("ein hund", {}).text.size() > 0);
  CHECK_THROWS_AS(attnlens::api::Translator::from_memory(cfg.dump(), weights, {{"bpe.vocab", vocab}}), attnlens::Error);
}

TEST_CASE("translation: shipped RNN bundles match their PyTorch goldens (when exported)") {
  // models/de-en-rnn-{general,additive} appear once the recipe's export.py and make_goldens.py have run; extra
  // bundle folders can be named in ATTNLENS_TRANSLATION_BUNDLES (colon-separated), e.g. a fresh export.
  std::vector<std::string> dirs = {source_path("models/de-en-rnn-general"), source_path("models/de-en-rnn-additive")};
  if (const char* extra = std::getenv("ATTNLENS_TRANSLATION_BUNDLES")) {
    std::string list = extra;
    for (std::size_t i = 0; i <= list.size();) {
      std::size_t j = list.find(':', i);
      if (j == std::string::npos) j = list.size();
      if (j > i) dirs.push_back(list.substr(i, j - i));
      i = j + 1;
    }
  }
  for (const auto& dir : dirs) {
    if (!std::ifstream(dir + "/golden.json")) {
      MESSAGE("skipped (not exported yet): " << dir);
      continue;
    }
    CAPTURE(dir);
    const auto model = make_model(attnlens::io::Bundle::load(dir));
    const auto golden_json = read_json(dir + "/golden.json");
    const auto golden = attnlens::io::SafeTensors::load(dir + "/golden.safetensors");
    for (const auto& c : golden_json["cases"]) {
      CAPTURE(c["name"].get<std::string>());
      check_teacher_forced_case(*model, c, golden, model->vocab_size());
      check_search_case(*model, c, golden_json["decoding"]);
    }
  }
}

// Regression: an empty bpe.merges next to the full 8104-piece vocabulary loaded silently and "translated" character
// pieces into gibberish. The merges must fit the vocabulary; the error names the merges file and the bundle.
TEST_CASE("translation: a merges file that does not fit the vocabulary is refused") {
  const std::string dir = source_path("models/de-en-transformer");
  const std::string cfg = read_text(dir + "/config.json");
  const std::string w = read_text(dir + "/weights.safetensors");
  const std::vector<std::uint8_t> weights(w.begin(), w.end());
  const std::string vocab = read_text(dir + "/bpe.vocab"), merges = read_text(dir + "/bpe.merges");
  CHECK_THROWS_WITH_AS(
      attnlens::api::Translator::from_memory(cfg, weights, {{"bpe.vocab", vocab}, {"bpe.merges", ""}}, "de-en"),
      doctest::Contains("bpe.merges in de-en: no merge produces vocabulary piece"), attnlens::Error);
  const std::string half = merges.substr(0, merges.find('\n', merges.size() / 2) + 1);
  CHECK_THROWS_WITH_AS(
      attnlens::api::Translator::from_memory(cfg, weights, {{"bpe.vocab", vocab}, {"bpe.merges", half}}, "de-en"),
      doctest::Contains("bpe.merges in de-en"), attnlens::Error);
  CHECK(attnlens::api::Translator::from_memory(cfg, weights, {{"bpe.vocab", vocab}, {"bpe.merges", merges}}, "de-en")
            ->vocab_size() == 8104);
}

namespace {

// The maps a search recorded (encoder from its one run, decoder rows read back along the chosen hypothesis) against
// a second, teacher-forced run over <s> + the chosen tokens: the same maps, in the same order, within `tol`.
void check_recorded_maps(const attnlens::models::Seq2SeqModel& model, const std::vector<int>& src,
                         const attnlens::decode::SearchParams& p, float tol) {
  AttentionTrace recorded;
  auto step = model.start(src, &recorded);
  step->record_maps(static_cast<std::size_t>(p.num_beams), static_cast<std::size_t>(p.max_new_tokens));
  const auto r = attnlens::decode::search(*step, p);
  REQUIRE(!r.tokens.empty());
  REQUIRE(r.rows.size() == r.tokens.size());
  step->trace_hypothesis(r.rows, recorded);

  // The same search without recording picks the same tokens and score.
  auto plain = model.start(src, nullptr);
  const auto r2 = attnlens::decode::search(*plain, p);
  CHECK(r2.tokens == r.tokens);
  CHECK(r2.score == r.score);

  std::vector<int> tgt_in{2};
  tgt_in.insert(tgt_in.end(), r.tokens.begin(), r.tokens.end() - 1);
  AttentionTrace forced;
  model.forward(src, tgt_in, &forced);
  REQUIRE(recorded.size() == forced.size());
  float worst = 0;
  for (std::size_t i = 0; i < forced.size(); ++i) {
    const attnlens::MapView a = recorded[i];
    const attnlens::MapView b = forced[i];
    CAPTURE(b.name);
    CAPTURE(b.layer);
    CAPTURE(b.head);
    REQUIRE(a.name == b.name);
    REQUIRE(a.layer == b.layer);
    REQUIRE(a.head == b.head);
    REQUIRE(a.dims == b.dims);
    for (std::size_t k = 0; k < a.data.size(); ++k) worst = std::max(worst, std::fabs(a.data[k] - b.data[k]));
  }
  INFO("largest difference " << worst);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("translation: maps recorded during greedy and beam search equal teacher forcing of the chosen tokens") {
  for (const char* name : {"de-en-transformer"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("models/") + name);
    const auto bundle = attnlens::io::Bundle::load(dir);
    const attnlens::models::TransformerSeq2Seq model(bundle);
    const auto golden_json = read_json(dir + "/golden.json");
    for (std::size_t i = 0; i < 4; ++i) {
      const auto& c = golden_json["cases"][i];
      CAPTURE(c["name"].get<std::string>());
      const std::vector<int> src = ids_of(c["source_ids"]);
      attnlens::decode::SearchParams p;
      p.max_new_tokens = static_cast<int>(2 * src.size() + 10);
      for (int beams : {1, 4, 5, 12}) {  // the step's packed products give a row the same bits alone or paired:
        CAPTURE(beams);                  // the maps equal teacher forcing exactly for any number of beams
        p.num_beams = beams;
        p.coverage_beta = beams == 4 ? 0.2 : 0.0;  // the coverage signal computed beside the recording
        check_recorded_maps(model, src, p, 0.0f);
      }
    }
  }
  for (const char* name : {"rnn-additive", "rnn-general"}) {
    CAPTURE(name);
    const std::string dir = source_path(std::string("tests/goldens/translation/") + name);
    const auto model = attnlens::models::make_rnn_seq2seq(attnlens::io::Bundle::load(dir));
    const auto golden_json = read_json(dir + "/golden.json");
    for (const auto& c : golden_json["cases"]) {
      const std::vector<int> src = ids_of(c["source_ids"]);
      attnlens::decode::SearchParams p;
      p.max_new_tokens = static_cast<int>(2 * src.size() + 10);
      for (int beams : {1, 3}) {
        p.num_beams = beams;
        p.coverage_beta = beams == 3 ? 0.2 : 0.0;
        check_recorded_maps(*model, src, p, 0.0f);
      }
    }
  }
}

TEST_CASE("translation: api::Translator returns the search's maps, equal to a forced decode of its output") {
  const auto tr = attnlens::api::Translator::load(source_path("models/de-en-transformer"));
  const auto golden_json = read_json(source_path("models/de-en-transformer/golden.json"));
  const auto& c = golden_json["cases"][2];
  for (int beams : {1, 4}) {
    CAPTURE(beams);
    attnlens::api::TranslationParams p;
    p.num_beams = beams;
    const auto out = tr->translate(c["source"].get<std::string>(), p);
    CHECK(out.target_ids == ids_of(c[beams == 1 ? "greedy" : "beam4"]["ids"]));
    const auto model = attnlens::models::TransformerSeq2Seq(
        attnlens::io::Bundle::load(source_path("models/de-en-transformer")));
    std::vector<int> tgt_in{2};
    tgt_in.insert(tgt_in.end(), out.target_ids.begin(), out.target_ids.end() - 1);
    AttentionTrace forced;
    model.forward(out.source_ids, tgt_in, &forced);
    REQUIRE(out.attentions.size() == forced.size());
    for (std::size_t i = 0; i < forced.size(); ++i) {
      CHECK(out.attentions[i].name == forced[i].name);
      CHECK(out.attentions[i].dims == forced[i].dims);
      CHECK(out.attentions[i].data == forced[i].data);
    }
  }
}

namespace {

// Every map of `r` recomputed from its query/key vectors (test_support.h), j ≤ i for decoder_self.
double max_qk_error(const attnlens::api::TranslationResult& r) {
  return attnlens::testing::max_qk_error(r.attentions, r.qk,
                                         [](const std::string& kind) { return kind == "decoder_self"; });
}

}  // namespace

TEST_CASE("translation: output_qk returns the query/key vectors behind every map (neuron view)") {
  const auto tr = attnlens::api::Translator::load(source_path("models/de-en-transformer"));
  const std::string source = "Ein Mann fährt mit dem Fahrrad über eine Brücke.";
  attnlens::api::TranslationParams p;
  CHECK(tr->translate(source, p).qk.empty());  // off by default
  p.output_qk = true;
  for (int beams : {1, 4}) {
    CAPTURE(beams);
    p.num_beams = beams;
    const auto out = tr->translate(source, p);
    REQUIRE(!out.attentions.empty());
    CHECK(out.qk.size() == 2 * out.attentions.size());  // a query and a key set per map
    CHECK(max_qk_error(out) < 1e-5);
  }
  const auto aligned = tr->align(source, "A man rides a bike over a bridge.", p);
  CHECK(aligned.qk.size() == 2 * aligned.attentions.size());
  CHECK(max_qk_error(aligned) < 1e-5);
  // The RNN translators' attention is not a query·key product: a clear error, not empty vectors.
  const auto rnn = attnlens::api::Translator::load(source_path("tests/goldens/translation/rnn-additive"));
  CHECK_THROWS_WITH_AS(rnn->translate(source, p), doctest::Contains("output_qk"), attnlens::Error);
  CHECK_THROWS_WITH_AS(rnn->align(source, "A man.", p), doctest::Contains("output_qk"), attnlens::Error);
}

TEST_CASE("translation: attention_selection returns only the asked kinds, or each layer's head mean") {
  const auto tr = attnlens::api::Translator::load(source_path("models/de-en-transformer"));
  const std::string source = "Ein Mann fährt mit dem Fahrrad über eine Brücke.";
  attnlens::api::TranslationParams p;
  p.word_maps = true;
  const auto all = tr->translate(source, p);
  p.attention_selection = {{"cross"}, true};
  const auto sel = tr->translate(source, p);
  CHECK(sel.text == all.text);
  CHECK(sel.alignment == all.alignment);  // the links still come from the full maps
  std::vector<attnlens::MapView> full;
  for (const attnlens::MapView m : all.attentions)
    if (m.name == "cross") full.push_back(m);
  REQUIRE(!full.empty());
  const int heads =
      static_cast<int>(std::count_if(full.begin(), full.end(), [](const auto& m) { return m.layer == 0; }));
  REQUIRE(sel.attentions.size() * static_cast<std::size_t>(heads) == full.size());
  for (const auto& m : sel.attentions) {
    CHECK(m.name == "cross");
    CHECK(m.head == -1);
    for (std::size_t k = 0; k < m.data.size(); ++k) {
      double sum = 0;
      for (const auto& f : full)
        if (f.layer == m.layer) sum += f.data[k];
      CHECK(m.data[k] == doctest::Approx(sum / heads).epsilon(1e-6));
    }
  }
  CHECK(sel.word_attentions.size() == sel.attentions.size());
  p.attention_selection = {{"encoder"}, false};
  CHECK_THROWS_WITH_AS(tr->translate(source, p), doctest::Contains("no 'encoder' maps"), attnlens::Error);
}

// int8 weights (config "weight_precision": "int8", scripts/quantize.mjs): the same golden cases through the int8
// decoder-step weights. Not a parity check — int8 changes the numbers — but a bound on how much: the logits at the
// golden top-16 ids and every map, against the float32 PyTorch goldens, and the arg max wherever PyTorch's top two
// logits are more than 1 apart. The measured figures are printed; the bounds hold them with a margin of about 2×.
TEST_CASE("translation: int8 weights stay within their stated deviation of the float32 goldens") {
  for (const std::string name : {"de-en-general", "de-en-transformer", "de-en-rnn-general", "de-en-rnn-additive"}) {
    CAPTURE(name);
    const std::string dir = source_path("models/" + name);
    auto config = read_json(dir + "/config.json");
    config["weight_precision"] = "int8";
    const std::string weights = read_text(dir + "/weights.safetensors");
    const auto bundle = attnlens::io::Bundle::from_memory(
        config.dump(), std::vector<std::uint8_t>(weights.begin(), weights.end()), {}, name);
    REQUIRE(bundle.weight_precision() == attnlens::kernels::Precision::int8);
    const auto model = make_model(bundle);
    const auto golden_json = read_json(dir + "/golden.json");
    const auto golden = attnlens::io::SafeTensors::load(dir + "/golden.safetensors");
    const std::size_t V = model->vocab_size();
    double logit_max = 0, map_max = 0, map_sum = 0;
    std::size_t map_count = 0, confident = 0, agree = 0;
    for (const auto& c : golden_json["cases"]) {
      AttentionTrace trace;
      const std::vector<float> logits = model->forward(ids_of(c["source_ids"]), ids_of(c["target_in_ids"]), &trace);
      const std::string key = c["name"].get<std::string>();
      const GoldenTensor top_ids = golden_tensor(golden, key + "/logits_top_ids");
      const GoldenTensor top_values = golden_tensor(golden, key + "/logits_top_values");
      const std::size_t T = top_ids.dim(0), K = top_ids.dim(1);
      for (std::size_t t = 0; t < T; ++t) {
        const float* row = logits.data() + t * V;
        for (std::size_t j = 0; j < K; ++j)
          logit_max = std::max(logit_max, std::fabs(static_cast<double>(row[static_cast<std::size_t>(top_ids.data[t * K + j])]) -
                                                    top_values.data[t * K + j]));
        if (top_values.data[t * K] - top_values.data[t * K + 1] > 1.0f) {
          ++confident;
          agree += static_cast<std::size_t>(std::max_element(row, row + V) - row) ==
                   static_cast<std::size_t>(top_ids.data[t * K]);
        }
      }
      for (const auto& a : c["attentions"]) {
        const GoldenTensor g = golden_tensor(golden, a["key"].get<std::string>());
        const std::size_t per_head = g.dims.size() == 3 ? g.dims[1] * g.dims[2] : g.data.size();
        const std::size_t heads = g.dims.size() == 3 ? g.dims[0] : 1;
        for (std::size_t h = 0; h < heads; ++h) {
          const auto m = find_map(trace, a["name"].get<std::string>(), a["layer"].get<int>(),
                                  g.dims.size() == 3 ? static_cast<int>(h) : -1);
          REQUIRE(m.has_value());
          REQUIRE(m->data.size() == per_head);
          for (std::size_t i = 0; i < per_head; ++i) {
            const double d = std::fabs(static_cast<double>(m->data[i]) - g.data[h * per_head + i]);
            map_max = std::max(map_max, d);
            map_sum += d;
            ++map_count;
          }
        }
      }
    }
    const double map_mean = map_sum / static_cast<double>(std::max<std::size_t>(map_count, 1));
    MESSAGE(name << " int8 against the float32 goldens: logits (top-16) max |Δ| " << logit_max << "; maps max |Δ| "
                 << map_max << ", mean |Δ| " << map_mean << " over " << map_count << " weights; arg max "
                 << agree << "/" << confident << " confident steps");
    CHECK(map_count > 0);
    CHECK(confident > 0);
    CHECK(agree == confident);
    CHECK(logit_max <= 0.35);
    CHECK(map_max <= 0.1);
    CHECK(map_mean <= 1e-3);
  }
}

namespace {

// start_many + greedy_search_many over the first golden sources (and a source of </s> alone) against each source
// decoded alone: same tokens, score and every map, bit for bit; one source cut short by its limit.
void check_sources_decoded_together(const attnlens::models::Seq2SeqModel& model, const std::string& dir) {
  const auto golden_json = read_json(dir + "/golden.json");
  std::vector<std::vector<int>> srcs;
  for (std::size_t i = 0; i < 4; ++i) srcs.push_back(ids_of(golden_json["cases"][i]["source_ids"]));
  srcs.push_back({3});  // a source of </s> alone
  // Per-source limits, one of them cutting its translation short (the row leaves the batch before </s>).
  std::vector<int> limits;
  for (const auto& s : srcs) limits.push_back(static_cast<int>(2 * s.size() + 10));
  limits[1] = 3;
  std::vector<AttentionTrace> traces(srcs.size());
  std::vector<AttentionTrace*> slots;
  for (auto& t : traces) slots.push_back(&t);
  REQUIRE(model.decodes_sources_together());
  auto batch = model.start_many(srcs, slots);
  REQUIRE(batch != nullptr);
  REQUIRE(batch->rows() == srcs.size());
  batch->record_maps(srcs.size(), 64);
  const auto found = attnlens::decode::greedy_search_many(*batch, limits, 2, 3);
  REQUIRE(found.size() == srcs.size());
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    CAPTURE(i);
    AttentionTrace alone;
    auto step = model.start(srcs[i], &alone);
    step->record_maps(1, 64);
    attnlens::decode::SearchParams p;
    p.max_new_tokens = limits[i];
    const auto r = attnlens::decode::greedy_search(*step, p);
    CHECK(found[i].tokens == r.tokens);
    CHECK(found[i].score == r.score);
    CHECK(found[i].finished == r.finished);
    step->trace_hypothesis(r.rows, alone);
    batch->trace_hypothesis(found[i].rows, traces[i]);
    REQUIRE(traces[i].size() == alone.size());
    REQUIRE(alone.size() > 0);
    for (std::size_t m = 0; m < alone.size(); ++m) {
      CHECK(traces[i][m].name == alone[m].name);
      CHECK(traces[i][m].dims == alone[m].dims);
      CHECK(traces[i][m].data == alone[m].data);  // bit for bit
    }
  }
  CHECK(found[1].tokens.size() == 3);
  CHECK_FALSE(found[1].finished);
  float coverage[64];
  int prev[5] = {2, 2, 2, 2, 2};
  std::vector<float> logits(srcs.size() * model.vocab_size());
  auto again = model.start_many(srcs, std::vector<AttentionTrace*>(srcs.size(), nullptr));
  CHECK_THROWS_AS(again->step(prev, logits.data(), coverage), attnlens::Error);  // no coverage over several sources
}

}  // namespace

TEST_CASE("transformer: sources decoded together (start_many + greedy_search_many) equal each decoded alone") {
  const std::string dir = source_path("models/de-en-transformer");
  check_sources_decoded_together(attnlens::models::TransformerSeq2Seq(attnlens::io::Bundle::load(dir)), dir);
}

TEST_CASE("rnn translators: sources decoded together (start_many + greedy_search_many) equal each decoded alone") {
  for (const std::string name : {"de-en-rnn-general", "de-en-rnn-additive"}) {
    CAPTURE(name);
    const std::string dir = source_path("models/" + name);
    check_sources_decoded_together(*attnlens::models::make_rnn_seq2seq(attnlens::io::Bundle::load(dir)), dir);
  }
}

TEST_CASE("translation: RNN encoders read each word's kept input projection with the same bits, cold or warm") {
  // The RNN encoders keep every word's input projection once computed (nn/embedding_projection.h). A source must
  // give the same logits and maps whether its words were projected in its own product (a fresh model), or earlier
  // by other sentences — including sources of one and two ids, which a plain product would send down the
  // one-or-two-row dot-product path.
  for (const std::string name : {"de-en-rnn-general", "de-en-rnn-additive"}) {
    CAPTURE(name);
    const std::string dir = source_path("models/" + name);
    const auto golden_json = read_json(dir + "/golden.json");
    std::vector<std::pair<std::vector<int>, std::vector<int>>> cases;
    for (const auto& c : golden_json["cases"]) cases.emplace_back(ids_of(c["source_ids"]), ids_of(c["target_in_ids"]));
    REQUIRE(cases.size() >= 2);
    const std::vector<int> tgt = cases[0].second;
    cases.push_back({{cases[0].first.back()}, tgt});  // one id (its last, </s>)
    cases.push_back({{cases[1].first.front(), cases[1].first.back()}, tgt});  // two ids
    auto run = [&](const attnlens::models::Seq2SeqModel& m, const std::pair<std::vector<int>, std::vector<int>>& c) {
      AttentionTrace trace;
      std::vector<float> out = m.forward(c.first, c.second, &trace);
      for (const auto& map : trace) out.insert(out.end(), map.data.begin(), map.data.end());
      return out;
    };
    const auto bundle = attnlens::io::Bundle::load(dir);
    const auto warm = make_model(bundle);
    for (const auto& c : cases) run(*warm, c);  // every word of every case kept
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto cold = make_model(bundle);  // nothing kept: the words are projected in this source's product
      const std::vector<float> a = run(*cold, cases[i]), b = run(*warm, cases[i]);
      REQUIRE(a.size() == b.size());
      CHECK_MESSAGE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0, "case " << i);
    }
  }
}
