// AttentionTrace: every attention map a forward pass computes, recorded with its name and coordinates so that
// callers (CLI, bindings, page) can draw each one. Models append; nothing is dropped or approximated.
//
// The one result type of every task's maps. A trace keeps its maps in one arena: the values of every map back to
// back in one float buffer (in recording order, so the maps of one kind, recorded layer by layer and head by head,
// form one [layer, head, rows, columns] block), and an index of (kind, layer, head, step, dims, offset) per map.
// The bindings hand JS that buffer as one Float32Array and the index as one Int32Array (wasm/trace.js builds the
// per-map views), so a result costs a constant number of JS objects whatever its number of maps.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace attnlens {

// A map outside a trace, owning its values (built by code that assembles one map from parts, then recorded).
struct AttentionMap {
  std::string name;              // e.g. "cross", "decoder_self", "encoder_self", "visual", "selfattn", "relation"
  int layer = -1;                // -1 when the model has no layers
  int head = -1;                 // -1 when the mechanism has no heads
  int step = -1;                 // decoding step, -1 for maps computed once for the whole input
  std::vector<std::size_t> dims;  // row-major, e.g. {T, S} or {H, W}
  std::vector<float> data;        // product of dims elements
};

// A read-only run of floats inside a trace's arena.
class FloatSpan {
 public:
  FloatSpan(const float* data, std::size_t size) : data_(data), size_(size) {}
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const float& operator[](std::size_t i) const { return data_[i]; }
  const float* begin() const { return data_; }
  const float* end() const { return data_ + size_; }
  std::vector<float> to_vector() const { return std::vector<float>(data_, data_ + size_); }
  bool operator==(const std::vector<float>& v) const;
  bool operator==(const FloatSpan& o) const;

 private:
  const float* data_;
  std::size_t size_;
};

// One map of a trace: its coordinates and a view of its values. Valid while the trace lives and records nothing
// more (a record may move the arena).
struct MapView {
  const std::string& name;
  int layer;
  int head;
  int step;
  std::vector<std::size_t> dims;
  FloatSpan data;
  AttentionMap copy() const { return {name, layer, head, step, dims, data.to_vector()}; }
};

// Which maps a caller asked for: kinds by name (empty: every kind) and, with head_mean, one map per kind, layer and
// step — the mean over its heads, head −1 — instead of one per head (computed here, so only the mean crosses to JS).
struct MapSelection {
  std::vector<std::string> kinds;
  bool head_mean = false;
  bool all() const { return kinds.empty() && !head_mean; }
};

class AttentionTrace {
 public:
  static constexpr std::size_t kMaxRank = 4;
  // One map's place in the arena.
  struct Entry {
    int kind;                                // index into kinds()
    int layer, head, step;
    int rank;                                // ≤ kMaxRank
    std::array<std::size_t, kMaxRank> dims;  // the first `rank` are used
    std::size_t offset;                      // into values()
    std::size_t count;                       // product of the dims
  };

  // When disabled, record() is a no-op: models may skip tracing for speed only when the caller asked them to.
  explicit AttentionTrace(bool enabled = true) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // Appends a map of `dims` (values zeroed) and returns where its values go, for the caller to write once in
  // place; the pointer is valid until the next append. A disabled trace appends nothing and returns nullptr.
  float* add(const std::string& name, int layer, int head, int step, std::initializer_list<std::size_t> dims);
  void record(const AttentionMap& map);
  // Copies `data` (product of dims floats; may be null when that product is 0).
  void record(const std::string& name, int layer, int head, int step, const std::vector<std::size_t>& dims,
              const float* data);
  // Copies a map of another trace (never one of this trace's own: the append may move the arena it views).
  void record(const MapView& map) { record(map.name, map.layer, map.head, map.step, map.dims, map.data.data()); }
  // Appends every map of `other` (each keeps its coordinates).
  void append(const AttentionTrace& other);
  // Sizes the arena for `maps` maps holding `floats` values in all (no reallocation while they are recorded).
  void reserve(std::size_t maps, std::size_t floats);

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear();
  MapView operator[](std::size_t i) const;
  MapView at(std::size_t i) const;  // an Error past the end
  // Writable values of map i (for code that post-processes a map it recorded, e.g. a renormalisation).
  float* mutable_values(std::size_t i) { return values_.data() + entries_[i].offset; }
  // All maps with this name, in recording order.
  std::vector<MapView> find(const std::string& name) const;

  // The arena as the bindings read it.
  const std::vector<std::string>& kinds() const { return kinds_; }
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<float>& values() const { return values_; }

  class Iterator {
   public:
    Iterator(const AttentionTrace* t, std::size_t i) : t_(t), i_(i) {}
    MapView operator*() const { return (*t_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const AttentionTrace* t_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, entries_.size()}; }

 private:
  int kind_index(const std::string& name);
  float* append_entry(const std::string& name, int layer, int head, int step, const std::size_t* dims,
                      std::size_t rank);

  bool enabled_;
  std::vector<std::string> kinds_;
  std::vector<Entry> entries_;
  std::vector<float> values_;
};

// The maps of the selected kinds, in their order; with head_mean each (name, layer, step) group of heads becomes its
// mean, at the place of its first head. A kind that none of `maps` has is an Error naming the kinds there are
// (nothing is checked when `maps` is empty: an empty input has no maps).
AttentionTrace select_maps(AttentionTrace maps, const MapSelection& selection);

}  // namespace attnlens
