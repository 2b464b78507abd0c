// Embind bindings: a thin layer over src/api.h (the only engine header used here, as the layer rules of
// docs/DESIGN.md §2 ask). Three duties and nothing more:
//   1. convert JS tensors {dims: number[], data: Float32Array} to api::Tensor and back;
//   2. copy every result out of the WASM heap (Float32Array.slice) before it reaches JS: a typed_memory_view goes
//      stale as soon as memory grows, and the std::vector behind it is freed when this call returns;
//   3. never let a C++ exception escape into the module: attnlens::Error (and anything else) becomes a JS Error
//      carrying the message (guarded() records it and returns; wasm/core.js throws it, so that no JS exception
//      unwinds through WebAssembly frames and leaks their memory: bindings_common.h).
// The converted models' module compiles this file with ATTNLENS_WASM_NO_LAB (wasm/CMakeLists.txt): only what
// wasm/core.js asks of every module (contracts, version, the recorded error, threads, heap stats), without the ops
// catalogue, the KV cache and the tokenizers, so the linker leaves the engine code behind them out.
// Argument checks that JS can make with better messages (types, lengths) live in wasm/attention.js; the engine
// checks everything again, so a caller that bypasses the JS layer still gets an Error, not a crash.
#include <emscripten/heap.h>
#include <malloc.h>

#include "bindings_common.h"

using emscripten::val;
namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

#ifndef ATTNLENS_WASM_NO_LAB
// runOp(name, inputs: {[name]: {dims, data}}, paramsJson: string) -> {[name]: {dims, data}}
val run_op(const std::string& name, const val& inputs, const std::string& params_json) {
  return guarded([&] { return tensor_map_to_js(api::run_op(name, tensor_map_from_js(name, inputs), params_json)); });
}

val list_ops() {
  return guarded([] {
    val out = val::array();
    for (const auto& op : api::list_ops()) {
      val o = val::object();
      o.set("name", op.name);
      o.set("family", op.family);
      o.set("formula", op.formula);
      o.set("paper", op.paper);
      val inputs = val::array();
      for (const auto& s : op.inputs) inputs.call<void>("push", s);
      o.set("inputs", inputs);
      val optional = val::array();
      for (const auto& s : op.optional_inputs) optional.call<void>("push", s);
      o.set("optionalInputs", optional);
      val outputs = val::array();
      for (const auto& s : op.outputs) outputs.call<void>("push", s);
      o.set("outputs", outputs);
      o.set("params", op.params);
      out.call<void>("push", o);
    }
    return out;
  });
}

// JS face of api::MultiHeadKvCache; wasm/attention.js wraps it again with argument checks and dispose().
class KvCacheBinding {
 public:
  explicit KvCacheBinding(std::unique_ptr<api::MultiHeadKvCache> cache) : cache_(std::move(cache)) {}

  void append(const val& key, const val& value) {
    guarded([&] { cache_->append(tensor_from_js("MultiHeadKvCache.append", "key", key),
                                 tensor_from_js("MultiHeadKvCache.append", "value", value)); });
  }
  val attend(const val& query, bool causal) {
    return guarded([&] { return tensor_map_to_js(cache_->attend(tensor_from_js("MultiHeadKvCache.attend", "query", query), causal)); });
  }
  double length() const { return static_cast<double>(cache_->length()); }
  double capacity() const { return static_cast<double>(cache_->capacity()); }
  void clear() { cache_->clear(); }

 private:
  std::unique_ptr<api::MultiHeadKvCache> cache_;
};

// A factory rather than a constructor, so that a failed validation throws before any object is allocated.
KvCacheBinding* make_kv_cache(const val& weights, const std::string& params_json) {
  return guarded([&] {
    auto cache = std::make_unique<api::MultiHeadKvCache>(tensor_map_from_js("MultiHeadKvCache", weights),
                                                         api::multi_head_kv_cache_params(params_json));
    return new KvCacheBinding(std::move(cache));
  });
}

// JS face of api::BpeTokenizer; wasm/text.js wraps it with argument checks and dispose().
class BpeBinding {
 public:
  explicit BpeBinding(std::unique_ptr<api::BpeTokenizer> tokenizer) : tokenizer_(std::move(tokenizer)) {}

  // text → {ids: Int32Array, pieces: string[]}
  val encode(const std::string& text) const {
    return guarded([&] {
      const api::BpeEncoding enc = tokenizer_->encode(text);
      val out = val::object();
      out.set("ids", val(emscripten::typed_memory_view(enc.ids.size(), enc.ids.data())).call<val>("slice"));
      val pieces = val::array();
      for (const auto& p : enc.pieces) pieces.call<void>("push", p);
      out.set("pieces", pieces);
      return out;
    });
  }
  std::string decode(const val& ids) const {
    return guarded([&] { return tokenizer_->decode(emscripten::convertJSArrayToNumberVector<int>(ids)); });
  }
  double vocab_size() const { return static_cast<double>(tokenizer_->vocab_size()); }
  double num_merges() const { return static_cast<double>(tokenizer_->num_merges()); }
  std::string to_json() const {
    return guarded([&] { return tokenizer_->to_json(); });
  }

 private:
  std::unique_ptr<api::BpeTokenizer> tokenizer_;
};

BpeBinding* bpe_from_text(const std::string& vocab, const std::string& merges) {
  return guarded([&] { return new BpeBinding(api::BpeTokenizer::from_text(vocab, merges)); });
}
BpeBinding* bpe_from_json(const std::string& json_text) {
  return guarded([&] { return new BpeBinding(api::BpeTokenizer::from_json(json_text)); });
}
BpeBinding* bpe_learn(const val& lines, int num_merges, int min_frequency) {
  return guarded([&] {
    std::vector<std::string> text;
    const std::size_t n = lines["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) text.push_back(lines[i].as<std::string>());
    api::BpeLearnParams params;
    params.num_merges = num_merges;
    params.min_frequency = min_frequency;
    return new BpeBinding(api::BpeTokenizer::learn(text, params));
  });
}

val tokenize_words(const std::string& text) {
  return guarded([&] {
    val out = val::array();
    for (const auto& t : api::tokenize_words(text)) out.call<void>("push", t);
    return out;
  });
}

#endif  // ATTNLENS_WASM_NO_LAB

// heapStats() -> {heapBytes, arenaBytes, usedBytes, freeBytes}: the allocator's own counts (dlmalloc's mallinfo),
// a diagnostic for memory tests. usedBytes (bytes in live malloc blocks) goes down again when objects are freed;
// heapBytes (the WebAssembly memory) and arenaBytes (what malloc took from it) only ever grow.
val heap_stats() {
  const struct mallinfo mi = mallinfo();
  val out = val::object();
  out.set("heapBytes", static_cast<double>(emscripten_get_heap_size()));
  out.set("arenaBytes", static_cast<double>(static_cast<std::size_t>(mi.arena)));
  out.set("usedBytes", static_cast<double>(static_cast<std::size_t>(mi.uordblks)));
  out.set("freeBytes", static_cast<double>(static_cast<std::size_t>(mi.fordblks)));
  return out;
}

std::string version() { return api::version(); }
std::string simd_backend() { return api::simd_backend(); }
// setThreads(n) -> the count in force (1 in the single-threaded module; capped by the Web Workers the threaded
// module started with, which wasm/core.js sizes: a thread started later would wait for the event loop).
int set_threads(int n) {
  return guarded([&] {
    attnlens::require(n >= 1, "setThreads: expected a whole number ≥ 1, got " + std::to_string(n));
    return static_cast<int>(api::set_threads(static_cast<std::size_t>(n)));
  });
}
int threads() { return static_cast<int>(api::threads()); }
bool threads_supported() { return api::threads_supported(); }

}  // namespace

// Every task's contract (api/contract.h) as JSON text: wasm/pipelines/contract.js checks options against it.
std::string contracts() {
  return guarded([] { return attnlens::api::contracts_json(); });
}

EMSCRIPTEN_BINDINGS(attnlens) {
  emscripten::function("contracts", &contracts);
  emscripten::function("version", &version);
  emscripten::function("simdBackend", &simd_backend);
  emscripten::function("setThreads", &set_threads);
  emscripten::function("threads", &threads);
  emscripten::function("threadsSupported", &threads_supported);
  emscripten::function("heapStats", &heap_stats);
  emscripten::function("hasError", &has_error);
  emscripten::function("takeError", &take_error);
#ifndef ATTNLENS_WASM_NO_LAB
  emscripten::function("listOps", &list_ops);
  emscripten::function("runOp", &run_op);
  emscripten::class_<KvCacheBinding>("MultiHeadKvCache")
      .constructor(&make_kv_cache, emscripten::allow_raw_pointers())
      .function("append", &KvCacheBinding::append)
      .function("attend", &KvCacheBinding::attend)
      .function("length", &KvCacheBinding::length)
      .function("capacity", &KvCacheBinding::capacity)
      .function("clear", &KvCacheBinding::clear);
  emscripten::class_<BpeBinding>("BpeTokenizer")
      .class_function("fromText", &bpe_from_text, emscripten::allow_raw_pointers())
      .class_function("fromJson", &bpe_from_json, emscripten::allow_raw_pointers())
      .class_function("learn", &bpe_learn, emscripten::allow_raw_pointers())
      .function("encode", &BpeBinding::encode)
      .function("decode", &BpeBinding::decode)
      .function("vocabSize", &BpeBinding::vocab_size)
      .function("numMerges", &BpeBinding::num_merges)
      .function("toJson", &BpeBinding::to_json);
  emscripten::function("tokenizeWords", &tokenize_words);
#endif
}
