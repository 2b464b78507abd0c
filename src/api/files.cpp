// attnlens C++ API: bundles and image files (see api/files.h).
#include "api/files.h"

#include <utility>

#include "image/pnm.h"
#include "io/bundle.h"
#include "io/safetensors.h"

namespace attnlens::api {

BundleSummary inspect_bundle(const std::string& dir) {
  const auto bundle = io::Bundle::load(dir);
  const auto& w = bundle.weights();
  BundleSummary out;
  out.architecture = bundle.architecture();
  for (const auto& name : w.names()) {
    const auto& info = w.info(name);
    TensorSummary t;
    t.name = name;
    t.dtype = io::dtype_name(info.dtype);
    t.shape = info.shape;
    t.shape_text = io::shape_to_string(info.shape);
    t.values = info.element_count();
    out.values += t.values;
    out.tensors.push_back(std::move(t));
  }
  return out;
}

DecodedImage decode_pnm(const std::string& bytes, const std::string& what) {
  image::DecodedImage img = image::decode_pnm(bytes, what);
  DecodedImage out;
  out.width = img.width;
  out.height = img.height;
  out.channels = img.channels;
  out.pixels = std::move(img.pixels);
  return out;
}

}  // namespace attnlens::api
