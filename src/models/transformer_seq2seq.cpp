// Transformer translator forward pass and incremental decoder (see transformer_seq2seq.h for the maths).
#include "models/transformer_seq2seq.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention/multi_head.h"
#include "attention/trace_record.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

using Linear = TransformerSeq2Seq::Linear;
using Norm = TransformerSeq2Seq::Norm;
using Attention = TransformerSeq2Seq::Attention;

const nlohmann::json& config_value(const io::Bundle& b, const std::string& key) {
  require(b.config().contains(key), "config.json in " + b.name() + ": \"" + key + "\" is missing");
  return b.config()[key];
}

double config_number(const io::Bundle& b, const std::string& key) {
  const auto& v = config_value(b, key);
  require(v.is_number(), "config.json in " + b.name() + ": \"" + key + "\" must be a number, got " + v.dump());
  return v.get<double>();
}

// A fixed architectural choice the engine implements: anything else is refused with the supported value.
void expect_choice(const io::Bundle& b, const std::string& key, const nlohmann::json& supported) {
  const auto& v = config_value(b, key);
  require(v == supported, "config.json in " + b.name() + ": \"" + key + "\" is " + v.dump() +
                              "; this engine implements only " + supported.dump());
}

std::size_t positive(const io::Bundle& b, const std::string& key, int max_value = 1 << 20) {
  const int v = b.config_int(key);
  require(v > 0 && v <= max_value, "config.json in " + b.name() + ": \"" + key + "\" must be in [1, " +
                                       std::to_string(max_value) + "], got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

// How a layer's weight is kept (nn::Linear::Rows): packed only (`few`: the decoder step's layers, one or a few rows
// at a time), or packed and as is (`any`: the layers over a whole source — the encoder, the cross keys and values —
// whose short sentences run best through the packed weights and long ones through the float32 GEMM). With int8
// weights every layer keeps only its codes: the int8 product, four rows a pass, beats the float32 GEMM on these
// shapes too (1.4–1.9× in WASM, `bench_kernels --only rows_int8`).
using Rows = nn::Linear::Rows;

Linear load_linear(const io::Bundle& b, const std::string& name, std::size_t out, std::size_t in,
                   Rows rows = Rows::any) {
  return Linear(b, name + ".weight", out, in, name + ".bias", rows);
}

Norm load_norm(const io::Bundle& b, const std::string& name, std::size_t d) {
  return Norm{b.tensor(name + ".weight", {d}), b.tensor(name + ".bias", {d})};
}

// The encoder's attention (`any`) or the decoder's (`few`), whose cross attention (`cross`) computes its keys
// and values once over the whole source (`any`).
Attention load_attention(const io::Bundle& b, const std::string& name, std::size_t d, Rows rows,
                         bool cross = false) {
  const Rows kv = cross ? Rows::any : rows;
  return Attention{load_linear(b, name + ".q_proj", d, d, rows), load_linear(b, name + ".k_proj", d, d, kv),
                   load_linear(b, name + ".v_proj", d, d, kv), load_linear(b, name + ".out_proj", d, d, rows)};
}

// y (n, out) = x (n, in) Wᵀ + b, optionally ReLU.
void linear(const Linear& l, const float* x, std::size_t n, float* y, bool relu = false) {
  l.forward(n, x, l.in(), y, l.out(), relu ? kernels::Activation::relu : kernels::Activation::none);
}

// logits (n, V) = y (n, d) Eᵀ
void tied_output(const kernels::PackedMatrix& embed, std::size_t d, const float* y, std::size_t n, float* logits) {
  kernels::linear_packed(n, y, d, embed, nullptr, logits, embed.rows);
}

void norm_rows(const Norm& nm, const float* x, std::size_t n, std::size_t d, float eps, float* y) {
  for (std::size_t i = 0; i < n; ++i)
    kernels::layer_norm(x + i * d, y + i * d, d, nm.weight.data(), nm.bias.data(), eps);
}

}  // namespace

TransformerSeq2Seq::TransformerSeq2Seq(const io::Bundle& b) {
  require(b.architecture() == "transformer-seq2seq",
          "bundle " + b.name() + ": architecture '" + b.architecture() + "' is not transformer-seq2seq");
  vocab_ = positive(b, "vocab_size", 1 << 22);
  d_ = positive(b, "d_model", 1 << 14);
  heads_ = positive(b, "heads", 1024);
  d_ff_ = positive(b, "d_ff", 1 << 16);
  max_positions_ = positive(b, "max_positions", 1 << 16);
  require(max_positions_ >= 2, "config.json in " + b.name() + ": \"max_positions\" must be at least 2");
  require(d_ % heads_ == 0, "config.json in " + b.name() + ": d_model " + std::to_string(d_) +
                                " is not divisible by heads " + std::to_string(heads_));
  require(d_ % 2 == 0, "config.json in " + b.name() + ": d_model must be even (sinusoidal positions)");
  d_head_ = d_ / heads_;
  const std::size_t n_enc = positive(b, "encoder_layers", 1024);
  const std::size_t n_dec = positive(b, "decoder_layers", 1024);
  eps_ = static_cast<float>(config_number(b, "layer_norm_eps"));
  embed_scale_ = static_cast<float>(config_number(b, "embedding_scale"));
  require(eps_ > 0 && std::isfinite(eps_), "config.json in " + b.name() + ": layer_norm_eps must be > 0");
  require(std::isfinite(embed_scale_), "config.json in " + b.name() + ": embedding_scale must be finite");
  expect_choice(b, "norm", "pre");
  expect_choice(b, "activation", "relu");
  expect_choice(b, "positional_encoding", "sinusoidal");
  expect_choice(b, "shared_embeddings", "source,target,output");
  expect_choice(b, "output_bias", false);
  expect_choice(b, "attention", "scaled_dot");
  expect_choice(b, "final_norms", true);

  {
    const std::vector<float> e = b.tensor("embed.weight", {vocab_, d_});
    embed_ = kernels::pack_rows(vocab_, d_, e.data(), d_, b.weight_precision());
  }
  for (std::size_t l = 0; l < n_enc; ++l) {
    const std::string p = "encoder_layers." + std::to_string(l);
    EncoderLayer e;
    e.norm1 = load_norm(b, p + ".norm1", d_);
    e.self_attn = load_attention(b, p + ".self_attn", d_, Rows::any);
    e.norm2 = load_norm(b, p + ".norm2", d_);
    e.ff1 = load_linear(b, p + ".ffn.linear1", d_ff_, d_);
    e.ff2 = load_linear(b, p + ".ffn.linear2", d_, d_ff_);
    enc_.push_back(std::move(e));
  }
  enc_norm_ = load_norm(b, "encoder_norm", d_);
  for (std::size_t l = 0; l < n_dec; ++l) {
    const std::string p = "decoder_layers." + std::to_string(l);
    DecoderLayer e;
    e.norm1 = load_norm(b, p + ".norm1", d_);
    e.self_attn = load_attention(b, p + ".self_attn", d_, Rows::few);
    e.norm2 = load_norm(b, p + ".norm2", d_);
    e.cross_attn = load_attention(b, p + ".cross_attn", d_, Rows::few, true);
    e.norm3 = load_norm(b, p + ".norm3", d_);
    e.ff1 = load_linear(b, p + ".ffn.linear1", d_ff_, d_, Rows::few);
    e.ff2 = load_linear(b, p + ".ffn.linear2", d_, d_ff_, Rows::few);
    dec_.push_back(std::move(e));
  }
  dec_norm_ = load_norm(b, "decoder_norm", d_);
  b.check_all_tensors_used();

  // PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...), computed in double then rounded (as the recipe).
  pe_.assign(max_positions_ * d_, 0.0f);
  for (std::size_t pos = 0; pos < max_positions_; ++pos)
    for (std::size_t i2 = 0; i2 < d_; i2 += 2) {
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i2) / static_cast<double>(d_));
      pe_[pos * d_ + i2] = static_cast<float>(std::sin(angle));
      pe_[pos * d_ + i2 + 1] = static_cast<float>(std::cos(angle));
    }
}

void TransformerSeq2Seq::embed(const int* ids, std::size_t n, std::size_t first_pos, std::size_t pos_step,
                               float* x) const {
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t pos = first_pos + i * pos_step;
    // (if/throw rather than require(): the messages are built only on failure, no allocation per token)
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= vocab_)
      throw Error("transformer-seq2seq: token id " + std::to_string(ids[i]) + " is outside the vocabulary (0.." +
                  std::to_string(vocab_ - 1) + ")");
    if (pos >= max_positions_)
      throw Error("transformer-seq2seq: position " + std::to_string(pos) + " is beyond max_positions " +
                  std::to_string(max_positions_));
    const float* pe = pe_.data() + pos * d_;
    float* xi = x + i * d_;
    kernels::packed_row(embed_, static_cast<std::size_t>(ids[i]), xi);
    for (std::size_t j = 0; j < d_; ++j) xi[j] = xi[j] * embed_scale_ + pe[j];
  }
}

std::shared_ptr<const TransformerSeq2Seq::Encoded> TransformerSeq2Seq::encode(const std::vector<int>& src,
                                                                             AttentionTrace* trace,
                                                                             AttentionTrace* vectors) const {
  const std::size_t S = src.size();
  require(S > 0, "transformer-seq2seq: the source is empty (it holds at least </s>)");
  require(S <= max_positions_, "transformer-seq2seq: the source has " + std::to_string(S) +
                                   " ids, more than max_positions " + std::to_string(max_positions_));
  const std::size_t d = d_, H = heads_, dh = d_head_;
  std::vector<float> x(S * d), h(S * d), q(S * d), k(S * d), v(S * d), ctx(S * d), a(S * d), ff(S * d_ff_);
  std::vector<float> probs(H * S * S);
  embed(src.data(), S, 0, 1, x.data());
  for (std::size_t l = 0; l < enc_.size(); ++l) {
    const EncoderLayer& L = enc_[l];
    norm_rows(L.norm1, x.data(), S, d, eps_, h.data());
    linear(L.self_attn.q, h.data(), S, q.data());
    linear(L.self_attn.k, h.data(), S, k.data());
    linear(L.self_attn.v, h.data(), S, v.data());
    if (vectors != nullptr)
      for (std::size_t hd = 0; hd < H; ++hd) {
        attention::record_head_vectors(*vectors, "encoder_self.query", l, hd, q.data(), S, d, dh);
        attention::record_head_vectors(*vectors, "encoder_self.key", l, hd, k.data(), S, d, dh);
      }
    // Self-attention, every head in place in the [S, d] blocks (the catalogue's multi-head attention on
    // projected rows): probs[hd] (S, S) = softmax(q_h k_hᵀ / √d_head), ctx_h (S, d_head) = probs[hd] v_h.
    attention::attend_heads(d, H, q.data(), S, k.data(), v.data(), S, ctx.data(), probs.data());
    if (trace != nullptr && trace->enabled())
      for (std::size_t hd = 0; hd < H; ++hd)
        trace->record("encoder_self", static_cast<int>(l), static_cast<int>(hd), -1, {S, S},
                      probs.data() + hd * S * S);
    linear(L.self_attn.o, ctx.data(), S, a.data());
    kernels::add(a.data(), x.data(), S * d);
    norm_rows(L.norm2, x.data(), S, d, eps_, h.data());
    linear(L.ff1, h.data(), S, ff.data(), true);
    linear(L.ff2, ff.data(), S, a.data());
    kernels::add(a.data(), x.data(), S * d);
  }
  auto enc = std::make_shared<Encoded>();
  enc->length = S;
  enc->memory.resize(S * d);
  norm_rows(enc_norm_, x.data(), S, d, eps_, enc->memory.data());
  for (const DecoderLayer& L : dec_) {
    std::vector<float> ck(S * d), cv(S * d);
    linear(L.cross_attn.k, enc->memory.data(), S, ck.data());
    linear(L.cross_attn.v, enc->memory.data(), S, cv.data());
    enc->cross_k.push_back(std::move(ck));
    enc->cross_v.push_back(std::move(cv));
  }
  return enc;
}

// ------------------------------------------------------------------------------------------------ decoder
class TransformerSeq2Seq::Decoder : public Seq2SeqDecoder {
 public:
  Decoder(const TransformerSeq2Seq& m, std::shared_ptr<const Encoded> enc)
      : Decoder(m, std::vector<std::shared_ptr<const Encoded>>{std::move(enc)}) {}

  // One row per encoded source (a list of sentences decoded together: every linear layer takes all their rows at
  // once, each row reading its own source in the cross-attention).
  Decoder(const TransformerSeq2Seq& m, std::vector<std::shared_ptr<const Encoded>> encs)
      : m_(m), encs_(std::move(encs)), cap_(m.max_positions_) {
    require(!encs_.empty(), "transformer-seq2seq: a decoder needs at least one source");
    self_.reserve(m_.dec_.size());
    for (std::size_t l = 0; l < m_.dec_.size(); ++l) self_.emplace_back(m_.d_, m_.heads_, cap_, encs_.size());
    rows_ = encs_.size();
    row_enc_.resize(encs_.size());
    row_enc_spare_.reserve(encs_.size());
    std::size_t longest = 0;
    for (std::size_t i = 0; i < encs_.size(); ++i) {
      row_enc_[i] = static_cast<int>(i);
      longest = std::max(longest, encs_[i]->length);
    }
    max_source_ = longest;
    scores_.resize(m_.heads_ * std::max(cap_, longest));
  }

  std::size_t vocab_size() const override { return m_.vocab_; }
  // The coverage signal's width: one source (a decoder over several sources gives none, see step()).
  std::size_t source_length() const override { return encs_.front()->length; }
  std::size_t rows() const override { return rows_; }
  std::size_t position() const { return pos_; }

  // Floats of one row's maps at step t over a source of S positions: per layer and head a self row (t + 1) and a
  // cross row (S).
  std::size_t block(std::size_t t, std::size_t S) const { return m_.dec_.size() * m_.heads_ * (t + 1 + S); }

  void record_maps(std::size_t rows, std::size_t steps) override {
    recording_ = true;
    const std::size_t n = recorded_floats(rows, std::min(steps, cap_ - pos_));
    rec_.reserve(rec_.size() + std::min<std::size_t>(n, std::size_t{1} << 22));  // grows past 16 MB if needed
    rec_begin_.reserve(rec_begin_.size() + std::min(steps, cap_));
    rec_rows_.reserve(rec_rows_.size() + std::min<std::size_t>(rows * std::min(steps, cap_), std::size_t{1} << 20));
  }

  std::size_t recorded_floats(std::size_t rows, std::size_t steps) const override {
    std::size_t n = 0;
    for (std::size_t t = pos_; t < pos_ + steps; ++t) n += rows * block(t, max_source_);
    return n;
  }

  // From the next step on (one row), keeps each layer's self-attention query and key and cross-attention query.
  void record_vectors() {
    require(rows_ == 1, "transformer-seq2seq: query/key vectors are recorded for one row");
    vectors_ = true;
    vec_self_q_.assign(m_.dec_.size(), {});
    vec_self_k_.assign(m_.dec_.size(), {});
    vec_cross_q_.assign(m_.dec_.size(), {});
  }

  // Appends the recorded vectors per layer and head: decoder_self.query/key [T, d_head], cross.query [T, d_head],
  // cross.key [S, d_head].
  void take_vectors(AttentionTrace& out) const {
    const std::size_t d = m_.d_, dh = m_.d_head_, T = pos_, S = encs_.front()->length;
    for (std::size_t l = 0; l < m_.dec_.size(); ++l)
      for (std::size_t hd = 0; hd < m_.heads_; ++hd) {
        attention::record_head_vectors(out, "decoder_self.query", l, hd, vec_self_q_[l].data(), T, d, dh);
        attention::record_head_vectors(out, "decoder_self.key", l, hd, vec_self_k_[l].data(), T, d, dh);
      }
    for (std::size_t l = 0; l < m_.dec_.size(); ++l)
      for (std::size_t hd = 0; hd < m_.heads_; ++hd) {
        attention::record_head_vectors(out, "cross.query", l, hd, vec_cross_q_[l].data(), T, d, dh);
        attention::record_head_vectors(out, "cross.key", l, hd, encs_.front()->cross_k[l].data(), S, d, dh);
      }
  }

  void trace_hypothesis(const std::vector<int>& rows, AttentionTrace& trace) const override {
    const std::size_t T = rows.size(), H = m_.heads_, nl = m_.dec_.size();
    require(T <= rec_begin_.size(), "transformer-seq2seq: trace_hypothesis beyond the recorded steps");
    if (!trace.enabled() || T == 0) return;
    // The hypothesis's source: the one its first row read (a row keeps its source through reorder()).
    const std::size_t S = encs_[static_cast<std::size_t>(rec_rows_[rec_begin_[0] + static_cast<std::size_t>(rows[0])].source)]->length;
    // decoder_self [T,T] per (layer, head), then cross [T,S] per (layer, head), allocated up front in the trace's
    // arena and filled one query row per step from the row that produced it.
    trace.reserve(trace.size() + 2 * nl * H, trace.values().size() + nl * H * (T * T + T * S));
    const std::size_t first = trace.size();
    for (std::size_t m = 0; m < nl * H; ++m)
      trace.add("decoder_self", static_cast<int>(m / H), static_cast<int>(m % H), -1, {T, T});
    for (std::size_t m = 0; m < nl * H; ++m)
      trace.add("cross", static_cast<int>(m / H), static_cast<int>(m % H), -1, {T, S});
    for (std::size_t m = 0; m < nl * H; ++m) {
      float* self = trace.mutable_values(first + m);
      float* cross = trace.mutable_values(first + nl * H + m);
      for (std::size_t t = 0; t < T; ++t) {
        const float* b = rec_.data() + rec_rows_[rec_begin_[t] + static_cast<std::size_t>(rows[t])].offset;
        std::copy_n(b + m * (t + 1), t + 1, self + t * T);
        std::copy_n(b + nl * H * (t + 1) + m * S, S, cross + t * S);
      }
    }
  }

  // One step for every row: prev[r] at position pos_ → logits (rows, V); attention (rows, S), when given, the
  // last layer's cross attention averaged over heads (the coverage signal).
  void step(const int* prev, float* logits, float* attention) override {
    if (pos_ >= cap_) throw Error("transformer-seq2seq: the decoder reached max_positions " + std::to_string(cap_));
    const std::size_t N = rows_, d = m_.d_, H = m_.heads_, nl = m_.dec_.size();
    const std::size_t T = pos_ + 1;
    if (attention != nullptr && encs_.size() > 1)
      throw Error("transformer-seq2seq: no coverage signal from a decoder over several sources");
    const std::size_t S0 = encs_.front()->length;  // the coverage signal's width
    x_.resize(N * d);
    h_.resize(N * d);
    q_.resize(N * d);
    kv_.resize(2 * N * d);
    ctx_.resize(N * d);
    a_.resize(N * d);
    ff_.resize(N * m_.d_ff_);
    // Where each softmax row lives: in the map arena while recording (row r's block of this step, its own
    // source's width), else scratch. rec_rows_ keeps, per step and row, where that block starts and its source.
    const std::size_t at = rec_rows_.size();
    if (recording_) {
      rec_begin_.push_back(at);
      std::size_t offset = rec_.size();
      for (std::size_t r = 0; r < N; ++r) {
        rec_rows_.push_back({offset, row_enc_[r]});
        offset += block(pos_, src_len(r));
      }
      rec_.resize(offset);
    }
    // Row r's weights of layer l, every head: (H, T) self, (H, S) cross.
    auto self_rows = [&](std::size_t r, std::size_t l) {
      return recording_ ? rec_.data() + rec_rows_[at + r].offset + l * H * T : scores_.data();
    };
    auto cross_rows = [&](std::size_t r, std::size_t l) {
      return recording_ ? rec_.data() + rec_rows_[at + r].offset + nl * H * T + l * H * src_len(r)
                        : scores_.data();
    };
    m_.embed(prev, N, pos_, 0, x_.data());  // every row is at position pos_
    if (attention != nullptr) std::fill(attention, attention + N * S0, 0.0f);
    for (std::size_t l = 0; l < nl; ++l) {
      const DecoderLayer& L = m_.dec_[l];
      // Self-attention over this row's cached positions 0..pos (the new one appended first).
      norm_rows(L.norm1, x_.data(), N, d, m_.eps_, h_.data());
      linear(L.self_attn.q, h_.data(), N, q_.data());
      linear(L.self_attn.k, h_.data(), N, kv_.data());
      linear(L.self_attn.v, h_.data(), N, kv_.data() + N * d);
      if (vectors_) {  // one row (record_vectors)
        vec_self_q_[l].insert(vec_self_q_[l].end(), q_.begin(), q_.begin() + d);
        vec_self_k_[l].insert(vec_self_k_[l].end(), kv_.begin(), kv_.begin() + d);
      }
      self_[l].append_projected(kv_.data(), kv_.data() + N * d);
      for (std::size_t r = 0; r < N; ++r)  // (H, T) weights of this row and layer; ctx (d)
        self_[l].attend_heads(r, q_.data() + r * d, 1, ctx_.data() + r * d, self_rows(r, l), false);
      linear(L.self_attn.o, ctx_.data(), N, a_.data());
      kernels::add(a_.data(), x_.data(), N * d);
      // Cross-attention over the memory (no padding: one sentence).
      norm_rows(L.norm2, x_.data(), N, d, m_.eps_, h_.data());
      linear(L.cross_attn.q, h_.data(), N, q_.data());
      if (vectors_) vec_cross_q_[l].insert(vec_cross_q_[l].end(), q_.begin(), q_.begin() + d);
      const bool last_layer = l + 1 == nl;
      for (std::size_t r = 0; r < N; ++r) {
        const Encoded& e = *encs_[static_cast<std::size_t>(row_enc_[r])];  // this row's source
        const float* ck = e.cross_k[l].data();
        const float* cv = e.cross_v[l].data();
        const std::size_t S = e.length;
        float* p = cross_rows(r, l);  // (H, S)
        attention::attend_heads(d, H, q_.data() + r * d, 1, ck, cv, S, ctx_.data() + r * d, p);
        // Coverage signal: the last layer's cross-attention averaged over heads.
        if (attention != nullptr && last_layer)
          for (std::size_t hd = 0; hd < H; ++hd) kernels::add(p + hd * S, attention + r * S, S);
      }
      linear(L.cross_attn.o, ctx_.data(), N, a_.data());
      kernels::add(a_.data(), x_.data(), N * d);
      norm_rows(L.norm3, x_.data(), N, d, m_.eps_, h_.data());
      linear(L.ff1, h_.data(), N, ff_.data(), true);
      linear(L.ff2, ff_.data(), N, a_.data());
      kernels::add(a_.data(), x_.data(), N * d);
    }
    if (attention != nullptr) kernels::scale(1.0f / static_cast<float>(H), attention, N * S0);
    norm_rows(m_.dec_norm_, x_.data(), N, d, m_.eps_, h_.data());
    tied_output(m_.embed_, d, h_.data(), N, logits);
    ++pos_;
  }

  void reorder(const std::vector<int>& parents) override {
    if (parents.empty()) throw Error("transformer-seq2seq: reorder to zero rows");
    for (int p : parents)
      if (p < 0 || static_cast<std::size_t>(p) >= rows_) throw Error("transformer-seq2seq: reorder row out of range");
    for (auto& cache : self_) cache.reorder(parents);
    row_enc_spare_.clear();
    for (int p : parents) row_enc_spare_.push_back(row_enc_[static_cast<std::size_t>(p)]);
    row_enc_.swap(row_enc_spare_);
    rows_ = parents.size();
  }

 private:
  std::size_t src_len(std::size_t r) const { return encs_[static_cast<std::size_t>(row_enc_[r])]->length; }

  const TransformerSeq2Seq& m_;
  std::vector<std::shared_ptr<const Encoded>> encs_;  // the sources; row r reads encs_[row_enc_[r]]
  std::vector<int> row_enc_, row_enc_spare_;
  std::size_t max_source_ = 0;
  std::size_t cap_;  // positions per row in the cache
  std::size_t rows_ = 0, pos_ = 0;
  std::vector<attention::MultiHeadKvCache> self_;  // per layer: the projected self-attention keys and values
  std::vector<float> x_, h_, q_, kv_, ctx_, a_, ff_, scores_;
  // The map arena: step t's row r is block(t, its S) floats at rec_[rec_rows_[rec_begin_[t] + r].offset], rows in
  // that step's order.
  struct RecordedRow {
    std::size_t offset;
    int source;  // index into encs_
  };
  bool recording_ = false;
  std::vector<float> rec_;
  std::vector<std::size_t> rec_begin_;
  std::vector<RecordedRow> rec_rows_;
  // query_key_vectors(): per layer, one d-float row per step.
  bool vectors_ = false;
  std::vector<std::vector<float>> vec_self_q_, vec_self_k_, vec_cross_q_;
};

std::unique_ptr<Seq2SeqDecoder> TransformerSeq2Seq::start(const std::vector<int>& src, AttentionTrace* trace) const {
  return std::make_unique<Decoder>(*this, encode(src, trace));
}

std::unique_ptr<Seq2SeqDecoder> TransformerSeq2Seq::start_many(const std::vector<std::vector<int>>& srcs,
                                                               const std::vector<AttentionTrace*>& traces) const {
  require(!srcs.empty() && traces.size() == srcs.size(), "transformer-seq2seq: start_many needs one trace slot per source");
  std::vector<std::shared_ptr<const Encoded>> encs;
  encs.reserve(srcs.size());
  for (std::size_t i = 0; i < srcs.size(); ++i) encs.push_back(encode(srcs[i], traces[i]));
  return std::make_unique<Decoder>(*this, std::move(encs));
}

std::vector<float> TransformerSeq2Seq::forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                               AttentionTrace* trace) const {
  require(tgt_in.size() <= max_positions_, "transformer-seq2seq: the target has " + std::to_string(tgt_in.size()) +
                                               " positions, more than max_positions " + std::to_string(max_positions_));
  Decoder dec(*this, encode(src, trace));
  return teacher_force(dec, tgt_in, trace);
}

void TransformerSeq2Seq::query_key_vectors(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                           AttentionTrace& out) const {
  require(tgt_in.size() <= max_positions_, "transformer-seq2seq: the target has " + std::to_string(tgt_in.size()) +
                                               " positions, more than max_positions " + std::to_string(max_positions_));
  Decoder dec(*this, encode(src, nullptr, &out));
  dec.record_vectors();
  teacher_force(dec, tgt_in, nullptr);
  dec.take_vectors(out);
}

}  // namespace attnlens::models
