// attnlens C++ API: model bundles and image files as tools read them (the CLI's `bundle check` and its image
// arguments). Included by src/api.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlens::api {

struct TensorSummary {
  std::string name;
  std::string dtype;               // "F32", "I8", …
  std::vector<std::size_t> shape;
  std::string shape_text;          // "[2, 3]"
  std::size_t values = 0;
};

struct BundleSummary {
  std::string architecture;        // config "architecture"
  std::vector<TensorSummary> tensors;  // in the weights file's order
  std::size_t values = 0;          // all tensors together
};

// Loads and checks a bundle directory (config.json, manifest digests, the safetensors header); an Error says what
// is wrong and where.
BundleSummary inspect_bundle(const std::string& dir);

// An image decoded to bytes: row-major, width·height·channels (1 grey or 3 RGB).
struct DecodedImage {
  std::size_t width = 0, height = 0, channels = 0;
  std::vector<std::uint8_t> pixels;
};

// A binary PGM (P5) or PPM (P6) file's bytes; an Error naming `what` on anything else (other formats, maxval ≠ 255,
// a size of 0 or above 65536, a short pixel section).
DecodedImage decode_pnm(const std::string& bytes, const std::string& what);

}  // namespace attnlens::api
