// Embind bindings every WASM module of the package carries (the shipped modules and the converted models' module,
// wasm/CMakeLists.txt): what wasm/core.js asks of any module it loads — the recorded error of the last call
// (hasError/takeError, bindings_common.h), the tasks' contracts (wasm/pipelines/contract.js), the version, the SIMD
// path, the threads and the allocator's counts. The ops catalogue, the KV cache and the tokenizers are in
// bindings.cpp (the shipped modules only).
#include <emscripten/heap.h>
#include <malloc.h>

#include "bindings_common.h"

namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

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

// Every task's contract (api/contract.h) as JSON text: wasm/pipelines/contract.js checks options against it.
std::string contracts() {
  return guarded([] { return api::contracts_json(); });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_module) {
  emscripten::function("contracts", &contracts);
  emscripten::function("version", &version);
  emscripten::function("simdBackend", &simd_backend);
  emscripten::function("setThreads", &set_threads);
  emscripten::function("threads", &threads);
  emscripten::function("threadsSupported", &threads_supported);
  emscripten::function("heapStats", &heap_stats);
  emscripten::function("hasError", &has_error);
  emscripten::function("takeError", &take_error);
}
