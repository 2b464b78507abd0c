#include "attention/rollout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common.h"

namespace attnlens::attention {

namespace {

void check(const char* op, std::size_t layers, std::size_t n, double residual) {
  require(layers > 0, std::string(op) + ": needs at least one layer");
  require(n > 0, std::string(op) + ": needs at least one position");
  require(std::isfinite(residual) && residual >= 0.0 && residual <= 1.0,
          std::string(op) + ": residual must be in [0, 1]");
}

// Ã = r·I + (1 − r)·A for one layer, in double; a non-finite or negative weight is refused.
std::vector<double> with_residual(const char* op, const float* a, std::size_t n, double r) {
  std::vector<double> out(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const float w = a[i * n + j];
      require(std::isfinite(w) && w >= 0.0f, std::string(op) + ": attention weights must be finite and ≥ 0");
      out[i * n + j] = (1.0 - r) * w + (i == j ? r : 0.0);
    }
  }
  return out;
}

// Dinic's maximum flow (BFS level graph, then blocking flows by DFS with a current-arc pointer per node) on a small
// dense graph: adjacency lists over an edge array whose reverse edges are paired (edge e ^ 1). Edmonds–Karp was
// 20× slower here: with dense softmax capacities it finds thousands of short augmenting paths one BFS at a time.
class MaxFlow {
 public:
  explicit MaxFlow(std::size_t nodes) : head_(nodes, -1), level_(nodes), arc_(nodes), queue_(nodes), stack_(nodes) {}

  void add_edge(std::size_t from, std::size_t to, double capacity) {
    push(from, to, capacity);
    push(to, from, 0.0);
  }

  // Resets every residual capacity, then pushes flow from s to t; returns its value.
  double run(std::size_t s, std::size_t t) {
    for (Edge& e : edges_) e.residual = e.capacity;
    double total = 0.0;
    while (levels(s, t)) {
      for (std::size_t v = 0; v < head_.size(); ++v) arc_[v] = head_[v];
      for (double f; (f = augment(s, t)) > 0.0;) total += f;
    }
    return total;
  }

 private:
  static constexpr double kEps = 1e-12;
  struct Edge {
    std::size_t to;
    long next;
    double capacity, residual;
  };
  void push(std::size_t from, std::size_t to, double capacity) {
    edges_.push_back({to, head_[from], capacity, capacity});
    head_[from] = static_cast<long>(edges_.size() - 1);
  }

  // BFS from s over edges with residual capacity; true when t is reached.
  bool levels(std::size_t s, std::size_t t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::size_t begin = 0, end = 0;
    queue_[end++] = s;
    level_[s] = 0;
    while (begin < end) {
      const std::size_t u = queue_[begin++];
      for (long e = head_[u]; e >= 0; e = edges_[static_cast<std::size_t>(e)].next) {
        const Edge& edge = edges_[static_cast<std::size_t>(e)];
        if (edge.residual > kEps && level_[edge.to] < 0) {
          level_[edge.to] = level_[u] + 1;
          queue_[end++] = edge.to;
        }
      }
    }
    return level_[t] >= 0;
  }

  // One path s → t along the level graph (iterative DFS; dead ends advance their node's current arc), saturating
  // its bottleneck; 0 when the level graph is blocked.
  double augment(std::size_t s, std::size_t t) {
    std::size_t depth = 0;  // stack_[0..depth) holds the edges of the path so far
    std::size_t u = s;
    for (;;) {
      if (u == t) {
        double f = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < depth; ++k) f = std::min(f, edges_[stack_[k]].residual);
        for (std::size_t k = 0; k < depth; ++k) {
          edges_[stack_[k]].residual -= f;
          edges_[stack_[k] ^ 1u].residual += f;
        }
        return f;
      }
      long& e = arc_[u];
      while (e >= 0) {
        const Edge& edge = edges_[static_cast<std::size_t>(e)];
        if (edge.residual > kEps && level_[edge.to] == level_[u] + 1) break;
        e = edge.next;
      }
      if (e >= 0) {
        stack_[depth++] = static_cast<std::size_t>(e);
        u = edges_[static_cast<std::size_t>(e)].to;
        continue;
      }
      // Dead end: retreat one edge and skip it from its tail from now on.
      if (depth == 0) return 0.0;
      const std::size_t back = stack_[--depth];
      u = edges_[back ^ 1u].to;
      arc_[u] = edges_[back].next;
    }
  }

  std::vector<Edge> edges_;
  std::vector<long> head_;
  std::vector<long> level_;
  std::vector<long> arc_;
  std::vector<std::size_t> queue_;
  std::vector<std::size_t> stack_;
};

}  // namespace

void attention_rollout(const float* maps, std::size_t layers, std::size_t n, double residual, float* rollout) {
  check("attention_rollout", layers, n, residual);
  std::vector<double> current(n * n), next(n * n);
  for (std::size_t l = 0; l < layers; ++l) {
    const std::vector<double> a = with_residual("attention_rollout", maps + l * n * n, n, residual);
    if (l == 0) {
      current = a;
    } else {
      // next = Ã_l · current   [n × n] · [n × n]
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          double sum = 0.0;
          for (std::size_t k = 0; k < n; ++k) sum += a[i * n + k] * current[k * n + j];
          next[i * n + j] = sum;
        }
      }
      current.swap(next);
    }
    for (std::size_t x = 0; x < n * n; ++x) rollout[l * n * n + x] = static_cast<float>(current[x]);
  }
}

void attention_flow(const float* maps, std::size_t layers, std::size_t n, double residual, float* flow) {
  check("attention_flow", layers, n, residual);
  require(n <= kMaxFlowPositions, "attention_flow: at most " + std::to_string(kMaxFlowPositions) +
                                      " positions (n² maximum-flow problems); got " + std::to_string(n));
  require(layers <= kMaxFlowLayers, "attention_flow: at most " + std::to_string(kMaxFlowLayers) + " layers");
  // Node (l, i) is l·n + i; layer 0 holds the inputs, layer L the outputs.
  MaxFlow graph((layers + 1) * n);
  for (std::size_t l = 1; l <= layers; ++l) {
    const std::vector<double> a = with_residual("attention_flow", maps + (l - 1) * n * n, n, residual);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (a[i * n + j] > 0.0) graph.add_edge((l - 1) * n + j, l * n + i, a[i * n + j]);
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) flow[i * n + j] = static_cast<float>(graph.run(j, layers * n + i));
  }
}

}  // namespace attnlens::attention
