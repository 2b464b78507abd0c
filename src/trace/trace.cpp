#include "trace/trace.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "common.h"

namespace attnlens {

static std::size_t element_count(const std::vector<std::size_t>& dims) {
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  return n;
}

void AttentionTrace::record(AttentionMap map) {
  if (!enabled_) return;
  if (element_count(map.dims) != map.data.size())
    throw Error("AttentionTrace: map '" + map.name + "' has " + std::to_string(map.data.size()) +
                " values but its dims hold " + std::to_string(element_count(map.dims)));
  maps_.push_back(std::move(map));
}

void AttentionTrace::record(const std::string& name, int layer, int head, int step, std::vector<std::size_t> dims,
                            const float* data) {
  if (!enabled_) return;
  AttentionMap map;
  map.name = name;
  map.layer = layer;
  map.head = head;
  map.step = step;
  const std::size_t n = element_count(dims);
  if (data == nullptr && n != 0)
    throw Error("AttentionTrace: map '" + name + "' has dims holding " + std::to_string(n) + " values but no data");
  map.dims = std::move(dims);
  map.data.assign(data, data + n);
  maps_.push_back(std::move(map));
}

std::vector<const AttentionMap*> AttentionTrace::find(const std::string& name) const {
  std::vector<const AttentionMap*> out;
  for (const auto& m : maps_)
    if (m.name == name) out.push_back(&m);
  return out;
}

std::vector<AttentionMap> select_maps(std::vector<AttentionMap> maps, const MapSelection& selection) {
  if (selection.all() || maps.empty()) return maps;
  for (const auto& kind : selection.kinds)
    if (std::none_of(maps.begin(), maps.end(), [&](const AttentionMap& m) { return m.name == kind; })) {
      std::string have;
      for (const auto& m : maps)
        if (have.find("'" + m.name + "'") == std::string::npos) have += (have.empty() ? "'" : ", '") + m.name + "'";
      throw Error("output_attentions: this model has no '" + kind + "' maps (it has " + have + ")");
    }
  auto wanted = [&](const AttentionMap& m) {
    return selection.kinds.empty() ||
           std::find(selection.kinds.begin(), selection.kinds.end(), m.name) != selection.kinds.end();
  };
  std::vector<AttentionMap> out;
  // With head_mean: (name, layer, step) → index in `out` of the group's mean and its number of heads.
  std::map<std::tuple<std::string, int, int>, std::pair<std::size_t, int>> group;
  for (auto& m : maps) {
    if (!wanted(m)) continue;
    if (!selection.head_mean || m.head < 0) {
      out.push_back(std::move(m));
      continue;
    }
    const auto key = std::make_tuple(m.name, m.layer, m.step);
    auto it = group.find(key);
    if (it == group.end()) {
      group.emplace(key, std::make_pair(out.size(), 1));
      m.head = -1;
      out.push_back(std::move(m));
      continue;
    }
    AttentionMap& mean = out[it->second.first];
    if (mean.dims != m.dims) throw Error("select_maps: the heads of '" + m.name + "' differ in shape");
    for (std::size_t k = 0; k < m.data.size(); ++k) mean.data[k] += m.data[k];
    ++it->second.second;
  }
  for (const auto& [key, at] : group)
    if (at.second > 1)
      for (float& v : out[at.first].data) v /= static_cast<float>(at.second);
  return out;
}

}  // namespace attnlens
