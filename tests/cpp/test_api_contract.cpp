// Each task's contract (api/contract.h): the result fields a struct visits are the ones it declares, options are
// read as declared (ranges, defaults, deprecated aliases), and the JSON form carries every declaration.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "api.h"
#include "common.h"

namespace api = attnlens::api;

namespace {

std::vector<std::string> engine_fields(const api::Contract& c) {
  std::vector<std::string> names;
  for (const auto& f : c.result)
    if (f.engine) names.push_back(f.name);
  return names;
}

template <class Result>
void check_fields(const api::Contract& c, const Result& r) {
  auto visited = api::field_names(r);
  auto declared = engine_fields(c);
  std::sort(visited.begin(), visited.end());
  std::sort(declared.begin(), declared.end());
  INFO(c.task, " ", c.entry);
  CHECK(visited == declared);
}

}  // namespace

TEST_CASE("contract: every result struct visits exactly the fields its task declares") {
  api::SentimentResult sentiment;
  api::PointerSortResult pointer;
  api::VqaResult vqa;
  api::CaptionResult caption;
  check_fields(api::sentiment_contract(), sentiment);
  check_fields(api::pointer_sort_contract(), pointer);
  check_fields(api::vqa_contract(), vqa);
  check_fields(api::caption_contract(), caption);
  check_fields(api::attend_contract(), caption);
  api::TranslationResult translation;
  check_fields(api::translation_contract(), translation);
  check_fields(api::align_contract(), translation);
  api::TextGenerationResult generation;
  check_fields(api::text_generation_contract(), generation);
  CHECK(api::field_names(api::VqaResult::UnknownWord{}) == std::vector<std::string>{"word", "position"});
  CHECK(api::field_names(api::WordSpan{}) == std::vector<std::string>{"text", "start", "end", "pieces"});
  CHECK(api::field_names(attnlens::analysis::Link{}) == std::vector<std::string>{"source", "target"});
  CHECK(api::field_names(attnlens::analysis::NumberCopy{}) ==
        std::vector<std::string>{"source_number", "target_word", "model", "text", "weight"});
  // A drift in either direction fails: a declared field that no struct has is not visited.
  auto declared = engine_fields(api::sentiment_contract());
  CHECK(std::find(declared.begin(), declared.end(), "labels") == declared.end());  // added by the JS package
}

TEST_CASE("contract: options are read as declared, with one range everywhere") {
  using Catch = attnlens::Error;
  // num_beams 1..64 (absent: the model's default) in every task that searches
  for (const char* task : {"image-to-text", "translation"}) {
    const auto& o = api::contract_of(task).option("num_beams");
    CHECK(o.lo == 1);
    CHECK(o.hi == 64);
    CHECK(o.fallback.is_null());
  }
  CHECK_THROWS_WITH_AS(api::translation_params("{\"num_beams\": 0}"), doctest::Contains("must be an integer in [1, 64]"), Catch);
  CHECK_THROWS_WITH_AS(api::caption_params("{\"num_beams\": 0}"), doctest::Contains("must be an integer in [1, 64]"), Catch);
  CHECK(api::translation_params("{}").num_beams == 0);  // 0 inside the engine: the model's default
  CHECK_THROWS_WITH_AS(api::translation_params("{\"alignment_layer\": -1}"), doctest::Contains("[0, 1023]"), Catch);
  CHECK(api::translation_params("{\"alignment_layer\": 1023}").alignment_layer == 1023);
  CHECK_THROWS_WITH_AS(api::translation_params("{\"alpha\": \"x\"}"), doctest::Contains("must be a number"), Catch);
  CHECK_THROWS_WITH_AS(api::translation_params("{\"alignment_method\": \"mean\"}"),
                       doctest::Contains("expected one of: head, layer-mean"), Catch);
  // restore_case is the engine's (text handling lives in api::Translator); align() takes it too
  CHECK_FALSE(api::translation_params("{\"restore_case\": false}").restore_case);
  CHECK(api::translation_params("{}").restore_case);
  CHECK(api::align_contract().option("restore_case").engine);
  // attend() takes output_attentions only
  CHECK_THROWS_WITH_AS(api::attend_params("{\"num_beams\": 2}"), doctest::Contains("unknown param 'num_beams'"), Catch);
  CHECK_FALSE(api::attend_params("{\"output_attentions\": false}").output_attentions);
  // the pointer task's output_attentions, and its deprecated name
  CHECK(api::pointer_sort_contract().option("output_attentions").alias == "encoder_attentions");
  CHECK_FALSE(api::pointer_sort_params("{\"encoder_attentions\": false}").output_attentions);
  CHECK(api::pointer_sort_params("{\"output_attentions\": true, \"encoder_attentions\": false}").output_attentions);
}

TEST_CASE("contract: the JSON form lists every task with its options and result fields") {
  const nlohmann::json all = nlohmann::json::parse(api::contracts_json());
  REQUIRE(all.size() == api::contracts().size());
  std::vector<std::string> names;
  for (const auto& c : all) names.push_back(c["task"].get<std::string>() + "/" + c["entry"].get<std::string>());
  for (const char* want : {"sentiment-analysis/", "number-sorting/", "visual-question-answering/", "image-to-text/",
                           "image-to-text/attend", "translation/", "translation/align"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  const nlohmann::json beams = all[5]["options"][0];
  CHECK(beams["name"] == "num_beams");
  CHECK(beams["min"] == 1);
  CHECK(beams["max"] == 64);
  CHECK(beams["default"].is_null());
  CHECK(beams["kind"] == "integer");
  CHECK(beams["given"] == "call");
  const nlohmann::json pointer = all[1]["options"][0];
  CHECK(pointer["alias"] == "encoder_attentions");
  CHECK(pointer["default"] == true);
  CHECK(all[0]["result"].size() == api::sentiment_contract().result.size());
  CHECK(all[0]["options"][1]["engine"] == false);
  CHECK_THROWS_AS(api::contract_of("summarization"), attnlens::Error);
}
