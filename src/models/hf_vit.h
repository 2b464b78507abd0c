// ViT (Dosovitskiy et al. 2021), the forward pass of Hugging Face's ViTModel / ViTForImageClassification
// (transformers, models/vit/modeling_vit.py; reference in plain PyTorch: models/training/hf/vit.py), top to
// bottom, for pixel values [3, H, W] already resized to image_size and normalised (ViTImageProcessor):
//   patches (N, d) = Conv2d(kernel = stride = patch_size)(pixels), row-major over the (H/p × W/p) grid
//   h (N + 1, d) = [cls_token; patches] + position_embeddings        an image of another size is an Error
//                                                                    (interpolate_pos_encoding is not
//                                                                    supported)
//   layer l (pre-LN):  h += out(self-attention(layernorm_before(h)))   per head softmax(q·kᵀ/√d_head)·v
//                      h += down(act(up(layernorm_after(h))))
//   h = vit.layernorm(h);  logits = classifier(h[0]) (ViTForImageClassification);  pooled =
//   tanh(pooler.dense(h[0])) (ViTModel with its pooler)
// Config (bundle "hf_config", HF names and defaults): hidden_size 768, num_hidden_layers 12,
// num_attention_heads 12, intermediate_size 3072, hidden_act gelu, layer_norm_eps 1e-12, image_size 224,
// patch_size 16 (numbers or [height, width]), num_channels 3. Tensors: HF's names under "vit." (+
// classifier.*). Maps: kind "self-attention", one per layer × head, dims [N + 1, N + 1] (row and column 0:
// the CLS token).
#pragma once

#include <cstddef>
#include <vector>

#include "io/bundle.h"
#include "models/hf_bert.h"
#include "models/hf_blocks.h"
#include "models/hf_layers.h"
#include "nn/linear.h"
#include "trace/trace.h"

namespace attnlens::models {

class HfVit {
 public:
  explicit HfVit(const io::Bundle& bundle);

  // pixels [3 × height × width] (channel-major, normalised); height × width must be image_size (else Error).
  // With `trace`, every layer × head map; with `hidden`, appends HF's output_hidden_states (layers + 1 blocks
  // of (N + 1) × d: the embeddings, then each layer's output before vit.layernorm). last_hidden_state is
  // after vit.layernorm. With `vectors`, every layer × head's query and key vectors, "self-attention.query" /
  // ".key" [N + 1, d_head] (hf::record_qk: after the bias, map = softmax(q·kᵀ/√d_head)).
  HfEncoderOutput forward(const std::vector<float>& pixels, std::size_t height, std::size_t width,
                          AttentionTrace* trace = nullptr, std::vector<std::vector<float>>* hidden = nullptr,
                          AttentionTrace* vectors = nullptr) const;

  std::size_t image_height() const { return image_h_; }
  std::size_t image_width() const { return image_w_; }
  std::size_t patches() const { return grid_h_ * grid_w_; }
  std::size_t d_model() const { return d_; }
  std::size_t layers() const { return blocks_.size(); }
  std::size_t heads() const { return heads_; }
  std::size_t num_labels() const { return labels_; }  // 0: no classification head

 private:
  struct Block {
    hf::LayerNorm before, after;
    hf::SelfAttention attention;
    hf::FeedForward mlp;
  };

  std::size_t d_ = 0, heads_ = 0, labels_ = 0, image_h_ = 0, image_w_ = 0, patch_h_ = 0, patch_w_ = 0,
              grid_h_ = 0, grid_w_ = 0;
  std::vector<float> patch_weight_,
      patch_bias_;                      // (d, 3·p_h·p_w) = the conv weight [d, 3, p_h, p_w] flattened; (d)
  std::vector<float> cls_, positions_;  // (d), (N + 1, d)
  std::vector<Block> blocks_;
  hf::LayerNorm final_norm_;
  nn::Linear pooler_, classifier_;  // out() == 0 when absent
};

}  // namespace attnlens::models
