// config.json → model construction, for every architecture, through the public API (api::Translator,
// api::SentimentClassifier, api::Captioner / the Show-Attend-Tell decoder, api::ImageClassifier).
//   byte 0: which tiny template's vocabulary files and weight cache to use (tests/fuzz/tiny/*.json; the
//           MobileNetV2 template rarely, it is slow); byte 1: how the model is run afterwards;
//   the rest: config.json text (the seeds are the tiny templates).
// The weights are built for whatever the config says (fuzz_common.h, synthesize_weights), so a mutated config
// reaches the model code behind the shape checks, and every model that constructs is run once (translate/align,
// classify, caption) with small limits.
// Checks: no exception but attnlens::Error; no sanitizer report; bounded time and memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tiny_bundles.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::base_tensors(0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t t = fuzz::pick_template(data[0]);
  const unsigned knob = data[1];
  const std::string config(reinterpret_cast<const char*>(data + 2), size - 2);

  std::map<std::string, fuzz::TensorSpec> tensors = fuzz::base_tensors(t);
  std::map<std::string, std::string> files = fuzz::templates()[t].files;
  for (const auto& [name, text] : fuzz::family_files(fuzz::family_of_architecture(fuzz::architecture_of(config))))
    files.emplace(name, text);
  const std::string weights = fuzz::weights_for(config, files, tensors);
  // The full captioner (real MobileNetV2 encoder) for a quarter of the captioning inputs.
  const bool full_captioner = (knob & 0xc0) == 0xc0;
  fuzz::ok_or_error([&] {
    const fuzz::Model m = fuzz::construct(config, weights, files, full_captioner);
    fuzz::run(m, knob);
  });
  return 0;
}
