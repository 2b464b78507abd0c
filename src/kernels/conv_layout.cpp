// Convolution geometry (explicit and TensorFlow 'SAME' padding) and weight/image layout conversions.
#include <string>

#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::kernels {

ConvGeometry conv2d_geometry(const Conv2dParams& p) {
  require(p.stride >= 1, "conv2d: stride must be at least 1");
  require(p.kernel_h >= 1 && p.kernel_w >= 1, "conv2d: kernel size must be at least 1x1");
  require(p.in_c >= 1, "conv2d: input must have at least one channel");
  ConvGeometry g;
  if (p.padding == Padding::same_tf) {
    // TensorFlow 'SAME' (tf.nn.convolution docs): out = ceil(in / stride); the total padding is whatever
    // makes the last window end at the last padded element, split with the extra one at the bottom/right.
    g.out_h = (p.in_h + p.stride - 1) / p.stride;
    g.out_w = (p.in_w + p.stride - 1) / p.stride;
    const std::size_t need_h = g.out_h == 0 ? 0 : (g.out_h - 1) * p.stride + p.kernel_h;
    const std::size_t need_w = g.out_w == 0 ? 0 : (g.out_w - 1) * p.stride + p.kernel_w;
    g.pad_top = need_h > p.in_h ? (need_h - p.in_h) / 2 : 0;
    g.pad_left = need_w > p.in_w ? (need_w - p.in_w) / 2 : 0;
    return g;
  }
  const std::size_t padded_h = p.in_h + 2 * p.pad_h;
  const std::size_t padded_w = p.in_w + 2 * p.pad_w;
  require(padded_h >= p.kernel_h && padded_w >= p.kernel_w,
          "conv2d: kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) +
              " is larger than the padded input " + std::to_string(padded_h) + "x" +
              std::to_string(padded_w));
  g.out_h = (padded_h - p.kernel_h) / p.stride + 1;
  g.out_w = (padded_w - p.kernel_w) / p.stride + 1;
  g.pad_top = p.pad_h;
  g.pad_left = p.pad_w;
  return g;
}

void conv_weights_from_oihw(const float* oihw, std::size_t out_c, std::size_t in_c, std::size_t kh,
                            std::size_t kw, float* hwio) {
  for (std::size_t o = 0; o < out_c; ++o)
    for (std::size_t i = 0; i < in_c; ++i)
      for (std::size_t y = 0; y < kh; ++y)
        for (std::size_t x = 0; x < kw; ++x)
          hwio[((y * kw + x) * in_c + i) * out_c + o] = oihw[((o * in_c + i) * kh + y) * kw + x];
}

void depthwise_weights_from_c1hw(const float* c1hw, std::size_t c, std::size_t kh, std::size_t kw,
                                 float* hwc) {
  for (std::size_t ch = 0; ch < c; ++ch)
    for (std::size_t y = 0; y < kh; ++y)
      for (std::size_t x = 0; x < kw; ++x) hwc[(y * kw + x) * c + ch] = c1hw[(ch * kh + y) * kw + x];
}

void chw_to_hwc(const float* chw, std::size_t c, std::size_t h, std::size_t w, float* hwc) {
  for (std::size_t ch = 0; ch < c; ++ch)
    for (std::size_t i = 0; i < h * w; ++i) hwc[i * c + ch] = chw[ch * h * w + i];
}

void hwc_to_chw(const float* hwc, std::size_t h, std::size_t w, std::size_t c, float* chw) {
  for (std::size_t ch = 0; ch < c; ++ch)
    for (std::size_t i = 0; i < h * w; ++i) chw[ch * h * w + i] = hwc[i * c + ch];
}

}  // namespace attnlens::kernels
