#include "image/pnm.h"

#include <cctype>

#include "common.h"
#include "image/preprocess.h"

namespace attnlens::image {

namespace {

// Next header token: skips whitespace and '#' comments, reads decimal digits (Error for anything else).
std::size_t header_number(const std::string& s, std::size_t& pos, const std::string& what) {
  for (;;) {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos < s.size() && s[pos] == '#') {
      while (pos < s.size() && s[pos] != '\n') ++pos;
      continue;
    }
    break;
  }
  require(pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])),
          what + ": not a valid PNM header (expected a number)");
  std::size_t v = 0;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
    v = v * 10 + static_cast<std::size_t>(s[pos] - '0');
    require(v <= 1000000, what + ": PNM header number too large");
    ++pos;
  }
  return v;
}

}  // namespace

DecodedImage decode_pnm(const std::string& bytes, const std::string& what) {
  require(bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6'),
          what + ": not a binary PGM/PPM file (P5/P6); convert PNG/JPEG first, e.g. with PIL or `convert x.png x.ppm`");
  DecodedImage img;
  img.channels = bytes[1] == '6' ? 3 : 1;
  std::size_t pos = 2;
  img.width = header_number(bytes, pos, what);
  img.height = header_number(bytes, pos, what);
  const std::size_t maxval = header_number(bytes, pos, what);
  require(maxval == 255, what + ": only 8-bit PNM (maxval 255) is supported, got maxval " + std::to_string(maxval));
  check_image_dims(img.width, img.height, img.channels);
  require(pos < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[pos])),
          what + ": not a valid PNM header");
  ++pos;  // the single whitespace before the raster
  const std::size_t n = img.width * img.height * img.channels;
  require(bytes.size() - pos >= n, what + ": the file is truncated (" + std::to_string(bytes.size() - pos) +
                                       " pixel bytes, " + std::to_string(n) + " needed)");
  img.pixels.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                    bytes.begin() + static_cast<std::ptrdiff_t>(pos + n));
  return img;
}

}  // namespace attnlens::image
