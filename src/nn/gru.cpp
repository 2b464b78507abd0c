// GRU layer; equations and weight layout in gru.h.
#include "nn/gru.h"

#include <string>
#include <utility>

#include "common.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attnlens::nn {

namespace {

// Runs on every step: the message is built only on failure.
void check_cell(const GruCellWeights& w, bool needs_ih, const char* op) {
  const char* what = w.hidden_size == 0                 ? "hidden size must be positive"
                     : w.weight_hh == nullptr && w.packed_hh == nullptr ? "weight_hh is missing"
                     : needs_ih && w.input_size == 0    ? "input size must be positive"
                     : needs_ih && w.weight_ih == nullptr && w.packed_ih == nullptr ? "weight_ih is missing"
                                                        : nullptr;
  if (what != nullptr) throw Error(std::string("gru: ") + op + ": " + what);
}

// PyTorch's gate arithmetic from gi [3H] = W_ih x + b_ih and gh [3H] = W_hh h + b_hh; rz: 3H of scratch.
void gates(std::size_t hs, const float* gi, const float* gh, float* rz, float* h) {
  for (std::size_t k = 0; k < 2 * hs; ++k) rz[k] = gi[k] + gh[k];
  kernels::vsigmoid(rz, 2 * hs);
  const float* r = rz;
  const float* z = rz + hs;
  float* n = rz + 2 * hs;
  for (std::size_t k = 0; k < hs; ++k) n[k] = gi[2 * hs + k] + r[k] * gh[2 * hs + k];
  kernels::vtanh(n, hs);
  for (std::size_t k = 0; k < hs; ++k) h[k] = (1.0f - z[k]) * n[k] + z[k] * h[k];
}

// gh (scratch) [3H] = W_hh h + b_hh, then the gates.
void update(const GruCellWeights& w, const float* gi, float* h, float* gh) {
  const std::size_t hs = w.hidden_size, g3 = 3 * hs;
  if (w.packed_hh != nullptr) {
    kernels::linear_packed(1, h, hs, *w.packed_hh, w.bias_hh, gh, g3);
  } else {
    kernels::gemv_nt(g3, hs, h, w.weight_hh, hs, gh);
    if (w.bias_hh != nullptr) kernels::add(w.bias_hh, gh, g3);
  }
  gates(hs, gi, gh, gh + g3, h);
}

}  // namespace

void gru_cell_step_projected(const GruCellWeights& w, const float* x_proj, float* h, float* scratch) {
  check_cell(w, false, "gru_cell_step_projected");
  require(x_proj != nullptr && h != nullptr && scratch != nullptr,
          "gru: gru_cell_step_projected: x_proj, h and scratch must not be null");
  update(w, x_proj, h, scratch);
}

void gru_cell_step_rows_projected(const GruCellWeights& w, std::size_t n, const float* x_proj, std::size_t ldp,
                                  float* h, std::size_t ldh, float* scratch) {
  check_cell(w, false, "gru_cell_step_rows_projected");
  if (w.packed_hh == nullptr) throw Error("gru: gru_cell_step_rows_projected: needs packed weights");
  if (n == 0) return;
  require(x_proj != nullptr && h != nullptr && scratch != nullptr,
          "gru: gru_cell_step_rows_projected: x_proj, h and scratch must not be null");
  const std::size_t hs = w.hidden_size, g3 = 3 * hs;
  float* gh = scratch;        // (n, 3H)
  float* rz = gh + n * g3;    // (n, 3H)
  kernels::linear_packed(n, h, ldh, *w.packed_hh, w.bias_hh, gh, g3);
  for (std::size_t r = 0; r < n; ++r) gates(hs, x_proj + r * ldp, gh + r * g3, rz + r * g3, h + r * ldh);
}

void gru_cell_step(const GruCellWeights& w, const float* x, float* h, float* scratch) {
  check_cell(w, true, "gru_cell_step");
  require(x != nullptr && h != nullptr && scratch != nullptr, "gru: gru_cell_step: x, h and scratch must not be null");
  const std::size_t g3 = 3 * w.hidden_size;
  thread_local std::vector<float> gi;  // reused: a decoder step allocates nothing once warm
  gi.resize(g3);
  if (w.packed_ih != nullptr) {
    kernels::linear_packed(1, x, w.input_size, *w.packed_ih, w.bias_ih, gi.data(), g3);
  } else {
    kernels::gemv_nt(g3, w.input_size, x, w.weight_ih, w.input_size, gi.data());
    if (w.bias_ih != nullptr) kernels::add(w.bias_ih, gi.data(), g3);
  }
  update(w, gi.data(), h, scratch);
}

Gru::Gru(std::size_t input_size, std::size_t hidden_size, std::vector<Direction> directions,
         kernels::Precision precision)
    : input_size_(input_size), hidden_size_(hidden_size), precision_(precision) {
  require(input_size > 0 && hidden_size > 0, "gru: input and hidden sizes must be positive");
  require(directions.size() == 1 || directions.size() == 2,
          "gru: expected 1 (forward) or 2 (bidirectional) directions, got " + std::to_string(directions.size()));
  const std::size_t g3 = 3 * hidden_size;
  for (std::size_t d = 0; d < directions.size(); ++d) {
    const Direction& src = directions[d];
    const std::string name = d == 0 ? "forward direction" : "reverse direction";
    auto check = [&](const std::vector<float>& v, std::size_t expected, const char* what, bool optional) {
      if (optional && v.empty()) return;
      require(v.size() == expected, "gru: " + name + ": " + what + " has " + std::to_string(v.size()) +
                                        " values, expected " + std::to_string(expected));
    };
    check(src.weight_ih, g3 * input_size, "weight_ih [3H x I]", false);
    check(src.weight_hh, g3 * hidden_size, "weight_hh [3H x H]", false);
    check(src.bias_ih, g3, "bias_ih [3H]", true);
    check(src.bias_hh, g3, "bias_hh [3H]", true);
  }
  dirs_ = std::move(directions);
  for (Direction& d : dirs_) {
    packed_ih_.emplace_back();  // empty unless pack_input_weights()
    packed_hh_.push_back(kernels::pack_rows(g3, hidden_size, d.weight_hh.data(), hidden_size, precision));
    std::vector<float>().swap(d.weight_hh);  // the packed copy is the one every step reads
  }
}

void Gru::pack_input_weights() {
  for (std::size_t d = 0; d < dirs_.size(); ++d)
    if (packed_ih_[d].empty())
      packed_ih_[d] = kernels::pack_rows(3 * hidden_size_, input_size_, dirs_[d].weight_ih.data(), input_size_,
                                         precision_);
}

GruCellWeights Gru::cell(std::size_t direction) const {
  if (direction >= dirs_.size())  // (every decoder step asks: the message is built only on failure)
    throw Error("gru: direction " + std::to_string(direction) + " does not exist");
  const Direction& d = dirs_[direction];
  return GruCellWeights{input_size_,
                        hidden_size_,
                        d.weight_ih.data(),
                        nullptr,  // W_hh: packed_hh
                        d.bias_ih.empty() ? nullptr : d.bias_ih.data(),
                        d.bias_hh.empty() ? nullptr : d.bias_hh.data(),
                        packed_ih_[direction].empty() ? nullptr : &packed_ih_[direction],
                        &packed_hh_[direction]};
}

void Gru::forward(const float* x, std::size_t t, float* out, const float* h0, float* h_n) const {
  require(!dirs_.empty(), "gru: forward on an empty (default-constructed) layer");
  require(t == 0 || (x != nullptr && out != nullptr), "gru: forward: x and out must not be null");
  const std::size_t g3 = 3 * hidden_size_;
  // The directions are independent: with threads (kernels/parallel.h) each runs on its own, same bits.
  kernels::parallel_each(dirs_.size(), [&](std::size_t d) {
    std::vector<float> proj(t * g3);
    const GruCellWeights w = cell(d);
    // proj [T × 3H] = X W_ihᵀ + b_ih for every step at once.
    if (t > 0)
      kernels::gemm_nt_bias_act(t, g3, input_size_, x, input_size_, w.weight_ih, input_size_, proj.data(), g3,
                                w.bias_ih, kernels::Activation::none);
    run_direction(d, t, [&](std::size_t pos) { return proj.data() + pos * g3; }, out, h0, h_n);
  });
}

void Gru::forward_projected(const float* const* proj, std::size_t t, float* out, const float* h0,
                            float* h_n) const {
  require(!dirs_.empty(), "gru: forward on an empty (default-constructed) layer");
  require(t == 0 || (proj != nullptr && out != nullptr), "gru: forward: proj and out must not be null");
  const std::size_t g3 = 3 * hidden_size_;
  kernels::parallel_each(dirs_.size(), [&](std::size_t d) {
    run_direction(d, t, [&](std::size_t pos) { return proj[pos] + d * g3; }, out, h0, h_n);
  });
}

template <class Rows>
void Gru::run_direction(std::size_t d, std::size_t t, Rows rows, float* out, const float* h0, float* h_n) const {
  const std::size_t hs = hidden_size_, out_ld = output_size();
  std::vector<float> scratch(6 * hs), h(hs);
  const GruCellWeights w = cell(d);
  for (std::size_t k = 0; k < hs; ++k) h[k] = h0 != nullptr ? h0[d * hs + k] : 0.0f;
  for (std::size_t step = 0; step < t; ++step) {
    const std::size_t pos = d == 0 ? step : t - 1 - step;
    update(w, rows(pos), h.data(), scratch.data());
    float* row = out + pos * out_ld + d * hs;
    for (std::size_t k = 0; k < hs; ++k) row[k] = h[k];
  }
  if (h_n != nullptr)
    for (std::size_t k = 0; k < hs; ++k) h_n[d * hs + k] = h[k];
}

}  // namespace attnlens::nn
