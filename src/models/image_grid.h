// The grid an image model attends over: MobileNetV2's g×g×1280 feature cells (g = input size / 32), optionally followed per cell by its
// mean input colour and its centre coordinates (models/training/captioning/mobilenet.py decoder_grid). Shared by
// the `shapes` captioner (api/captioning) and the shapes VQA models (api/vqa): both bundles declare the extra
// channels in config.json "encoder": {"cell_colour": "mean_rgb", "cell_position": "xy"}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "models/mobilenet_v2.h"

namespace attnlens::models {

struct CellChannels {
  bool colour = false;    // "mean_rgb": + 3 channels, the mean of the preprocessed input over the cell's pixels
  bool position = false;  // "xy": + 2 channels, the cell centre ((c + 0.5)/g·2 − 1, (r + 0.5)/g·2 − 1)
  std::size_t dim() const { return MobileNetV2::kFeatDim + (colour ? 3 : 0) + (position ? 2 : 0); }
};

// Reads "encoder.cell_colour" / "encoder.cell_position" of a bundle's config (each optional; any other value is an
// Error naming the file and key).
CellChannels cell_channels(const io::Bundle& bundle);

// The plain name in config.json "encoder.bundle" (Error when missing or not a plain folder name).
std::string encoder_bundle_name(const io::Bundle& bundle);

// The encoder bundle of `bundle` (loaded from folder `dir`): `encoder_dir` when given, else the folder named by its
// "encoder.bundle" beside `dir`. An Error says which folder failed and how to give it (`what`: "captioning", "vqa").
io::Bundle load_encoder_bundle(const io::Bundle& bundle, const std::string& dir, const std::string& encoder_dir,
                               const std::string& what);

// The same from memory (the WASM bindings): named "NAME (encoder ENCODER-BUNDLE)" in errors.
io::Bundle encoder_bundle_from_memory(const io::Bundle& bundle, const std::string& config_json,
                                      std::vector<std::uint8_t> weights, const std::string& name);

// input HWC [size × size × 3] (image::preprocess) → grid HWC [g × g × channels.dim()], g = encoder.grid_side(size).
std::vector<float> image_grid(const MobileNetV2& encoder, const std::vector<float>& input, std::size_t input_size,
                              const CellChannels& channels);

}  // namespace attnlens::models
