// Image preprocessing for the captioning encoder: uint8 pixels of any size → the normalised s×s×3 tensor (s = the bundle's
// image.input_size: 224 by default, 352 for flickr8k-mobilenet),
// exactly models/training/captioning/mobilenet.preprocess_rgba (the PyTorch recipe), in float32:
//
//   1. alpha over white, per source pixel:   c = (rgb·a + 255·(255 − a)) / 255      (RGBA, straight alpha)
//      RGB input means a = 255 (c = rgb); grey (1 channel) is replicated to R, G and B.
//   2. bilinear resize of the whole image to out×out (no crop, aspect not kept), half-pixel centres, no
//      antialiasing — torch interpolate(mode='bilinear', align_corners=False) / TF half_pixel_centers:
//        s = (d + 0.5)·(in/out) − 0.5  (scale in float32),  s = max(s, 0),  i0 = min(floor(s), in − 1),
//        i1 = min(i0 + 1, in − 1),  w = s − i0       for rows and columns alike;
//        v = (1 − wy)·((1 − wx)·p00 + wx·p01) + wy·((1 − wx)·p10 + wx·p11)   (columns first, then rows)
//   3. x = v / 127.5 − 1, written HWC (the engine's activation layout; PyTorch's tensor is its CHW transpose).
//
// The resize reads at most 2·out source rows and 2·out source columns, whatever the image size, so the image is
// read through a row callback: the WASM binding copies only those rows out of the JS buffer (an 8000×8000 RGBA
// image is 256 MB in JS, but the WASM heap sees at most 2·224 rows of it, one at a time).
//
// Limits: width and height in [1, kMaxImageSide] (65536); anything else is an attnlens::Error naming the size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace attnlens::image {

constexpr std::size_t kMaxImageSide = 65536;

// One axis of the half-pixel bilinear resize: for every output index d, the two source indices and the weight
// of the second (see the formula above).
struct ResizeAxis {
  std::vector<std::size_t> i0, i1;
  std::vector<float> w;
};
ResizeAxis resize_axis(std::size_t in, std::size_t out);

// Throws Error unless 1 ≤ width, height ≤ kMaxImageSide and channels is 1, 3 or 4.
void check_image_dims(std::size_t width, std::size_t height, std::size_t channels);

// The sorted distinct source rows that preprocess() asks the callback for (≤ 2·out of them).
std::vector<std::size_t> rows_needed(std::size_t height, std::size_t out);

// Returns a pointer to row y: width·channels bytes, valid until the next call.
using RowSource = std::function<const std::uint8_t*(std::size_t y)>;

// out_hwc: out·out·3 floats. Rows are requested in increasing order, each once.
void preprocess(const RowSource& row, std::size_t width, std::size_t height, std::size_t channels,
                std::size_t out, float* out_hwc);

// A contiguous image: `size` must be exactly width·height·channels (Error otherwise, naming both numbers).
std::vector<float> preprocess(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                              std::size_t channels, std::size_t out = 224);

}  // namespace attnlens::image
