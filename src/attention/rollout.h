// Attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", §3):
// how much of what layer L computes at position i came from input position j, through every layer's attention and
// the residual connections. Input: one map per layer A_l [n × n] (rows sum to 1; the mean of a layer's heads), in
// order from the first layer. With the residual weight r (the paper's 0.5):
//   Ã_l = r·I + (1 − r)·A_l                  (rows still sum to 1)
//   rollout:  R_1 = Ã_1,  R_l = Ã_l R_{l−1}  rows sum to 1; R_L[i, j] = share of input j in output i
//   flow:     a graph with a node (l, i) for l = 0..L and each position i, an edge (l−1, j) → (l, i) of capacity
//             Ã_l[i, j]; F[i, j] = the maximum flow from (0, j) to (L, i) (Dinic's algorithm, in double)
// Rollout multiplies attention along every path; flow treats the weights as capacities, so one strong path cannot
// be counted twice. Causal (decoder) maps work as they are: their zeros are absent edges.
#pragma once

#include <cstddef>

namespace attnlens::attention {

// maps [L × n × n] → rollout [L × n × n] (the cumulative rollout after each layer; the last is the full rollout).
void attention_rollout(const float* maps, std::size_t layers, std::size_t n, double residual, float* rollout);

// maps [L × n × n] → flow [n × n]: flow[i, j] from input position j to output position i (each ≤ 1).
// Cost: n² maximum-flow problems on (L+1)·n nodes and L·n² edges; n ≤ kMaxFlowPositions.
void attention_flow(const float* maps, std::size_t layers, std::size_t n, double residual, float* flow);

inline constexpr std::size_t kMaxFlowPositions = 128;
inline constexpr std::size_t kMaxFlowLayers = 24;

}  // namespace attnlens::attention
