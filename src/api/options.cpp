// The JSON option reader of api/options.h.
#include "api/options.h"

#include <algorithm>

#include "common.h"

namespace attnlens::api {

OptionReader::OptionReader(const std::string& what, const std::string& text) : what_(what) {
  if (text.empty()) {
    json_ = nlohmann::json::object();
    return;
  }
  try {
    json_ = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(what + ": params are not valid JSON (" + e.what() + ")");
  }
  require(json_.is_object(), what + ": params must be a JSON object, got " + json_.dump());
}

bool OptionReader::has(const std::string& key) {
  known_.insert(key);
  return json_.contains(key) && !json_[key].is_null();
}

double OptionReader::number(const std::string& key, double fallback) {
  if (!has(key)) return fallback;
  const auto& v = json_[key];
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  require(v.is_number(), what_ + ": param '" + key + "' must be a number, got " + v.dump());
  return v.get<double>();
}

std::size_t OptionReader::index(const std::string& key, std::size_t fallback) {
  if (!has(key)) return fallback;
  const auto& v = json_[key];
  require(v.is_number_integer() && v.get<long long>() >= 0,
          what_ + ": param '" + key + "' must be a non-negative integer, got " + v.dump());
  return static_cast<std::size_t>(v.get<long long>());
}

long long OptionReader::integer(const std::string& key, long long fallback, long long lo, long long hi) {
  if (!has(key)) return fallback;
  const auto& v = json_[key];
  // (An unsigned value above LLONG_MAX is out of range too: is_number_integer() holds, get<long long> would wrap.)
  require(v.is_number_integer() && !(v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi)) &&
              v.get<long long>() >= lo && v.get<long long>() <= hi,
          what_ + ": param '" + key + "' must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
              "], got " + v.dump());
  return v.get<long long>();
}

std::vector<std::size_t> OptionReader::index_list(const std::string& key) {
  require(has(key), what_ + ": missing param '" + key + "' (a list of non-negative integers)");
  const auto& v = json_[key];
  require(v.is_array(), what_ + ": param '" + key + "' must be a list of non-negative integers, got " + v.dump());
  std::vector<std::size_t> out;
  for (const auto& x : v) {
    require(x.is_number_integer() && x.get<long long>() >= 0,
            what_ + ": param '" + key + "' must hold non-negative integers, got " + x.dump());
    out.push_back(static_cast<std::size_t>(x.get<long long>()));
  }
  return out;
}

std::size_t OptionReader::required_index(const std::string& key) {
  require(has(key), what_ + ": missing param '" + key + "'");
  return index(key, 0);
}

bool OptionReader::flag(const std::string& key, bool fallback) {
  if (!has(key)) return fallback;
  const auto& v = json_[key];
  require(v.is_boolean() || v.is_number_integer(), what_ + ": param '" + key + "' must be true or false, got " + v.dump());
  return v.is_boolean() ? v.get<bool>() : v.get<long long>() != 0;
}

bool OptionReader::boolean(const std::string& key, bool fallback) {
  if (!has(key)) return fallback;
  const auto& v = json_[key];
  require(v.is_boolean(), what_ + ": param '" + key + "' must be true or false, got " + v.dump());
  return v.get<bool>();
}

std::string OptionReader::text(const std::string& key, const std::string& fallback,
                               const std::vector<std::string>& allowed) {
  if (!has(key)) return fallback;
  const auto& v = json_[key];
  require(v.is_string(), what_ + ": param '" + key + "' must be a string, got " + v.dump());
  std::string s = v.get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw Error(what_ + ": param '" + key + "' is '" + s + "', expected one of: " + list);
  }
  return s;
}

bool OptionReader::is_list(const std::string& key) { return has(key) && json_[key].is_array(); }

std::vector<std::string> OptionReader::text_list(const std::string& key) {
  require(has(key), what_ + ": missing param '" + key + "' (a list of strings)");
  const auto& v = json_[key];
  require(v.is_array(), what_ + ": param '" + key + "' must be a list of strings, got " + v.dump());
  std::vector<std::string> out;
  for (const auto& x : v) {
    require(x.is_string(), what_ + ": param '" + key + "' must hold strings, got " + x.dump());
    out.push_back(x.get<std::string>());
  }
  return out;
}

void OptionReader::finish() const {
  for (auto it = json_.begin(); it != json_.end(); ++it) {
    if (known_.count(it.key())) continue;
    std::string list;
    for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
    throw Error(what_ + ": unknown param '" + it.key() + "'" + (list.empty() ? std::string(" (it takes none)") : " (known: " + list + ")"));
  }
}

}  // namespace attnlens::api
