// MobileNetV2 1.0 (Sandler et al. 2018, "MobileNetV2: Inverted Residuals and Linear Bottlenecks",
// arXiv:1801.04381) in torchvision's layout, as models/training/captioning/mobilenet.py runs it — the image
// encoder of the captioners and an ImageNet classifier. Activations are HWC (kernels/kernels.h).
//
//   features.0      conv3x3 s2 3→32, BN, ReLU6
//   features.1      dw3x3 32, BN, ReLU6; pw1x1 32→16, BN                                (no residual)
//   features.2..17  pw1x1 expand ×6, BN, ReLU6; dw3x3 stride s, BN, ReLU6; pw1x1 project, BN;
//                   + input when stride 1 and in == out channels (inverted residual)
//   features.18     conv1x1 320→1280, BN, ReLU6          → grid [7, 7, 1280] at 224×224 input
//   classifier.1    Linear 1280→1000 on the spatial mean of the grid
// BN(x) = (x − mean)/sqrt(var + eps)·γ + β is folded into the conv at load: W' = W·γ/sqrt(var + eps),
// b' = β − mean·γ/sqrt(var + eps). The five stride-2 3×3 convs use TF 'SAME' padding (0 before, 1 after on an even
// input: kernels::Padding::same_tf), which is what the TFLite weights were trained with; all other 3×3 convs pad 1.
//
// Bundle (architecture "mobilenet-v2", models/training/captioning/export_encoder.py): torchvision state_dict names,
// optionally behind a prefix. A conv/classifier weight is F32/F16 values, or integer codes K with a scale tensor
// "<name>_scale" [1] (W = float(K)·scale, the exact form of the dequantized TFLite weights).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "kernels/kernels.h"

namespace attnlens::models {

class MobileNetV2 {
 public:
  MobileNetV2() = default;
  // Takes every encoder tensor under `prefix`; the classifier when the bundle has "classifier.1.weight".
  // precision int8: the 1×1 convolutions (the pointwise expand and project layers, ~93 % of the multiply-adds)
  // keep their BN-folded weights as int8 codes with one scale per output channel and run through the int8 product
  // (kernels.h, Precision::int8: each pixel's input quantised to int16 codes, exact integer sums); the 3×3 and
  // depthwise convolutions stay float32. A captioner passes its own bundle's weight_precision.
  static MobileNetV2 from_bundle(const io::Bundle& bundle, const std::string& prefix = "",
                                 kernels::Precision precision = kernels::Precision::f32);

  static constexpr std::size_t kInputSize = 224;
  static constexpr std::size_t kFeatDim = 1280;

  // input HWC [size × size × 3] (image::preprocess output) → grid HWC [g × g × 1280], g = ceil(size/32)
  // (7 at 224). size must be a positive multiple of 32.
  std::vector<float> features(const float* input_hwc, std::size_t size) const;
  std::size_t grid_side(std::size_t size) const { return (size + 31) / 32; }

  bool has_classifier() const { return !classifier_w_.empty(); }
  std::size_t num_classes() const { return classifier_b_.size(); }
  // ImageNet logits [1000] from a grid [cells × 1280] (mean over cells, then classifier.1).
  std::vector<float> classify(const float* grid, std::size_t cells) const;

  // Multiply-accumulates of one 224×224 forward (features only), for benchmarks.
  double macs() const;

 private:
  enum class Kind { full, depthwise };
  struct Conv {
    Kind kind = Kind::full;
    kernels::Conv2dParams params;  // in_h/in_w filled per call
    std::vector<float> weights;    // HWIO (full) or HWC (depthwise), BN folded
    std::vector<float> bias;       // [out_c], BN folded
    kernels::PackedMatrix int8;    // precision int8, 1×1 convs: the weights [out_c × in_c] as int8 codes
  };
  struct Block {
    std::vector<Conv> convs;
    bool residual = false;
  };
  // Every conv of the network in order, with its params for a size×size input (in_h/in_w filled) and its output
  // geometry: fn(const Conv&, const kernels::Conv2dParams&, const kernels::ConvGeometry&).
  template <class Fn>
  void for_each_conv(std::size_t size, Fn fn) const {
    std::size_t h = size, w = size;
    for (const Block& blk : blocks_) {
      for (const Conv& conv : blk.convs) {
        kernels::Conv2dParams p = conv.params;
        p.in_h = h;
        p.in_w = w;
        const kernels::ConvGeometry g = kernels::conv2d_geometry(p);
        fn(conv, p, g);
        h = g.out_h;
        w = g.out_w;
      }
    }
  }
  Conv load_conv(const io::Bundle& b, const std::string& conv, const std::string& bn, std::size_t in_c,
                 std::size_t out_c, std::size_t k, std::size_t stride, bool depthwise, bool same_pad,
                 kernels::Activation act, kernels::Precision precision) const;

  std::vector<Block> blocks_;
  std::vector<float> classifier_w_;  // [classes × 1280]
  std::vector<float> classifier_b_;  // [classes]
  float bn_eps_ = 1e-5f;
  std::string prefix_;
};

}  // namespace attnlens::models
