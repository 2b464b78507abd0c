// LSTM layer; equations and weight layout in lstm.h.
#include "nn/lstm.h"

#include <string>
#include <utility>

#include "common.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attnlens::nn {

namespace {

// Runs on every step: the message is built only on failure.
void check_cell(const LstmCellWeights& w, bool needs_ih, const char* op) {
  const char* what = w.hidden_size == 0                 ? "hidden size must be positive"
                     : w.weight_hh == nullptr && w.packed_hh == nullptr ? "weight_hh is missing"
                     : needs_ih && w.input_size == 0    ? "input size must be positive"
                     : needs_ih && w.weight_ih == nullptr && w.packed_ih == nullptr ? "weight_ih is missing"
                                                        : nullptr;
  if (what != nullptr) throw Error(std::string("lstm: ") + op + ": " + what);
}

// gates [4H] hold the pre-activations z = [i | f | g | o]; updates c and h in place (PyTorch's cell).
void activate_and_update(std::size_t hs, float* gates, float* h, float* c) {
  float* i = gates;
  float* f = gates + hs;
  float* g = gates + 2 * hs;
  float* o = gates + 3 * hs;
  kernels::vsigmoid(i, 2 * hs);  // i and f are adjacent
  kernels::vtanh(g, hs);
  kernels::vsigmoid(o, hs);
  for (std::size_t k = 0; k < hs; ++k) {
    c[k] = f[k] * c[k] + i[k] * g[k];
    g[k] = c[k];  // g is spent: reuse its slot for tanh(c_t)
  }
  kernels::vtanh(g, hs);
  for (std::size_t k = 0; k < hs; ++k) h[k] = o[k] * g[k];
}

// gates [4H] += W_hh h
void add_recurrent(const LstmCellWeights& w, const float* h, float* gates) {
  const std::size_t hs = w.hidden_size, g4 = 4 * hs;
  if (w.packed_hh == nullptr) {
    kernels::gemv_nt(g4, hs, h, w.weight_hh, hs, gates, /*accumulate=*/true);
    return;
  }
  thread_local std::vector<float> hh;  // reused: a decoder step allocates nothing once warm
  hh.resize(g4);
  kernels::linear_packed(1, h, hs, *w.packed_hh, nullptr, hh.data(), g4);
  kernels::add(hh.data(), gates, g4);
}

}  // namespace

void lstm_cell_step_projected(const LstmCellWeights& w, const float* x_proj, float* h, float* c, float* gates) {
  check_cell(w, false, "lstm_cell_step_projected");
  require(x_proj != nullptr && h != nullptr && c != nullptr && gates != nullptr,
          "lstm: lstm_cell_step_projected: x_proj, h, c and gates must not be null");
  const std::size_t hs = w.hidden_size, g4 = 4 * hs;
  if (w.packed_hh != nullptr) {
    // gates = W_hh h_{t−1} + x_proj in one product, the projection as its bias: the same single addition per gate
    // as adding the two afterwards, and no scratch (a thread that runs its first direction late allocates nothing).
    kernels::linear_packed(1, h, hs, *w.packed_hh, x_proj, gates, g4);
  } else {
    for (std::size_t k = 0; k < g4; ++k) gates[k] = x_proj[k];
    add_recurrent(w, h, gates);  // + W_hh h_{t−1}
  }
  activate_and_update(hs, gates, h, c);
}

void lstm_cell_step_rows(const LstmCellWeights& w, std::size_t n, const float* x, std::size_t ldx, float* h,
                         std::size_t ldh, float* c, std::size_t ldc, float* gates) {
  check_cell(w, true, "lstm_cell_step_rows");
  if (w.packed_ih == nullptr || w.packed_hh == nullptr)
    throw Error("lstm: lstm_cell_step_rows: needs packed weights (W_ih too: Lstm::pack_input_weights)");
  if (n == 0) return;
  require(x != nullptr && h != nullptr && c != nullptr && gates != nullptr,
          "lstm: lstm_cell_step_rows: x, h, c and gates must not be null");
  const std::size_t hs = w.hidden_size, g4 = 4 * hs;
  float* hh = gates + n * g4;  // (n, 4H): W_hh h
  kernels::linear_packed(n, x, ldx, *w.packed_ih, w.bias, gates, g4);  // W_ih x_t + b
  kernels::linear_packed(n, h, ldh, *w.packed_hh, nullptr, hh, g4);
  for (std::size_t r = 0; r < n; ++r) {
    kernels::add(hh + r * g4, gates + r * g4, g4);
    activate_and_update(hs, gates + r * g4, h + r * ldh, c + r * ldc);
  }
}

void lstm_cell_step_rows_projected(const LstmCellWeights& w, std::size_t n, const float* x_proj, std::size_t ldp,
                                   float* h, std::size_t ldh, float* c, std::size_t ldc, float* gates) {
  check_cell(w, false, "lstm_cell_step_rows_projected");
  if (w.packed_hh == nullptr) throw Error("lstm: lstm_cell_step_rows_projected: needs packed weights");
  if (n == 0) return;
  require(x_proj != nullptr && h != nullptr && c != nullptr && gates != nullptr,
          "lstm: lstm_cell_step_rows_projected: x_proj, h, c and gates must not be null");
  const std::size_t hs = w.hidden_size, g4 = 4 * hs;
  kernels::linear_packed(n, h, ldh, *w.packed_hh, nullptr, gates, g4);  // W_hh h
  for (std::size_t r = 0; r < n; ++r) {
    kernels::add(x_proj + r * ldp, gates + r * g4, g4);
    activate_and_update(hs, gates + r * g4, h + r * ldh, c + r * ldc);
  }
}

void lstm_cell_step(const LstmCellWeights& w, const float* x, float* h, float* c, float* gates) {
  check_cell(w, true, "lstm_cell_step");
  require(x != nullptr && h != nullptr && c != nullptr && gates != nullptr,
          "lstm: lstm_cell_step: x, h, c and gates must not be null");
  const std::size_t hs = w.hidden_size, g4 = 4 * hs;
  if (w.packed_ih != nullptr) {
    kernels::linear_packed(1, x, w.input_size, *w.packed_ih, w.bias, gates, g4);  // W_ih x_t + b
  } else {
    kernels::gemv_nt(g4, w.input_size, x, w.weight_ih, w.input_size, gates);  // W_ih x_t
    if (w.bias != nullptr) kernels::add(w.bias, gates, g4);
  }
  add_recurrent(w, h, gates);
  activate_and_update(hs, gates, h, c);
}

Lstm::Lstm(std::size_t input_size, std::size_t hidden_size, std::vector<Direction> directions,
           kernels::Precision precision)
    : input_size_(input_size), hidden_size_(hidden_size), precision_(precision) {
  require(input_size > 0 && hidden_size > 0, "lstm: input and hidden sizes must be positive");
  require(directions.size() == 1 || directions.size() == 2,
          "lstm: expected 1 (forward) or 2 (bidirectional) directions, got " + std::to_string(directions.size()));
  const std::size_t g4 = 4 * hidden_size;
  for (std::size_t d = 0; d < directions.size(); ++d) {
    Direction& src = directions[d];
    const std::string name = d == 0 ? "forward direction" : "reverse direction";
    auto check = [&](const std::vector<float>& v, std::size_t expected, const char* what, bool optional) {
      if (optional && v.empty()) return;
      require(v.size() == expected, "lstm: " + name + ": " + what + " has " + std::to_string(v.size()) +
                                        " values, expected " + std::to_string(expected));
    };
    check(src.weight_ih, g4 * input_size, "weight_ih [4H x I]", false);
    check(src.weight_hh, g4 * hidden_size, "weight_hh [4H x H]", false);
    check(src.bias_ih, g4, "bias_ih [4H]", true);
    check(src.bias_hh, g4, "bias_hh [4H]", true);
    Dir dir;
    dir.w_ih = std::move(src.weight_ih);
    dir.bias.assign(g4, 0.0f);
    // b_ih + b_hh summed once, in the same order PyTorch's fused kernel adds them.
    if (!src.bias_ih.empty()) kernels::add(src.bias_ih.data(), dir.bias.data(), g4);
    if (!src.bias_hh.empty()) kernels::add(src.bias_hh.data(), dir.bias.data(), g4);
    dir.p_hh = kernels::pack_rows(g4, hidden_size, src.weight_hh.data(), hidden_size, precision);
    std::vector<float>().swap(src.weight_hh);  // the packed copy is the one every step reads
    dirs_.push_back(std::move(dir));
  }
}

void Lstm::pack_input_weights() {
  for (Dir& d : dirs_)
    if (d.p_ih.empty())
      d.p_ih = kernels::pack_rows(4 * hidden_size_, input_size_, d.w_ih.data(), input_size_, precision_);
}

LstmCellWeights Lstm::cell(std::size_t direction) const {
  if (direction >= dirs_.size())  // (every decoder step asks: the message is built only on failure)
    throw Error("lstm: direction " + std::to_string(direction) + " does not exist");
  const Dir& d = dirs_[direction];
  return LstmCellWeights{input_size_, hidden_size_, d.w_ih.data(), /*weight_hh: packed only*/ nullptr, d.bias.data(),
                         d.p_ih.empty() ? nullptr : &d.p_ih, &d.p_hh};
}

template <class Rows>
void Lstm::run_direction(std::size_t d, std::size_t t, Rows rows, float* out, const float* h0, const float* c0,
                         float* h_n, float* c_n) const {
  const std::size_t hs = hidden_size_, g4 = 4 * hs, out_ld = output_size();
  std::vector<float> gates(g4), h(hs), c(hs);
  for (std::size_t k = 0; k < hs; ++k) {
    h[k] = h0 != nullptr ? h0[d * hs + k] : 0.0f;
    c[k] = c0 != nullptr ? c0[d * hs + k] : 0.0f;
  }
  const LstmCellWeights w = cell(d);
  for (std::size_t step = 0; step < t; ++step) {
    const std::size_t pos = d == 0 ? step : t - 1 - step;
    lstm_cell_step_projected(w, rows(pos), h.data(), c.data(), gates.data());
    float* row = out + pos * out_ld + d * hs;
    for (std::size_t k = 0; k < hs; ++k) row[k] = h[k];
  }
  if (h_n != nullptr)
    for (std::size_t k = 0; k < hs; ++k) h_n[d * hs + k] = h[k];
  if (c_n != nullptr)
    for (std::size_t k = 0; k < hs; ++k) c_n[d * hs + k] = c[k];
}

void Lstm::forward(const float* x, std::size_t t, float* out, const float* h0, const float* c0, float* h_n,
                   float* c_n) const {
  require(!dirs_.empty(), "lstm: forward on an empty (default-constructed) layer");
  require(t == 0 || (x != nullptr && out != nullptr), "lstm: forward: x and out must not be null");
  const std::size_t g4 = 4 * hidden_size_;
  // The directions are independent: with threads (kernels/parallel.h) each runs on its own, same bits.
  kernels::parallel_each(dirs_.size(), [&](std::size_t d) {
    // Input projection of every step at once: proj [T × 4H] = X W_ihᵀ + (b_ih + b_hh).
    std::vector<float> proj(t * g4);
    if (t > 0) {
      kernels::gemm_nt_bias_act(t, g4, input_size_, x, input_size_, dirs_[d].w_ih.data(), input_size_, proj.data(),
                                g4, dirs_[d].bias.data(), kernels::Activation::none);
    }
    run_direction(d, t, [&](std::size_t pos) { return proj.data() + pos * g4; }, out, h0, c0, h_n, c_n);
  });
}

void Lstm::forward_projected(const float* const* proj, std::size_t t, float* out, const float* h0, const float* c0,
                             float* h_n, float* c_n) const {
  require(!dirs_.empty(), "lstm: forward on an empty (default-constructed) layer");
  require(t == 0 || (proj != nullptr && out != nullptr), "lstm: forward: proj and out must not be null");
  const std::size_t g4 = 4 * hidden_size_;
  kernels::parallel_each(dirs_.size(), [&](std::size_t d) {
    run_direction(d, t, [&](std::size_t pos) { return proj[pos] + d * g4; }, out, h0, c0, h_n, c_n);
  });
}

std::vector<float> Lstm::forward(const std::vector<float>& x, std::size_t t) const {
  require(x.size() == t * input_size_, "lstm: forward: x has " + std::to_string(x.size()) + " values, expected T·I = " +
                                           std::to_string(t * input_size_));
  std::vector<float> out(t * output_size());
  forward(x.data(), t, out.data());
  return out;
}

}  // namespace attnlens::nn
