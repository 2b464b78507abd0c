// attnlens C++ API: the one header the WASM bindings (wasm/bindings.cpp) and the CLI use.
//
// Shape borrowed from whisper.cpp: plain value types, a params struct with defaults per stateful object, opaque
// handles for anything that keeps state between calls, and every failure reported as attnlens::Error with a
// message a person can act on (never an abort).
//
// The attention catalogue (docs/DESIGN.md §3) is exposed through one uniform entry, run_op(): an op takes named
// input tensors and JSON params and returns named output tensors. The names are exactly those of the golden files
// tests/goldens/attention/<op>.json, so one generic test (C++, Node) drives every op, and a binding does not grow
// with the catalogue. list_ops() describes each op (formula, paper, inputs) for the attention lab and the CLI.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace attnlens::api {

// A dense row-major float32 tensor. Invariant checked by validate(): data.size() == product(dims); a scalar has
// dims {} and one element.
struct Tensor {
  std::vector<std::size_t> dims;
  std::vector<float> data;

  Tensor() = default;
  Tensor(std::vector<std::size_t> dims_, std::vector<float> data_) : dims(std::move(dims_)), data(std::move(data_)) {}
  // A zero-filled tensor of these dims.
  explicit Tensor(std::vector<std::size_t> dims_);

  std::size_t size() const { return data.size(); }
  std::size_t rank() const { return dims.size(); }
  // Throws Error naming `what` when data.size() does not match dims.
  void validate(const std::string& what) const;
};

using TensorMap = std::map<std::string, Tensor>;

// Product of dims (1 for a scalar); throws Error on overflow of size_t.
std::size_t element_count(const std::vector<std::size_t>& dims);

// "0.1.0"
const char* version();
// The SIMD instruction set the kernels use on this machine ("avx2+fma", "sse2", "wasm-simd128").
const char* simd_backend();

// ---- the attention catalogue ----
struct OpInfo {
  std::string name;                 // e.g. "score_additive"; the golden file is tests/goldens/attention/<name>.json
  std::string family;               // "score", "alignment", "context", "composite"
  std::string formula;              // in the seeds' notation
  std::string paper;                // e.g. "Bahdanau et al. 2014"
  std::vector<std::string> inputs;  // required input tensor names, with dims, e.g. "q[d]", "keys[S,d]"
  std::vector<std::string> optional_inputs;
  std::vector<std::string> outputs;
  std::string params;               // the JSON params the op reads, with their defaults
};

std::vector<OpInfo> list_ops();
bool has_op(const std::string& name);
// Runs one catalogue op. `params_json` is a JSON object (may be empty "{}"); unknown keys are an error so a typo
// never silently falls back to a default. Every input is checked for presence and shape before the op runs.
TensorMap run_op(const std::string& name, const TensorMap& inputs, const std::string& params_json = "{}");

// ---- stateful objects (opaque handles) ----

// Multi-head attention with an incremental key/value cache (attention/multi_head.h, Vaswani 2017): a decoder
// appends each new position and attends over everything cached, projecting every position once.
// Owns copies of its weights. Weights: in_proj_weight [3E, E], in_proj_bias [3E] (optional), out_proj_weight
// [E, E], out_proj_bias [E] (optional), PyTorch's nn.MultiheadAttention layout.
struct MultiHeadKvCacheParams {
  std::size_t num_heads = 1;   // must divide E
  std::size_t capacity = 512;  // positions; memory 2·capacity·E floats, allocated once; at most
                               // kMaxKvCacheCapacity positions and kMaxKvCacheFloats floats per buffer (Error past them)
};
constexpr std::size_t kMaxKvCacheCapacity = std::size_t(1) << 20;
constexpr std::size_t kMaxKvCacheFloats = std::size_t(1) << 28;  // capacity·E: 1 GiB of keys, 1 GiB of values
// Parses {"num_heads": H, "capacity": N} (unknown keys are an error) over the defaults above.
MultiHeadKvCacheParams multi_head_kv_cache_params(const std::string& params_json);

class MultiHeadKvCache {
 public:
  MultiHeadKvCache(const TensorMap& weights, const MultiHeadKvCacheParams& params);
  ~MultiHeadKvCache();
  MultiHeadKvCache(const MultiHeadKvCache&) = delete;
  MultiHeadKvCache& operator=(const MultiHeadKvCache&) = delete;

  // key, value [n, E] (or [E] for one position).
  void append(const Tensor& key, const Tensor& value);
  // query [n_q, E] (or [E]) → {"out": [n_q, E], "weights": [H, n_q, length()]}.
  TensorMap attend(const Tensor& query, bool causal = true);
  std::size_t length() const;
  std::size_t capacity() const;
  std::size_t embed_dim() const;
  std::size_t num_heads() const;
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- text (src/text) ----

// The project's byte-safe BPE tokenizer (text/bpe.h: Sennrich 2016 with SentencePiece's "▁" marker), the same
// implementation the training recipes use through attnlens-cli.
struct BpeLearnParams {
  int num_merges = 10000;
  int min_frequency = 1;  // rarer characters are left out of the vocabulary (→ <unk>)
};

struct BpeEncoding {
  std::vector<int> ids;
  std::vector<std::string> pieces;  // same length as ids; "▁" marks a preceding space
};

class BpeTokenizer {
 public:
  // From the contents of PREFIX.vocab and PREFIX.merges (the WASM build gets bytes, not paths).
  static std::unique_ptr<BpeTokenizer> from_text(const std::string& vocab_text, const std::string& merges_text);
  // From the bundle JSON form {"type": "bpe", "vocab": [...], "merges": ["left right", ...]}.
  static std::unique_ptr<BpeTokenizer> from_json(const std::string& json_text);
  // Learns merges from lines of text.
  static std::unique_ptr<BpeTokenizer> learn(const std::vector<std::string>& lines, const BpeLearnParams& params);
  ~BpeTokenizer();
  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  BpeEncoding encode(const std::string& text) const;
  // Throws Error naming the id when one is outside the vocabulary.
  std::string decode(const std::vector<int>& ids) const;
  std::size_t vocab_size() const;
  std::size_t num_merges() const;
  std::string to_json() const;

 private:
  struct Impl;
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The sentiment models' word tokenizer (text/words.h): lowercased, Penn Treebank conventions as in SST-2
// ("It's fine." → it 's fine .). Any bytes are accepted (ill-formed UTF-8 becomes U+FFFD).
std::vector<std::string> tokenize_words(const std::string& text);

}  // namespace attnlens::api

// Sentence sentiment (SST-2 models) with their attention maps.
#include "api/sentiment.h"

// Translation (de→en seq2seq bundles) with every attention map: api::Translator.
#include "api/translation.h"

// Image captioning (MobileNetV2 + Show-Attend-Tell bundles), attention over the grid per word: api::Captioner.
#include "api/captioning.h"

// Sorting numbers with a pointer network, every pointer distribution out: api::PointerSorter.
#include "api/pointer.h"

// Visual question answering over shapes scenes (co-attention / attention-over-attention): api::VisualQA.
#include "api/vqa.h"
