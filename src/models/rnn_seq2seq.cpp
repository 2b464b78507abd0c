// RNN translators (see rnn_seq2seq.h for the maths of both families).
#include "models/rnn_seq2seq.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "attention/context.h"
#include "attention/scores.h"
#include "common.h"
#include "kernels/kernels.h"
#include "nn/embedding_projection.h"
#include "nn/gru.h"
#include "nn/linear.h"
#include "nn/lstm.h"

namespace attnlens::models {

namespace {

constexpr std::size_t kDefaultMaxSource = 256;
constexpr std::size_t kMaxTargetPositions = 1024;

const nlohmann::json& value(const io::Bundle& b, const std::string& key) {
  require(b.config().contains(key), "config.json in " + b.name() + ": \"" + key + "\" is missing");
  return b.config()[key];
}

std::size_t positive(const io::Bundle& b, const std::string& key, int max_value = 1 << 20) {
  const int v = b.config_int(key);
  require(v > 0 && v <= max_value, "config.json in " + b.name() + ": \"" + key + "\" must be in [1, " +
                                       std::to_string(max_value) + "], got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

void expect_choice(const io::Bundle& b, const std::string& key, const nlohmann::json& supported) {
  const auto& v = value(b, key);
  require(v == supported, "config.json in " + b.name() + ": \"" + key + "\" is " + v.dump() +
                              " for attention \"" + b.config_string("attention") + "\"; this engine implements " +
                              supported.dump());
}

// Shared by both families: E, b_out, sizes, and the per-step pieces every decoder needs.
struct RnnCommon {
  std::size_t vocab = 0, emb = 0, enc_hidden = 0, max_source = kDefaultMaxSource;
  kernels::PackedMatrix embed;  // (V, e), packed: the tied output layer is a step's largest product
  std::vector<float> out_bias;  // (V)

  void load(const io::Bundle& b) {
    vocab = positive(b, "vocab_size", 1 << 22);
    emb = positive(b, "embedding_dim", 1 << 14);
    enc_hidden = positive(b, "encoder_hidden", 1 << 14);
    if (b.config().contains("max_source_positions")) max_source = positive(b, "max_source_positions", 1 << 16);
    require(max_source >= 2, "config.json in " + b.name() + ": max_source_positions must be at least 2");
    expect_choice(b, "shared_embeddings", "source,target,output");
    expect_choice(b, "output_bias", true);
    const std::vector<float> e = b.tensor("embed.weight", {vocab, emb});
    embed = kernels::pack_rows(vocab, emb, e.data(), emb, b.weight_precision());
    out_bias = b.tensor("out_bias", {vocab});
  }

  // out (e) = E[id]
  void row(int id, float* out) const {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab)  // (built only on failure: no allocation per step)
      throw Error("rnn-seq2seq: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                  std::to_string(vocab - 1) + ")");
    kernels::packed_row(embed, static_cast<std::size_t>(id), out);
  }

  // The encoder's input projections of a source, [W_ih_fwd E[id] + b ; W_ih_bwd E[id] + b] per id (S rows), each
  // word's computed once and kept (nn/embedding_projection.h): the encoder then runs forward_projected on them.
  void project_source(const std::vector<int>& src, std::vector<const float*>& rows,
                      std::vector<float>& scratch) const {
    require(!src.empty(), "rnn-seq2seq: the source is empty (it holds at least </s>)");
    require(src.size() <= max_source, "rnn-seq2seq: the source has " + std::to_string(src.size()) +
                                          " ids, more than max_source_positions " + std::to_string(max_source));
    for (int id : src)
      if (id < 0 || static_cast<std::size_t>(id) >= vocab)
        throw Error("rnn-seq2seq: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                    std::to_string(vocab - 1) + ")");
    projection->rows(src.data(), src.size(), rows, scratch);
  }
  // Sets up project_source for an encoder whose directions read E[id] with weights_ih / biases (one per direction).
  void keep_projections(const std::vector<const float*>& weights_ih, const std::vector<const float*>& biases,
                        std::size_t gate_rows) {
    std::vector<nn::EmbeddingProjection::Block> blocks;
    for (std::size_t d = 0; d < weights_ih.size(); ++d) blocks.push_back({gate_rows, weights_ih[d], biases[d]});
    projection = std::make_unique<nn::EmbeddingProjection>([this](int id, float* out) { row(id, out); }, vocab, emb,
                                                           std::move(blocks), kProjectionCacheBytes);
  }
  static constexpr std::size_t kProjectionCacheBytes = std::size_t{16} << 20;
  std::unique_ptr<nn::EmbeddingProjection> projection;

  // logits (N, V) = o (N, e) Eᵀ + b_out
  void output(const float* o, std::size_t n, float* logits) const {
    kernels::linear_packed(n, o, emb, embed, out_bias.data(), logits, vocab);
  }
};

// The input of a decoder cell whose x_t = [E y_{t−1} ; rest_t]: its projection W_ih x_t + b splits into the word part
// W_ih[:, :e] E y + b, which depends on the word alone and is kept per word once computed
// (nn/embedding_projection.h, as the encoders' input projections), and W_ih[:, e:] rest_t, one packed product per
// step — a step multiplies G·e fewer weights (de-en-rnn-general: 0.5 M of its 4.4 M).
class WordSplitInput {
 public:
  // w_ih [G × I] (PyTorch layout, I = e + rest), bias [G] (b_ih, or b_ih + b_hh for an LSTM).
  void build(const RnnCommon& c, std::size_t gates, std::size_t in, const float* w_ih, const float* bias,
             kernels::Precision precision) {
    const std::size_t e = c.emb, rest = in - e;
    require(in > e && w_ih != nullptr && bias != nullptr, "rnn-seq2seq: a decoder cell's input must be [E y ; more]");
    gates_ = gates;
    word_w_.resize(gates * e);
    std::vector<float> rest_w(gates * rest);
    for (std::size_t j = 0; j < gates; ++j) {
      std::copy_n(w_ih + j * in, e, word_w_.data() + j * e);
      std::copy_n(w_ih + j * in + e, rest, rest_w.data() + j * rest);
    }
    bias_.assign(bias, bias + gates);
    rest_ = kernels::pack_rows(gates, rest, rest_w.data(), rest, precision);
    words_ = std::make_unique<nn::EmbeddingProjection>([&c](int id, float* out) { c.row(id, out); }, c.vocab, e,
                                                       std::vector<nn::EmbeddingProjection::Block>{
                                                           {gates, word_w_.data(), bias_.data()}},
                                                       RnnCommon::kProjectionCacheBytes);
  }
  // x_proj (n × G) = W_ih[:, :e] E[prev[r]] + b + W_ih[:, e:] rest row r (at rest + r·ld). rows/scratch: the
  // caller's buffers, reused from step to step.
  void project(const int* prev, std::size_t n, const float* rest, std::size_t ld, float* x_proj,
               std::vector<const float*>& rows, std::vector<float>& scratch) const {
    words_->rows(prev, n, rows, scratch);
    kernels::linear_packed(n, rest, ld, rest_, nullptr, x_proj, gates_);
    for (std::size_t r = 0; r < n; ++r) kernels::add(rows[r], x_proj + r * gates_, gates_);
  }

 private:
  std::size_t gates_ = 0;
  std::vector<float> word_w_, bias_;  // [G × e], [G]: read by words_
  kernels::PackedMatrix rest_;        // [G × (I − e)]
  std::unique_ptr<nn::EmbeddingProjection> words_;
};

template <typename Cell>
typename Cell::Direction load_direction(const io::Bundle& b, const std::string& prefix, const std::string& suffix,
                                        std::size_t gates, std::size_t in, std::size_t hidden) {
  typename Cell::Direction d;
  d.weight_ih = b.tensor(prefix + "weight_ih" + suffix, {gates * hidden, in});
  d.weight_hh = b.tensor(prefix + "weight_hh" + suffix, {gates * hidden, hidden});
  d.bias_ih = b.tensor(prefix + "bias_ih" + suffix, {gates * hidden});
  d.bias_hh = b.tensor(prefix + "bias_hh" + suffix, {gates * hidden});
  return d;
}

// The map arena both RNN decoders share: one attention row per decoder row and step, in that step's row order; a
// row's length is its own source's (a list's sources differ).
class CrossRecorder {
 public:
  // Sized for `rows` rows of `floats_per_step` floats in all over `steps` steps (it grows past that if needed).
  void start(std::size_t floats_per_step, std::size_t rows, std::size_t steps) {
    on_ = true;
    values_.reserve(std::min<std::size_t>(steps * floats_per_step, std::size_t{1} << 20));  // grows past 4 MB if needed
    offset_.reserve(std::min<std::size_t>(steps * rows, std::size_t{1} << 16));
    first_.reserve(std::min<std::size_t>(steps, 1024));
  }
  bool on() const { return on_; }
  void next_step() { first_.push_back(offset_.size()); }
  // Room for the next row of this step (rows in order), S weights; valid until the next call.
  float* next_row(std::size_t S) {
    offset_.push_back({values_.size(), S});
    values_.resize(values_.size() + S);
    return values_.data() + offset_.back().first;
  }
  // "cross" [T,S] of the hypothesis whose step t ran as row rows[t].
  void trace(const std::vector<int>& rows, AttentionTrace& trace) const {
    const std::size_t T = rows.size();
    require(T <= first_.size(), "rnn-seq2seq: trace_hypothesis beyond the recorded steps");
    if (T == 0) return;
    auto at = [&](std::size_t t) {
      const std::size_t i = first_[t] + static_cast<std::size_t>(rows[t]);
      require(rows[t] >= 0 && i < (t + 1 < first_.size() ? first_[t + 1] : offset_.size()),
              "rnn-seq2seq: trace_hypothesis of a row that step did not run");
      return offset_[i];
    };
    const std::size_t S = at(0).second;
    float* cross = trace.add("cross", -1, -1, -1, {T, S});  // written once, in the trace's arena
    if (cross == nullptr) return;
    for (std::size_t t = 0; t < T; ++t) {
      const auto [offset, length] = at(t);
      require(length == S, "rnn-seq2seq: trace_hypothesis across rows of different sources");
      std::copy_n(values_.data() + offset, S, cross + t * S);
    }
  }

 private:
  bool on_ = false;
  std::vector<float> values_;
  std::vector<std::pair<std::size_t, std::size_t>> offset_;  // per (step, row): where its weights start, S
  std::vector<std::size_t> first_;                           // per step: its first entry in offset_
};

// The sources a decoder reads, one per row: a list's rows each have their own (start_many), a beam's rows share one.
// reorder() moves each row's source index with its state.
template <typename Encoded>
class RowSources {
 public:
  explicit RowSources(std::vector<std::shared_ptr<const Encoded>> encs) : encs_(std::move(encs)) {
    require(!encs_.empty(), "rnn-seq2seq: a decoder needs at least one source");
    for (std::size_t i = 0; i < encs_.size(); ++i) {
      of_row_.push_back(static_cast<int>(i));
      max_S_ = std::max(max_S_, encs_[i]->S);
      sum_S_ += encs_[i]->S;
    }
  }
  const Encoded& operator[](std::size_t row) const { return *encs_[static_cast<std::size_t>(of_row_[row])]; }
  const Encoded& only() const {
    require(encs_.size() == 1, "rnn-seq2seq: an attention signal (coverage) needs a decoder over one source");
    return *encs_.front();
  }
  std::size_t count() const { return encs_.size(); }
  std::size_t max_S() const { return max_S_; }
  // Floats one step records at most: every row of a beam over one source, or one row per source of a list.
  std::size_t floats_per_step(std::size_t rows) const { return encs_.size() == 1 ? rows * max_S_ : sum_S_; }
  void reorder(const std::vector<int>& parents) {
    spare_.resize(parents.size());
    for (std::size_t r = 0; r < parents.size(); ++r) spare_[r] = of_row_[static_cast<std::size_t>(parents[r])];
    of_row_.swap(spare_);
  }

 private:
  std::vector<std::shared_ptr<const Encoded>> encs_;
  std::vector<int> of_row_, spare_;
  std::size_t max_S_ = 0, sum_S_ = 0;
};

// What both RNN decoders share: the rows' state (row_size floats each, moved with its row by reorder), each row's
// source, and the map arena with its traces. A decoder adds the layout of a row and its step.
template <typename Encoded>
class RnnDecoder : public Seq2SeqDecoder {
 public:
  std::size_t vocab_size() const override { return vocab_; }
  std::size_t source_length() const override { return src_[0].S; }
  std::size_t rows() const override { return state_.size() / row_size_; }
  void record_maps(std::size_t rows, std::size_t steps) override {
    rec_.start(src_.floats_per_step(rows), rows, steps);
  }
  std::size_t recorded_floats(std::size_t rows, std::size_t steps) const override {
    return steps * src_.floats_per_step(rows);
  }
  void trace_hypothesis(const std::vector<int>& rows, AttentionTrace& trace) const override { rec_.trace(rows, trace); }
  void reorder(const std::vector<int>& parents) override {
    const std::size_t n = rows();
    spare_.resize(parents.size() * row_size_);
    for (std::size_t r = 0; r < parents.size(); ++r) {
      require(parents[r] >= 0 && static_cast<std::size_t>(parents[r]) < n, "rnn-seq2seq: reorder row out of range");
      std::copy_n(state_.data() + static_cast<std::size_t>(parents[r]) * row_size_, row_size_,
                  spare_.data() + r * row_size_);
    }
    state_.swap(spare_);
    src_.reorder(parents);
  }

 protected:
  // One row per source, its state zero until the decoder sets it.
  RnnDecoder(std::size_t vocab, std::size_t row_size, std::vector<std::shared_ptr<const Encoded>> encs)
      : vocab_(vocab), row_size_(row_size), src_(std::move(encs)), state_(src_.count() * row_size, 0.0f) {}

  const std::size_t vocab_, row_size_;
  RowSources<Encoded> src_;
  std::vector<float> state_;  // (rows, row_size_)
  CrossRecorder rec_;

 private:
  std::vector<float> spare_;
};

// What both RNN families share above their decoders (Model::Decoder over Model::Encoded sources): a decoder over
// one source (start; forward = teacher forcing through it) or over a list's sources, one row each (start_many), each
// source encoded once (Model::encode) and shared by the rows that read it.
template <typename Model>
class RnnTranslator : public Seq2SeqModel {
 public:
  std::unique_ptr<Seq2SeqDecoder> start(const std::vector<int>& src, AttentionTrace*) const override {
    return std::make_unique<typename Model::Decoder>(self(), encode_each({src}));
  }
  bool decodes_sources_together() const override { return true; }
  std::unique_ptr<Seq2SeqDecoder> start_many(const std::vector<std::vector<int>>& srcs,
                                             const std::vector<AttentionTrace*>& traces) const override {
    require(!srcs.empty() && traces.size() == srcs.size(), "rnn-seq2seq: start_many needs one trace slot per source");
    return std::make_unique<typename Model::Decoder>(self(), encode_each(srcs));  // (no encoder maps for traces)
  }
  std::vector<float> forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                             AttentionTrace* trace) const override {
    typename Model::Decoder dec(self(), encode_each({src}));
    return teacher_force(dec, tgt_in, trace);
  }

 private:
  const Model& self() const { return static_cast<const Model&>(*this); }
  auto encode_each(const std::vector<std::vector<int>>& srcs) const {  // (auto: Model is complete only here)
    std::vector<std::shared_ptr<const typename Model::Encoded>> encs;
    encs.reserve(srcs.size());
    for (const auto& src : srcs) encs.push_back(std::make_shared<const typename Model::Encoded>(self().encode(src)));
    return encs;
  }
};

// ============================================================================================ additive (GRU)
class RnnAdditive : public RnnTranslator<RnnAdditive> {
 public:
  explicit RnnAdditive(const io::Bundle& b) {
    c_.load(b);
    dec_hidden_ = positive(b, "decoder_hidden", 1 << 14);
    attn_ = positive(b, "attention_dim", 1 << 14);
    expect_choice(b, "encoder_cell", "gru");
    expect_choice(b, "decoder_cell", "gru");
    expect_choice(b, "decoder_layers", 1);
    expect_choice(b, "input_feeding", false);
    const std::size_t e = c_.emb, H = c_.enc_hidden, Dh = dec_hidden_, A = attn_;
    std::vector<nn::Gru::Direction> dirs;
    dirs.push_back(load_direction<nn::Gru>(b, "encoder.", "_l0", 3, e, H));
    dirs.push_back(load_direction<nn::Gru>(b, "encoder.", "_l0_reverse", 3, e, H));
    encoder_ = nn::Gru(e, H, std::move(dirs), b.weight_precision());
    c_.keep_projections({encoder_.cell(0).weight_ih, encoder_.cell(1).weight_ih},
                        {encoder_.cell(0).bias_ih, encoder_.cell(1).bias_ih}, 3 * H);
    init_w_ = b.tensor("init_proj.weight", {Dh, H});
    init_b_ = b.tensor("init_proj.bias", {Dh});
    keys_ = nn::Linear(b, "attn_key.weight", A, 2 * H);
    query_ = nn::Linear(b, "attn_query.weight", A, Dh, "attn_query.bias", nn::Linear::Rows::few);
    v_ = b.tensor("attn_v.weight", {1, A});
    std::vector<nn::Gru::Direction> cell;
    cell.push_back(load_direction<nn::Gru>(b, "decoder.", "", 3, e + 2 * H, Dh));
    decoder_ = nn::Gru(e + 2 * H, Dh, std::move(cell), b.weight_precision());
    const nn::GruCellWeights first = decoder_.cell(0);  // x_t = [E y_{t−1}; c_t]
    context_.build(c_, 3 * Dh, e + 2 * H, first.weight_ih, first.bias_ih, b.weight_precision());
    readout_ = nn::Linear(b, "readout.weight", e, Dh + 2 * H + e, "readout.bias", nn::Linear::Rows::few);
    b.check_all_tensors_used();
  }

  std::size_t vocab_size() const override { return c_.vocab; }
  std::size_t max_source_ids() const override { return c_.max_source; }
  std::size_t max_target_positions() const override { return kMaxTargetPositions; }

  struct Encoded {
    std::size_t S = 0;
    std::vector<float> memory;  // (S, 2H)
    std::vector<float> keys;    // (S, A) = U h_i
    std::vector<float> s0;      // (Dh)
  };

  class Decoder : public RnnDecoder<Encoded> {
   public:
    // A row of state_ is s (Dh).
    Decoder(const RnnAdditive& m, std::vector<std::shared_ptr<const Encoded>> encs)
        : RnnDecoder(m.c_.vocab, m.dec_hidden_, std::move(encs)), m_(m) {
      for (std::size_t r = 0; r < src_.count(); ++r)
        std::copy_n(src_[r].s0.data(), row_size_, state_.data() + r * row_size_);
    }

    // The rows (a beam's hypotheses, or a list's sources) go through each packed product together, in pairs
    // (kernels::linear_packed): the same bits per row as one row at a time. Each row attends over its own source.
    void step(const int* prev, float* logits, float* attention) override {
      const std::size_t N = rows(), A = m_.attn_, Dh = m_.dec_hidden_, e = m_.c_.emb;
      const std::size_t C = 2 * m_.c_.enc_hidden;
      const std::size_t S_all = attention != nullptr ? src_.only().S : 0;  // the coverage signal: one source
      q_.resize(N * A);
      tmp_.resize(src_.max_S() * A);
      alpha_.resize(src_.max_S());
      in_.resize(N * (e + C));
      readout_in_.resize(N * (Dh + C + e));
      o_.resize(N * e);
      gi_.resize(N * 3 * Dh);
      scratch_.resize(N * 6 * Dh);
      if (rec_.on()) rec_.next_step();
      // q (N, A) = W_q s + b_q
      m_.query_.forward(N, state_.data(), Dh, q_.data(), A);
      for (std::size_t r = 0; r < N; ++r) {
        const Encoded& enc = src_[r];
        const std::size_t S = enc.S;
        float* alpha = rec_.on() ? rec_.next_row(S) : alpha_.data();  // (S): in the map arena while recording
        // e_ti = vᵀ tanh(q + U h_i); a_t = softmax(e_t)   (the catalogue's additive score and soft alignment)
        attention::score_additive_hidden(m_.v_.data(), A, q_.data() + r * A, 1, enc.keys.data(), S, alpha,
                                         tmp_.data());
        attention::align_soft(alpha, 1, S);
        if (attention != nullptr) std::copy_n(alpha, S, attention + r * S_all);
        // in (N, e + C) = [E y; c_t], c_t = Σ a_ti h_i
        float* in = in_.data() + r * (e + C);
        m_.c_.row(prev[r], in);
        attention::soft_context(alpha, 1, S, enc.memory.data(), C, in + e);
      }
      // s_t = GRUCell([E y; c_t], s) for every row; W_ih [E y; c_t] + b_ih with the word part kept per word
      m_.context_.project(prev, N, in_.data() + e, e + C, gi_.data(), words_, words_scratch_);
      nn::gru_cell_step_rows_projected(m_.decoder_.cell(0), N, gi_.data(), 3 * Dh, state_.data(), Dh, scratch_.data());
      // o_t = tanh(W_r [s_t; c_t; E y] + b_r)
      for (std::size_t r = 0; r < N; ++r) {
        const float* in = in_.data() + r * (e + C);
        float* ro = readout_in_.data() + r * (Dh + C + e);
        std::copy_n(state_.data() + r * Dh, Dh, ro);
        std::copy_n(in + e, C, ro + Dh);
        std::copy_n(in, e, ro + Dh + C);
      }
      m_.readout_.forward(N, readout_in_.data(), Dh + C + e, o_.data(), e);
      for (std::size_t r = 0; r < N; ++r) kernels::vtanh(o_.data() + r * e, e);  // per row: the bits of one row alone
      m_.c_.output(o_.data(), N, logits);
    }

   private:
    const RnnAdditive& m_;
    std::vector<float> q_, tmp_, alpha_, in_, readout_in_, o_, gi_, scratch_;
    std::vector<const float*> words_;  // this step's kept word projections
    std::vector<float> words_scratch_;
  };

 private:
  friend class RnnTranslator;
  Encoded encode(const std::vector<int>& src) const {
    const std::size_t S = src.size(), H = c_.enc_hidden, Dh = dec_hidden_;
    std::vector<const float*> proj;  // (S, 2·3H): W_ih E[src] + b_ih, both directions
    std::vector<float> scratch;
    c_.project_source(src, proj, scratch);
    Encoded enc;
    enc.S = S;
    enc.memory.resize(S * 2 * H);
    std::vector<float> h_n(2 * H);
    encoder_.forward_projected(proj.data(), S, enc.memory.data(), nullptr, h_n.data());
    enc.keys.resize(S * attn_);
    keys_.forward(S, enc.memory.data(), 2 * H, enc.keys.data(), attn_);  // (S, A) = memory W_kᵀ
    // s_0 = tanh(W_init h<-_1 + b_init): the backward direction's final state (after the first token).
    enc.s0.resize(Dh);
    kernels::gemv_nt(Dh, H, h_n.data() + H, init_w_.data(), H, enc.s0.data());
    kernels::add(init_b_.data(), enc.s0.data(), Dh);
    kernels::vtanh(enc.s0.data(), Dh);
    return enc;
  }

  RnnCommon c_;
  std::size_t dec_hidden_ = 0, attn_ = 0;
  nn::Gru encoder_, decoder_;
  std::vector<float> init_w_, init_b_, v_;
  nn::Linear keys_;             // W_k (A, 2H): the attention keys of the encoder states
  nn::Linear query_, readout_;  // (A, Dh), (e, Dh + 2H + e), packed (Rows::few): read every step
  WordSplitInput context_;      // the decoder cell's input projection
};

// ============================================================================================ general (LSTM)
class RnnGeneral : public RnnTranslator<RnnGeneral> {
 public:
  explicit RnnGeneral(const io::Bundle& b) {
    c_.load(b);
    const std::size_t e = c_.emb, H = c_.enc_hidden;
    D_ = 2 * H;
    require(positive(b, "decoder_hidden", 1 << 15) == D_, "config.json in " + b.name() +
                                                               ": decoder_hidden must be 2·encoder_hidden = " +
                                                               std::to_string(D_) + " (attention \"general\")");
    const std::size_t layers = positive(b, "decoder_layers", 64);
    expect_choice(b, "encoder_cell", "lstm");
    expect_choice(b, "decoder_cell", "lstm");
    expect_choice(b, "input_feeding", true);
    std::vector<nn::Lstm::Direction> dirs;
    dirs.push_back(load_direction<nn::Lstm>(b, "encoder.", "_l0", 4, e, H));
    dirs.push_back(load_direction<nn::Lstm>(b, "encoder.", "_l0_reverse", 4, e, H));
    encoder_ = nn::Lstm(e, H, std::move(dirs), b.weight_precision());
    c_.keep_projections({encoder_.cell(0).weight_ih, encoder_.cell(1).weight_ih},
                        {encoder_.cell(0).bias, encoder_.cell(1).bias}, 4 * H);
    for (std::size_t l = 0; l < layers; ++l) {
      const std::size_t in = l == 0 ? 2 * e : D_;
      std::vector<nn::Lstm::Direction> cell;
      cell.push_back(load_direction<nn::Lstm>(b, "decoder." + std::to_string(l) + ".", "", 4, in, D_));
      decoder_.emplace_back(in, D_, std::move(cell), b.weight_precision());
      if (l > 0) decoder_.back().pack_input_weights();  // its steps multiply the layer below's h (layer 0: feed_)
    }
    const nn::LstmCellWeights first = decoder_.front().cell(0);  // x_t = [E y_{t−1}; htilde_{t−1}]
    feed_.build(c_, 4 * D_, 2 * e, first.weight_ih, first.bias, b.weight_precision());
    keys_ = nn::Linear(b, "attn_w.weight", D_, D_);
    combine_ = nn::Linear(b, "attn_combine.weight", e, 2 * D_, "", nn::Linear::Rows::few);
    b.check_all_tensors_used();
  }

  std::size_t vocab_size() const override { return c_.vocab; }
  std::size_t max_source_ids() const override { return c_.max_source; }
  std::size_t max_target_positions() const override { return kMaxTargetPositions; }

  struct Encoded {
    std::size_t S = 0;
    std::vector<float> memory;  // (S, D)
    std::vector<float> keys;    // (S, D) = W_a hbar_i
    std::vector<float> h0, c0;  // (D)
  };

  class Decoder : public RnnDecoder<Encoded> {
   public:
    // A row of state_ is [layer l: h (D), c (D)]… then the input feed (e).
    Decoder(const RnnGeneral& m, std::vector<std::shared_ptr<const Encoded>> encs)
        : RnnDecoder(m.c_.vocab, m.decoder_.size() * 2 * m.D_ + m.c_.emb, std::move(encs)), m_(m) {
      const std::size_t L = m_.decoder_.size(), D = m_.D_;
      for (std::size_t r = 0; r < src_.count(); ++r)
        for (std::size_t l = 0; l < L; ++l) {
          std::copy_n(src_[r].h0.data(), D, state_.data() + r * row_size_ + l * 2 * D);
          std::copy_n(src_[r].c0.data(), D, state_.data() + r * row_size_ + l * 2 * D + D);
        }
    }

    // The rows (a beam's hypotheses, or a list's sources) go through each packed product together, in pairs
    // (kernels::linear_packed): the same bits per row as one row at a time. Each row attends over its own source.
    void step(const int* prev, float* logits, float* attention) override {
      const std::size_t N = rows(), D = m_.D_, e = m_.c_.emb, L = m_.decoder_.size();
      const std::size_t S_all = attention != nullptr ? src_.only().S : 0;  // the coverage signal: one source
      x_proj_.resize(N * 4 * D);
      gates_.resize(N * 8 * D);
      alpha_.resize(src_.max_S());
      cat_.resize(N * 2 * D);
      o_.resize(N * e);
      if (rec_.on()) rec_.next_step();
      // layer 0: W_ih x_t + b with x_t = [E y; htilde_{t−1}] (the word part kept per word, the feed one product)
      m_.feed_.project(prev, N, state_.data() + L * 2 * D, row_size_, x_proj_.data(), words_, words_scratch_);
      nn::lstm_cell_step_rows_projected(m_.decoder_[0].cell(0), N, x_proj_.data(), 4 * D, state_.data(), row_size_,
                                        state_.data() + D, row_size_, gates_.data());
      for (std::size_t l = 1; l < L; ++l) {  // layer l's input: the layer below's new h
        float* h = state_.data() + l * 2 * D;
        nn::lstm_cell_step_rows(m_.decoder_[l].cell(0), N, h - 2 * D, row_size_, h, row_size_, h + D, row_size_,
                                gates_.data());
      }
      for (std::size_t r = 0; r < N; ++r) {
        const Encoded& enc = src_[r];
        const std::size_t S = enc.S;
        const float* h_top = state_.data() + r * row_size_ + (L - 1) * 2 * D;
        float* alpha = rec_.on() ? rec_.next_row(S) : alpha_.data();  // (S): in the map arena while recording
        // score_i = h_tᵀ (W_a hbar_i) (keys = W_a hbar, computed once); a = softmax(score); c_t = Σ a_i hbar_i:
        // the catalogue's key-value attention with a dot score; cat (N, 2D) = [c_t; h_t]
        attention::key_value_attention(h_top, 1, enc.keys.data(), enc.memory.data(), S, D, D, alpha,
                                       cat_.data() + r * 2 * D, attention::KeyValueScore::kDot);
        if (attention != nullptr) std::copy_n(alpha, S, attention + r * S_all);
        std::copy_n(h_top, D, cat_.data() + r * 2 * D + D);
      }
      // htilde = tanh(W_c [c_t; h_t]), fed to the next step
      m_.combine_.forward(N, cat_.data(), 2 * D, o_.data(), e);
      for (std::size_t r = 0; r < N; ++r) {
        kernels::vtanh(o_.data() + r * e, e);  // per row: the bits of one row alone
        std::copy_n(o_.data() + r * e, e, state_.data() + r * row_size_ + L * 2 * D);
      }
      m_.c_.output(o_.data(), N, logits);
    }

   private:
    const RnnGeneral& m_;
    std::vector<float> x_proj_, gates_, alpha_, cat_, o_;
    std::vector<const float*> words_;  // this step's kept word projections
    std::vector<float> words_scratch_;
  };

 private:
  friend class RnnTranslator;
  Encoded encode(const std::vector<int>& src) const {
    const std::size_t S = src.size(), H = c_.enc_hidden, D = D_;
    std::vector<const float*> proj;  // (S, 2·4H): W_ih E[src] + b_ih + b_hh, both directions
    std::vector<float> scratch;
    c_.project_source(src, proj, scratch);
    Encoded enc;
    enc.S = S;
    enc.memory.resize(S * D);
    std::vector<float> h_n(2 * H), c_n(2 * H);
    encoder_.forward_projected(proj.data(), S, enc.memory.data(), nullptr, nullptr, h_n.data(), c_n.data());
    enc.keys.resize(S * D);
    keys_.forward(S, enc.memory.data(), D, enc.keys.data(), D);  // (S, D) = memory W_aᵀ
    enc.h0 = h_n;  // [h_fwd_last; h_bwd_first]: h_n is (2, H) = exactly that concatenation
    enc.c0 = c_n;
    return enc;
  }

  RnnCommon c_;
  std::size_t D_ = 0;
  nn::Lstm encoder_;
  std::vector<nn::Lstm> decoder_;
  nn::Linear keys_;                  // W_a (D, D): keys = W_a hbar_i, once per source
  nn::Linear combine_;               // W_c (e, 2D), packed (Rows::few): read every step
  WordSplitInput feed_;              // the first decoder layer's input projection
};

}  // namespace

std::unique_ptr<Seq2SeqModel> make_rnn_seq2seq(const io::Bundle& b) {
  require(b.architecture() == "rnn-seq2seq",
          "bundle " + b.name() + ": architecture '" + b.architecture() + "' is not rnn-seq2seq");
  const std::string attention = b.config_string("attention");
  if (attention == "additive") return std::make_unique<RnnAdditive>(b);
  if (attention == "general") return std::make_unique<RnnGeneral>(b);
  throw Error("config.json in " + b.name() + ": \"attention\" is \"" + attention +
              "\"; rnn-seq2seq supports \"additive\" and \"general\"");
}

}  // namespace attnlens::models
