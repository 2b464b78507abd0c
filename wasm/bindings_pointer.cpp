// Embind bindings of api::PointerSorter (src/api/pointer.h); wasm/pipelines/pointer.js wraps them as the
// 'number-sorting' pipeline. Bytes in, plain objects out (results copied out of the heap), every C++ exception
// turned into a JS Error by guarded().
#include "bindings_common.h"

using namespace attnlens::wasm_bind;  // also val and api

namespace {

class PointerSortBinding : public ModelBinding<api::PointerSorter> {
 public:
  using ModelBinding::ModelBinding;

  // values: a Float64Array (wasm/pipelines/pointer.js checks and converts what the caller gave) → plain object.
  val sort(const val& values, const std::string& params_json) const {
    return guarded([&] {
      attnlens::require(values.instanceof(val::global("Float64Array")), "PointerSorter.sort: values must be a Float64Array");
      const std::vector<double> v = emscripten::convertJSArrayToNumberVector<double>(values);
      return to_js(model_->sort(v, api::pointer_sort_params(params_json)));
    });
  }
  double max_length() const { return static_cast<double>(model_->max_length()); }

  static constexpr const char* kJsName = "PointerSorter";  // errors name it, bind_class registers it
};

// fromBundle(configText, weights: Uint8Array, name)
PointerSortBinding* from_bundle(const std::string& config_text, const std::string& weights, const std::string& name) {
  return new_binding<PointerSortBinding>("fromBundle", [&](const std::string&) {
    return api::PointerSorter::from_memory(config_text, js_bytes(weights), js_bundle_name(name));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_pointer) {
  using B = PointerSortBinding;
  bind_class<B>("fromBundle", &from_bundle, "sort", &B::sort, "maxLength", &B::max_length);
}
