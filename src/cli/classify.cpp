// attnlens-cli classify: ImageNet classes of images with an image classifier bundle (api/captioning.h).
#include <iostream>

#include "cli.h"

namespace attnlens::cli {

int classify_command(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--top"}, {}, "classify");
  const std::string& model = required_option(args, "--model", "DIR", "classify");
  std::size_t top = 5;
  if (const std::string* v = find_option(args, "--top")) top = static_cast<std::size_t>(parse_int(*v, "--top", 1, 1000));
  const auto clf = api::ImageClassifier::load(model);
  int status = 0;
  auto one = [&](const std::string& path) {
    nlohmann::json j = {{"image", path}};
    try {
      const api::DecodedImage img = api::decode_pnm(read_binary(path), path);
      nlohmann::json classes = nlohmann::json::array();
      for (const auto& c : clf->classify(img.pixels.data(), img.pixels.size(), img.width, img.height, top, img.channels))
        classes.push_back({{"index", c.index}, {"label", c.label}, {"probability", c.probability}});
      j["classes"] = std::move(classes);
    } catch (const Error& e) {
      status = 1;
      j["error"] = e.what();
    }
    write_line(dump(j));
  };
  if (!args.positional.empty()) {
    for (const std::string& p : args.positional) one(p);
  } else {
    for_each_line(one, true);
  }
  std::cout.flush();
  return status;
}

}  // namespace attnlens::cli
