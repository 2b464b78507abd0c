// The contract machinery of api/contract.h: reading options as declared, and every task's contract as JSON.
#include "api/contract.h"

#include <cmath>

#include "api/captioning.h"
#include "api/options.h"
#include "api/pointer.h"
#include "api/sentiment.h"
#include "api/translation.h"
#include "api/vqa.h"
#include "common.h"

namespace attnlens::api {

const OptionSpec& Contract::option(const std::string& name) const {
  for (const auto& o : options)
    if (o.name == name) return o;
  throw Error(task + ": the contract declares no option '" + name + "'");
}

long long OptionValues::integer(const std::string& name, long long fallback) const {
  return has(name) ? values_[name].get<long long>() : fallback;
}
double OptionValues::number(const std::string& name, double fallback) const {
  return has(name) ? values_[name].get<double>() : fallback;
}
bool OptionValues::boolean(const std::string& name, bool fallback) const {
  return has(name) ? values_[name].get<bool>() : fallback;
}
std::string OptionValues::text(const std::string& name, const std::string& fallback) const {
  return has(name) ? values_[name].get<std::string>() : fallback;
}

namespace {

// One option's value through the reader (absent: null), checked as its kind says.
nlohmann::json read_one(OptionReader& o, const OptionSpec& spec, const std::string& key, const std::string& what) {
  if (!o.has(key)) return nullptr;
  switch (spec.kind) {
    case OptionKind::kInteger:
      return o.integer(key, 0, spec.lo, spec.hi);
    case OptionKind::kNumber: {
      const double v = o.number(key, 0.0);
      require(std::isfinite(v), what + ": param '" + key + "' must be a finite number");
      return v;
    }
    case OptionKind::kBoolean:
      return o.boolean(key, false);
    case OptionKind::kEnum:
      return o.text(key, "", spec.values);
    case OptionKind::kBooleanOrKinds:
      if (!o.is_list(key)) return o.boolean(key, false);
      {
        nlohmann::json kinds = nlohmann::json::array();  // (built by hand: cheaper in the WASM module)
        for (auto& k : o.text_list(key)) kinds.push_back(std::move(k));
        require(!kinds.empty(), what + ": param '" + key + "' must be true, false or a non-empty list of kinds");
        return kinds;  // each kind is checked where the maps are selected (an unknown kind names the known ones)
      }
  }
  return nullptr;
}

const char* kind_name(OptionKind k) {
  switch (k) {
    case OptionKind::kInteger: return "integer";
    case OptionKind::kNumber: return "number";
    case OptionKind::kBoolean: return "boolean";
    case OptionKind::kEnum: return "enum";
    case OptionKind::kBooleanOrKinds: return "boolean-or-kinds";
  }
  return "";
}

}  // namespace

OptionValues read_options(const Contract& contract, OptionTime given, const std::string& what,
                          const std::string& params_json) {
  OptionReader o(what, params_json);
  nlohmann::json values = nlohmann::json::object();
  for (const auto& spec : contract.options) {
    if (spec.given != given || !spec.engine) continue;
    nlohmann::json v = read_one(o, spec, spec.name, what);
    if (!spec.alias.empty()) {
      nlohmann::json old = read_one(o, spec, spec.alias, what);
      if (v.is_null()) v = std::move(old);
    }
    values[spec.name] = std::move(v);
  }
  o.finish();
  return OptionValues(std::move(values));
}

namespace {
std::vector<const Contract*>& registered_contracts() {
  static std::vector<const Contract*> all = {
      &sentiment_contract(), &pointer_sort_contract(), &vqa_contract(), &caption_contract(), &attend_contract(),
      &translation_contract(), &align_contract(),
  };
  return all;
}
}  // namespace

const std::vector<const Contract*>& contracts() { return registered_contracts(); }

void add_contract(const Contract& contract) {
  auto& all = registered_contracts();
  for (const Contract* c : all) {
    if (c == &contract) return;
  }
  all.push_back(&contract);
}

const Contract& contract_of(const std::string& task, const std::string& entry) {
  std::string known;
  for (const Contract* c : contracts()) {
    if (c->task == task && c->entry == entry) return *c;
    known += (known.empty() ? "" : ", ") + c->task + (c->entry.empty() ? "" : "." + c->entry);
  }
  throw Error("no contract for '" + task + (entry.empty() ? "" : "." + entry) + "' (known: " + known + ")");
}

namespace {

// JSON text built by hand: nlohmann's object construction costs the WASM module ~6 KB gzipped, its dump() of a
// string (for the escaping) nothing more than the option reader already pulls in.
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + quoted(items[i]);
  return out + "]";
}

std::string option_json(const OptionSpec& s) {
  std::string j = "{\"name\":" + quoted(s.name) + ",\"kind\":" + quoted(kind_name(s.kind)) + ",\"given\":" +
                  (s.given == OptionTime::kCreation ? "\"creation\"" : "\"call\"") + ",\"default\":" +
                  s.fallback.dump() + ",\"doc\":" + quoted(s.doc) + ",\"engine\":" + (s.engine ? "true" : "false");
  if (s.kind == OptionKind::kInteger) j += ",\"min\":" + std::to_string(s.lo) + ",\"max\":" + std::to_string(s.hi);
  if (!s.values.empty()) j += ",\"values\":" + quoted_list(s.values);
  if (!s.alias.empty()) j += ",\"alias\":" + quoted(s.alias);
  return j + "}";
}

}  // namespace

std::string contracts_json() {
  std::string out = "[";
  for (const Contract* c : contracts()) {
    out += (out.size() > 1 ? ",{" : "{") + std::string("\"task\":") + quoted(c->task) + ",\"entry\":" + quoted(c->entry) +
           ",\"options\":[";
    for (std::size_t i = 0; i < c->options.size(); ++i) out += (i ? "," : "") + option_json(c->options[i]);
    out += "],\"result\":[";
    for (std::size_t i = 0; i < c->result.size(); ++i) {
      const FieldSpec& f = c->result[i];
      out += std::string(i ? "," : "") + "{\"name\":" + quoted(f.name) + ",\"kind\":" + quoted(f.kind) +
             ",\"doc\":" + quoted(f.doc) + ",\"engine\":" + (f.engine ? "true" : "false") + "}";
    }
    out += "]}";
  }
  return out + "]";
}

}  // namespace attnlens::api
