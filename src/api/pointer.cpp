// api::PointerSorter: bundle → models::PointerNet; numbers → order, sorted values and every pointer distribution.
// Behaviour and limits are documented in api/pointer.h.
#include "api/pointer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include <nlohmann/json.hpp>

#include "common.h"
#include "io/bundle.h"
#include "models/pointer_net.h"

namespace attnlens::api {

const Contract& pointer_sort_contract() {
  static const Contract c{
      "number-sorting",
      "",
      {output_attentions_option("false: `attentions` holds only the 'pointer' map (no 'encoder_self' maps)")
           .with_alias("encoder_attentions")},
      {
        {"values", "number[]", "the input numbers, as given"},
        {"inputs", "float32[]", "the model's input: the values min-max scaled to [0, 1]"},
        {"order", "number[]", "input positions in output order (a permutation of 0..n-1)"},
        {"sorted", "number[]", "values[order[i]]"},
        {"step_probabilities", "float32[]", "the pointer's probability of each chosen position"},
        {"sorted_ok", "boolean", "`sorted` is non-decreasing (the model may err on long lists)"},
          {"attentions", "maps", "'pointer' [n, n] (row = output step), then 'encoder_self' [n, n] per layer and head"},
      }};
  return c;
}

PointerSortParams pointer_sort_params(const std::string& params_json) {
  const OptionValues v = read_options(pointer_sort_contract(), OptionTime::kCall, "pointer-sort params", params_json);
  PointerSortParams p;
  p.output_attentions = v.boolean("output_attentions", p.output_attentions);
  return p;
}

std::vector<double> parse_number_list(const std::string& text) {
  std::vector<double> out;
  const auto is_sep = [](char ch) {
    return ch == ',' || ch == ';' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_sep(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_sep(text[end])) ++end;
    const std::string item = text.substr(i, end - i);
    const std::string shown = item.size() > 40 ? item.substr(0, 40) + "..." : item;
    const std::string where = "item " + std::to_string(out.size() + 1) + " ('" + shown + "')";
    // strtod accepts "nan", "inf" and hex floats; a person's list holds decimal numbers only.
    bool plain = true;
    for (char ch : item) {
      if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '+' || ch == 'e' || ch == 'E')) plain = false;
    }
    errno = 0;
    char* stop = nullptr;
    const double v = plain ? std::strtod(item.c_str(), &stop) : 0.0;
    require(plain && stop == item.c_str() + item.size() && !item.empty(),
            "pointer-sort: " + where + " is not a number");
    require(std::isfinite(v), "pointer-sort: " + where + " is too large for a double (beyond ±1.8e308)");
    out.push_back(v);
    i = end;
  }
  return out;
}

struct PointerSorter::Impl {
  std::string name;
  std::unique_ptr<models::PointerNet> model;
};

PointerSorter::PointerSorter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PointerSorter::~PointerSorter() = default;

std::unique_ptr<PointerSorter> PointerSorter::load(const std::string& dir) {
  const io::Bundle bundle = io::Bundle::load(dir);
  auto impl = std::make_unique<Impl>();
  impl->name = bundle.name();
  impl->model = std::make_unique<models::PointerNet>(bundle);
  return std::unique_ptr<PointerSorter>(new PointerSorter(std::move(impl)));
}

std::unique_ptr<PointerSorter> PointerSorter::from_memory(const std::string& config_json,
                                                          std::vector<std::uint8_t> weights, const std::string& name) {
  const io::Bundle bundle = io::Bundle::from_memory(config_json, std::move(weights), {}, name);
  auto impl = std::make_unique<Impl>();
  impl->name = bundle.name();
  impl->model = std::make_unique<models::PointerNet>(bundle);
  return std::unique_ptr<PointerSorter>(new PointerSorter(std::move(impl)));
}

PointerSortResult PointerSorter::sort(const std::vector<double>& values, const PointerSortParams& params) const {
  AttentionTrace trace(true);
  models::PointerSortForward f = impl_->model->forward(values, trace);
  PointerSortResult r;
  const std::size_t n = values.size();
  r.values = values;
  r.inputs = std::move(f.inputs);
  r.order = std::move(f.order);
  r.sorted.resize(n);
  r.step_probabilities.resize(n);
  r.sorted_ok = true;
  for (std::size_t i = 0; i < n; ++i) {
    r.sorted[i] = values[r.order[i]];
    r.step_probabilities[i] = f.pointer[i * n + r.order[i]];
    if (i > 0 && r.sorted[i] < r.sorted[i - 1]) r.sorted_ok = false;
  }
  // "pointer" first, then the encoder maps in recording order (layer-major, head-minor).
  for (const MapView m : trace)
    if (m.name == "pointer") r.attentions.record(m);
  if (params.output_attentions)
    for (const MapView m : trace)
      if (m.name == "encoder_self") r.attentions.record(m);
  return r;
}

std::size_t PointerSorter::max_length() const { return impl_->model->max_length(); }
const std::string& PointerSorter::name() const { return impl_->name; }

}  // namespace attnlens::api
