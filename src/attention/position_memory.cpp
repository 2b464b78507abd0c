// Tang 2016's position-weighted memories and content attention; formulas in position_memory.h.
#include "attention/position_memory.h"

#include <cmath>
#include <string>
#include <vector>

#include "attention/alignment.h"
#include "attention/detail.h"
#include "kernels/kernels.h"

namespace attnlens::attention {

using detail::checked_mul;
using detail::require_data;

void position_weighted_memory(TangLocationModel model, const float* embeddings, std::size_t t, std::size_t d,
                              const float* locations, std::size_t hop, const float* location_vectors,
                              float* memory) {
  const char* op = "position_weighted_memory";
  const std::size_t td = checked_mul(t, d, op);
  require_data(embeddings, td, op, "embeddings");
  require_data(memory, td, op, "memory");
  switch (model) {
    case TangLocationModel::kModel1:
    case TangLocationModel::kModel2: {
      require_data(locations, t, op, "locations (L_i, needed by Models 1 and 2)");
      if (model == TangLocationModel::kModel1) {
        require(hop >= 1, "position_weighted_memory: Model 1 needs the hop number k >= 1");
        detail::require_positive(d, op, "d");
      }
      const float length = static_cast<float>(t);
      for (std::size_t i = 0; i < t; ++i) {
        require(std::isfinite(locations[i]),
                "position_weighted_memory: location " + std::to_string(i) + " is not a finite number");
        const float rel = locations[i] / length;
        float l = 1.0f - rel;  // eq. 11
        if (model == TangLocationModel::kModel1) {
          l -= (static_cast<float>(hop) / static_cast<float>(d)) * (1.0f - 2.0f * rel);  // eq. 10
        }
        for (std::size_t k = 0; k < d; ++k) memory[i * d + k] = embeddings[i * d + k] * l;
      }
      return;
    }
    case TangLocationModel::kModel3:
    case TangLocationModel::kModel4: {
      require_data(location_vectors, td, op, "location_vectors (l_i, needed by Models 3 and 4)");
      if (model == TangLocationModel::kModel3) {
        for (std::size_t p = 0; p < td; ++p) memory[p] = embeddings[p] + location_vectors[p];  // eq. 12
      } else {
        std::vector<float> gate(location_vectors, location_vectors + td);
        kernels::vsigmoid(gate.data(), td);
        for (std::size_t p = 0; p < td; ++p) memory[p] = embeddings[p] * gate[p];  // eq. 13
      }
      return;
    }
  }
  throw Error("position_weighted_memory: unknown location model " + std::to_string(static_cast<int>(model)) +
              " (Tang 2016 defines Models 1 to 4)");
}

void tang_content_attention(const float* memory, std::size_t t, std::size_t d, const float* aspect,
                            const float* w_att, float b_att, float* alpha, float* out) {
  const char* op = "tang_content_attention";
  require_data(memory, checked_mul(t, d, op), op, "memory");
  require_data(aspect, d, op, "aspect");
  require_data(w_att, checked_mul(2, d, op), op, "w_att ([2d])");
  require_data(alpha, t, op, "alpha");
  require_data(out, d, op, "out");
  // w_attᵀ[m_i; v] = w_att[:d]·m_i + w_att[d:]·v: the aspect half is shared by every word.
  const float aspect_term = (d == 0 ? 0.0f : kernels::dot(w_att + d, aspect, d)) + b_att;
  for (std::size_t i = 0; i < t; ++i) {
    alpha[i] = (d == 0 ? 0.0f : kernels::dot(w_att, memory + i * d, d)) + aspect_term;
  }
  kernels::vtanh(alpha, t);
  align_soft(alpha, 1, t);
  detail::matmul(1, d, t, alpha, memory, out);
  if (t == 0) {
    for (std::size_t k = 0; k < d; ++k) out[k] = 0.0f;
  }
}

}  // namespace attnlens::attention
