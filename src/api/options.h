// One reader for the options every task takes as a JSON object (the JS layer passes its option objects through as
// JSON): the catalogue ops' params (ops_adapters.cpp), the MultiHeadKvCache, captioning and sentiment options. Each getter
// reads one key with its type and range checked, falling back to the caller's default when the key is absent (or
// null); finish() rejects any key no getter asked for. Every error is an attnlens::Error that starts with `what`
// (the op or the task: "caption options", "score_dot") and names the key and the value it got.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlens::api {

class OptionReader {
 public:
  // text: a JSON object, or empty for no options.
  OptionReader(const std::string& what, const std::string& text);

  bool has(const std::string& key);
  double number(const std::string& key, double fallback);  // true/false read as 1/0
  std::size_t index(const std::string& key, std::size_t fallback);  // a non-negative integer
  long long integer(const std::string& key, long long fallback, long long lo, long long hi);  // an integer in [lo, hi]
  std::vector<std::size_t> index_list(const std::string& key);  // required: a list of non-negative integers
  std::size_t required_index(const std::string& key);
  bool flag(const std::string& key, bool fallback);     // true/false, or an integer (0 = false)
  bool boolean(const std::string& key, bool fallback);  // true or false only
  // A string, one of `allowed` when that is not empty.
  std::string text(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed);
  // Whether the key holds a list, and a list of strings (required when asked for).
  bool is_list(const std::string& key);
  std::vector<std::string> text_list(const std::string& key);
  // Throws for a key that no getter read: "<what>: unknown param 'k' (known: …)".
  void finish() const;

 private:
  std::string what_;
  nlohmann::json json_;
  std::set<std::string> known_;
};

}  // namespace attnlens::api
