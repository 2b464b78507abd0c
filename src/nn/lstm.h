// LSTM layer (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000), in PyTorch's nn.LSTM
// conventions so that trained weights load as they are:
//   z   = W_ih x_t + b_ih + W_hh h_{t−1} + b_hh          (4H,) split in PyTorch's gate order [i | f | g | o]
//   i = σ(z_i), f = σ(z_f), g = tanh(z_g), o = σ(z_o)
//   c_t = f ⊙ c_{t−1} + i ⊙ g,   h_t = o ⊙ tanh(c_t)
// Weights: weight_ih [4H × I], weight_hh [4H × H], bias_ih [4H], bias_hh [4H] (the two biases are summed once).
// A bidirectional layer runs a second direction (PyTorch's *_reverse weights) from t = T−1 down to 0, and its
// output row t is [h_fwd_t ; h_bwd_t] (2H values), as nn.LSTM(bidirectional=True) returns it.
//
// Two entry points:
//   - Lstm::forward: a whole sequence. The input projection W_ih x_t + b of every step is one GEMM
//     ([T × I]·[4H × I]ᵀ); only the recurrent W_hh h_{t−1} is left inside the time loop (one GEMV per step).
//   - lstm_cell_step: one step of one direction, for decoders that build their input x_t step by step
//     (e.g. an attention decoder feeding [embedding ; context]).
// Memory: an Lstm keeps W_hh only in its packed form (what every step reads) and W_ih only as given (what the
// sequence GEMM reads); W_ih is packed as well only for a layer that steps on raw inputs (pack_input_weights).
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/kernels.h"

namespace attnlens::nn {

// Non-owning view of one direction's weights. bias = b_ih + b_hh [4H], or null for none.
struct LstmCellWeights {
  std::size_t input_size = 0;   // I
  std::size_t hidden_size = 0;  // H
  const float* weight_ih = nullptr;  // [4H × I]
  const float* weight_hh = nullptr;  // [4H × H]
  const float* bias = nullptr;       // [4H] or null
  // The same weights packed for one-row products (kernels.h); when set, a step uses them instead.
  const kernels::PackedMatrix* packed_ih = nullptr;
  const kernels::PackedMatrix* packed_hh = nullptr;
};

// One step: h, c [H] hold h_{t−1}, c_{t−1} on entry and h_t, c_t on return. x [I]. `gates` is scratch of 4H
// floats (contents unspecified on return). Throws Error on null pointers or a zero hidden size.
void lstm_cell_step(const LstmCellWeights& w, const float* x, float* h, float* c, float* gates);

// The same step when the input projection is already known: x_proj [4H] = W_ih x_t (+ bias if the caller
// included it; `w.bias` is NOT added again here). w.weight_ih is not read.
void lstm_cell_step_projected(const LstmCellWeights& w, const float* x_proj, float* h, float* c, float* gates);

// The same step for n rows at once (a beam's hypotheses): x row r at x + r·ldx, h and c rows at h + r·ldh and
// c + r·ldc (updated in place); `gates` holds n·8H floats. The weights need their packed form; each product reads
// them once per pair of rows, and every row's result has the same bits as lstm_cell_step on that row alone.
void lstm_cell_step_rows(const LstmCellWeights& w, std::size_t n, const float* x, std::size_t ldx, float* h,
                         std::size_t ldh, float* c, std::size_t ldc, float* gates);

// The same n-row step when each row's input projection is already known: x_proj row r [4H] = W_ih x_t + b at
// x_proj + r·ldp (e.g. a decoder's kept word part plus the product of the rest; w.weight_ih and w.bias are not
// read). `gates` holds n·4H floats. Needs w.packed_hh; each row's bits do not depend on the other rows.
void lstm_cell_step_rows_projected(const LstmCellWeights& w, std::size_t n, const float* x_proj, std::size_t ldp,
                                   float* h, std::size_t ldh, float* c, std::size_t ldc, float* gates);

// Owning LSTM layer, uni- or bidirectional, one layer (stack layers by feeding one's output to the next).
class Lstm {
 public:
  struct Direction {
    std::vector<float> weight_ih;  // [4H × I]
    std::vector<float> weight_hh;  // [4H × H]
    std::vector<float> bias_ih;    // [4H] or empty
    std::vector<float> bias_hh;    // [4H] or empty
  };

  Lstm() = default;
  // directions: 1 (forward) or 2 (forward, reverse). Every size is checked; throws Error naming the direction
  // and the tensor.
  Lstm(std::size_t input_size, std::size_t hidden_size, std::vector<Direction> directions,
       kernels::Precision precision = kernels::Precision::f32);

  std::size_t input_size() const { return input_size_; }
  std::size_t hidden_size() const { return hidden_size_; }
  bool bidirectional() const { return dirs_.size() == 2; }
  std::size_t num_directions() const { return dirs_.size(); }
  std::size_t output_size() const { return dirs_.size() * hidden_size_; }  // D·H
  // The view of one direction for the step functions: weight_hh is null (packed_hh holds W_hh), packed_ih is null
  // until pack_input_weights().
  LstmCellWeights cell(std::size_t direction) const;
  // Packs W_ih for one-row products as well, for a layer whose steps multiply raw inputs (lstm_cell_step_rows):
  // a decoder layer above the first. Layers that only run forward() or get their input projections from elsewhere
  // (an EmbeddingProjection, a kept word part) never need it. Idempotent.
  void pack_input_weights();

  // x [T × I] → out [T × D·H] (row t = [h_fwd_t ; h_bwd_t]). Zero initial states unless h0/c0 [D × H] are
  // given; h_n/c_n [D × H] (optional) receive the final states (the backward direction's final state is the
  // one after t = 0, as in PyTorch). T = 0 writes nothing to out and sets h_n/c_n to the initial states.
  void forward(const float* x, std::size_t t, float* out, const float* h0 = nullptr, const float* c0 = nullptr,
               float* h_n = nullptr, float* c_n = nullptr) const;
  std::vector<float> forward(const std::vector<float>& x, std::size_t t) const;
  // The same when the input projections are already known (an EmbeddingProjection): proj[t'] points to step t''s
  // row [W_ih_fwd x + b_fwd ; W_ih_bwd x + b_bwd] (D·4H floats, each direction's bias = b_ih + b_hh included).
  // Same bits as forward() on the x these rows were projected from.
  void forward_projected(const float* const* proj, std::size_t t, float* out, const float* h0 = nullptr,
                         const float* c0 = nullptr, float* h_n = nullptr, float* c_n = nullptr) const;

 private:
  struct Dir {
    std::vector<float> w_ih, bias;     // [4H × I]; bias = b_ih + b_hh (zeros when neither is given)
    kernels::PackedMatrix p_hh;        // W_hh, packed: what every step reads
    kernels::PackedMatrix p_ih;        // W_ih, packed: empty unless pack_input_weights()
  };
  // Direction d's recurrence over T steps whose input projections are rows(pos) (4H floats).
  template <class Rows>
  void run_direction(std::size_t d, std::size_t t, Rows rows, float* out, const float* h0, const float* c0,
                     float* h_n, float* c_n) const;
  std::size_t input_size_ = 0, hidden_size_ = 0;
  kernels::Precision precision_ = kernels::Precision::f32;
  std::vector<Dir> dirs_;
};

}  // namespace attnlens::nn
