// Helpers shared by every Embind translation unit (wasm/bindings*.cpp): JS tensors <-> api::Tensor, traces, bundles
// and images (pixels, grids) from JS, and guarded(), which turns any C++ exception into a JS Error. Each task adds
// its own bindings_<task>.cpp with its own EMSCRIPTEN_BINDINGS block; wasm/CMakeLists.txt links every
// wasm/bindings*.cpp into the one module.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "api.h"
#include "image/preprocess.h"

namespace attnlens::wasm_bind {

using emscripten::val;
namespace api = attnlens::api;

// Errors reach JS without unwinding through WebAssembly. A JS exception thrown from inside an Embind call would
// skip everything that is released on the way out: Embind's own copies of the arguments (every std::string
// argument is a heap copy in the invoker's frame) and the JS side's wire buffers, freed only after a normal return.
// Every failed call leaked them (16 bytes for an empty string; 2·length + 16 for a long one; tests/node/memory.test.mjs).
// So guarded() catches every C++ exception, records its message here and returns normally with an empty value;
// wasm/core.js wraps every bound function, asks hasError() after each call and throws the JS Error itself.
inline char* error_buffer() {
  static char buffer[4096] = {0};
  return buffer;
}
inline bool& error_pending() {
  static bool pending = false;
  return pending;
}
inline void record_error(const char* message) {
  std::snprintf(error_buffer(), 4096, "%s", message);
  error_pending() = true;
}
// takeError(): the message of the last failed call (and clears it); hasError(): whether there is one.
inline bool has_error() { return error_pending(); }
inline std::string take_error() {
  error_pending() = false;
  return std::string(error_buffer());
}

// The value a failed call returns to JS (wasm/core.js throws before anyone sees it).
template <typename R>
R failed_value() {
  if constexpr (std::is_void_v<R>) {
    return;
  } else if constexpr (std::is_same_v<R, val>) {
    return val::undefined();
  } else {
    return R{};
  }
}

// Runs `fn` and turns every C++ exception into a recorded error (see above): fn's locals are destroyed by normal
// C++ unwinding, the exception is released when its catch block ends, and the call returns normally.
template <typename Fn>
auto guarded(Fn&& fn) -> decltype(fn()) {
  using R = decltype(fn());
  try {
    return fn();
  } catch (const attnlens::Error& e) {
    record_error(e.what());
  } catch (const std::bad_alloc&) {
    record_error("attnlens: out of memory (the inputs are too large for this WebAssembly heap)");
  } catch (const std::exception& e) {
    char message[4096];
    std::snprintf(message, sizeof(message), "attnlens internal error: %s", e.what());
    record_error(message);
  } catch (...) {
    record_error("attnlens internal error: an unknown C++ exception");
  }
  return failed_value<R>();
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

// A typed array copy of a vector (outside the WASM heap, so it stays valid when the heap grows).
template <typename T>
val js_copy(const std::vector<T>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

// A JS array of strings (tokens, labels).
inline val string_array(const std::vector<std::string>& v) {
  val out = val::array();
  for (const auto& s : v) out.call<void>("push", s);
  return out;
}

// A trace as JS reads it (wasm/trace.js AttentionMaps): { kinds: string[], index: Int32Array, values:
// Float32Array } — the arena copied out of the WASM heap once (values) and its index, 10 int32 per map: kind,
// layer, head, step, rank, dims ×4, offset. Three JS objects per trace, whatever its number of maps.
inline val js_maps(const attnlens::AttentionTrace& trace) {
  const auto& entries = trace.entries();
  std::vector<std::int32_t> index(entries.size() * 10, 0);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    std::int32_t* row = index.data() + i * 10;
    attnlens::require(e.offset + e.count <= static_cast<std::size_t>(INT32_MAX),
                      "attention maps: more values than a JS index holds");
    row[0] = e.kind;
    row[1] = e.layer;
    row[2] = e.head;
    row[3] = e.step;
    row[4] = e.rank;
    for (int r = 0; r < e.rank; ++r) row[5 + r] = static_cast<std::int32_t>(e.dims[static_cast<std::size_t>(r)]);
    row[9] = static_cast<std::int32_t>(e.offset);
  }
  val out = val::object();
  out.set("kinds", string_array(trace.kinds()));
  out.set("index", js_copy(index));
  out.set("values", js_copy(trace.values()));
  return out;
}

// An image width/height/channel count from JS (a double): a non-negative integer, else an Error naming it.
inline std::size_t js_dimension(double v, const char* what) {
  attnlens::require(v >= 0 && v <= 1e9 && v == static_cast<double>(static_cast<std::size_t>(v)),
                    std::string("image ") + what + " must be a non-negative integer");
  return static_cast<std::size_t>(v);
}

// Pixels from JS, checked (every call that takes an image): a Uint8Array or Uint8ClampedArray of exactly
// width·height·channels bytes, with dimensions the image preprocessing accepts. `what` names the call in errors.
struct JsPixels {
  std::size_t width, height, channels, stride;  // stride = width·channels, the bytes of one row
};
inline JsPixels js_pixels(const val& data, double width, double height, double channels, const std::string& what) {
  const std::size_t w = js_dimension(width, "width"), h = js_dimension(height, "height");
  const std::size_t c = js_dimension(channels, "channels");
  attnlens::require(data.instanceof(val::global("Uint8Array")) || data.instanceof(val::global("Uint8ClampedArray")),
                    what + ": the pixels must be a Uint8Array or Uint8ClampedArray");
  attnlens::image::check_image_dims(w, h, c);
  const double length = data["length"].as<double>();
  const double needed = static_cast<double>(w) * static_cast<double>(h) * static_cast<double>(c);
  attnlens::require(length == needed, what + ": the pixel buffer holds " + std::to_string(static_cast<long long>(length)) +
                                          " bytes but a " + std::to_string(w) + "x" + std::to_string(h) +
                                          " image with " + std::to_string(c) + " channels needs exactly " +
                                          std::to_string(static_cast<long long>(needed)));
  return {w, h, c, w * c};
}

// Row y of checked JS pixels, copied into `row` (stride bytes, the caller's buffer): only the rows an image resize
// asks for cross into the heap, never the whole image. `data` and `row` must outlive the reader.
inline std::function<const std::uint8_t*(std::size_t)> js_row_reader(const val& data, std::size_t stride,
                                                                     std::vector<std::uint8_t>& row) {
  return [&data, stride, &row](std::size_t y) {
    const val src = data.call<val>("subarray", static_cast<double>(y * stride), static_cast<double>((y + 1) * stride));
    // the view is made right before the copy: nothing can grow the heap in between
    val(emscripten::typed_memory_view(stride, row.data())).call<void>("set", src);
    return static_cast<const std::uint8_t*>(row.data());
  };
}

// An image encoder's grid from JS (a Float32Array of gh·gw·D values, D following from its length) as a Tensor
// [gh, gw, D]. `what` names the call in errors.
inline api::Tensor js_grid(const val& grid, std::size_t gh, std::size_t gw, const std::string& what) {
  attnlens::require(grid.instanceof(val::global("Float32Array")), what + ": the grid must be a Float32Array");
  const double len = grid["length"].as<double>();
  attnlens::require(gh > 0 && gw > 0 && len > 0 && std::fmod(len, static_cast<double>(gh * gw)) == 0.0,
                    what + ": the grid length must be a positive multiple of grid height * grid width");
  return api::Tensor({gh, gw, static_cast<std::size_t>(len) / (gh * gw)},
                     emscripten::convertJSArrayToNumberVector<float>(grid));
}

// ---- results: any struct that lists its fields (fields(f), api/contract.h) → a plain JS object ---------------------
// Keys are the field names (snake_case, as the package publishes them); values are copied out of the heap:
// strings and numbers as they are, vector<float> / vector<int> as a Float32Array / Int32Array, other numeric
// vectors and std::arrays (double, size_t) as an Array of numbers, vector<string> as an Array of strings, an
// AttentionTrace as js_maps() (the form wasm/trace.js AttentionMaps takes), a struct with fields() as an object (as
// an Array of its fields when it declares kAsArray; an omitted Omittable field is no key), and a vector of those as
// an Array.
using attnlens::api::for_each_published;
using attnlens::api::has_fields;
using attnlens::api::is_vector;
using attnlens::api::kUnknownFieldType;

template <class T>
val to_js(const T& v) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
    return val(v);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return val(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, attnlens::AttentionTrace>) {
    return js_maps(v);
  } else if constexpr (has_fields<T>::value && attnlens::api::as_array<T>::value) {
    val out = val::array();
    for_each_published(v, [&out](const char*, const auto& x) { out.call<void>("push", to_js(x)); });
    return out;
  } else if constexpr (has_fields<T>::value) {
    val out = val::object();
    for_each_published(v, [&out](const char* name, const auto& x) {
      using X = std::decay_t<decltype(x)>;
      if constexpr (attnlens::api::is_list_or_self<X>::value) {
        if (!x.self) {
          out.set(val(name), to_js(x.list));
          return;
        }
        val list = val::array();  // [the record itself]: a shallow copy of the fields set so far
        list.call<void>("push", val::global("Object").call<val>("assign", val::object(), out));
        out.set(val(name), list);
      } else {
        out.set(val(name), to_js(x));
      }
    });
    return out;
  } else if constexpr (is_vector<T>::value || attnlens::api::is_std_array<T>::value) {
    using E = typename T::value_type;
    if constexpr (std::is_same_v<E, float> || std::is_same_v<E, std::int32_t>) {
      return js_copy(v);
    } else if constexpr (std::is_same_v<E, std::string>) {
      return string_array(v);
    } else {
      val out = val::array();
      for (const auto& x : v) out.call<void>("push", to_js(x));
      return out;
    }
  } else {
    static_assert(kUnknownFieldType<T>, "to_js: a result field of a type the converter does not know");
  }
}

// A list of results → a JS array of result objects.
template <class Result>
val to_js_list(const std::vector<Result>& results) {
  val out = val::array();
  for (const auto& r : results) out.call<void>("push", to_js(r));
  return out;
}

// A bundle's weights handed over from JS (Embind gives a Uint8Array as a std::string) as the engine's bytes.
inline std::vector<std::uint8_t> js_bytes(const std::string& s) {
  return std::vector<std::uint8_t>(s.begin(), s.end());
}

// The name a bundle handed over from JS goes by in errors ("<memory>" when JS gave none).
inline std::string js_bundle_name(const std::string& name) {
  return name.empty() ? std::string("<memory>") : name;
}

// The files of a bundle handed over from JS ({[name]: string | Uint8Array}) as a name → bytes map.
inline std::map<std::string, std::string> js_bundle_files(const val& files, const std::string& what) {
  attnlens::require(files.typeOf().as<std::string>() == "object" && !files.isNull(),
                    what + ": files must be an object mapping file names to contents");
  std::map<std::string, std::string> out;
  const val keys = val::global("Object").call<val>("keys", files);
  const std::size_t n = keys["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = keys[i].as<std::string>();
    const val v = files[key];
    if (v.typeOf().as<std::string>() != "string")
      attnlens::require(v.instanceof(val::global("Uint8Array")) || v.instanceof(val::global("ArrayBuffer")),
                        what + ": bundle file '" + key + "' must be a string or a Uint8Array");
    out.emplace(key, v.as<std::string>());
  }
  return out;
}

// What every task's binding class holds: its model (Embind owns the binding, the binding owns the model).
template <typename Model>
class ModelBinding {
 public:
  explicit ModelBinding(std::unique_ptr<Model> model) : model_(std::move(model)) {}

 protected:
  std::unique_ptr<Model> model_;
};

// The body of every task's factory (fromBundle, fromBundles): runs make(what) under guarded() and wraps the model
// it returns in a new Binding (Embind owns it). `what` ("Translator.fromBundle") names the call in errors.
template <typename Binding, typename Make>
Binding* new_binding(const char* factory, Make&& make) {
  return guarded([&] { return new Binding(make(std::string(Binding::kJsName) + "." + factory)); });
}

// fromBundles(configText, weights, files: {[name]: string | Uint8Array}, encoderConfigText, encoderWeights, name)
// of the tasks whose model comes as two bundles, a decoder and its image encoder (Captioner, VisualQA): Model's
// from_memory over the bytes.
template <typename Binding, typename Model>
Binding* from_two_bundles(const std::string& config_text, const std::string& weights, const val& files,
                          const std::string& encoder_config_text, const std::string& encoder_weights,
                          const std::string& name) {
  return new_binding<Binding>("fromBundles", [&](const std::string& what) {
    return Model::from_memory(config_text, js_bytes(weights), js_bundle_files(files, what), encoder_config_text,
                              js_bytes(encoder_weights), js_bundle_name(name));
  });
}

// Registers a task's binding class under Binding::kJsName: its factory (a class function taking raw pointers out)
// and its methods, given as name, member pointer, name, member pointer, … — one registration for every task.
template <typename Binding>
void bind_methods(const emscripten::class_<Binding>&) {}
template <typename Binding, typename Method, typename... Rest>
void bind_methods(const emscripten::class_<Binding>& c, const char* name, Method method, Rest... rest) {
  c.function(name, method);
  bind_methods(c, rest...);
}
template <typename Binding, typename Factory, typename... Methods>
void bind_class(const char* factory_name, Factory factory, Methods... methods) {
  const emscripten::class_<Binding> c(Binding::kJsName);
  c.class_function(factory_name, factory, emscripten::allow_raw_pointers());
  bind_methods(c, methods...);
}

}  // namespace attnlens::wasm_bind
