// The options JS hands to the engine, as the C++ side parses them (wasm/bindings*.cpp pass them straight through):
//   mode 0: sentiment options JSON (api::sentiment_params, SentimentClassifier.fromBundle) → a tiny classifier
//           built with them classifies a long text; the same text through translation_params, vqa_params and
//           pointer_sort_params (the JSON the Translator, VQA and pointer bindings read);
//   mode 1: caption options JSON (api::caption_params, Captioner.caption/captionGrid) → a tiny captioner
//           (built once, with the real MobileNetV2 encoder) captions a small grid;
//   mode 2: MultiHeadKvCache params JSON (api::multi_head_kv_cache_params) → a cache with E = 4 appends and attends;
//   mode 3: runOp(name, inputs, paramsJson): byte 1 picks the op of api::list_ops(), bytes 2.. size its dims (each
//           named dim 0..4), the rest is the params JSON;
//   mode 4: translate()/align() options as api::TranslationParams values (num_beams, max_new_tokens, alpha,
//           coverage_beta, candidates_per_beam, output_attentions, alignment method/extraction/layer/head,
//           word_maps: raw values, NaN and negative ones included) on a tiny Transformer or RNN translator, then
//           the text (≤ 128 bytes).
// (The JS layer — wasm/pipelines/*.js — checks types and ranges first with TypeError/RangeError; that JS code is
// not fuzzed here. This harness makes sure a caller that bypasses it still gets an attnlens::Error.)
// Checks: no exception but attnlens::Error; no sanitizer report; bounded time and memory.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tiny_bundles.h"

namespace {

namespace api = attnlens::api;

struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  template <typename T>
  T get() {
    T v{};
    const std::size_t k = std::min(sizeof(T), n);
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
  std::uint8_t byte() { return get<std::uint8_t>(); }
  std::string rest() { return std::string(reinterpret_cast<const char*>(p), n); }
};

const fuzz::Template& tmpl(const std::string& name) {
  for (const auto& t : fuzz::templates())
    if (t.name == name) return t;
  std::abort();
}

std::size_t index_of(const std::string& name) {
  const auto& all = fuzz::templates();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name) return i;
  std::abort();
}

std::string weights_of(const std::string& name) {
  return fuzz::write_safetensors(fuzz::base_tensors(index_of(name)));
}

const api::Translator& translator(bool rnn) {
  static const auto transformer = api::Translator::from_memory(
      tmpl("transformer-seq2seq-head").config, fuzz::bytes(weights_of("transformer-seq2seq-head")),
      tmpl("transformer-seq2seq-head").files);
  static const auto gru = api::Translator::from_memory(tmpl("rnn-seq2seq-additive").config,
                                                       fuzz::bytes(weights_of("rnn-seq2seq-additive")),
                                                       tmpl("rnn-seq2seq-additive").files);
  return rnn ? *gru : *transformer;
}

const api::Captioner& captioner() {
  static const auto c = api::Captioner::from_memory(tmpl("show-attend-tell-flickr").config,
                                                    fuzz::bytes(weights_of("show-attend-tell-flickr")),
                                                    tmpl("show-attend-tell-flickr").files, fuzz::encoder_config(),
                                                    fuzz::bytes(fuzz::encoder_weights()));
  return *c;
}

// "keys[n_k,d]" → name "keys", dims from the sizes chosen for each dim name ("3E" = 3·E).
api::Tensor make_input(const std::string& spec, std::map<std::string, std::size_t>& sizes, Reader& r,
                       std::string& name) {
  const std::size_t open = spec.find('[');
  name = spec.substr(0, open);
  std::vector<std::size_t> dims;
  if (open != std::string::npos) {
    std::string inner = spec.substr(open + 1, spec.size() - open - 2);
    std::size_t pos = 0;
    while (pos <= inner.size()) {
      const std::size_t comma = std::min(inner.find(',', pos), inner.size());
      std::string tok = inner.substr(pos, comma - pos);
      std::size_t mult = 0, i = 0;
      while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') mult = mult * 10 + static_cast<std::size_t>(tok[i++] - '0');
      const std::string dim = tok.substr(i);
      if (dim.empty()) {
        dims.push_back(mult);
      } else {
        if (!sizes.count(dim)) sizes[dim] = r.byte() % 5;
        dims.push_back((i == 0 ? 1 : mult) * sizes[dim]);
      }
      pos = comma + 1;
    }
  }
  api::Tensor t(dims);
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>((i * 37) % 11) * 0.1f - 0.5f;
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::base_tensors(0);
  translator(false);
  translator(true);
  captioner();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  Reader r{data + 1, size - 1};
  switch (data[0] % 5) {
    case 0: {
      const std::string json = r.rest();
      // Every task's option parser (api/options.h) on the same text, each on its own: an Error or a value.
      fuzz::ok_or_error([&] { api::translation_params(json); });
      fuzz::ok_or_error([&] { api::vqa_params(json); });
      fuzz::ok_or_error([&] { api::pointer_sort_params(json); });
      fuzz::ok_or_error([&] {
        const api::SentimentParams p = api::sentiment_params(json);
        const auto& t = tmpl("selfattn-classifier");
        const auto c = api::SentimentClassifier::from_memory(t.config, fuzz::bytes(weights_of(t.name)), t.files, p);
        std::string text;
        for (int i = 0; i < 40; ++i) text += "good movie , not bad ";
        const auto res = c->classify(text);
        if (res.tokens.size() > c->max_tokens()) __builtin_trap();
      });
      break;
    }
    case 1: {
      const std::string json = r.rest();
      fuzz::ok_or_error([&] {
        const api::CaptionParams p = api::caption_params(json);
        api::Tensor grid({2, 2, 1280});
        for (std::size_t i = 0; i < grid.data.size(); ++i) grid.data[i] = static_cast<float>(i % 9) * 0.05f;
        captioner().caption_grid(grid, p);
      });
      break;
    }
    case 2: {
      const std::string json = r.rest();
      fuzz::ok_or_error([&] {
        const api::MultiHeadKvCacheParams p = api::multi_head_kv_cache_params(json);
        const std::size_t e = 4;
        api::TensorMap w;
        w["in_proj_weight"] = api::Tensor({3 * e, e});
        w["out_proj_weight"] = api::Tensor({e, e});
        for (auto& [name, t] : w)
          for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i % 5) * 0.1f;
        api::MultiHeadKvCache cache(w, p);
        api::Tensor kv({2, e});
        cache.append(kv, kv);
        cache.attend(api::Tensor({1, e}), true);
      });
      break;
    }
    case 3: {
      static const std::vector<api::OpInfo> ops = api::list_ops();
      const api::OpInfo& op = ops[r.byte() % ops.size()];
      std::map<std::string, std::size_t> sizes;
      api::TensorMap inputs;
      const std::uint8_t optional_mask = r.byte();
      for (const auto& s : op.inputs) {
        std::string name;
        api::Tensor t = make_input(s, sizes, r, name);
        inputs[name] = std::move(t);
      }
      for (std::size_t i = 0; i < op.optional_inputs.size(); ++i) {
        if (!((optional_mask >> (i % 8)) & 1)) continue;
        std::string name;
        api::Tensor t = make_input(op.optional_inputs[i], sizes, r, name);
        inputs[name] = std::move(t);
      }
      const std::string json = r.rest();
      fuzz::ok_or_error([&] { api::run_op(op.name, inputs, json); });
      break;
    }
    default: {
      const std::uint8_t flags = r.byte();
      api::TranslationParams p;
      p.num_beams = r.get<std::int32_t>();
      p.max_new_tokens = r.get<std::int32_t>();
      if (flags & 1) p.alpha = r.get<double>();
      if (flags & 2) p.coverage_beta = r.get<double>();
      if (flags & 64) p.candidates_per_beam = r.get<std::int32_t>();
      p.output_attentions = flags & 4;
      p.word_maps = flags & 8;
      static const char* const methods[] = {"", "head", "layer-mean", "Head", "argmax"};
      static const char* const extractions[] = {"", "argmax", "gdfa", "GDFA", "head"};
      p.alignment_method = methods[r.byte() % 5];
      p.alignment_extraction = extractions[r.byte() % 5];
      p.alignment_layer = static_cast<std::int8_t>(r.byte());
      p.alignment_head = static_cast<std::int8_t>(r.byte());
      // Keep each input cheap: the engine caps beams at 64 and tokens at 65536, which is valid but slow here.
      if (p.num_beams > 4 && p.num_beams <= 64) p.num_beams = 4;
      if (p.max_new_tokens > 8 && p.max_new_tokens <= (1 << 16)) p.max_new_tokens = 8;
      // The options are what this mode fuzzes; texts have their own harnesses (bpe, words) and unit tests up to
      // 200,000 characters. A long text here only makes each input slow (a 4 KB text's forced alignment takes ~1 s
      // under ASan), so the text is its first 128 bytes.
      const std::string text = r.rest().substr(0, 128);
      const api::Translator& tr = translator(flags & 16);
      fuzz::ok_or_error([&] { tr.translate(text, p); });
      fuzz::ok_or_error([&] { tr.align(text, flags & 32 ? "a dog ." : text, p); });
      break;
    }
  }
  return 0;
}
