#include "io/bundle.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "common.h"

namespace attnlens::io {

namespace {

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  require(static_cast<bool>(in), what + ": cannot open '" + path + "' for reading (is the bundle complete?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  require(!in.bad(), what + ": error while reading '" + path + "'");
  return ss.str();
}

std::vector<std::uint8_t> read_binary_file(const std::string& path, const std::string& what) {
  const std::string s = read_text_file(path, what);
  return std::vector<std::uint8_t>(s.begin(), s.end());
}

bool is_plain_name(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos &&
         n.find('\\') == std::string::npos && n.find('\0') == std::string::npos;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

const std::vector<std::string>& known_architectures() {
  static const std::vector<std::string> names = {"rnn-seq2seq",         "transformer-seq2seq", "show-attend-tell",
                                                 "selfattn-classifier", "relation-classifier", "test-tiny",
                                                 "mobilenet-v2",        "pointer-sort",        "vqa",
                                                 "hf-gpt2",             "hf-marian",
                                                 "hf-bert",             "hf-distilbert",       "hf-vit"};
  return names;
}

Bundle Bundle::from_parts(const std::string& config_json, std::vector<std::uint8_t> weights, const std::string& name) {
  const std::string cfg = "config.json in " + name;
  Bundle b;
  b.name_ = name;
  try {
    b.config_ = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(cfg + ": not valid JSON (" + e.what() + ")");
  }
  require(b.config_.is_object(), cfg + ": must be a JSON object");
  require(b.config_.contains("architecture") && b.config_["architecture"].is_string(),
          cfg + ": \"architecture\" is missing or not a string (known: " + join(known_architectures()) + ")");
  b.architecture_ = b.config_["architecture"].get<std::string>();
  const auto& known = known_architectures();
  require(std::find(known.begin(), known.end(), b.architecture_) != known.end(),
          cfg + ": unknown architecture '" + b.architecture_ + "' (known: " + join(known) + ")");
  if (b.config_.contains("version"))
    require(b.config_["version"].is_number_integer(), cfg + ": \"version\" must be an integer");
  b.weights_ = SafeTensors::from_buffer(std::move(weights), "weights.safetensors in " + name);
  return b;
}

Bundle Bundle::load(const std::string& dir) {
  require(!dir.empty(), "model bundle: the directory name is empty");
  const std::string base = dir.back() == '/' ? dir : dir + "/";
  const std::string config = read_text_file(base + "config.json", "model bundle " + dir);
  std::vector<std::uint8_t> weights = read_binary_file(base + "weights.safetensors", "model bundle " + dir);
  Bundle b = from_parts(config, std::move(weights), dir);
  b.dir_ = base;
  return b;
}

Bundle Bundle::from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                           std::map<std::string, std::string> files, const std::string& name) {
  for (const auto& [file_name, contents] : files)
    require(is_plain_name(file_name), "model bundle " + name + ": file name '" + file_name +
                                          "' must be a plain name without directories");
  Bundle b = from_parts(config_json, std::move(weights), name);
  b.files_ = std::move(files);
  return b;
}

void Bundle::check_shape(const std::string& tensor_name, const std::vector<std::size_t>& expected_shape) const {
  requested_.insert(tensor_name);
  const std::string what = "weights.safetensors in " + name_ + ": tensor '" + tensor_name + "'";
  require(weights_.contains(tensor_name),
          what + " is missing (the " + architecture_ + " model needs it with shape " +
              shape_to_string(expected_shape) + ")");
  const TensorInfo& t = weights_.info(tensor_name);
  require(t.shape == expected_shape, what + " has shape " + shape_to_string(t.shape) + " but the " + architecture_ +
                                         " model with this config.json expects " + shape_to_string(expected_shape));
}

std::vector<float> Bundle::tensor(const std::string& tensor_name, const std::vector<std::size_t>& expected_shape) const {
  check_shape(tensor_name, expected_shape);
  const TensorInfo& t = weights_.info(tensor_name);
  if (t.dtype != DType::kI8) {
    std::vector<float> v = weights_.to_float(tensor_name);
    // An int8 model (weight_precision "int8") on float32 weights: every matrix scripts/quantize.mjs would store as
    // int8 is rounded through its int8 codes here, so that the same model results from either route.
    if (t.shape.size() == 2 && v.size() >= kInt8MinValues && weight_precision() == kernels::Precision::int8)
      kernels::round_through_int8(v.data(), t.shape[0], t.shape[1]);
    return v;
  }
  // int8 codes with one float scale per row (scripts/quantize.mjs): value = code · scale[row]. A row is the first
  // dimension: a matrix's output row, or a convolution's output channel ([out, in, kh, kw] → rows of in·kh·kw).
  const std::string what = "weights.safetensors in " + name_ + ": int8 tensor '" + tensor_name + "'";
  require(t.shape.size() >= 2, what + " must have at least 2 dimensions (per-row scales)");
  const std::string scale_name = tensor_name + ".qscale";
  require(weights_.contains(scale_name), what + " has no '" + scale_name + "' (its per-row scales)");
  check_shape(scale_name, {t.shape[0]});
  const std::vector<float> scale = weights_.to_float(scale_name);
  std::size_t cols = 1;
  for (std::size_t k = 1; k < t.shape.size(); ++k) cols *= t.shape[k];
  const auto* q = reinterpret_cast<const std::int8_t*>(weights_.data(tensor_name));
  std::vector<float> out(t.shape[0] * cols);
  for (std::size_t r = 0; r < t.shape[0]; ++r) {
    require(std::isfinite(scale[r]) && scale[r] >= 0.0f, what + ": scale of row " + std::to_string(r) +
                                                              " is negative or not finite");
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = static_cast<float>(q[r * cols + c]) * scale[r];
  }
  return out;
}

kernels::Precision Bundle::weight_precision() const {
  if (!config_.contains("weight_precision")) return kernels::Precision::f32;
  const auto& v = config_["weight_precision"];
  require(v.is_string() && (v == "f32" || v == "int8"),
          "config.json in " + name_ + ": \"weight_precision\" must be \"f32\" or \"int8\"");
  return v == "int8" ? kernels::Precision::int8 : kernels::Precision::f32;
}

std::vector<std::int64_t> Bundle::int_tensor(const std::string& tensor_name,
                                             const std::vector<std::size_t>& expected_shape) const {
  check_shape(tensor_name, expected_shape);
  return weights_.to_int64(tensor_name);
}

void Bundle::check_all_tensors_used() const {
  for (const auto& name : weights_.names())
    require(requested_.count(name) != 0, "weights.safetensors in " + name_ + ": tensor '" + name +
                                             "' is not used by the " + architecture_ +
                                             " model (misnamed, or exported for another configuration?)");
}

bool Bundle::has_file(const std::string& file_name) const {
  if (!is_plain_name(file_name)) return false;
  if (dir_.empty()) return files_.count(file_name) != 0;
  std::ifstream in(dir_ + file_name, std::ios::binary);
  return static_cast<bool>(in);
}

std::string Bundle::file(const std::string& file_name) const {
  require(is_plain_name(file_name), "model bundle " + name_ + ": file name '" + file_name +
                                        "' must be a plain name without directories");
  if (dir_.empty()) {
    auto it = files_.find(file_name);
    require(it != files_.end(), "model bundle " + name_ + ": file '" + file_name + "' was not provided");
    return it->second;
  }
  return read_text_file(dir_ + file_name, "model bundle " + name_);
}

int Bundle::config_int(const std::string& key) const {
  const std::string cfg = "config.json in " + name_;
  require(config_.contains(key), cfg + ": \"" + key + "\" is missing");
  const auto& v = config_[key];
  require(v.is_number_integer(), cfg + ": \"" + key + "\" must be an integer, got " + v.dump());
  const auto i = v.get<std::int64_t>();
  require(i >= std::numeric_limits<int>::min() && i <= std::numeric_limits<int>::max(),
          cfg + ": \"" + key + "\" is out of range: " + v.dump());
  return static_cast<int>(i);
}

std::string Bundle::config_string(const std::string& key) const {
  const std::string cfg = "config.json in " + name_;
  require(config_.contains(key), cfg + ": \"" + key + "\" is missing");
  const auto& v = config_[key];
  require(v.is_string(), cfg + ": \"" + key + "\" must be a string, got " + v.dump());
  return v.get<std::string>();
}

}  // namespace attnlens::io
