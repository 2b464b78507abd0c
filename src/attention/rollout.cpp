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

// Edmonds–Karp maximum flow on a small dense graph (adjacency lists over an edge array with paired reverse edges).
class MaxFlow {
 public:
  explicit MaxFlow(std::size_t nodes) : head_(nodes, -1), parent_(nodes), queue_(nodes) {}

  void add_edge(std::size_t from, std::size_t to, double capacity) {
    push(from, to, capacity);
    push(to, from, 0.0);
  }

  // Resets every residual capacity, then pushes flow from s to t; returns its value.
  double run(std::size_t s, std::size_t t) {
    for (Edge& e : edges_) e.residual = e.capacity;
    double total = 0.0;
    for (;;) {
      std::fill(parent_.begin(), parent_.end(), -1);
      std::size_t begin = 0, end = 0;
      queue_[end++] = s;
      parent_[s] = -2;
      while (begin < end && parent_[t] == -1) {
        const std::size_t u = queue_[begin++];
        for (long e = head_[u]; e >= 0; e = edges_[static_cast<std::size_t>(e)].next) {
          const Edge& edge = edges_[static_cast<std::size_t>(e)];
          if (edge.residual > kEps && parent_[edge.to] == -1) {
            parent_[edge.to] = e;
            queue_[end++] = edge.to;
          }
        }
      }
      if (parent_[t] == -1) return total;
      double push_amount = std::numeric_limits<double>::infinity();
      for (std::size_t v = t; v != s;) {
        const Edge& edge = edges_[static_cast<std::size_t>(parent_[v])];
        push_amount = std::min(push_amount, edge.residual);
        v = edges_[static_cast<std::size_t>(parent_[v]) ^ 1u].to;
      }
      for (std::size_t v = t; v != s;) {
        const std::size_t e = static_cast<std::size_t>(parent_[v]);
        edges_[e].residual -= push_amount;
        edges_[e ^ 1u].residual += push_amount;
        v = edges_[e ^ 1u].to;
      }
      total += push_amount;
    }
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
  std::vector<Edge> edges_;
  std::vector<long> head_;
  std::vector<long> parent_;
  std::vector<std::size_t> queue_;
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
