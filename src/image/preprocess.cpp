#include "image/preprocess.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common.h"

namespace attnlens::image {

ResizeAxis resize_axis(std::size_t in, std::size_t out) {
  ResizeAxis a;
  a.i0.resize(out);
  a.i1.resize(out);
  a.w.resize(out);
  // numpy: scale = float32(in) / float32(out); s = (arange(out) + 0.5) * scale - 0.5 (all float32)
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (std::size_t d = 0; d < out; ++d) {
    float s = (static_cast<float>(d) + 0.5f) * scale;
    s = s - 0.5f;
    s = std::max(s, 0.0f);
    std::size_t i0 = static_cast<std::size_t>(std::floor(s));
    i0 = std::min(i0, in - 1);
    a.i0[d] = i0;
    a.i1[d] = std::min(i0 + 1, in - 1);
    a.w[d] = s - static_cast<float>(i0);
  }
  return a;
}

void check_image_dims(std::size_t width, std::size_t height, std::size_t channels) {
  require(width >= 1 && height >= 1,
          "image: the image is empty (" + std::to_string(width) + "x" + std::to_string(height) +
              "); width and height must be at least 1");
  require(width <= kMaxImageSide && height <= kMaxImageSide,
          "image: " + std::to_string(width) + "x" + std::to_string(height) + " is too large; each side must be at most " +
              std::to_string(kMaxImageSide) + " pixels");
  require(channels == 1 || channels == 3 || channels == 4,
          "image: " + std::to_string(channels) + " channels per pixel; expected 4 (RGBA), 3 (RGB) or 1 (grey)");
}

std::vector<std::size_t> rows_needed(std::size_t height, std::size_t out) {
  const ResizeAxis ay = resize_axis(height, out);
  std::vector<std::size_t> rows;
  rows.reserve(2 * out);
  for (std::size_t d = 0; d < out; ++d) {
    rows.push_back(ay.i0[d]);
    rows.push_back(ay.i1[d]);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

namespace {

// Composited RGB of pixel x of a row, as floats (step 1).
inline void composite(const std::uint8_t* row, std::size_t x, std::size_t channels, float* rgb) {
  const std::uint8_t* p = row + x * channels;
  if (channels == 4) {
    const float a = static_cast<float>(p[3]);
    const float bg = 255.0f * (255.0f - a);  // exact in float32
    for (int c = 0; c < 3; ++c) rgb[c] = (static_cast<float>(p[c]) * a + bg) / 255.0f;
  } else if (channels == 3) {
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<float>(p[c]);
  } else {
    rgb[0] = rgb[1] = rgb[2] = static_cast<float>(p[0]);
  }
}

}  // namespace

void preprocess(const RowSource& row, std::size_t width, std::size_t height, std::size_t channels, std::size_t out,
                float* out_hwc) {
  check_image_dims(width, height, channels);
  require(out >= 1, "image: the output size must be at least 1");
  const ResizeAxis ax = resize_axis(width, out);
  const ResizeAxis ay = resize_axis(height, out);
  const std::vector<std::size_t> rows = rows_needed(height, out);
  // Horizontal pass per needed source row: h[r][dx][c] = (1 − wx)·p(y, x0) + wx·p(y, x1).
  std::vector<float> h(rows.size() * out * 3);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::uint8_t* src = row(rows[r]);
    require(src != nullptr, "image: row " + std::to_string(rows[r]) + " could not be read");
    float* hr = h.data() + r * out * 3;
    for (std::size_t dx = 0; dx < out; ++dx) {
      float p0[3], p1[3];
      composite(src, ax.i0[dx], channels, p0);
      composite(src, ax.i1[dx], channels, p1);
      const float wx = ax.w[dx];
      const float one_minus = 1.0f - wx;
      for (int c = 0; c < 3; ++c) {
        const float a = one_minus * p0[c];
        const float b = wx * p1[c];
        hr[dx * 3 + c] = a + b;
      }
    }
  }
  auto index_of = [&](std::size_t y) {
    return static_cast<std::size_t>(std::lower_bound(rows.begin(), rows.end(), y) - rows.begin());
  };
  // Vertical pass and normalisation.
  for (std::size_t dy = 0; dy < out; ++dy) {
    const float* top = h.data() + index_of(ay.i0[dy]) * out * 3;
    const float* bot = h.data() + index_of(ay.i1[dy]) * out * 3;
    const float wy = ay.w[dy];
    const float one_minus = 1.0f - wy;
    float* o = out_hwc + dy * out * 3;
    for (std::size_t i = 0; i < out * 3; ++i) {
      const float a = one_minus * top[i];
      const float b = wy * bot[i];
      const float v = a + b;
      o[i] = v / 127.5f - 1.0f;
    }
  }
}

std::vector<float> preprocess(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                              std::size_t channels, std::size_t out) {
  check_image_dims(width, height, channels);
  const std::size_t expected = width * height * channels;  // no overflow: sides ≤ 65536, channels ≤ 4
  require(pixels != nullptr || size == 0, "image: the pixel buffer is null");
  require(size == expected, "image: the pixel buffer holds " + std::to_string(size) + " bytes but a " +
                                std::to_string(width) + "x" + std::to_string(height) + " image with " +
                                std::to_string(channels) + " channels needs exactly " + std::to_string(expected));
  std::vector<float> result(out * out * 3);
  const std::size_t stride = width * channels;
  preprocess([&](std::size_t y) { return pixels + y * stride; }, width, height, channels, out, result.data());
  return result;
}

}  // namespace attnlens::image
