// Structure-aware bundle loading: valid tiny bundles (tests/fuzz/tiny/) with their config values, tensors and
// safetensors header edited, loaded and run through the public API.
//   byte 0: the template (its low three bits: one of the eight tiny decoders and classifiers) and, in its top two
//   bits, bits 8–9 of the knob; byte 1: bits 0–7 of the knob, how the model is run afterwards (tiny_bundles.h,
//   run(): beams, lengths, maps, the text, an align() call);
//   then edits of 4 bytes each [op, a, b, c], applied in order:
//     config (op % 16 in 0..6): at the a-th JSON path of the config (every object key and array element, depth
//       first), set an interesting value (b), add a small delta (b − 128) to a number, delete the key, set a
//       small integer (b), set a number b·10^(c − 128), swap the value's type (string ↔ number ↔ array), or
//       rename the key;
//     weights (7..12): after weights are built for the edited config, on the a-th tensor: change its dtype, one
//       dimension (± 1, or 0), add or drop a dimension, drop it, rename it, add an unused tensor, or set element
//       b·256+c to NaN, ±Inf, 1e30 or a subnormal;
//     header (13..15): after the file is written: shift one tensor's data_offsets, change a header shape or dtype
//       without touching the data, add __metadata__ of any type, cut or extend the data region.
// Checks: no exception but attnlens::Error; no sanitizer report; bounded time and memory.
// Not here: the real MobileNetV2 (3.5 M weights, ~0.2 s a load under ASan, 15–25× a tiny model, and ~70 % of this
// harness's time when it was in). Its fixed-shape weights cannot be made tiny, and tensor or header edits of them
// were never run (rebuilding them per input is slower still), so what it added here was config edits over its real
// weights: fuzz_model_config does exactly that (the encoder template, and the full captioner for a quarter of the
// captioning inputs), fuzz_bundle_bytes mutates its files' bytes. A config edited to name mobilenet-v2 here gets
// the template's own tensors (the loader refuses them at the first one it needs).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tiny_bundles.h"

namespace {

using nlohmann::json;

void collect_paths(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const auto p = at / it.key();
      out.push_back(p);
      collect_paths(*it, p, out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = at / i;
      out.push_back(p);
      collect_paths(j[i], p, out);
    }
  }
}

json interesting(std::uint8_t b) {
  static const std::vector<json> values = {
      0, 1, -1, 2, 3, 4, 7, 8, 16, 64, 65, 255, 256, 1000, 65535, 65536, 65537, 1 << 20, 2147483647,
      -2147483648LL, 2147483648LL, 4294967296LL, 9007199254740993LL, std::numeric_limits<std::int64_t>::max(),
      std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::uint64_t>::max(), 0.5, -0.5, 1e-5,
      1e-300, 1e300, -1e300, 1.5, 2.0, 1e9, true, false, nullptr, "", "x", "gdfa", "argmax", "head", "layer-mean",
      "bpe", "word", "words", "whitespace-vocab", "lstm", "gru", "general", "additive", "dot", "concat", "relu",
      "gelu", "tanh", "pre", "post", "mean_rgb", "xy", "sinusoidal", "learned", "scaled_dot",
      "source,target,output", "source,target", "", "i,f,g,o", "scalar", "sat-soft-lstm", "vocab.txt",
      "bpe.vocab", "bpe.merges", "labels.txt", "../config.json", "/etc/passwd", "a\\b", "transformer-seq2seq",
      "rnn-seq2seq", "show-attend-tell", "selfattn-classifier", "relation-classifier", "mobilenet-v2",
      "test-tiny", json::array(), json::object(), json::array({1, 2}), json::array({"a", "b"}),
      json::array({0, 0}), json::object({{"layer", 0}, {"head", 0}}), json::object({{"method", "head"}})};
  return values[b % values.size()];
}

void edit_config(json& cfg, std::uint8_t op, std::uint8_t a, std::uint8_t b, std::uint8_t c) {
  std::vector<json::json_pointer> paths;
  collect_paths(cfg, json::json_pointer(), paths);
  if (paths.empty()) return;
  const json::json_pointer p = paths[a % paths.size()];
  json& v = cfg[p];
  switch (op) {
    case 0: v = interesting(b); break;
    case 1:
      if (v.is_number_integer()) v = v.get<std::int64_t>() / 2 + (static_cast<int>(b) - 128);
      else if (v.is_number()) v = v.get<double>() + (static_cast<int>(b) - 128) * 0.25;
      else v = static_cast<int>(b) - 128;
      break;
    case 2: {
      json& parent = cfg[p.parent_pointer()];
      if (parent.is_object()) parent.erase(p.back());
      else if (parent.is_array() && !parent.empty()) parent.erase(parent.size() - 1);
      break;
    }
    case 3: v = b; break;
    case 4: v = static_cast<double>(b) * std::pow(10.0, static_cast<int>(c) - 128); break;
    case 5:
      if (v.is_string()) v = b;
      else if (v.is_number()) v = v.dump();
      else v = json::array({v});
      break;
    default: {
      json& parent = cfg[p.parent_pointer()];
      if (parent.is_object()) {
        json moved = v;
        const std::string key = p.back();
        parent.erase(key);
        parent[key + (b & 1 ? "_" : "") + std::string(1, static_cast<char>('a' + c % 26))] = std::move(moved);
      }
      break;
    }
  }
}

void edit_tensors(std::map<std::string, fuzz::TensorSpec>& tensors, std::uint8_t op, std::uint8_t a, std::uint8_t b,
                  std::uint8_t c) {
  if (tensors.empty()) return;
  auto it = tensors.begin();
  std::advance(it, a % tensors.size());
  fuzz::TensorSpec& t = it->second;
  static const char* const dtypes[] = {"F32", "F16", "BF16", "I32", "I64"};
  switch (op) {
    case 7: t.dtype = dtypes[b % 5]; break;
    case 8:
      if (!t.shape.empty()) {
        std::size_t& d = t.shape[b % t.shape.size()];
        d = c % 3 == 0 ? 0 : (c % 3 == 1 ? d + 1 : (d > 0 ? d - 1 : 0));
      }
      break;
    case 9:
      if (b & 1) t.shape.push_back(1 + c % 3);
      else if (!t.shape.empty()) t.shape.pop_back();
      break;
    case 10:
      if (b & 1) {
        tensors.erase(it);
      } else {
        fuzz::TensorSpec moved = t;
        const std::string name = it->first;
        tensors.erase(it);
        tensors[c & 1 ? name + "x" : "extra." + std::to_string(c)] = moved;
      }
      break;
    case 11: tensors["unused." + std::to_string(b)] = fuzz::TensorSpec{dtypes[c % 5], {static_cast<std::size_t>(1 + b % 3)}, {}}; break;
    default: {
      static const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(), 1e30f, -1e30f, 1e-40f, 65504.0f,
                                       -0.0f};
      const std::size_t n = fuzz::product(t.shape);
      if (n > 0) t.values[(static_cast<std::size_t>(b) * 256 + c) % n] = specials[(b ^ c) % 8];
      break;
    }
  }
}

// The file as header JSON + data region, edited, and written back.
std::string edit_header(const std::string& file, const std::vector<std::array<std::uint8_t, 4>>& edits) {
  if (edits.empty() || file.size() < 8) return file;
  std::uint64_t len;
  std::memcpy(&len, file.data(), 8);
  json header = json::parse(file.substr(8, len));
  std::string data = file.substr(8 + len);
  std::vector<std::string> names;
  for (auto it = header.begin(); it != header.end(); ++it) names.push_back(it.key());
  for (const auto& e : edits) {
    const std::uint8_t op = e[0] % 16, a = e[1], b = e[2], c = e[3];
    if (op == 15) {
      if (b & 1) data.resize(data.size() > c ? data.size() - c : 0);
      else data.append(c, '\x01');
      continue;
    }
    if (names.empty() || (op == 14 && (b & 3) == 0)) {
      header["__metadata__"] = b & 4 ? json(interesting(c)) : json::object({{"k", interesting(c)}});
      continue;
    }
    json& t = header[names[a % names.size()]];
    if (!t.is_object()) continue;
    if (op == 13) {
      json& off = t["data_offsets"];
      if (off.is_array() && off.size() == 2) off[b & 1] = off[b & 1].get<std::int64_t>() + (static_cast<int>(c) - 128);
    } else if (b & 2) {
      json& shape = t["shape"];
      if (shape.is_array() && !shape.empty()) shape[c % shape.size()] = interesting(c);
      else shape = json::array({c});
    } else {
      t["dtype"] = interesting(c).is_string() ? interesting(c) : json(c & 1 ? "F64" : "U8");
    }
  }
  std::string h = header.dump();
  std::string out(8, '\0');
  const std::uint64_t n = h.size();
  std::memcpy(&out[0], &n, 8);
  return out + h + data;
}

// The weights synthesised for a (template, edited config), kept for the inputs that repeat it: a mutation that
// touches only the knob or the tensor and header edits keeps the config, and synthesis is deterministic (the same
// construction attempts, the same errors, the same tensors), so repeating it checks nothing new — and it was most
// of the time of the slowest inputs (a config with more layers than its template gains one missing tensor per
// construction attempt, up to 80 attempts).
struct Synthesised {
  std::map<std::string, fuzz::TensorSpec> tensors;
  std::string weights;
  bool constructs = false;  // the synthesis' last round built the model
};

class SynthesisCache {
 public:
  const Synthesised* find(const std::string& key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // most recently used first
    return &it->second->second;
  }
  void put(const std::string& key, Synthesised value) {
    if (value.weights.size() > kMaxBytes || index_.count(key) != 0) return;
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    if (order_.size() > kEntries) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  static constexpr std::size_t kEntries = 64, kMaxBytes = std::size_t{4} << 20;
  std::list<std::pair<std::string, Synthesised>> order_;
  std::unordered_map<std::string, std::list<std::pair<std::string, Synthesised>>::iterator> index_;
};

constexpr std::size_t kMaxEditedElements = std::size_t{1} << 22;  // 16 MB of F32 in all the edited tensors

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::base_tensors(0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto& all = fuzz::templates();
  static const std::vector<json> parsed = [&] {
    std::vector<json> v;
    for (const auto& x : all) v.push_back(json::parse(x.config));
    return v;
  }();
  const std::size_t t = data[0] % (all.size() - 1);  // the last template, MobileNetV2, is not used (above)
  const unsigned knob = data[1] | (static_cast<unsigned>(data[0] >> 6) << 8);
  if ((size - 2) / 4 > 64) return 0;  // at most 64 edits

  json cfg = parsed[t];
  std::vector<std::array<std::uint8_t, 4>> tensor_edits, header_edits;
  for (std::size_t i = 2; i + 4 <= size; i += 4) {
    const std::uint8_t op = data[i] % 16;
    const std::array<std::uint8_t, 4> e = {op, data[i + 1], data[i + 2], data[i + 3]};
    if (op <= 6) edit_config(cfg, op, e[1], e[2], e[3]);
    else if (op <= 12) tensor_edits.push_back(e);
    else header_edits.push_back(e);
  }
  const std::string config = cfg.dump();
  std::map<std::string, std::string> files = all[t].files;
  const fuzz::Family family = fuzz::family_of_architecture(fuzz::architecture_of(config));  // of the edited config
  for (const auto& [name, text] : fuzz::family_files(family)) files.emplace(name, text);

  // Weights synthesised for the edited config (the template's own, when it names mobilenet-v2), then edited.
  static SynthesisCache cache;
  const std::string key = std::to_string(t) + '\n' + config;
  fuzz::Model built;
  std::map<std::string, fuzz::TensorSpec> tensors;
  std::string weights;
  bool constructs = false;
  if (family == fuzz::Family::encoder) {
    tensors = fuzz::base_tensors(t);
    weights = fuzz::write_safetensors(tensors);
  } else if (const Synthesised* hit = cache.find(key)) {
    tensors = hit->tensors;
    weights = hit->weights;
    constructs = hit->constructs;
  } else {
    tensors = fuzz::base_tensors(t);
    weights = fuzz::weights_for(config, files, tensors, 80, &built);
    constructs = built.family != fuzz::Family::other;
    cache.put(key, {tensors, weights, constructs});
  }
  if (!tensor_edits.empty()) {
    for (const auto& e : tensor_edits) edit_tensors(tensors, e[0], e[1], e[2], e[3]);
    // Shape edits compound (each added dimension of 3 triples a tensor): past kMaxEditedElements the file itself
    // would take gigabytes to write here, an out-of-memory of the harness, not of the loader (which is handed the
    // bytes whole). Such an input is skipped; bundle_bytes and safetensors_header give the loader shapes that do
    // not match their data.
    std::size_t total = 0;
    for (const auto& [name, spec] : tensors) {
      std::size_t n = 1;
      for (std::size_t d : spec.shape) {
        if (d != 0 && n > kMaxEditedElements / d) return 0;
        n *= d;
      }
      total += n;
      if (total > kMaxEditedElements) return 0;
    }
    weights = fuzz::write_safetensors(tensors);
  }
  if (!header_edits.empty()) weights = edit_header(weights, header_edits);
  if (tensor_edits.empty() && header_edits.empty() && family != fuzz::Family::encoder) {
    // The weights are those of the synthesis' last round: it built this very model (run it), or every round failed
    // and a construct() here would fail the same way (construction is deterministic: nothing to run).
    if (!constructs) return 0;
    fuzz::ok_or_error([&] {
      if (built.family == fuzz::Family::other) built = fuzz::construct(config, weights, files);  // (a cached synthesis)
      fuzz::run(built, knob);
    });
    return 0;
  }
  fuzz::ok_or_error([&] {
    const fuzz::Model m = fuzz::construct(config, weights, files);
    fuzz::run(m, knob);
  });
  return 0;
}
