// attnlens-cli vqa: questions about images (api/vqa.h), from --question or IMAGE<TAB>QUESTION stdin lines.
#include "cli.h"

namespace attnlens::cli {

int vqa_command(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--encoder", "--question"}, {"--json", "--attentions"}, "vqa");
  const std::string& model = required_option(args, "--model", "DIR", "vqa");
  const std::string* encoder = find_option(args, "--encoder");
  const std::string* question = find_option(args, "--question");
  const bool json = has_flag(args, "--json");
  api::VqaParams params;
  params.output_attentions = has_flag(args, "--attentions");
  if (params.output_attentions && !json) throw UsageError("vqa: --attentions needs --json");
  if (question == nullptr && !args.positional.empty())
    throw UsageError("vqa: give --question TEXT with image paths, or IMAGE<TAB>QUESTION lines on stdin");
  const auto vqa = api::VisualQA::load(model, encoder ? *encoder : "");
  int status = 0;
  std::string grid_path;  // the grid of the last image, reused while the next lines ask about the same image
  api::Tensor grid;
  auto one = [&](const std::string& path, const std::string& q) {
    std::string out;
    try {
      if (path != grid_path || grid.data.empty()) {
        grid_path.clear();
        const api::DecodedImage img = api::decode_pnm(read_binary(path), path);
        grid = vqa->encode(img.pixels.data(), img.pixels.size(), img.width, img.height, img.channels);
        grid_path = path;
      }
      const api::VqaResult r = vqa->answer_grid(grid, q, params);
      if (json) {
        nlohmann::json j = to_json(r);
        if (!params.output_attentions) j.erase("attentions");
        j["image"] = path;
        j["question"] = q;
        out = dump(j);
      } else {
        out = r.answer;
      }
    } catch (const Error& e) {
      status = 1;
      out = json ? dump({{"image", path}, {"question", q}, {"error", e.what()}}) : std::string("ERROR: ") + e.what();
    }
    write_line(out);
  };
  if (question != nullptr) {
    if (args.positional.empty()) throw UsageError("vqa: --question TEXT needs at least one IMAGE");
    for (const std::string& p : args.positional) one(p, *question);
    finish_io("vqa", false);
    return status;
  }
  for_each_line(
      [&](const std::string& line) {
        const std::size_t tab = line.find('\t');
        one(line.substr(0, tab), tab == std::string::npos ? std::string() : line.substr(tab + 1));
      },
      true);
  finish_io("vqa");
  return status;
}

}  // namespace attnlens::cli
