// attnlens-cli caption: image captioning (api/captioning.h), searched or forced (--caption / --forced). Its
// option flags come from the task's contract (api::caption_contract(): --num-beams N, --max-new-tokens N,
// --allow-unk), with --beams kept working.
#include <cstdio>

#include "cli.h"

namespace attnlens::cli {

namespace {

struct RawSize {
  std::size_t width = 0, height = 0;  // 0: the images are PPM/PGM files
};

RawSize raw_size(const Args& args) {
  RawSize s;
  if (const std::string* v = find_option(args, "--raw-size")) {
    const std::size_t x = v->find('x');
    if (x == std::string::npos) throw UsageError("caption: --raw-size must look like 640x480");
    s.width = static_cast<std::size_t>(parse_int(v->substr(0, x), "--raw-size width", 1, 65536));
    s.height = static_cast<std::size_t>(parse_int(v->substr(x + 1), "--raw-size height", 1, 65536));
  }
  return s;
}

// The score, a TAB, then each token with its log-probability (a forced caption without --json).
std::string forced_text(const api::CaptionResult& r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(r.score));
  std::string out = std::string(buf) + '\t';
  for (std::size_t t = 0; t < r.tokens.size(); ++t) {
    std::snprintf(buf, sizeof buf, "(%.4f)", static_cast<double>(r.token_logprobs[t]));
    out += (t ? " " : "") + r.tokens[t] + buf;
  }
  return out;
}

// A result as one JSON line: the published fields (the maps as "attention" {dims, data}), forced ones marked.
nlohmann::json caption_json(const std::string& path, const api::CaptionResult& r, bool forced) {
  nlohmann::json j = to_json(r);
  j.erase("attentions");
  if (forced) {
    j["forced"] = true;
  } else {
    j.erase("token_logprobs");
    j.erase("unknown_words");
  }
  j["image"] = path;
  if (!r.attentions.empty()) j["attention"] = {{"dims", r.attentions[0].dims}, {"data", r.attentions[0].data.to_vector()}};
  return j;
}

}  // namespace

int caption_command(int argc, char** argv) {
  const ContractFlags options{&api::caption_contract(), {"output_attentions"}, {{"--beams", "num_beams"}}};
  std::vector<std::string> valued = options.valued(), flags = options.flags();
  valued.insert(valued.end(), {"--model", "--encoder", "--raw-size", "--caption"});
  flags.insert(flags.end(), {"--json", "--attentions", "--forced"});
  const Args args = parse_args(argc, argv, 2, valued, flags, "caption");
  const std::string& model = required_option(args, "--model", "DIR", "caption");
  const std::string* encoder = find_option(args, "--encoder");
  api::CaptionParams params = api::caption_params(options.read(args, "caption").dump());
  const RawSize raw = raw_size(args);
  const bool json = has_flag(args, "--json");
  params.output_attentions = has_flag(args, "--attentions");
  if (params.output_attentions && !json) throw UsageError("caption: --attentions needs --json");
  const std::string* forced_caption = find_option(args, "--caption");
  const bool forced_lines = has_flag(args, "--forced");
  if (forced_caption != nullptr && forced_lines) throw UsageError("caption: give --caption TEXT or --forced, not both");
  if (forced_lines && !args.positional.empty())
    throw UsageError("caption: with --forced, images and captions are read from stdin (IMAGE<TAB>CAPTION lines)");
  const auto captioner = api::Captioner::load(model, encoder ? *encoder : "");

  int status = 0;
  // caption == nullptr: search; else forced decoding of *caption
  auto one = [&](const std::string& path, const std::string* caption) {
    std::string out;
    try {
      const std::string bytes = read_binary(path);
      api::CaptionResult r;
      if (raw.width != 0) {
        const auto* px = reinterpret_cast<const std::uint8_t*>(bytes.data());
        r = caption ? captioner->attend(px, bytes.size(), raw.width, raw.height, *caption, params, 4)
                    : captioner->caption(px, bytes.size(), raw.width, raw.height, params, 4);
      } else {
        const api::DecodedImage img = api::decode_pnm(bytes, path);
        const std::uint8_t* px = img.pixels.data();
        r = caption ? captioner->attend(px, img.pixels.size(), img.width, img.height, *caption, params, img.channels)
                    : captioner->caption(px, img.pixels.size(), img.width, img.height, params, img.channels);
      }
      out = json ? dump(caption_json(path, r, caption != nullptr)) : caption ? forced_text(r) : r.text;
    } catch (const Error& e) {
      status = 1;
      out = json ? dump({{"image", path}, {"error", e.what()}}) : std::string("ERROR: ") + e.what();
    }
    write_line(out);
  };
  if (!args.positional.empty()) {
    for (const std::string& p : args.positional) one(p, forced_caption);
    finish_io("caption", false);
    return status;
  }
  for_each_line(
      [&](const std::string& line) {
        if (!forced_lines) return one(line, forced_caption);
        const std::size_t tab = line.find('\t');
        // a line without a TAB has no caption: reported for that line as an empty caption
        const std::string caption = tab == std::string::npos ? std::string() : line.substr(tab + 1);
        one(line.substr(0, tab), &caption);
      },
      true);
  finish_io("caption");
  return status;
}

}  // namespace attnlens::cli
