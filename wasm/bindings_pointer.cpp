// Embind bindings of api::PointerSorter (src/api/pointer.h); wasm/pipelines/pointer.js wraps them as the
// 'number-sorting' pipeline. Bytes in, plain objects out (results copied out of the heap), every C++ exception
// turned into a JS Error by guarded().
#include "bindings_common.h"

using emscripten::val;
namespace api = attnlens::api;
using namespace attnlens::wasm_bind;

namespace {

class PointerSortBinding {
 public:
  explicit PointerSortBinding(std::unique_ptr<api::PointerSorter> sorter) : sorter_(std::move(sorter)) {}

  // values: a Float64Array (wasm/pipelines/pointer.js checks and converts what the caller gave) → plain object.
  val sort(const val& values, const std::string& params_json) const {
    return guarded([&] {
      attnlens::require(values.instanceof(val::global("Float64Array")), "PointerSorter.sort: values must be a Float64Array");
      const std::vector<double> v = emscripten::convertJSArrayToNumberVector<double>(values);
      return to_js(sorter_->sort(v, api::pointer_sort_params(params_json)));
    });
  }
  double max_length() const { return static_cast<double>(sorter_->max_length()); }

 private:
  std::unique_ptr<api::PointerSorter> sorter_;
};

// fromBundle(configText, weights: Uint8Array, name)
PointerSortBinding* from_bundle(const std::string& config_text, const std::string& weights, const std::string& name) {
  return guarded([&] {
    auto sorter = api::PointerSorter::from_memory(config_text, js_bytes(weights), js_bundle_name(name));
    return new PointerSortBinding(std::move(sorter));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_pointer) {
  emscripten::class_<PointerSortBinding>("PointerSorter")
      .class_function("fromBundle", &from_bundle, emscripten::allow_raw_pointers())
      .function("sort", &PointerSortBinding::sort)
      .function("maxLength", &PointerSortBinding::max_length);
}
