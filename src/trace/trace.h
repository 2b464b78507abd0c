// AttentionTrace: every attention map a forward pass computes, recorded with its name and coordinates so that
// callers (CLI, bindings, page) can draw each one. Models append; nothing is dropped or approximated.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnlens {

struct AttentionMap {
  std::string name;              // e.g. "cross", "decoder_self", "encoder_self", "visual", "selfattn", "relation"
  int layer = -1;                // -1 when the model has no layers
  int head = -1;                 // -1 when the mechanism has no heads
  int step = -1;                 // decoding step, -1 for maps computed once for the whole input
  std::vector<std::size_t> dims;  // row-major, e.g. {T, S} or {H, W}
  std::vector<float> data;        // product of dims elements
};

// Which maps a caller asked for: kinds by name (empty: every kind) and, with head_mean, one map per kind, layer and
// step — the mean over its heads, head −1 — instead of one per head (computed here, so only the mean crosses to JS).
struct MapSelection {
  std::vector<std::string> kinds;
  bool head_mean = false;
  bool all() const { return kinds.empty() && !head_mean; }
};

// The maps of the selected kinds, in their order; with head_mean each (name, layer, step) group of heads becomes its
// mean, at the place of its first head. A kind that none of `maps` has is an Error naming the kinds there are
// (nothing is checked when `maps` is empty: an empty input has no maps).
std::vector<AttentionMap> select_maps(std::vector<AttentionMap> maps, const MapSelection& selection);

class AttentionTrace {
 public:
  // When disabled, record() is a no-op: models may skip tracing for speed only when the caller asked them to.
  explicit AttentionTrace(bool enabled = true) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  void record(AttentionMap map);
  // Convenience: copies `data` (product of dims floats).
  void record(const std::string& name, int layer, int head, int step, std::vector<std::size_t> dims,
              const float* data);

  const std::vector<AttentionMap>& maps() const { return maps_; }
  // Moves the maps out (the trace is left empty).
  std::vector<AttentionMap> take() {
    std::vector<AttentionMap> out;
    out.swap(maps_);
    return out;
  }
  std::size_t size() const { return maps_.size(); }
  void clear() { maps_.clear(); }
  // All maps with this name, in recording order.
  std::vector<const AttentionMap*> find(const std::string& name) const;

 private:
  bool enabled_;
  std::vector<AttentionMap> maps_;
};

}  // namespace attnlens
