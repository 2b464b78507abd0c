// attnlens-cli sort: numbers sorted by a pointer network (api/pointer.h), one list per line or the arguments.
#include "cli.h"

namespace attnlens::cli {

int sort_command(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model"}, {"--json", "--attentions"}, "sort");
  const std::string& model = required_option(args, "--model", "DIR", "sort");
  const bool json = has_flag(args, "--json");
  const bool attentions = has_flag(args, "--attentions");
  if (attentions && !json) throw UsageError("sort: --attentions needs --json");
  const auto sorter = api::PointerSorter::load(model);
  api::PointerSortParams params;
  params.output_attentions = attentions;

  bool failed = false;
  const auto one = [&](const std::string& text) {
    std::string out;
    try {
      const auto r = sorter->sort(api::parse_number_list(text), params);
      if (json) {
        nlohmann::json j = to_json(r);
        if (!attentions) j.erase("attentions");
        out = j.dump();
      } else {
        for (std::size_t i = 0; i < r.sorted.size(); ++i) out += (i ? " " : "") + nlohmann::json(r.sorted[i]).dump();
      }
    } catch (const Error& e) {
      failed = true;
      out = json ? dump({{"error", e.what()}}) : std::string("ERROR: ") + e.what();
    }
    write_line(out);
  };
  if (!args.positional.empty()) {
    std::string text;
    for (const auto& a : args.positional) text += a + " ";
    one(text);
    finish_io("sort", false);
  } else {
    for_each_line(one);
    finish_io("sort");
  }
  return failed ? 1 : 0;
}

}  // namespace attnlens::cli
