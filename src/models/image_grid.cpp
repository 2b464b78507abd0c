#include "models/image_grid.h"

#include <algorithm>

#include "common.h"

namespace attnlens::models {

CellChannels cell_channels(const io::Bundle& bundle) {
  const std::string where = "config.json in " + bundle.name();
  const io::ConfigObject enc = bundle.config_object().object("encoder");
  CellChannels ch;
  if (enc.has("cell_colour")) {
    require(enc.string("cell_colour") == "mean_rgb", where + ": encoder.cell_colour must be \"mean_rgb\" when present");
    ch.colour = true;
  }
  if (enc.has("cell_position")) {
    require(enc.string("cell_position") == "xy", where + ": encoder.cell_position must be \"xy\" when present");
    ch.position = true;
  }
  return ch;
}

std::string encoder_bundle_name(const io::Bundle& bundle) {
  const std::string where = "config.json in " + bundle.name();
  const io::ConfigObject enc = bundle.config_object().object("encoder");
  if (!enc.has("bundle"))
    enc.fail("bundle", "is missing (the name of the encoder bundle, e.g. \"mobilenet-v2-imagenet\")");
  const std::string name = enc.string("bundle");
  require(!name.empty() && name.find('/') == std::string::npos && name.find('\\') == std::string::npos &&
              name.find("..") == std::string::npos,
          where + ": \"encoder.bundle\" must be a plain bundle name, got '" + name + "'");
  return name;
}

io::Bundle load_encoder_bundle(const io::Bundle& bundle, const std::string& dir, const std::string& encoder_dir,
                               const std::string& what) {
  std::string enc_dir = encoder_dir;
  if (enc_dir.empty()) {
    std::string base = dir;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    const std::size_t slash = base.find_last_of('/');
    const std::string parent = slash == std::string::npos ? "." : base.substr(0, slash == 0 ? 1 : slash);
    enc_dir = parent + "/" + encoder_bundle_name(bundle);
  }
  try {
    return io::Bundle::load(enc_dir);
  } catch (const Error& e) {
    throw Error(what + " bundle " + dir + ": cannot load its encoder bundle (config.json \"encoder.bundle\"; give " +
                "the encoder directory explicitly if it is elsewhere): " + e.what());
  }
}

io::Bundle encoder_bundle_from_memory(const io::Bundle& bundle, const std::string& config_json,
                                      std::vector<std::uint8_t> weights, const std::string& name) {
  return io::Bundle::from_memory(config_json, std::move(weights), {},
                                 name + " (encoder " + encoder_bundle_name(bundle) + ")");
}

std::vector<float> image_grid(const MobileNetV2& encoder, const std::vector<float>& input, std::size_t input_size,
                              const CellChannels& channels) {
  const std::size_t g = encoder.grid_side(input_size);
  std::vector<float> feats = encoder.features(input.data(), input_size);
  if (!channels.colour && !channels.position) return feats;
  constexpr std::size_t F = MobileNetV2::kFeatDim;
  // [cells × 1280] → [cells × D]: append the cell's mean input colour (input is HWC) and/or its centre
  const std::size_t D = channels.dim(), s = input_size / g;  // s: pixels per cell side (cell colour)
  require(!channels.colour || s * g == input_size,
          "image grid: encoder.cell_colour needs the input size to be a multiple of the grid");
  std::vector<float> out(g * g * D);
  for (std::size_t r = 0; r < g; ++r) {
    for (std::size_t c = 0; c < g; ++c) {
      const std::size_t cell = r * g + c;
      std::copy(feats.begin() + static_cast<std::ptrdiff_t>(cell * F),
                feats.begin() + static_cast<std::ptrdiff_t>((cell + 1) * F),
                out.begin() + static_cast<std::ptrdiff_t>(cell * D));
      float* extra = out.data() + cell * D + F;
      if (channels.colour) {
        for (std::size_t ch = 0; ch < 3; ++ch) {
          double sum = 0;
          for (std::size_t y = r * s; y < (r + 1) * s; ++y) {
            const float* row = input.data() + (y * input_size + c * s) * 3 + ch;
            for (std::size_t x = 0; x < s; ++x) sum += row[x * 3];
          }
          *extra++ = static_cast<float>(sum / static_cast<double>(s * s));
        }
      }
      if (channels.position) {
        *extra++ = (static_cast<float>(c) + 0.5f) / static_cast<float>(g) * 2.0f - 1.0f;
        *extra++ = (static_cast<float>(r) + 0.5f) / static_cast<float>(g) * 2.0f - 1.0f;
      }
    }
  }
  return out;
}

}  // namespace attnlens::models
