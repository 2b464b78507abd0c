// attnlens-cli text-classification / feature-extraction: converted BERT or DistilBERT bundles
// (api/hf_encoders.h) over stdin lines, one JSON object per line, the task's result fields (to_json);
// --no-attention drops the maps.
#include <type_traits>

#include "api/hf_encoders.h"

#include "cli.h"

namespace attnlens::cli {

namespace {

// Runs `task(line, params)` on every stdin line; exit status 1 when a line failed.
template <class Model>
int encoder_command(int argc, char** argv, const char* name, const api::Contract& contract) {
  const ContractFlags options{&contract, {"output_attentions"}, {}};
  std::vector<std::string> valued = options.valued(), flags = options.flags();
  valued.push_back("--model");
  flags.push_back("--no-attention");
  const Args args = parse_args(argc, argv, 2, valued, flags, name);
  no_positional(args, name);
  const std::string& model = required_option(args, "--model", "DIR", name);
  api::HfEncoderParams params = api::hf_encoder_params(contract, options.read(args, name).dump());
  params.output_attentions = !has_flag(args, "--no-attention");
  const auto m = Model::load(model);
  bool failed = false;
  for_each_line([&](const std::string& line) {
    nlohmann::json j;
    try {
      if constexpr (std::is_same_v<Model, api::HfTextClassifier>) {
        j = to_json(m->classify(line, params));
      } else {
        j = to_json(m->extract(line, params));
      }
    } catch (const Error& e) {
      j = {{"error", e.what()}};
      failed = true;
    }
    write_line(dump(j));
  });
  finish_io(name);
  return failed ? 1 : 0;
}

}  // namespace

int text_classification_command(int argc, char** argv) {
  return encoder_command<api::HfTextClassifier>(argc, argv, "text-classification",
                                                api::hf_text_classification_contract());
}

int feature_extraction_command(int argc, char** argv) {
  return encoder_command<api::HfFeatureExtractor>(argc, argv, "feature-extraction",
                                                  api::hf_feature_extraction_contract());
}

}  // namespace attnlens::cli
