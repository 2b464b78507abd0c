// Binary PNM images (Netpbm P5 = grey, P6 = RGB, maxval 255): the one image file format the engine reads itself,
// for the CLI and the tests (the engine has no JPEG/PNG decoder; browsers and PIL decode those).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlens::image {

struct DecodedImage {
  std::size_t width = 0, height = 0, channels = 0;  // channels: 1 (P5) or 3 (P6)
  std::vector<std::uint8_t> pixels;                 // row-major, width·height·channels bytes
};

// Parses a P5/P6 file's bytes (comments allowed in the header). Error naming `what` on anything else: another
// format, maxval ≠ 255, a size of 0 or above 65536, or a short pixel section.
DecodedImage decode_pnm(const std::string& bytes, const std::string& what);

}  // namespace attnlens::image
