#include "models/hf_marian.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "attention/multi_head.h"
#include "common.h"
#include "kernels/kernels.h"

namespace attnlens::models {

namespace {

constexpr std::int64_t kMaxSize = 1 << 20;
using Rows = nn::Linear::Rows;

HfMarian::Attention attention_weights(const io::Bundle& b, const std::string& p, std::size_t d, Rows rows) {
  return {nn::Linear(b, p + "q_proj.weight", d, d, p + "q_proj.bias", rows),
          nn::Linear(b, p + "k_proj.weight", d, d, p + "k_proj.bias", Rows::any),
          nn::Linear(b, p + "v_proj.weight", d, d, p + "v_proj.bias", Rows::any),
          nn::Linear(b, p + "out_proj.weight", d, d, p + "out_proj.bias", rows)};
}

// x (n, d) = LN(x + a)
void add_norm(float* x, const float* a, std::size_t n, std::size_t d, const hf::LayerNorm& norm) {
  for (std::size_t i = 0; i < n * d; ++i) x[i] += a[i];
  norm.apply(x, n);
}

// x (n, d) = LN(x + fc2(act(fc1(x))))
void feed_forward(float* x, std::size_t n, std::size_t d, std::size_t ffn, const nn::Linear& fc1,
                  const nn::Linear& fc2, hf::Activation act, const hf::LayerNorm& norm) {
  std::vector<float> f(n * ffn), out(n * d);
  fc1.forward(n, x, d, f.data(), ffn);
  hf::activate(act, f.data(), f.size());
  fc2.forward(n, f.data(), ffn, out.data(), d);
  add_norm(x, out.data(), n, d, norm);
}

}  // namespace

HfMarian::HfMarian(const io::Bundle& b) : HfMarian(b, MapNames()) {}

HfMarian::HfMarian(const io::Bundle& b, MapNames names) : names_(std::move(names)) {
  const hf::HfConfig cfg(b);
  vocab_ = static_cast<std::size_t>(cfg.integer("vocab_size", 58101, 1, kMaxSize));
  d_ = static_cast<std::size_t>(cfg.integer("d_model", 1024, 1, kMaxSize));
  positions_ = static_cast<std::size_t>(cfg.integer("max_position_embeddings", 1024, 1, kMaxSize));
  const auto enc_layers = static_cast<std::size_t>(cfg.integer("encoder_layers", 12, 0, 1024));
  const auto dec_layers = static_cast<std::size_t>(cfg.integer("decoder_layers", 12, 1, 1024));
  enc_heads_ = static_cast<std::size_t>(cfg.integer("encoder_attention_heads", 16, 1, kMaxSize));
  dec_heads_ = static_cast<std::size_t>(cfg.integer("decoder_attention_heads", 16, 1, kMaxSize));
  if (d_ % enc_heads_ != 0) cfg.unsupported("encoder_attention_heads", "heads must divide d_model");
  if (d_ % dec_heads_ != 0) cfg.unsupported("decoder_attention_heads", "heads must divide d_model");
  enc_ffn_ = static_cast<std::size_t>(cfg.integer("encoder_ffn_dim", 4096, 1, kMaxSize));
  dec_ffn_ = static_cast<std::size_t>(cfg.integer("decoder_ffn_dim", 4096, 1, kMaxSize));
  act_ = hf::activation(cfg, "activation_function", "gelu");
  const auto id = [&](const char* key, std::int64_t fallback) {
    return static_cast<int>(cfg.integer(key, fallback, 0, static_cast<std::int64_t>(vocab_) - 1));
  };
  pad_ = id("pad_token_id", 58100);
  eos_ = id("eos_token_id", 0);
  start_ = id("decoder_start_token_id", pad_);
  if (cfg.boolean("scale_embedding", false)) embed_scale_ = std::sqrt(static_cast<float>(d_));
  if (!cfg.boolean("share_encoder_decoder_embeddings", true))
    cfg.unsupported("share_encoder_decoder_embeddings", "separate source and target vocabularies");
  if (cfg.integer("decoder_vocab_size", static_cast<std::int64_t>(vocab_), 1, kMaxSize) !=
      static_cast<std::int64_t>(vocab_))
    cfg.unsupported("decoder_vocab_size", "a decoder vocabulary other than vocab_size");

  shared_ = b.tensor("model.shared.weight", {vocab_, d_});
  if (b.has_tensor("lm_head.weight")) lm_head_ = b.tensor("lm_head.weight", {vocab_, d_});
  final_logits_bias_ = b.tensor("final_logits_bias", {1, vocab_});
  // P (positions, d), as MarianSinusoidalPositionalEmbedding: angles in double, sines then cosines.
  pe_.assign(positions_ * d_, 0.0f);
  const std::size_t sentinel = (d_ + 1) / 2;
  for (std::size_t pos = 0; pos < positions_; ++pos)
    for (std::size_t j = 0; j < d_; ++j) {
      const double angle = static_cast<double>(pos) / std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / d_);
      if (j % 2 == 0) pe_[pos * d_ + j / 2] = static_cast<float>(std::sin(angle));
      else pe_[pos * d_ + sentinel + j / 2] = static_cast<float>(std::cos(angle));
    }
  const float eps = 1e-5f;  // nn.LayerNorm's default: Marian's layers set none
  for (std::size_t l = 0; l < enc_layers; ++l) {
    const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    enc_.push_back({attention_weights(b, p + "self_attn.", d_, Rows::any),
                    hf::LayerNorm(b, p + "self_attn_layer_norm", d_, eps), hf::LayerNorm(b, p + "final_layer_norm", d_, eps),
                    nn::Linear(b, p + "fc1.weight", enc_ffn_, d_, p + "fc1.bias", Rows::any),
                    nn::Linear(b, p + "fc2.weight", d_, enc_ffn_, p + "fc2.bias", Rows::any)});
  }
  for (std::size_t l = 0; l < dec_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    dec_.push_back({attention_weights(b, p + "self_attn.", d_, Rows::few),
                    attention_weights(b, p + "encoder_attn.", d_, Rows::few),
                    hf::LayerNorm(b, p + "self_attn_layer_norm", d_, eps),
                    hf::LayerNorm(b, p + "encoder_attn_layer_norm", d_, eps),
                    hf::LayerNorm(b, p + "final_layer_norm", d_, eps),
                    nn::Linear(b, p + "fc1.weight", dec_ffn_, d_, p + "fc1.bias", Rows::few),
                    nn::Linear(b, p + "fc2.weight", d_, dec_ffn_, p + "fc2.bias", Rows::few)});
  }
  b.check_all_tensors_used();
}

void HfMarian::check_ids(const int* ids, std::size_t n, const char* what) const {
  for (std::size_t i = 0; i < n; ++i)
    require(ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < vocab_,
            std::string("Marian: ") + what + " id " + std::to_string(ids[i]) + " outside the vocabulary [0, " +
                std::to_string(vocab_) + ")");
}

void HfMarian::embed(const int* ids, std::size_t n, std::size_t first_pos, std::size_t pos_step, float* x) const {
  for (std::size_t i = 0; i < n; ++i) {
    const float* e = shared_.data() + static_cast<std::size_t>(ids[i]) * d_;
    const float* p = pe_.data() + (first_pos + i * pos_step) * d_;
    for (std::size_t j = 0; j < d_; ++j) x[i * d_ + j] = e[j] * embed_scale_ + p[j];
  }
}

// One source's decoder: `rows` hypotheses advancing together over the shared Encoded source.
class HfMarian::Decoder : public Seq2SeqDecoder {
 public:
  Decoder(const HfMarian& m, std::shared_ptr<const Encoded> enc) : m_(m), enc_(std::move(enc)) {
    for (std::size_t l = 0; l < m_.dec_.size(); ++l) caches_.emplace_back(m_.d_, m_.dec_heads_, m_.positions_);
  }

  std::size_t vocab_size() const override { return m_.vocab_; }
  std::size_t source_length() const override { return enc_->length; }
  std::size_t rows() const override { return rows_; }

  // Per row of step t: [layer][head] self rows (t + 1), then [layer][head] cross rows (S).
  std::size_t row_floats(std::size_t t) const { return m_.dec_.size() * m_.dec_heads_ * (t + 1 + enc_->length); }
  void record_maps(std::size_t rows, std::size_t steps) override {
    recording_ = true;
    arena_.clear();
    arena_.reserve(steps);
    (void)rows;
  }
  std::size_t recorded_floats(std::size_t rows, std::size_t steps) const override {
    std::size_t n = 0;
    for (std::size_t t = 0; t < steps; ++t) n += rows * row_floats(t);
    return n;
  }

  // prev[r] at position pos_ for every row → logits (rows, V); attention (rows, S): the last layer's cross
  // attention averaged over heads.
  void step(const int* prev, float* logits, float* attention) override {
    const std::size_t R = rows_, d = m_.d_, H = m_.dec_heads_, S = enc_->length, t = pos_;
    require(t < m_.positions_, "Marian: the target exceeds max_position_embeddings = " + std::to_string(m_.positions_));
    m_.check_ids(prev, R, "target");
    // y (R, d) = shared[prev]·embed_scale + P[t]
    std::vector<float> y(R * d), q(R * d), k(R * d), v(R * d), concat(R * d), out(R * d);
    m_.embed(prev, R, t, 0, y.data());
    float* maps = nullptr;
    if (recording_) {
      arena_.emplace_back(R * row_floats(t));
      maps = arena_.back().data();
    }
    std::vector<float> scratch(H * (t + 1 + S));
    const std::size_t self_block = m_.dec_.size() * H * (t + 1);
    for (std::size_t l = 0; l < m_.dec_.size(); ++l) {
      const DecoderLayer& layer = m_.dec_[l];
      // self-attention over this row's positions 0..t (cache), y = LN(y + out_proj(concat))
      layer.self_attn.q.forward(R, y.data(), d, q.data(), d);
      layer.self_attn.k.forward(R, y.data(), d, k.data(), d);
      layer.self_attn.v.forward(R, y.data(), d, v.data(), d);
      caches_[l].append_projected(k.data(), v.data(), 1);
      if (vectors_) {  // one row (record_vectors)
        vec_self_q_[l].insert(vec_self_q_[l].end(), q.begin(), q.begin() + d);
        vec_self_k_[l].insert(vec_self_k_[l].end(), k.begin(), k.begin() + d);
      }
      for (std::size_t r = 0; r < R; ++r) {
        float* w = maps ? maps + r * row_floats(t) + l * H * (t + 1) : scratch.data();
        caches_[l].attend_heads(r, q.data() + r * d, 1, concat.data() + r * d, w, /*causal=*/true);
      }
      layer.self_attn.out.forward(R, concat.data(), d, out.data(), d);
      add_norm(y.data(), out.data(), R, d, layer.self_attn_layer_norm);
      // cross-attention over the memory's keys/values, y = LN(y + out_proj(concat))
      layer.encoder_attn.q.forward(R, y.data(), d, q.data(), d);
      if (vectors_) vec_cross_q_[l].insert(vec_cross_q_[l].end(), q.begin(), q.begin() + d);
      for (std::size_t r = 0; r < R; ++r) {
        float* w = maps ? maps + r * row_floats(t) + self_block + l * H * S : scratch.data();
        attention::attend_heads(d, H, q.data() + r * d, 1, enc_->cross_k[l].data(), enc_->cross_v[l].data(), S,
                                concat.data() + r * d, w);
        if (attention != nullptr && l + 1 == m_.dec_.size()) {
          float* a = attention + r * S;
          for (std::size_t j = 0; j < S; ++j) {
            float sum = 0;
            for (std::size_t h = 0; h < H; ++h) sum += w[h * S + j];
            a[j] = sum / static_cast<float>(H);
          }
        }
      }
      layer.encoder_attn.out.forward(R, concat.data(), d, out.data(), d);
      add_norm(y.data(), out.data(), R, d, layer.encoder_attn_layer_norm);
      feed_forward(y.data(), R, d, m_.dec_ffn_, layer.fc1, layer.fc2, m_.act_, layer.final_layer_norm);
    }
    // logits (R, V) = y·sharedᵀ + final_logits_bias;  logits[pad] = −∞
    const std::vector<float>& head = m_.lm_head_.empty() ? m_.shared_ : m_.lm_head_;
    kernels::gemm_nt_bias_act(R, m_.vocab_, d, y.data(), d, head.data(), d, logits, m_.vocab_,
                              m_.final_logits_bias_.data(), kernels::Activation::none);
    for (std::size_t r = 0; r < R; ++r)
      logits[r * m_.vocab_ + static_cast<std::size_t>(m_.pad_)] = -std::numeric_limits<float>::infinity();
    ++pos_;
  }

  // From now on keeps every step's decoder query/key rows for take_vectors() (one row only).
  void record_vectors() {
    require(rows_ == 1, "Marian: query/key vectors are recorded for one row");
    vectors_ = true;
    vec_self_q_.assign(m_.dec_.size(), {});
    vec_self_k_.assign(m_.dec_.size(), {});
    vec_cross_q_.assign(m_.dec_.size(), {});
  }
  // Appends the recorded vectors per layer and head: decoder self query/key [T, d_head], cross query [T, d_head],
  // cross key [S, d_head].
  void take_vectors(AttentionTrace& out) const {
    const std::size_t T = pos_, S = enc_->length, H = m_.dec_heads_, d = m_.d_;
    for (std::size_t l = 0; l < m_.dec_.size(); ++l)
      hf::record_qk(out, m_.names_.decoder_self, static_cast<int>(l), H, vec_self_q_[l].data(), T,
                    vec_self_k_[l].data(), T, d);
    for (std::size_t l = 0; l < m_.dec_.size(); ++l)
      hf::record_qk(out, m_.names_.cross, static_cast<int>(l), H, vec_cross_q_[l].data(), T,
                    enc_->cross_k[l].data(), S, d);
  }

  void reorder(const std::vector<int>& parents) override {
    for (auto& c : caches_) c.reorder(parents);
    rows_ = parents.size();
  }

  void trace_hypothesis(const std::vector<int>& rows, AttentionTrace& trace) const override {
    const std::size_t T = rows.size(), H = m_.dec_heads_, S = enc_->length, L = m_.dec_.size();
    require(T <= arena_.size(), "Marian: trace_hypothesis asks for more steps than were recorded");
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) {
        float* map = trace.add(m_.names_.decoder_self, static_cast<int>(l), static_cast<int>(h), -1, {T, T});
        for (std::size_t t = 0; t < T; ++t) {
          const float* src = arena_[t].data() + static_cast<std::size_t>(rows[t]) * row_floats(t) +
                             (l * H + h) * (t + 1);
          for (std::size_t j = 0; j < T; ++j) map[t * T + j] = j <= t ? src[j] : 0.0f;
        }
      }
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) {
        float* map = trace.add(m_.names_.cross, static_cast<int>(l), static_cast<int>(h), -1, {T, S});
        for (std::size_t t = 0; t < T; ++t) {
          const float* src = arena_[t].data() + static_cast<std::size_t>(rows[t]) * row_floats(t) +
                             L * H * (t + 1) + (l * H + h) * S;
          std::copy(src, src + S, map + t * S);
        }
      }
  }

 private:
  const HfMarian& m_;
  std::shared_ptr<const Encoded> enc_;
  std::vector<attention::MultiHeadKvCache> caches_;
  std::size_t rows_ = 1, pos_ = 0;
  bool recording_ = false;
  std::vector<std::vector<float>> arena_;  // per step: rows × row_floats(t)
  bool vectors_ = false;                   // record_vectors(): per layer, one d-float row per step
  std::vector<std::vector<float>> vec_self_q_, vec_self_k_, vec_cross_q_;
};

std::unique_ptr<Seq2SeqDecoder> HfMarian::start(const std::vector<int>& src, AttentionTrace* trace) const {
  return begin(src, trace, nullptr);
}

std::unique_ptr<HfMarian::Decoder> HfMarian::begin(const std::vector<int>& src, AttentionTrace* trace,
                                                   AttentionTrace* vectors) const {
  const std::size_t S = src.size(), d = d_;
  require(S > 0, "Marian: the source is empty");
  require(S <= positions_, "Marian: " + std::to_string(S) + " source ids exceed max_position_embeddings = " +
                               std::to_string(positions_));
  check_ids(src.data(), S, "source");
  // x (S, d) = shared[src]·embed_scale + P[0..S)
  std::vector<float> x(S * d), q(S * d), k(S * d), v(S * d), concat(S * d), out(S * d), w(enc_heads_ * S * S);
  embed(src.data(), S, 0, 1, x.data());
  for (std::size_t l = 0; l < enc_.size(); ++l) {
    const EncoderLayer& layer = enc_[l];
    // x = LN(x + out_proj(heads of softmax(q·kᵀ/√d_head)·v));  w (H, S, S)
    layer.self_attn.q.forward(S, x.data(), d, q.data(), d);
    layer.self_attn.k.forward(S, x.data(), d, k.data(), d);
    layer.self_attn.v.forward(S, x.data(), d, v.data(), d);
    if (vectors)
      hf::record_qk(*vectors, names_.encoder_self, static_cast<int>(l), enc_heads_, q.data(), S, k.data(), S, d);
    attention::attend_heads(d, enc_heads_, q.data(), S, k.data(), v.data(), S, concat.data(), w.data());
    if (trace) hf::record_heads(*trace, names_.encoder_self, static_cast<int>(l), enc_heads_, S, S, w.data());
    layer.self_attn.out.forward(S, concat.data(), d, out.data(), d);
    add_norm(x.data(), out.data(), S, d, layer.self_attn_layer_norm);
    feed_forward(x.data(), S, d, enc_ffn_, layer.fc1, layer.fc2, act_, layer.final_layer_norm);
  }
  // memory = x; per decoder layer: cross k, v (S, d)
  auto enc = std::make_shared<Encoded>();
  enc->length = S;
  for (const DecoderLayer& layer : dec_) {
    enc->cross_k.emplace_back(S * d);
    enc->cross_v.emplace_back(S * d);
    layer.encoder_attn.k.forward(S, x.data(), d, enc->cross_k.back().data(), d);
    layer.encoder_attn.v.forward(S, x.data(), d, enc->cross_v.back().data(), d);
  }
  return std::make_unique<Decoder>(*this, std::move(enc));
}

std::vector<float> HfMarian::forward(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                     AttentionTrace* trace) const {
  auto decoder = start(src, trace);
  return teacher_force(*decoder, tgt_in, trace);
}

void HfMarian::query_key_vectors(const std::vector<int>& src, const std::vector<int>& tgt_in,
                                 AttentionTrace& out) const {
  auto decoder = begin(src, nullptr, &out);
  decoder->record_vectors();
  teacher_force(*decoder, tgt_in, nullptr);
  decoder->take_vectors(out);
}

}  // namespace attnlens::models
