// attnlens C++ API: sorting numbers with a pointer network (Vinyals et al. 2015), every pointer distribution
// out. Included by src/api.h.
//
//   auto sorter = attnlens::api::PointerSorter::load("models/pointer-sort");
//   auto r = sorter->sort({5, 3, 9, 1});
//   // r.order {3, 1, 0, 2}, r.sorted {1, 3, 5, 9}; r.attentions[0]: "pointer" [4 × 4], row i = the distribution
//   // over input positions at output step i; then "encoder_self" [4 × 4] per encoder layer and head.
//
// Input: any finite real numbers, 1 ≤ n ≤ max_length() (the bundle's config "max_length", 50 for pointer-sort).
// Errors (attnlens::Error, with a message naming the problem): an empty list, more than max_length() numbers, a
// NaN or ±infinity (its position is named); parse_number_list() also names any item that is not a number.
// Equal numbers keep their input order (models/pointer_net.h). The model is trained on lists of 1–10 numbers;
// its exact-sequence accuracy falls for longer lists (the curve is in models/pointer-sort/MODEL_CARD.md): the
// result is always a permutation of the input, but not always sorted. `sorted_ok` says whether it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/contract.h"
#include "trace/trace.h"

namespace attnlens::api {

struct PointerSortParams {
  bool output_attentions = true;  // false: `attentions` holds only the "pointer" map
};
// The task's contract (api/contract.h): its options and result fields.
const Contract& pointer_sort_contract();
// Parses {"output_attentions": bool} as the contract declares it (the deprecated name "encoder_attentions" is read
// as output_attentions; unknown keys are an error) over the defaults above; "" means the defaults.
PointerSortParams pointer_sort_params(const std::string& params_json);

// "5, 3 9;1" → {5, 3, 9, 1}: items separated by commas, semicolons or white space, each a whole decimal number
// (strtod syntax, e.g. -2.5e3; "nan" and "inf" are refused). Throws Error naming the first item that is not a
// number (its text and position). An empty or all-separator text gives an empty list (sort() refuses it).
std::vector<double> parse_number_list(const std::string& text);

struct PointerSortResult {
  std::vector<double> values;             // the input, as given
  std::vector<float> inputs;              // the model's input: values min–max scaled to [0, 1]
  std::vector<std::size_t> order;         // input positions in output order (a permutation of 0..n−1)
  std::vector<double> sorted;             // values[order[i]]
  std::vector<float> step_probabilities;  // p_i(order[i]): the pointer's probability of each chosen position
  bool sorted_ok = false;                 // `sorted` is non-decreasing (the model may err on long lists)
  // "pointer" [n × n] first (row = output step, column = input position, rows sum to 1, pointed positions 0),
  // then "encoder_self" [n × n] for each encoder layer and head (unless output_attentions is false).
  AttentionTrace attentions;

  template <class F>
  void fields(F&& f) const {
    f("values", values), f("inputs", inputs), f("order", order), f("sorted", sorted);
    f("step_probabilities", step_probabilities), f("sorted_ok", sorted_ok), f("attentions", attentions);
  }
};

class PointerSorter {
 public:
  // From a bundle directory (config.json, weights.safetensors), architecture "pointer-sort".
  static std::unique_ptr<PointerSorter> load(const std::string& dir);
  // From the same files as bytes (the WASM build).
  static std::unique_ptr<PointerSorter> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                    const std::string& name = "<memory>");
  ~PointerSorter();
  PointerSorter(const PointerSorter&) = delete;
  PointerSorter& operator=(const PointerSorter&) = delete;

  PointerSortResult sort(const std::vector<double>& values, const PointerSortParams& params = {}) const;

  std::size_t max_length() const;
  const std::string& name() const;

 private:
  struct Impl;
  explicit PointerSorter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
