#include "trace/trace.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "common.h"

namespace attnlens {

bool FloatSpan::operator==(const std::vector<float>& v) const {
  return v.size() == size_ && std::equal(v.begin(), v.end(), data_);
}

bool FloatSpan::operator==(const FloatSpan& o) const {
  return o.size_ == size_ && std::equal(data_, data_ + size_, o.data_);
}

int AttentionTrace::kind_index(const std::string& name) {
  for (std::size_t k = 0; k < kinds_.size(); ++k)
    if (kinds_[k] == name) return static_cast<int>(k);
  kinds_.push_back(name);
  return static_cast<int>(kinds_.size() - 1);
}

float* AttentionTrace::append_entry(const std::string& name, int layer, int head, int step, const std::size_t* dims,
                                    std::size_t rank) {
  if (rank > kMaxRank)
    throw Error("AttentionTrace: map '" + name + "' has " + std::to_string(rank) + " dims (at most " +
                std::to_string(kMaxRank) + ")");
  Entry e{};
  e.kind = kind_index(name);
  e.layer = layer;
  e.head = head;
  e.step = step;
  e.rank = static_cast<int>(rank);
  std::size_t count = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    e.dims[i] = dims[i];
    if (dims[i] != 0 && count > std::numeric_limits<std::size_t>::max() / 4 / dims[i])
      throw Error("AttentionTrace: map '" + name + "' is too large");
    count *= dims[i];
  }
  e.offset = values_.size();
  e.count = count;
  values_.resize(values_.size() + count, 0.0f);
  entries_.push_back(e);
  return values_.data() + e.offset;
}

float* AttentionTrace::add(const std::string& name, int layer, int head, int step,
                           std::initializer_list<std::size_t> dims) {
  if (!enabled_) return nullptr;
  return append_entry(name, layer, head, step, dims.begin(), dims.size());
}

void AttentionTrace::record(const AttentionMap& map) {
  if (!enabled_) return;
  std::size_t n = 1;
  for (std::size_t d : map.dims) n *= d;
  if (n != map.data.size())
    throw Error("AttentionTrace: map '" + map.name + "' has " + std::to_string(map.data.size()) +
                " values but its dims hold " + std::to_string(n));
  record(map.name, map.layer, map.head, map.step, map.dims, map.data.data());
}

void AttentionTrace::record(const std::string& name, int layer, int head, int step,
                            const std::vector<std::size_t>& dims, const float* data) {
  if (!enabled_) return;
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  if (data == nullptr && n != 0)
    throw Error("AttentionTrace: map '" + name + "' has dims holding " + std::to_string(n) + " values but no data");
  float* out = append_entry(name, layer, head, step, dims.data(), dims.size());
  if (n != 0) std::memcpy(out, data, n * sizeof(float));
}

void AttentionTrace::append(const AttentionTrace& other) {
  if (!enabled_) return;
  reserve(entries_.size() + other.entries_.size(), values_.size() + other.values_.size());
  for (const Entry& e : other.entries_) {
    float* out = append_entry(other.kinds_[static_cast<std::size_t>(e.kind)], e.layer, e.head, e.step,
                              e.dims.data(), static_cast<std::size_t>(e.rank));
    if (e.count != 0) std::memcpy(out, other.values_.data() + e.offset, e.count * sizeof(float));
  }
}

void AttentionTrace::reserve(std::size_t maps, std::size_t floats) {
  entries_.reserve(maps);
  values_.reserve(floats);
}

void AttentionTrace::clear() {
  kinds_.clear();
  entries_.clear();
  values_.clear();
}

MapView AttentionTrace::operator[](std::size_t i) const {
  const Entry& e = entries_[i];
  return MapView{kinds_[static_cast<std::size_t>(e.kind)], e.layer, e.head, e.step,
                 std::vector<std::size_t>(e.dims.begin(), e.dims.begin() + e.rank),
                 FloatSpan(values_.data() + e.offset, e.count)};
}

MapView AttentionTrace::at(std::size_t i) const {
  if (i >= entries_.size())
    throw Error("AttentionTrace: map " + std::to_string(i) + " of " + std::to_string(entries_.size()));
  return (*this)[i];
}

std::vector<MapView> AttentionTrace::find(const std::string& name) const {
  std::vector<MapView> out;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (kinds_[static_cast<std::size_t>(entries_[i].kind)] == name) out.push_back((*this)[i]);
  return out;
}

AttentionTrace select_maps(AttentionTrace maps, const MapSelection& selection) {
  if (selection.all() || maps.empty()) return maps;
  const auto& kinds = maps.kinds();
  for (const auto& kind : selection.kinds)
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      std::string have;
      for (const auto& k : kinds) have += (have.empty() ? "'" : ", '") + k + "'";
      throw Error("output_attentions: this model has no '" + kind + "' maps (it has " + have + ")");
    }
  auto wanted = [&](const std::string& name) {
    return selection.kinds.empty() ||
           std::find(selection.kinds.begin(), selection.kinds.end(), name) != selection.kinds.end();
  };
  AttentionTrace out;
  // With head_mean: (kind, layer, step) → index in `out` of the group's mean and its number of heads.
  std::map<std::tuple<int, int, int>, std::pair<std::size_t, int>> group;
  const auto& entries = maps.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const std::string& name = kinds[static_cast<std::size_t>(e.kind)];
    if (!wanted(name)) continue;
    const float* values = maps.values().data() + e.offset;
    if (!selection.head_mean || e.head < 0) {
      out.record(name, e.layer, e.head, e.step, std::vector<std::size_t>(e.dims.begin(), e.dims.begin() + e.rank),
                 values);
      continue;
    }
    const auto key = std::make_tuple(e.kind, e.layer, e.step);
    auto it = group.find(key);
    if (it == group.end()) {
      group.emplace(key, std::make_pair(out.size(), 1));
      out.record(name, e.layer, -1, e.step, std::vector<std::size_t>(e.dims.begin(), e.dims.begin() + e.rank),
                 values);
      continue;
    }
    const auto& first = out.entries()[it->second.first];
    if (first.rank != e.rank || !std::equal(e.dims.begin(), e.dims.begin() + e.rank, first.dims.begin()))
      throw Error("select_maps: the heads of '" + name + "' differ in shape");
    float* mean = out.mutable_values(it->second.first);
    for (std::size_t k = 0; k < e.count; ++k) mean[k] += values[k];
    ++it->second.second;
  }
  for (const auto& [key, at] : group)
    if (at.second > 1) {
      float* mean = out.mutable_values(at.first);
      const std::size_t count = out.entries()[at.first].count;
      for (std::size_t k = 0; k < count; ++k) mean[k] /= static_cast<float>(at.second);
    }
  return out;
}

}  // namespace attnlens
