#include "io/config.h"

#include <cmath>
#include <limits>
#include <utility>

#include "common.h"

namespace attnlens::io {

namespace {

// The value as JSON for a message, cut short (at a UTF-8 character boundary) when long.
std::string shown(const nlohmann::json& v) {
  const std::string s = v.dump();
  if (s.size() <= 60) return s;
  std::size_t n = 57;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

}  // namespace

ConfigObject::ConfigObject(const nlohmann::json& object, std::string file, std::string path)
    : json_(&object), file_(std::move(file)), path_(std::move(path)) {
  if (!object.is_object()) {
    if (path_.empty()) throw Error(file_ + ": expected a JSON object, got " + object.type_name());
    throw Error(file_ + ": key \"" + path_ + "\": expected an object, got " + object.type_name());
  }
}

std::string ConfigObject::key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void ConfigObject::fail(const std::string& key, const std::string& what) const {
  throw Error(file_ + ": key \"" + key_path(key) + "\": " + what);
}

void ConfigObject::wrong_type(const std::string& key, const char* expected) const {
  fail(key, std::string("expected ") + expected + ", got " + json_->at(key).type_name() + " " + shown(json_->at(key)));
}

bool ConfigObject::has(const std::string& key) const { return json_->contains(key); }

const nlohmann::json& ConfigObject::at(const std::string& key) const {
  if (!has(key)) fail(key, "is missing");
  return json_->at(key);
}

ConfigObject ConfigObject::object(const std::string& key) const {
  if (!at(key).is_object()) wrong_type(key, "an object");
  return ConfigObject(json_->at(key), file_, key_path(key));
}

const nlohmann::json& ConfigObject::array(const std::string& key) const {
  if (!at(key).is_array()) wrong_type(key, "an array");
  return json_->at(key);
}

std::string ConfigObject::string(const std::string& key) const {
  if (!at(key).is_string()) wrong_type(key, "a string");
  return json_->at(key).get<std::string>();
}

bool ConfigObject::boolean(const std::string& key) const {
  if (!at(key).is_boolean()) wrong_type(key, "true or false");
  return json_->at(key).get<bool>();
}

double ConfigObject::number(const std::string& key) const {
  if (!at(key).is_number()) wrong_type(key, "a number");
  const double v = json_->at(key).get<double>();
  if (!std::isfinite(v)) fail(key, "expected a finite number, got " + shown(json_->at(key)));
  return v;
}

std::int64_t ConfigObject::integer(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  const nlohmann::json& v = at(key);
  if (!v.is_number_integer()) wrong_type(key, "an integer");
  // JSON parses non-negative integers as unsigned: one above INT64_MAX is out of every range a caller can ask for.
  const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (huge || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    fail(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + shown(v));
  return v.get<std::int64_t>();
}

std::string ConfigObject::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

double ConfigObject::number_or(const std::string& key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

std::int64_t ConfigObject::integer_or(const std::string& key, std::int64_t fallback, std::int64_t lo,
                                      std::int64_t hi) const {
  return has(key) ? integer(key, lo, hi) : fallback;
}

}  // namespace attnlens::io
