// GRU layer (Cho et al. 2014), in PyTorch's nn.GRU / nn.GRUCell conventions so that trained weights load as they
// are (torch 1.13 docs; gate order r, z, n in every weight and bias, rows [0:H], [H:2H], [2H:3H]):
//   r = σ(W_ir x + b_ir + W_hr h + b_hr)
//   z = σ(W_iz x + b_iz + W_hz h + b_hz)
//   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))       (b_hn stays inside the reset gate: the biases of the
//   h' = (1 − z) ⊙ n + z ⊙ h                              n gate cannot be summed, unlike an LSTM's)
// Weights: weight_ih [3H × I], weight_hh [3H × H], bias_ih [3H], bias_hh [3H] (each bias may be absent).
// A bidirectional layer runs a second direction (PyTorch's *_reverse weights) from t = T−1 down to 0; its output
// row t is [h_fwd_t ; h_bwd_t] (2H values), as nn.GRU(bidirectional=True) returns it.
//
// Two entry points, as nn/lstm.h:
//   - Gru::forward: a whole sequence; the input projections W_ih x_t + b_ih of all steps are one GEMM, only
//     W_hh h_{t−1} stays in the time loop.
//   - gru_cell_step: one step of one direction, for decoders that build x_t step by step.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/kernels.h"

namespace attnlens::nn {

// Non-owning view of one direction's weights.
struct GruCellWeights {
  std::size_t input_size = 0;        // I
  std::size_t hidden_size = 0;       // H
  const float* weight_ih = nullptr;  // [3H × I]
  const float* weight_hh = nullptr;  // [3H × H]
  const float* bias_ih = nullptr;    // [3H] or null
  const float* bias_hh = nullptr;    // [3H] or null
  // The same weights packed for one-row products (kernels.h); when set, a step uses them instead.
  const kernels::PackedMatrix* packed_ih = nullptr;
  const kernels::PackedMatrix* packed_hh = nullptr;
};

// One step: h [H] holds h_{t−1} on entry and h_t on return; x [I]. `scratch` holds 6H floats. Throws Error on
// null pointers or a zero hidden size.
void gru_cell_step(const GruCellWeights& w, const float* x, float* h, float* scratch);

// The same step when x_proj [3H] = W_ih x_t + b_ih is already known (w.weight_ih and w.bias_ih are not read).
void gru_cell_step_projected(const GruCellWeights& w, const float* x_proj, float* h, float* scratch);

// The same step for n rows at once (a beam's hypotheses or a list's sources) when each row's input projection is
// already known: x_proj row r [3H] = W_ih x_t + b_ih at x_proj + r·ldp (w.weight_ih and w.bias_ih are not read), h row
// r at h + r·ldh (updated in place); `scratch` holds n·6H floats. Needs w.packed_hh, read once per pair of rows; each
// row's bits do not depend on the other rows.
void gru_cell_step_rows_projected(const GruCellWeights& w, std::size_t n, const float* x_proj, std::size_t ldp,
                                  float* h, std::size_t ldh, float* scratch);

// Owning GRU layer, uni- or bidirectional, one layer.
class Gru {
 public:
  struct Direction {
    std::vector<float> weight_ih;  // [3H × I]
    std::vector<float> weight_hh;  // [3H × H]
    std::vector<float> bias_ih;    // [3H] or empty
    std::vector<float> bias_hh;    // [3H] or empty
  };

  Gru() = default;
  // directions: 1 (forward) or 2 (forward, reverse); sizes are checked, errors name the direction and tensor.
  Gru(std::size_t input_size, std::size_t hidden_size, std::vector<Direction> directions,
      kernels::Precision precision = kernels::Precision::f32);

  std::size_t input_size() const { return input_size_; }
  std::size_t hidden_size() const { return hidden_size_; }
  std::size_t num_directions() const { return dirs_.size(); }
  std::size_t output_size() const { return dirs_.size() * hidden_size_; }  // D·H
  // The view of one direction for the step functions: weight_hh is null (packed_hh holds W_hh, the only copy kept),
  // packed_ih is null until pack_input_weights().
  GruCellWeights cell(std::size_t direction) const;
  // Packs W_ih for one-row products as well, for a layer whose steps multiply raw inputs (gru_cell_step); layers
  // that only run forward() or get their input projections elsewhere never need it. Idempotent.
  void pack_input_weights();

  // x [T × I] → out [T × D·H]. Zero initial state unless h0 [D × H] is given; h_n [D × H] (optional) receives
  // the final states (the backward direction's is the one after t = 0, as in PyTorch).
  void forward(const float* x, std::size_t t, float* out, const float* h0 = nullptr, float* h_n = nullptr) const;
  // The same when the input projections are already known (an EmbeddingProjection): proj[t'] points to step t''s
  // row [W_ih_fwd x + b_ih_fwd ; W_ih_bwd x + b_ih_bwd] (D·3H floats). Same bits as forward() on that x.
  void forward_projected(const float* const* proj, std::size_t t, float* out, const float* h0 = nullptr,
                         float* h_n = nullptr) const;

 private:
  // Direction d's recurrence over T steps whose input projections are rows(pos) (3H floats).
  template <class Rows>
  void run_direction(std::size_t d, std::size_t t, Rows rows, float* out, const float* h0, float* h_n) const;
  std::size_t input_size_ = 0, hidden_size_ = 0;
  kernels::Precision precision_ = kernels::Precision::f32;
  std::vector<Direction> dirs_;  // weight_hh emptied once packed
  std::vector<kernels::PackedMatrix> packed_ih_, packed_hh_;  // per direction: what every step reads
};

}  // namespace attnlens::nn
