// attnlens-cli sentiment: SST-2 classification of stdin lines, one JSON object per line. Its option flags come
// from the task's contract (api::sentiment_contract(): --max-tokens N).
#include "cli.h"

namespace attnlens::cli {

int sentiment_command(int argc, char** argv) {
  const ContractFlags options{&api::sentiment_contract(), {}, {}};
  std::vector<std::string> valued = options.valued(), flags = options.flags();
  valued.push_back("--model");
  flags.insert(flags.end(), {"--pretokenized", "--no-attention"});
  const Args args = parse_args(argc, argv, 2, valued, flags, "sentiment");
  no_positional(args, "sentiment");
  const std::string& model = required_option(args, "--model", "DIR", "sentiment");
  const api::SentimentParams params = api::sentiment_params(options.read(args, "sentiment").dump());
  const bool pretokenized = has_flag(args, "--pretokenized");
  const bool attention = !has_flag(args, "--no-attention");
  const auto clf = api::SentimentClassifier::load(model, params);

  bool failed = false;
  for_each_line([&](const std::string& line) {
    nlohmann::json j;
    try {
      const auto r = pretokenized ? clf->classify_tokens(split_spaces(line)) : clf->classify(line);
      j = to_json(r);
      j.erase("attentions");  // the one map, as "attention" {name, dims, data}
      if (attention) {
        const MapView a = r.attentions.at(0);
        j["attention"] = {{"name", a.name}, {"dims", a.dims}, {"data", a.data.to_vector()}};
      }
    } catch (const Error& e) {
      j = {{"error", e.what()}};
      failed = true;
    }
    write_line(dump(j));
  });
  finish_io("sentiment");
  return failed ? 1 : 0;
}

}  // namespace attnlens::cli
