#include "models/mobilenet_v2.h"

#include <algorithm>
#include <cmath>

#include "common.h"

namespace attnlens::models {

namespace {

// torchvision's inverted residual settings: expansion t, output channels c, repeats n, first stride s.
struct Stage {
  std::size_t t, c, n, s;
};
constexpr Stage kStages[] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                             {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};

}  // namespace

MobileNetV2::Conv MobileNetV2::load_conv(const io::Bundle& b, const std::string& conv, const std::string& bn,
                                         std::size_t in_c, std::size_t out_c, std::size_t k, std::size_t stride,
                                         bool depthwise, bool same_pad, kernels::Activation act,
                                         kernels::Precision precision) const {
  const std::string wname = prefix_ + conv + ".weight";
  std::vector<float> w = b.tensor(wname, {out_c, depthwise ? 1 : in_c, k, k});
  // The shipped encoder publishes its weights as integer codes K times one scale per tensor (the quantised TFLite
  // model it comes from): kept to give an int8 1×1 conv those exact codes where they fit (below).
  std::vector<float> codes;
  float code_scale = 0.0f;
  if (b.has_tensor(wname + "_scale")) {
    const float s = b.tensor(wname + "_scale", {1})[0];
    code_scale = s;
    codes = w;
    for (float& v : w) v = v * s;
  }
  // Fold BN: W' = W·γ/sqrt(var + eps), b' = β − mean·γ/sqrt(var + eps), per output channel.
  const std::vector<float> gamma = b.tensor(prefix_ + bn + ".weight", {out_c});
  const std::vector<float> beta = b.tensor(prefix_ + bn + ".bias", {out_c});
  const std::vector<float> mean = b.tensor(prefix_ + bn + ".running_mean", {out_c});
  const std::vector<float> var = b.tensor(prefix_ + bn + ".running_var", {out_c});
  Conv c;
  c.kind = depthwise ? Kind::depthwise : Kind::full;
  c.bias.resize(out_c);
  const std::size_t per_out = w.size() / out_c;
  std::vector<float> bn_scale(out_c);
  for (std::size_t o = 0; o < out_c; ++o) {
    const float scale = gamma[o] / std::sqrt(var[o] + bn_eps_);
    bn_scale[o] = scale;
    for (std::size_t i = 0; i < per_out; ++i) w[o * per_out + i] *= scale;
    c.bias[o] = beta[o] - mean[o] * scale;
  }
  if (precision == kernels::Precision::int8 && !depthwise && k == 1 && stride == 1) {
    // OIHW with k = 1 is the [out_c × in_c] Linear layout of int8 weights. A row whose published codes are
    // integers within ±127 keeps them, with scale code_scale·bn_scale (its weights exactly, no second rounding);
    // any other row gets codes by the usual per-row rule on its BN-folded weights.
    std::vector<std::int8_t> q(out_c * in_c);
    std::vector<float> scales(out_c);
    for (std::size_t o = 0; o < out_c; ++o) {
      const float* kr = codes.empty() ? nullptr : codes.data() + o * in_c;
      const bool exact = kr != nullptr && std::all_of(kr, kr + in_c, [](float v) {
        return v == std::nearbyint(v) && std::fabs(v) <= 127.0f;
      });
      const float s = code_scale * bn_scale[o];
      if (exact && std::isfinite(s)) {
        const float sign = s < 0.0f ? -1.0f : 1.0f;  // a negative BN scale flips the codes instead
        for (std::size_t i = 0; i < in_c; ++i) q[o * in_c + i] = static_cast<std::int8_t>(sign * kr[i]);
        scales[o] = std::fabs(s);
      } else {
        const float* row = w.data() + o * in_c;
        require(std::all_of(row, row + in_c, [](float v) { return std::isfinite(v); }),
                "weights.safetensors in " + b.name() + ": '" + wname + "' (BatchNorm folded) holds a non-finite value");
        scales[o] = kernels::quantize_row_int8(row, in_c, q.data() + o * in_c);
      }
    }
    c.int8 = kernels::pack_int8_codes(out_c, in_c, q.data(), in_c, scales.data());  // (no float copy kept)
  } else if (depthwise) {
    c.weights.resize(w.size());
    kernels::depthwise_weights_from_c1hw(w.data(), out_c, k, k, c.weights.data());
  } else {
    c.weights.resize(w.size());
    kernels::conv_weights_from_oihw(w.data(), out_c, in_c, k, k, c.weights.data());
  }
  c.params.in_c = in_c;
  c.params.out_c = out_c;
  c.params.kernel_h = c.params.kernel_w = k;
  c.params.stride = stride;
  if (same_pad) {
    c.params.padding = kernels::Padding::same_tf;
  } else {
    c.params.padding = kernels::Padding::explicit_symmetric;
    c.params.pad_h = c.params.pad_w = k / 2;
  }
  c.params.activation = act;
  return c;
}

MobileNetV2 MobileNetV2::from_bundle(const io::Bundle& bundle, const std::string& prefix,
                                     kernels::Precision precision) {
  using kernels::Activation;
  MobileNetV2 m;
  m.prefix_ = prefix;
  const io::ConfigObject cfg = bundle.config_object();
  if (cfg.has("encoder")) {
    // BatchNorm divides by sqrt(var + eps): a negative eps gives NaN, an overflowing one (1e300 as float) Inf, and
    // an eps near the variances rescales every channel. As for the Transformer's layer_norm_eps: (0, 1].
    const io::ConfigObject enc = cfg.object("encoder");
    const double eps = enc.number_or("bn_eps", m.bn_eps_);
    if (!(eps > 0 && eps <= 1)) enc.fail("bn_eps", "expected a number in (0, 1], got " + enc.at("bn_eps").dump());
    m.bn_eps_ = static_cast<float>(eps);
  }
  // features.0: conv3x3 s2 (TF SAME) 3→32
  {
    Block b0;
    b0.convs.push_back(m.load_conv(bundle, "features.0.0", "features.0.1", 3, 32, 3, 2, false, true,
                                   Activation::relu6, precision));
    m.blocks_.push_back(std::move(b0));
  }
  std::size_t in_c = 32;
  std::size_t index = 1;
  for (const Stage& st : kStages) {
    for (std::size_t r = 0; r < st.n; ++r, ++index) {
      const std::size_t stride = r == 0 ? st.s : 1;
      const std::string f = "features." + std::to_string(index) + ".conv.";
      const std::size_t hidden = in_c * st.t;
      Block blk;
      if (st.t == 1) {
        blk.convs.push_back(m.load_conv(bundle, f + "0.0", f + "0.1", hidden, hidden, 3, stride, true, stride == 2,
                                        Activation::relu6, precision));
        blk.convs.push_back(m.load_conv(bundle, f + "1", f + "2", hidden, st.c, 1, 1, false, false, Activation::none,
                                        precision));
      } else {
        blk.convs.push_back(m.load_conv(bundle, f + "0.0", f + "0.1", in_c, hidden, 1, 1, false, false,
                                        Activation::relu6, precision));
        blk.convs.push_back(m.load_conv(bundle, f + "1.0", f + "1.1", hidden, hidden, 3, stride, true, stride == 2,
                                        Activation::relu6, precision));
        blk.convs.push_back(m.load_conv(bundle, f + "2", f + "3", hidden, st.c, 1, 1, false, false, Activation::none,
                                        precision));
      }
      blk.residual = stride == 1 && in_c == st.c;
      m.blocks_.push_back(std::move(blk));
      in_c = st.c;
    }
  }
  {
    Block last;
    last.convs.push_back(m.load_conv(bundle, "features.18.0", "features.18.1", in_c, kFeatDim, 1, 1, false, false,
                                     Activation::relu6, precision));
    m.blocks_.push_back(std::move(last));
  }
  const std::string cw = prefix + "classifier.1.weight";
  if (bundle.has_tensor(cw)) {
    const std::size_t classes = bundle.weights().info(cw).shape.empty() ? 0 : bundle.weights().info(cw).shape[0];
    require(classes >= 1, "weights.safetensors in " + bundle.name() + ": tensor '" + cw + "' has no classes");
    m.classifier_w_ = bundle.tensor(cw, {classes, kFeatDim});
    if (bundle.has_tensor(cw + "_scale")) {
      const float s = bundle.tensor(cw + "_scale", {1})[0];
      for (float& v : m.classifier_w_) v = v * s;
    }
    m.classifier_b_ = bundle.tensor(prefix + "classifier.1.bias", {classes});
  }
  return m;
}

std::vector<float> MobileNetV2::features(const float* input_hwc, std::size_t size) const {
  require(!blocks_.empty(), "MobileNetV2: the model is not loaded");
  require(size >= 32 && size % 32 == 0, "MobileNetV2: the input size must be a positive multiple of 32, got " +
                                            std::to_string(size));
  // Three activation buffers, each as large as the largest activation: the block input (`cur`, kept for the
  // residual) and the two that a block's convs alternate between. Per thread and reused, so once warm an image
  // costs no allocation, no zeroing and no copying of stale data (which, serial, was a sixth of the time with
  // the convolutions split over two threads).
  std::size_t largest = size * size * 3;
  for_each_conv(size, [&](const Conv&, const kernels::Conv2dParams& p, const kernels::ConvGeometry& g) {
    largest = std::max(largest, g.out_h * g.out_w * p.out_c);
  });
  thread_local std::vector<float> t_buffers;
  if (t_buffers.size() < 3 * largest) t_buffers.resize(3 * largest);
  float* cur = t_buffers.data();
  float* buf[2] = {cur + largest, cur + 2 * largest};
  std::size_t h = size, w = size, c = 3;
  std::copy(input_hwc, input_hwc + h * w * c, cur);
  for (const Block& blk : blocks_) {
    const float* src = cur;
    std::size_t bh = h, bw = w;
    float** out = nullptr;
    for (std::size_t i = 0; i < blk.convs.size(); ++i) {
      const Conv& conv = blk.convs[i];
      kernels::Conv2dParams p = conv.params;
      p.in_h = bh;
      p.in_w = bw;
      const kernels::ConvGeometry g = kernels::conv2d_geometry(p);
      out = &buf[i % 2];
      if (conv.kind == Kind::depthwise) {
        kernels::depthwise_conv2d(p, src, conv.weights.data(), conv.bias.data(), *out);
      } else if (!conv.int8.empty()) {  // a 1×1 conv is a Linear over the pixels: [h·w × in_c] → [h·w × out_c]
        kernels::linear_packed(bh * bw, src, p.in_c, conv.int8, conv.bias.data(), *out, p.out_c, p.activation);
      } else {
        kernels::conv2d(p, src, conv.weights.data(), conv.bias.data(), *out);
      }
      bh = g.out_h;
      bw = g.out_w;
      c = p.out_c;
      src = *out;
    }
    if (blk.residual) kernels::add(cur, *out, bh * bw * c);
    std::swap(cur, *out);
    h = bh;
    w = bw;
  }
  return std::vector<float>(cur, cur + h * w * c);
}

std::vector<float> MobileNetV2::classify(const float* grid, std::size_t cells) const {
  require(has_classifier(), "MobileNetV2: this bundle has no ImageNet classifier (classifier.1.*)");
  require(cells >= 1, "MobileNetV2: the grid is empty");
  // torchvision: nn.functional.adaptive_avg_pool2d(x, (1, 1)) — the mean over the cells, per channel.
  std::vector<float> mean(kFeatDim, 0.0f);
  for (std::size_t i = 0; i < cells; ++i) kernels::add(grid + i * kFeatDim, mean.data(), kFeatDim);
  kernels::scale(1.0f / static_cast<float>(cells), mean.data(), kFeatDim);
  std::vector<float> logits(classifier_b_);
  kernels::gemv_nt(classifier_b_.size(), kFeatDim, mean.data(), classifier_w_.data(), kFeatDim, logits.data(), true);
  // NaN logits would rank arbitrarily and give NaN probabilities: an error, not a label.
  require(first_non_finite(logits.data(), logits.size()) == logits.size(),
          "MobileNetV2: the classifier produced a non-finite logit (NaN or Inf); are the weights or the grid corrupt?");
  return logits;
}

double MobileNetV2::macs() const {
  double total = 0;
  for_each_conv(kInputSize, [&](const Conv& conv, const kernels::Conv2dParams& p, const kernels::ConvGeometry& g) {
    const double per_pixel = conv.kind == Kind::depthwise
                                 ? static_cast<double>(p.kernel_h * p.kernel_w * p.in_c)
                                 : static_cast<double>(p.kernel_h * p.kernel_w * p.in_c * p.out_c);
    total += per_pixel * static_cast<double>(g.out_h * g.out_w);
  });
  return total;
}

}  // namespace attnlens::models
