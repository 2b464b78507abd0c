// Number-sorting pointer network; the maths, shapes and paper are in pointer_net.h. Each step quotes the line of
// models/training/pointer/common.py (the PyTorch model) it implements.
#include "models/pointer_net.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "attention/multi_head.h"
#include "attention/pointer.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

std::size_t config_dim(const io::Bundle& b, const std::string& key, std::size_t max_value) {
  const int v = b.config_int(key);
  require(v > 0 && static_cast<std::size_t>(v) <= max_value,
          "config.json in " + b.name() + ": \"" + key + "\" must be a positive integer of at most " +
              std::to_string(max_value) + ", got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

constexpr float kLayerNormEps = 1e-5f;  // torch.nn.LayerNorm's default

std::string number_text(double v) {
  if (std::isnan(v)) return "NaN";
  return v > 0 ? "Infinity" : "-Infinity";
}

}  // namespace

PointerNet::PointerNet(const io::Bundle& b) {
  require(b.architecture() == "pointer-sort", "model bundle " + b.name() + ": architecture '" + b.architecture() +
                                                  "' is not a pointer network (expected pointer-sort)");
  const auto& cfg = b.config();
  if (cfg.contains("task")) {
    require(cfg["task"] == "number-sorting",
            "config.json in " + b.name() + ": \"task\" is " + cfg["task"].dump() + ", expected \"number-sorting\"");
  }
  d_ = config_dim(b, "d_model", 1 << 14);
  heads_ = config_dim(b, "heads", d_);
  require(d_ % heads_ == 0, "config.json in " + b.name() + ": \"heads\" (" + std::to_string(heads_) +
                                ") must divide \"d_model\" (" + std::to_string(d_) + ")");
  d_ff_ = config_dim(b, "d_ff", 1 << 16);
  hidden_ = config_dim(b, "hidden", 1 << 14);
  att_ = config_dim(b, "att_hidden", 1 << 14);
  max_length_ = config_dim(b, "max_length", kPointerMaxLengthLimit);
  const std::size_t n_layers = config_dim(b, "enc_layers", 64);

  embed_w_ = b.tensor("embed.weight", {d_, 1});
  embed_b_ = b.tensor("embed.bias", {d_});
  layers_.resize(n_layers);
  for (std::size_t l = 0; l < n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Layer& L = layers_[l];
    L.in_proj_w = b.tensor(p + "attn.in_proj_weight", {3 * d_, d_});
    L.in_proj_b = b.tensor(p + "attn.in_proj_bias", {3 * d_});
    L.out_proj_w = b.tensor(p + "attn.out_proj.weight", {d_, d_});
    L.out_proj_b = b.tensor(p + "attn.out_proj.bias", {d_});
    L.ln1_g = b.tensor(p + "ln1.weight", {d_});
    L.ln1_b = b.tensor(p + "ln1.bias", {d_});
    L.ff1 = nn::Linear(b, p + "ff1.weight", d_ff_, d_, p + "ff1.bias");
    L.ff2 = nn::Linear(b, p + "ff2.weight", d_, d_ff_, p + "ff2.bias");
    L.ln2_g = b.tensor(p + "ln2.weight", {d_});
    L.ln2_b = b.tensor(p + "ln2.bias", {d_});
  }
  start_ = b.tensor("start", {d_});
  const std::size_t h4 = 4 * hidden_;
  dec_w_ih_ = b.tensor("decoder.weight_ih", {h4, d_});
  dec_w_hh_ = b.tensor("decoder.weight_hh", {h4, hidden_});
  dec_bias_ = b.tensor("decoder.bias_ih", {h4});
  const std::vector<float> bias_hh = b.tensor("decoder.bias_hh", {h4});
  for (std::size_t k = 0; k < h4; ++k) dec_bias_[k] += bias_hh[k];
  ptr_k_ = b.tensor("ptr_k.weight", {att_, d_});
  ptr_q_ = b.tensor("ptr_q.weight", {att_, hidden_});
  ptr_q_b_ = b.tensor("ptr_q.bias", {att_});
  ptr_v_ = b.tensor("ptr_v.weight", {1, att_});
  b.check_all_tensors_used();
}

std::vector<float> PointerNet::preprocess(const std::vector<double>& values) const {
  const std::size_t n = values.size();
  require(n >= 1, "pointer-sort: empty input: give at least one number to sort");
  require(n <= max_length_, "pointer-sort: too many numbers: got " + std::to_string(n) + ", this model sorts at most " +
                                std::to_string(max_length_));
  for (std::size_t j = 0; j < n; ++j) {
    require(std::isfinite(values[j]), "pointer-sort: number " + std::to_string(j + 1) + " is " +
                                          number_text(values[j]) + "; every number must be finite");
  }
  // v = np.asarray(values, float64); lo, hi = v.min(), v.max()
  double lo = values[0], hi = values[0];
  for (double v : values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  std::vector<float> x(n, 0.0f);
  if (hi == lo) return x;  // every value equal: all x = 0
  const double span = hi - lo;
  for (std::size_t j = 0; j < n; ++j) {
    // x = (v − lo) / span, or (v/2 − lo/2) / (hi/2 − lo/2) when span overflows; then .astype(float32)
    const double xj = std::isfinite(span) ? (values[j] - lo) / span : (values[j] / 2 - lo / 2) / (hi / 2 - lo / 2);
    x[j] = static_cast<float>(xj);
  }
  return x;
}

PointerSortForward PointerNet::forward(const std::vector<double>& values, AttentionTrace& trace) const {
  using kernels::Activation;
  PointerSortForward out;
  out.inputs = preprocess(values);
  const std::size_t n = values.size(), d = d_;

  // e = self.embed(x.unsqueeze(-1))                                                  (n, d)
  std::vector<float> e(n * d);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t k = 0; k < d; ++k) e[j * d + k] = out.inputs[j] * embed_w_[k] + embed_b_[k];

  // for layer in self.layers: e, w = layer(e)                       (EncoderLayer.forward, post-norm)
  std::vector<float> a(n * d), f(n * d_ff_), g(n * d), maps(heads_ * n * n);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    // a, w = self.attn(e, e, e)                                                     (n, d), (heads, n, n)
    attention::MultiHeadWeights mw;
    mw.embed_dim = d;
    mw.num_heads = heads_;
    mw.in_proj_weight = L.in_proj_w.data();
    mw.in_proj_bias = L.in_proj_b.data();
    mw.out_proj_weight = L.out_proj_w.data();
    mw.out_proj_bias = L.out_proj_b.data();
    attention::multi_head_attention(mw, e.data(), n, e.data(), e.data(), n, a.data(), maps.data());
    if (trace.enabled()) {
      for (std::size_t h = 0; h < heads_; ++h)
        trace.record("encoder_self", static_cast<int>(l), static_cast<int>(h), -1, {n, n}, maps.data() + h * n * n);
    }
    // e = self.ln1(e + a)
    kernels::add(a.data(), e.data(), n * d);
    for (std::size_t j = 0; j < n; ++j)
      kernels::layer_norm(e.data() + j * d, e.data() + j * d, d, L.ln1_g.data(), L.ln1_b.data(), kLayerNormEps);
    // e = self.ln2(e + self.ff2(F.relu(self.ff1(e))))
    L.ff1.forward(n, e.data(), d, f.data(), d_ff_, Activation::relu);
    L.ff2.forward(n, f.data(), d_ff_, g.data(), d);
    kernels::add(g.data(), e.data(), n * d);
    for (std::size_t j = 0; j < n; ++j)
      kernels::layer_norm(e.data() + j * d, e.data() + j * d, d, L.ln2_g.data(), L.ln2_b.data(), kLayerNormEps);
  }

  // Decoder (PointerSorter.sort_batch): h = c = 0, inp = self.start
  nn::LstmCellWeights cell;
  cell.input_size = d;
  cell.hidden_size = hidden_;
  cell.weight_ih = dec_w_ih_.data();
  cell.weight_hh = dec_w_hh_.data();
  cell.bias = dec_bias_.data();
  std::vector<float> h(hidden_, 0.0f), c(hidden_, 0.0f), gates(4 * hidden_);
  std::vector<float> inp(start_);
  attention::AdditiveScoreWeights pw;  // u_j = vᵀ tanh(W_q h + W_k e_j + b_q)
  pw.d_q = hidden_;
  pw.d_k = d;
  pw.d_att = att_;
  pw.w = ptr_q_.data();
  pw.u = ptr_k_.data();
  pw.bias = ptr_q_b_.data();
  pw.v = ptr_v_.data();
  std::vector<std::uint8_t> keep(n, 1);  // 1 = not yet pointed at
  out.pointer.assign(n * n, 0.0f);
  out.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    // h, c = self.decoder(inp, (h, c))                                               (H,)
    nn::lstm_cell_step(cell, inp.data(), h.data(), c.data(), gates.data());
    // p = softmax(step_scores(keys_proj, h, visited)); best = argmax(p)              (n,)
    float* p = out.pointer.data() + i * n;
    std::size_t best = 0;
    attention::pointer_attention(pw, h.data(), 1, e.data(), n, p, &best, keep.data());
    // the first unvisited position holding the same value (equal values keep their input order)
    std::size_t ptr = best;
    for (std::size_t j = 0; j < n; ++j) {
      if (keep[j] != 0 && values[j] == values[best]) {
        ptr = j;
        break;
      }
    }
    out.order[i] = ptr;
    keep[ptr] = 0;
    // inp = e[rows, ptr]
    inp.assign(e.begin() + static_cast<std::ptrdiff_t>(ptr * d), e.begin() + static_cast<std::ptrdiff_t>((ptr + 1) * d));
  }
  if (trace.enabled()) trace.record("pointer", -1, -1, -1, {n, n}, out.pointer.data());
  out.encoder = std::move(e);
  return out;
}

}  // namespace attnlens::models
