// Helpers shared by every Embind translation unit (wasm/bindings*.cpp): JS tensors <-> api::Tensor, and guarded(),
// which turns any C++ exception into a JS Error. Each task adds its own bindings_<task>.cpp with its own
// EMSCRIPTEN_BINDINGS block; wasm/CMakeLists.txt links every wasm/bindings*.cpp into the one module.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/em_asm.h>
#include <emscripten/val.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "api.h"

namespace attnlens::wasm_bind {

using emscripten::val;
namespace api = attnlens::api;

// Throws a JS Error carrying `message`. The text is first copied into a static buffer so that no C++ object with a
// destructor is alive when JS unwinds through the WASM frames (their destructors would never run: a leak).
[[noreturn]] inline void throw_js_error(const char* message) {
  static char buffer[4096];
  std::strncpy(buffer, message, sizeof(buffer) - 1);
  buffer[sizeof(buffer) - 1] = '\0';
  EM_ASM({ throw new Error(UTF8ToString($0)); }, buffer);
  __builtin_unreachable();
}

// Runs `fn` and turns every C++ exception into a JS Error. By the time the JS Error is thrown, the C++ exception
// has been released (its catch block has ended) and fn's locals have been destroyed by normal C++ unwinding.
template <typename Fn>
auto guarded(Fn&& fn) -> decltype(fn()) {
  static char message[4096];
  try {
    return fn();
  } catch (const attnlens::Error& e) {
    std::snprintf(message, sizeof(message), "%s", e.what());
  } catch (const std::bad_alloc&) {
    std::snprintf(message, sizeof(message), "attnlens: out of memory (the inputs are too large for this WebAssembly heap)");
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "attnlens internal error: %s", e.what());
  } catch (...) {
    std::snprintf(message, sizeof(message), "attnlens internal error: an unknown C++ exception");
  }
  throw_js_error(message);
}

inline api::Tensor tensor_from_js(const std::string& op, const std::string& key, const val& js) {
  const std::string name = op + ": input '" + key + "'";
  attnlens::require(js.typeOf().as<std::string>() == "object" && !js.isNull(),
                    name + " must be an object {dims, data}");
  const val dims = js["dims"];
  const val data = js["data"];
  attnlens::require(dims.isArray(), name + ": dims must be an array of non-negative integers");
  attnlens::require(data.instanceof(val::global("Float32Array")), name + ": data must be a Float32Array");
  api::Tensor t;
  const std::size_t rank = dims["length"].as<std::size_t>();
  for (std::size_t i = 0; i < rank; ++i) {
    const double d = dims[i].as<double>();
    attnlens::require(d >= 0 && d == static_cast<double>(static_cast<std::size_t>(d)),
                      name + ": dims must be non-negative integers");
    t.dims.push_back(static_cast<std::size_t>(d));
  }
  // One memcpy-like TypedArray.set into the vector's storage (no per-element calls).
  t.data = emscripten::convertJSArrayToNumberVector<float>(data);
  t.validate(name);
  return t;
}

inline val tensor_to_js(const api::Tensor& t) {
  val out = val::object();
  val dims = val::array();
  for (std::size_t d : t.dims) dims.call<void>("push", static_cast<double>(d));
  out.set("dims", dims);
  // slice() copies into a Float32Array that owns its own buffer, outside the WASM heap.
  out.set("data", val(emscripten::typed_memory_view(t.data.size(), t.data.data())).call<val>("slice"));
  return out;
}

inline api::TensorMap tensor_map_from_js(const std::string& op, const val& js) {
  attnlens::require(js.typeOf().as<std::string>() == "object" && !js.isNull(),
                    op + ": inputs must be an object mapping names to {dims, data}");
  api::TensorMap map;
  const val keys = val::global("Object").call<val>("keys", js);
  const std::size_t n = keys["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = keys[i].as<std::string>();
    map.emplace(key, tensor_from_js(op, key, js[key]));
  }
  return map;
}

inline val tensor_map_to_js(const api::TensorMap& map) {
  val out = val::object();
  for (const auto& [name, t] : map) out.set(name, tensor_to_js(t));
  return out;
}

}  // namespace attnlens::wasm_bind
