// Tests of src/io/config.h and of every architecture's config reading: a config.json value of the wrong type must
// be an attnlens::Error naming the file and the key, never a raw nlohmann::json::type_error
// ("[json.exception.type_error.302] type must be string, but is boolean"). Each case edits one key of a real
// bundle's config.json and loads it from memory, as the WASM build does.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.h"
#include "common.h"
#include "io/config.h"
#include "test_support.h"

namespace {

using attnlens::Error;
using attnlens::io::ConfigObject;
using nlohmann::json;
namespace api = attnlens::api;

const std::string kSource = ATTNLENS_SOURCE_DIR;

using attnlens::testing::read_file;

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  const std::string s = read_file(path);
  return std::vector<std::uint8_t>(s.begin(), s.end());
}

// A translator bundle's bpe.vocab and bpe.merges, as from_memory takes them.
std::map<std::string, std::string> tokenizer_files(const std::string& dir) {
  return {{"bpe.vocab", read_file(dir + "bpe.vocab")}, {"bpe.merges", read_file(dir + "bpe.merges")}};
}

// The message of the attnlens::Error `f` throws; a failed check (and "") when it throws anything else or nothing.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("not an attnlens::Error: " << std::string(e.what()));
    return {};
  }
  FAIL_CHECK("no error");
  return {};
}

// `edit` sets a wrong type at `key` (a dotted path); the load must fail naming config.json and the key.
struct Case {
  std::string key;
  std::function<void(json&)> edit;
};

void check_cases(const std::string& config_path, const std::vector<Case>& cases,
                 const std::function<void(const std::string&)>& load) {
  const json original = json::parse(read_file(config_path));
  for (const Case& c : cases) {
    CAPTURE(c.key);
    json cfg = original;
    c.edit(cfg);
    const std::string message = error_of([&] { load(cfg.dump()); });
    CAPTURE(message);
    CHECK(message.find("config.json") != std::string::npos);
    CHECK(message.find("\"" + c.key + "\"") != std::string::npos);
    CHECK(message.find("json.exception") == std::string::npos);
  }
  CHECK_NOTHROW(load(original.dump()));  // the unedited config loads
}

}  // namespace

TEST_SUITE("io.config") {
  TEST_CASE("ConfigObject: typed reads, messages with file, key and expectation") {
    const json j = json::parse(R"({"name": false, "n": 3, "big": 18446744073709551615, "x": 1.5, "s": "a",
                                   "o": {"k": [1]}})");
    const ConfigObject c(j, "config.json in m");
    CHECK(error_of([&] { c.string("name"); }) == "config.json in m: key \"name\": expected a string, got boolean false");
    CHECK(error_of([&] { c.string_or("name", "x"); }).find("key \"name\": expected a string") != std::string::npos);
    CHECK(c.string_or("missing", "fallback") == "fallback");
    CHECK(error_of([&] { c.string("missing"); }) == "config.json in m: key \"missing\": is missing");
    CHECK(c.integer("n", 1, 5) == 3);
    CHECK(error_of([&] { c.integer("n", 4, 5); }).find("expected an integer in [4, 5], got 3") != std::string::npos);
    CHECK(error_of([&] { c.integer("big", 0, 10); }).find("key \"big\"") != std::string::npos);
    CHECK(error_of([&] { c.integer("x", 0, 10); }).find("expected an integer, got number 1.5") != std::string::npos);
    CHECK(c.number("x") == 1.5);
    CHECK(error_of([&] { c.number("s"); }).find("expected a number, got string") != std::string::npos);
    CHECK(c.number_or("missing", 2.0) == 2.0);
    CHECK(error_of([&] { c.object("s"); }).find("key \"s\": expected an object") != std::string::npos);
    CHECK(error_of([&] { c.object("o").string("k"); }) ==
          "config.json in m: key \"o.k\": expected a string, got array [1]");
    CHECK(c.object("o").array("k").size() == 1);
    CHECK(error_of([&] { c.boolean("n"); }).find("expected true or false") != std::string::npos);
    CHECK(error_of([&] { ConfigObject(json::array(), "config.json in m"); }).find("expected a JSON object") !=
          std::string::npos);
  }

  TEST_CASE("translation (Transformer): wrong types are Errors naming the key") {
    const std::string dir = kSource + "/models/de-en-transformer/";
    const auto weights = read_bytes(dir + "weights.safetensors");
    const auto files = tokenizer_files(dir);
    check_cases(dir + "config.json",
                {{"name", [](json& c) { c["name"] = false; }},
                 {"tokenizer", [](json& c) { c["tokenizer"] = "bpe"; }},
                 {"tokenizer.type", [](json& c) { c["tokenizer"]["type"] = 1; }},
                 {"tokenizer.vocab", [](json& c) { c["tokenizer"]["vocab"] = json::array(); }},
                 {"tokenizer.merges", [](json& c) { c["tokenizer"]["merges"] = nullptr; }},
                 {"decoding.num_beams", [](json& c) { c["decoding"]["num_beams"] = "4"; }},
                 {"decoding.alpha", [](json& c) { c["decoding"]["alpha"] = true; }},
                 {"decoding.candidates_per_beam", [](json& c) { c["decoding"]["candidates_per_beam"] = "2"; }},
                 {"d_model", [](json& c) { c["d_model"] = "256"; }},
                 {"layer_norm_eps", [](json& c) { c["layer_norm_eps"] = "1e-5"; }}},
                [&](const std::string& cfg) { api::Translator::from_memory(cfg, weights, files); });
  }

  TEST_CASE("translation (RNN): wrong types are Errors naming the key") {
    const std::string dir = kSource + "/tests/goldens/translation/rnn-additive/";
    const auto weights = read_bytes(dir + "weights.safetensors");
    const auto files = tokenizer_files(dir);
    check_cases(dir + "config.json",
                {{"name", [](json& c) { c["name"] = 7; }},
                 {"tokenizer.type", [](json& c) { c["tokenizer"]["type"] = false; }},
                 {"tokenizer.vocab", [](json& c) { c["tokenizer"]["vocab"] = 3; }},
                 {"vocab_size", [](json& c) { c["vocab_size"] = 1.5; }},
                 {"embedding_dim", [](json& c) { c["embedding_dim"] = "256"; }},
                 {"attention", [](json& c) { c["attention"] = 5; }}},
                [&](const std::string& cfg) { api::Translator::from_memory(cfg, weights, files); });
  }

  TEST_CASE("sentiment: wrong types are Errors naming the key") {
    const std::string dir = kSource + "/models/sst2-relation/";
    const auto weights = read_bytes(dir + "weights.safetensors");
    const std::map<std::string, std::string> files = {{"vocab.txt", read_file(dir + "vocab.txt")}};
    check_cases(dir + "config.json",
                {{"tokenizer", [](json& c) { c["tokenizer"] = 1; }},
                 {"tokenizer.type", [](json& c) { c["tokenizer"]["type"] = false; }},
                 {"tokenizer.vocab", [](json& c) { c["tokenizer"]["vocab"] = json::object(); }},
                 {"tokenizer.unk_token", [](json& c) { c["tokenizer"]["unk_token"] = 1; }},
                 {"tokenizer.unk_id", [](json& c) { c["tokenizer"]["unk_id"] = "1"; }},
                 {"labels", [](json& c) { c["labels"] = "NEGATIVE,POSITIVE"; }},
                 {"emb_dim", [](json& c) { c["emb_dim"] = 200.5; }}},
                [&](const std::string& cfg) { api::SentimentClassifier::from_memory(cfg, weights, files); });
  }

  TEST_CASE("captioning (Show-Attend-Tell): wrong types are Errors naming the key") {
    const std::string dir = kSource + "/tests/goldens/captioning/tiny-sat/";
    const std::string enc_dir = kSource + "/models/mobilenet-v2-imagenet/";
    const auto weights = read_bytes(dir + "weights.safetensors");
    const auto enc_weights = read_bytes(enc_dir + "weights.safetensors");
    const std::string enc_cfg = read_file(enc_dir + "config.json");
    const std::map<std::string, std::string> files = {{"vocab.txt", read_file(dir + "vocab.txt")}};
    check_cases(dir + "config.json",
                {{"tokenizer.start_id", [](json& c) { c["tokenizer"]["start_id"] = "1"; }},
                 {"tokenizer.end_id", [](json& c) { c["tokenizer"]["end_id"] = 2.5; }},
                 {"tokenizer.vocab", [](json& c) { c["tokenizer"]["vocab"] = false; }},
                 {"tokenizer", [](json& c) { c["tokenizer"] = json::array(); }},
                 {"decoder.hidden_dim", [](json& c) { c["decoder"]["hidden_dim"] = "10"; }},
                 {"encoder.feat_dim", [](json& c) { c["encoder"]["feat_dim"] = true; }},
                 {"encoder.bundle", [](json& c) { c["encoder"]["bundle"] = 5; }},
                 {"encoder.cell_colour", [](json& c) { c["encoder"]["cell_colour"] = 1; }},
                 {"decoding.num_beams", [](json& c) { c["decoding"]["num_beams"] = "3"; }},
                 {"decoding.length_norm", [](json& c) { c["decoding"]["length_norm"] = "0"; }}},
                [&](const std::string& cfg) {
                  api::Captioner::from_memory(cfg, weights, files, enc_cfg, enc_weights, "tiny");
                });
  }

  TEST_CASE("MobileNetV2: wrong types are Errors naming the key") {
    const std::string dir = kSource + "/models/mobilenet-v2-imagenet/";
    const auto weights = read_bytes(dir + "weights.safetensors");
    const std::map<std::string, std::string> files = {{"labels.txt", read_file(dir + "labels.txt")}};
    check_cases(dir + "config.json",
                {{"encoder", [](json& c) { c["encoder"] = "mobilenet_v2"; }},
                 {"encoder.bn_eps", [](json& c) { c["encoder"]["bn_eps"] = "1e-5"; }},
                 {"classifier", [](json& c) { c["classifier"] = 1000; }},
                 {"classifier.labels", [](json& c) { c["classifier"]["labels"] = 5; }}},
                [&](const std::string& cfg) { api::ImageClassifier::from_memory(cfg, weights, files); });
  }
}
