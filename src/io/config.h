// Typed reads of config.json keys. nlohmann::json's own accessors (get<T>(), value(), operator[] on the wrong
// type) throw json::type_error — "[json.exception.type_error.302] type must be string, but is boolean" — which names
// neither the file nor the key and is no attnlens::Error. Every read of a model config goes through ConfigObject
// instead, whose failures are attnlens::Error messages naming the file, the key (a dotted path from the top) and
// what was expected:
//   config.json in models/x: key "tokenizer.type": expected a string, got boolean
// Value checks beyond the type (ranges, allowed names) stay with the callers; integer() checks a range because a
// value must fit the caller's type before it can be converted.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace attnlens::io {

class ConfigObject {
 public:
  // `object` must outlive this view. `file` names the file in messages ("config.json in models/x"); `path` is the
  // object's key from the top of the file ("tokenizer"; empty for the top level).
  ConfigObject(const nlohmann::json& object, std::string file, std::string path = {});

  bool has(const std::string& key) const;
  // The value whatever its type (Error when missing).
  const nlohmann::json& at(const std::string& key) const;
  // Required values: Error when missing or of another type.
  ConfigObject object(const std::string& key) const;
  const nlohmann::json& array(const std::string& key) const;
  std::string string(const std::string& key) const;
  bool boolean(const std::string& key) const;
  double number(const std::string& key) const;  // any finite number
  std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi) const;  // an integer in [lo, hi]
  // Optional values: `fallback` when the key is absent; a present value of another type is still an Error.
  std::string string_or(const std::string& key, const std::string& fallback) const;
  double number_or(const std::string& key, double fallback) const;
  std::int64_t integer_or(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;

  // "config.json in models/x: key \"tokenizer.type\": " + what
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  std::string key_path(const std::string& key) const;  // "tokenizer.type"
  const std::string& file() const { return file_; }
  const nlohmann::json& json() const { return *json_; }

 private:
  [[noreturn]] void wrong_type(const std::string& key, const char* expected) const;

  const nlohmann::json* json_;
  std::string file_, path_;
};

}  // namespace attnlens::io
