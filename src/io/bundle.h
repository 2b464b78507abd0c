// Model bundle: a directory (or, in the WASM build, the same files as in-memory buffers) holding
//   config.json          {"architecture": <registered name>, "version": <int, optional>, ...model fields}
//   weights.safetensors  the weights (io/safetensors.h; validated completely on load)
//   vocabulary files     e.g. src.vocab / src.merges (BPE, text/bpe.h) or words.txt (text/words.h), read by name
//
// Loading validates: the files exist and are readable, config.json parses and is an object, "architecture" is a
// string naming a registered architecture, and the weights pass every safetensors check. Models then ask for each
// tensor with the shape their config implies — `tensor(name, shape)` — and a missing tensor, a wrong shape or an
// integer dtype fails with "weights.safetensors in <dir>: tensor '<name>' ...". Vocabulary file names are plain
// names inside the bundle (no directories, no ".."), so a config can never make the loader read elsewhere.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/config.h"
#include "kernels/kernels.h"
#include "io/safetensors.h"

namespace attnlens::io {

// The architectures a bundle may declare; models register nothing at run time, the list lives here.
const std::vector<std::string>& known_architectures();

// The int8 rule shared with scripts/quantize.mjs: 2-D float weights of at least this many values get per-row int8
// codes (s = max|row| / 127 in float32, q = round-half-even(w / s) in [−127, 127]); smaller ones stay float.
constexpr std::size_t kInt8MinValues = 1024;

class Bundle {
 public:
  Bundle() = default;
  static Bundle load(const std::string& dir);
  // The WASM build receives bytes from JS fetch: config.json text, the weights file, and the other files by name.
  // `name` stands for the directory in messages.
  static Bundle from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                            std::map<std::string, std::string> files = {}, const std::string& name = "<memory>");

  const std::string& name() const { return name_; }
  const nlohmann::json& config() const { return config_; }
  const std::string& architecture() const { return architecture_; }
  const SafeTensors& weights() const { return weights_; }

  bool has_tensor(const std::string& tensor_name) const { return weights_.contains(tensor_name); }
  // The tensor as floats, after checking that it exists, is a float tensor and has exactly `expected_shape`.
  std::vector<float> tensor(const std::string& tensor_name, const std::vector<std::size_t>& expected_shape) const;
  // An I8 tensor is int8 codes with per-row float scales in "<name>.qscale" [rows] (scripts/quantize.mjs): tensor()
  // returns code·scale.
  // With weight_precision "int8", a float 2-D tensor of at least kInt8MinValues values is returned rounded through
  // its per-row int8 codes (kernels::round_through_int8), exactly as scripts/quantize.mjs would have stored it.
  // How the model keeps the weights a step reads (config "weight_precision": "f32", the default, or "int8":
  // kernels::pack_rows with per-row int8 codes; the int8 bundles carry it).
  kernels::Precision weight_precision() const;
  // Integer tensors (I32/I64), same checks.
  std::vector<std::int64_t> int_tensor(const std::string& tensor_name,
                                       const std::vector<std::size_t>& expected_shape) const;

  // After a model has taken its tensors: fails naming the first tensor of the file that no tensor()/int_tensor()
  // call asked for — an exported name the model does not know (a typo, or a bundle for another configuration).
  void check_all_tensors_used() const;

  // Contents of another file of the bundle (vocabularies); Error when missing or the name is not a plain name.
  std::string file(const std::string& file_name) const;
  bool has_file(const std::string& file_name) const;

  // Config helpers with errors that name config.json and the key.
  ConfigObject config_object() const { return ConfigObject(config_, "config.json in " + name_); }
  int config_int(const std::string& key) const;
  std::string config_string(const std::string& key) const;

 private:
  static Bundle from_parts(const std::string& config_json, std::vector<std::uint8_t> weights,
                           const std::string& name);
  void check_shape(const std::string& tensor_name, const std::vector<std::size_t>& expected_shape) const;

  std::string name_;
  std::string dir_;  // empty for in-memory bundles
  nlohmann::json config_;
  std::string architecture_;
  SafeTensors weights_;
  std::map<std::string, std::string> files_;  // in-memory bundles only
  mutable std::set<std::string> requested_;   // tensors asked for so far (check_all_tensors_used)
};

}  // namespace attnlens::io
