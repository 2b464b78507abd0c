// attnlens-cli translate and align: translation bundles (api/translation.h). Their option flags come from the
// task's contracts (api::translation_contract(), api::align_contract(): --num-beams N, --alignment-layer L, …),
// with the older spellings (--beams, --method, --extraction, --layer, --head, --qk) kept working.
#include "cli.h"

namespace attnlens::cli {

namespace {

// --attentions and --json are the CLI's own: output_attentions follows from them.
const std::map<std::string, std::string> kOlderFlags = {{"--beams", "num_beams"},      {"--method", "alignment_method"},
                                                        {"--extraction", "alignment_extraction"},
                                                        {"--layer", "alignment_layer"}, {"--head", "alignment_head"},
                                                        {"--qk", "output_qk"}};

ContractFlags flags_of(const api::Contract& contract) {
  std::map<std::string, std::string> aliases;
  for (const auto& [flag, name] : kOlderFlags)
    for (const auto& o : contract.options)
      if (o.name == name) aliases.emplace(flag, name);
  return ContractFlags{&contract, {"output_attentions"}, aliases};
}

// One translation (or forced decode) as JSON: the result's fields as the package publishes them (to_json; the text
// handled as the package does: sentences, offsets as string indices of the line), the attention maps only with
// --attentions (they are computed for the alignment whenever JSON is asked for).
nlohmann::json translation_json(const api::TranslationResult& r, bool attentions) {
  nlohmann::json j = to_json(r);
  if (!attentions) {
    j.erase("attentions");
    if (j.contains("sentences"))
      for (auto& sentence : j["sentences"]) sentence.erase("attentions");
  }
  return j;
}

// The arguments of translate / align, and the params their contract flags give.
struct Setup {
  Args args;
  api::TranslationParams params;
  bool json = false, attentions = false;
};

Setup setup(int argc, char** argv, const api::Contract& contract, const std::string& command) {
  const ContractFlags options = flags_of(contract);
  std::vector<std::string> valued = options.valued(), flags = options.flags();
  valued.push_back("--model");
  flags.insert(flags.end(), {"--json", "--attentions"});
  Setup s{parse_args(argc, argv, 2, valued, flags, command), {}, false, false};
  s.params = api::translation_params(options.read(s.args, command).dump());
  s.json = has_flag(s.args, "--json");
  s.attentions = has_flag(s.args, "--attentions");
  if ((s.attentions || s.params.word_maps || s.params.output_qk) && !s.json)
    throw UsageError(command + ": --attentions/--word-maps/--qk need --json");
  return s;
}

}  // namespace

int align_command(int argc, char** argv) {
  const Setup s = setup(argc, argv, api::align_contract(), "align");
  no_positional(s.args, "align", "pairs are read from stdin");
  const auto translator = api::Translator::load(required_option(s.args, "--model", "DIR", "align"));
  std::string line;
  int status = 0;
  while (read_line(line)) {
    try {
      const auto tab = line.find('\t');
      require(tab != std::string::npos, "align: a line must be German<TAB>English");
      const auto r = translator->align(line.substr(0, tab), line.substr(tab + 1), s.params);
      if (s.json) {
        write_line(dump(translation_json(r, s.attentions)));
      } else {
        std::string out;
        for (const auto& l : r.alignment)
          out += (out.empty() ? "" : " ") + std::to_string(l.source) + "-" + std::to_string(l.target);
        write_line(out);
      }
    } catch (const Error& e) {
      status = 1;
      write_line(s.json ? dump({{"error", e.what()}}) : std::string("ERROR: ") + e.what());
    }
  }
  finish_io("align");
  return status;
}

int translate_command(int argc, char** argv) {
  Setup s = setup(argc, argv, api::translation_contract(), "translate");
  no_positional(s.args, "translate");
  const std::string& model = required_option(s.args, "--model", "DIR", "translate");
  // Maps are computed for the alignment too whenever JSON is asked for; plain text output needs none.
  s.params.output_attentions = s.json;
  const auto translator = api::Translator::load(model);
  std::string line;
  while (read_line(line)) {
    const auto r = translator->translate(line, s.params);
    write_line(s.json ? dump(translation_json(r, s.attentions)) : r.text);
  }
  finish_io("translate");
  return 0;
}

}  // namespace attnlens::cli
