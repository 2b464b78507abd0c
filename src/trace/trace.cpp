#include "trace/trace.h"

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
  require(element_count(map.dims) == map.data.size(),
          "AttentionTrace: map '" + map.name + "' has " + std::to_string(map.data.size()) +
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
  require(data != nullptr || n == 0,
          "AttentionTrace: map '" + name + "' has dims holding " + std::to_string(n) + " values but no data");
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

}  // namespace attnlens
