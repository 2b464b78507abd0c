// Bundle loading from raw bytes, as the WASM bindings receive them from JS (Translator.fromBundle,
// SentimentClassifier.fromBundle, ...): the input is config.json SEP weights.safetensors SEP file SEP file
// (SEP = "\n#~#\n"); the first file is offered as bpe.vocab, vocab.txt and labels.txt, the second as bpe.merges.
// The model its config names is built through the public API (the Show-Attend-Tell decoder on its own: the real
// encoder is too slow per input; fuzz_model_config covers api::Captioner) and run once with small limits.
// The seeds are the tiny bundles of tests/fuzz/tiny with their synthesized weights, written by
//   ATTNLENS_FUZZ_WRITE_SEEDS=tests/fuzz/corpus/bundle_bytes build-fuzz/tests/fuzz/fuzz_bundle_bytes -runs=0
// Checks: no exception but attnlens::Error; no sanitizer report; bounded time and memory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tiny_bundles.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("ATTNLENS_FUZZ_WRITE_SEEDS");
  if (dir == nullptr) return 0;
  const auto& all = fuzz::templates();
  for (std::size_t t = 0; t + 1 < all.size(); ++t) {  // not mobilenet-v2: its weights are 7 MB
    const auto& files = all[t].files;
    std::string first, second;
    for (const auto& [name, text] : files) (name == "bpe.merges" ? second : first) = text;
    std::string seed = all[t].config + fuzz::kSep + fuzz::write_safetensors(fuzz::base_tensors(t)) + fuzz::kSep +
                       first + fuzz::kSep + second;
    std::ofstream(std::string(dir) + "/" + all[t].name, std::ios::binary) << seed;
  }
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split(data, size, fuzz::kSep, 4);
  const std::string config = parts[0];
  const std::string weights = parts.size() > 1 ? parts[1] : "";
  const std::string first = parts.size() > 2 ? parts[2] : "";
  const std::string second = parts.size() > 3 ? parts[3] : "";
  const std::map<std::string, std::string> files = {
      {"bpe.vocab", first}, {"vocab.txt", first}, {"labels.txt", first}, {"bpe.merges", second}};
  fuzz::ok_or_error([&] {
    const fuzz::Model m = fuzz::construct(config, weights, files, false);
    fuzz::run(m, size > 0 ? data[size - 1] : 0);
  });
  return 0;
}
