// Each task's contract, declared once: its options (name, kind, range or allowed values, default, when it is given,
// one doc line) and its result fields (name as the package publishes it, kind, one doc line). Every task's API file
// declares its own (sentiment_contract() in api/sentiment.cpp, …); from that one declaration
//   - the engine reads its options (read_options(): kinds and ranges checked as declared, so they are the same in
//     C++, JS and the CLI by construction),
//   - the WASM module exports every contract as JSON (contracts_json(); wasm/pipelines/contract.js checks a
//     caller's options against it, tests/node/contract.test.mjs checks wasm/index.d.ts against it),
//   - the CLI builds each subcommand's flags and help (--num-beams ↔ num_beams).
// A result struct lists its fields once, in a member template `fields(f)` calling f("name", member) for each; the
// WASM binding's converter and the CLI's JSON writer both walk it, and a test checks its names against the
// declaration.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlens::api {

enum class OptionKind {
  kInteger,         // an integer in [lo, hi]
  kNumber,          // a finite number
  kBoolean,         // true or false
  kEnum,            // one of `values`
  kBooleanOrKinds,  // true, false, or a non-empty list of `values` (only those maps)
};

enum class OptionTime { kCreation, kCall };  // given to pipeline() / to each call

struct OptionSpec {
  std::string name;  // snake_case, as JS, JSON and the CLI (--kebab-case) spell it
  OptionKind kind = OptionKind::kBoolean;
  OptionTime given = OptionTime::kCall;
  long long lo = 0, hi = 0;         // kInteger
  std::vector<std::string> values;  // kEnum, kBooleanOrKinds
  nlohmann::json fallback;          // the default; null: the model's default (`doc` says which)
  std::string doc;                  // one line
  std::string alias;                // a deprecated old name, accepted too ("" when none)
  bool engine = true;               // false: only the JS package reads it (e.g. how results are shaped)

  OptionSpec with_alias(std::string old_name) const {
    OptionSpec s = *this;
    s.alias = std::move(old_name);
    return s;
  }
  OptionSpec package_only() const {
    OptionSpec s = *this;
    s.engine = false;
    return s;
  }
};

struct FieldSpec {
  std::string name;  // as the package publishes it (snake_case)
  std::string kind;  // "string", "integer", "number", "boolean", "string[]", "int32[]", "float32[]", "float64[]",
                     // "maps", or "<Name>[]" for a list of small records
  std::string doc;
  bool engine = true;  // false: added by the JS package (e.g. `labels`), not a field of the C++ result struct
};

struct Contract {
  std::string task;   // the pipeline's task name
  std::string entry;  // "" for the pipeline call itself, else the method (e.g. "align", "attend")
  std::vector<OptionSpec> options;
  std::vector<FieldSpec> result;

  const OptionSpec& option(const std::string& name) const;
};

// Declaration helpers (a task's contract is a list of these).
inline OptionSpec integer_option(std::string name, OptionTime given, long long lo, long long hi, nlohmann::json fallback,
                                 std::string doc) {
  OptionSpec s;
  s.name = std::move(name), s.kind = OptionKind::kInteger, s.given = given, s.lo = lo, s.hi = hi;
  s.fallback = std::move(fallback), s.doc = std::move(doc);
  return s;
}
inline OptionSpec option(std::string name, OptionKind kind, OptionTime given, nlohmann::json fallback, std::string doc,
                         std::vector<std::string> values = {}) {
  OptionSpec s;
  s.name = std::move(name), s.kind = kind, s.given = given, s.values = std::move(values);
  s.fallback = std::move(fallback), s.doc = std::move(doc);
  return s;
}

// output_attentions, as every task has it: a boolean given per call, default true; `doc` says what false does.
inline OptionSpec output_attentions_option(std::string doc) {
  return option("output_attentions", OptionKind::kBoolean, OptionTime::kCall, true, std::move(doc));
}

// output_qk, as the tasks with dot-product maps have it: a boolean given per call, default false.
inline OptionSpec output_qk_option() {
  return option("output_qk", OptionKind::kBoolean, OptionTime::kCall, false,
                "also `qk`, the query and key vectors behind every map (the neuron view)");
}
// Its result field; `kinds` names the map kinds it covers.
inline FieldSpec qk_field(const std::string& kinds) {
  return {"qk", "maps",
          "with output_qk: '<kind>.query' [rows, d_head] and '<kind>.key' [columns, d_head] per layer and head of " +
              kinds + ", map = softmax(query·keyᵀ/√d_head)"};
}

// One option's value, read and checked as declared (nlohmann::json; null when absent).
class OptionValues {
 public:
  explicit OptionValues(nlohmann::json values) : values_(std::move(values)) {}
  bool has(const std::string& name) const { return values_.contains(name) && !values_[name].is_null(); }
  long long integer(const std::string& name, long long fallback) const;
  double number(const std::string& name, double fallback) const;
  bool boolean(const std::string& name, bool fallback) const;
  std::string text(const std::string& name, const std::string& fallback) const;
  const nlohmann::json& raw(const std::string& name) const { return values_.at(name); }

 private:
  nlohmann::json values_;
};

// Reads `params_json` (a JSON object; "" for none) against the contract's options given at `given` that the
// engine reads: each value's kind and range checked as declared, a deprecated alias read as its option, any other
// key an error. Errors are attnlens::Error starting with `what` and naming the key (api/options.h's wording).
OptionValues read_options(const Contract& contract, OptionTime given, const std::string& what,
                          const std::string& params_json);

// Every task's contract (the entries of sentiment_contract(), …), and all of them as JSON text:
// [{task, entry, options: [{name, kind, given, min?, max?, values?, default, doc, alias?, engine}],
//   result: [{name, kind, doc, engine}]}].
const std::vector<const Contract*>& contracts();
std::string contracts_json();
// Adds a contract to contracts() (once; a second call with the same contract does nothing): the tasks a separately
// linked module brings (the converted Hugging Face models' module, wasm/hf/) declare theirs at its start, so that
// module's contracts() export lists them and the shipped modules' lists stay as they are. Not thread-safe: call it
// before any thread reads contracts().
void add_contract(const Contract& contract);
// One task's contract; Error naming the known ones when there is none.
const Contract& contract_of(const std::string& task, const std::string& entry = "");

// Whether T lists its fields (a member template fields(f)), and whether it is a std::vector: what the converters
// of results (the WASM binding's to_js, the CLI's to_json) dispatch on.
struct FieldProbe {
  template <class V>
  void operator()(const char*, const V&) const {}
};
template <class T, class = void>
struct has_fields : std::false_type {};
template <class T>
struct has_fields<T, std::void_t<decltype(std::declval<const T&>().fields(FieldProbe{}))>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class E, class A>
struct is_vector<std::vector<E, A>> : std::true_type {};
template <class T>
struct is_std_array : std::false_type {};
template <class E, std::size_t N>
struct is_std_array<std::array<E, N>> : std::true_type {};
template <class T>
inline constexpr bool kUnknownFieldType = false;  // for a static_assert naming an unconverted field type

// A record that is published as the array of its fields, in order, instead of an object: it declares
// `static constexpr bool kAsArray = true` (a word link [source, target]).
template <class T, class = void>
struct as_array : std::false_type {};
template <class T>
struct as_array<T, std::void_t<decltype(T::kAsArray)>> : std::bool_constant<T::kAsArray> {};

// A field published only when it has something to say: f("qk", present_if(!qk.empty(), qk)) — the converters
// leave the key out when `value` is null (field_names() still lists it).
template <class T>
struct Omittable {
  const T* value = nullptr;
};
template <class T>
Omittable<T> present_if(bool present, const T& v) {
  return Omittable<T>{present ? &v : nullptr};
}
template <class T>
struct is_omittable : std::false_type {};
template <class T>
struct is_omittable<Omittable<T>> : std::true_type {};

// A list of records that, when `self` is set, holds one entry equal to the record that has this field (the
// record's other fields, e.g. a one-sentence translation whose `sentences` is [itself]): the converters then publish
// [a copy of the record's fields visited before this one] instead of converting the entry a second time. Must be the
// record's last field.
template <class T>
struct ListOrSelf {
  const std::vector<T>& list;
  bool self = false;
};
template <class T>
struct is_list_or_self : std::false_type {};
template <class T>
struct is_list_or_self<ListOrSelf<T>> : std::true_type {};

// A row-major matrix kept as a flat vector, published as {dims: [rows, cols], data}.
struct MatrixField {
  std::vector<std::size_t> dims;
  const std::vector<float>& data;
  template <class F>
  void fields(F&& f) const {
    f("dims", dims), f("data", data);
  }
};

// Calls put(name, value) for each field of `v` that is published (an Omittable without a value is left out): what
// every converter of results walks.
template <class T, class Put>
void for_each_published(const T& v, Put&& put) {
  v.fields([&put](const char* name, const auto& x) {
    if constexpr (is_omittable<std::decay_t<decltype(x)>>::value) {
      if (x.value != nullptr) put(name, *x.value);
    } else {
      put(name, x);
    }
  });
}

// The field names a result struct visits (fields(f)), for checking them against the declaration.
template <class Result>
std::vector<std::string> field_names(const Result& r) {
  std::vector<std::string> names;
  r.fields([&](const char* name, const auto&) { names.emplace_back(name); });
  return names;
}

}  // namespace attnlens::api
