// What every attnlens-cli subcommand shares: argument parsing, the flags that come from a task's contract
// (api/contract.h: option num_beams ↔ --num-beams), results as JSON through their field lists, and line output.
// Each subcommand lives in its own file (src/cli/<command>.cpp); main.cpp only dispatches.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.h"
#include "common.h"

namespace attnlens::cli {

// Wrong usage (unknown option, missing argument): reported with a hint to --help, exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // --name value, or --flag with an empty value
};

// Parses argv[first..] given which options take a value and which are flags; anything else is a usage error.
Args parse_args(int argc, char** argv, int first, const std::vector<std::string>& valued,
                const std::vector<std::string>& flags, const std::string& command);
const std::string* find_option(const Args& args, const std::string& name);  // the last occurrence wins
bool has_flag(const Args& args, const std::string& name);
// The value of a required option (e.g. --model DIR); UsageError "<command>: <name> <what> is required".
const std::string& required_option(const Args& args, const std::string& name, const std::string& what,
                                   const std::string& command);
// UsageError unless no positional argument was given (input comes from stdin).
void no_positional(const Args& args, const std::string& command, const std::string& input = "input is read from stdin");
// argv[2], the subcommand of `command` (bpe learn, bundle check, …): one of `known`, else a UsageError.
std::string subcommand(int argc, char** argv, const std::string& command, const std::vector<std::string>& known);
int parse_int(const std::string& text, const std::string& what, long long min_value, long long max_value);
double parse_double(const std::string& text, const std::string& what);
std::vector<std::string> split_spaces(const std::string& line);
std::string read_binary(const std::string& path);

// Output: one line per result; dump() writes JSON on one line (ill-formed UTF-8 replaced).
std::string dump(const nlohmann::json& j);
void write_line(std::string out);
// Checks stdin (when it was read) and flushes stdout; an Error naming the command when either failed.
void finish_io(const std::string& command, bool read_stdin = true);
bool read_line(std::string& line);  // std::getline of stdin
// Calls `fn(line)` for each stdin line, a trailing CR removed (and empty lines skipped with skip_empty).
template <class Fn>
void for_each_line(Fn&& fn, bool skip_empty = false);

// Every map of a trace as [{name, layer, head, dims, data}].
nlohmann::json maps_json(const AttentionTrace& maps);

// A result as JSON through its field list (api/contract.h): the same names and values the package publishes (a
// record with kAsArray as an array, an omitted Omittable field as no key); maps as maps_json().
template <class T>
nlohmann::json to_json(const T& v) {
  if constexpr (std::is_same_v<T, AttentionTrace>) {
    return maps_json(v);
  } else if constexpr (api::has_fields<T>::value && api::as_array<T>::value) {
    nlohmann::json out = nlohmann::json::array();
    api::for_each_published(v, [&out](const char*, const auto& x) { out.push_back(to_json(x)); });
    return out;
  } else if constexpr (api::has_fields<T>::value) {
    nlohmann::json out = nlohmann::json::object();
    api::for_each_published(v, [&out](const char* name, const auto& x) {
      using X = std::decay_t<decltype(x)>;
      if constexpr (api::is_list_or_self<X>::value) {
        out[name] = x.self ? nlohmann::json::array({out}) : to_json(x.list);  // [the record itself] or the list
      } else {
        out[name] = to_json(x);
      }
    });
    return out;
  } else if constexpr (api::is_vector<T>::value) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : v) out.push_back(to_json(x));
    return out;
  } else {
    return nlohmann::json(v);
  }
}

// ---- flags from a task's contract -------------------------------------------------------------------------------
// An option's flag: num_beams → --num-beams. A boolean option has --name (true) and --no-name (false); the others
// take a value (integers and numbers checked against the declared range, enums against the declared values).
std::string flag_of(const std::string& option);
struct ContractFlags {
  const api::Contract* contract = nullptr;
  std::vector<std::string> skip;                 // options this command sets itself (e.g. output_attentions)
  std::map<std::string, std::string> aliases;    // older flags kept working: "--beams" → "num_beams"
  std::vector<std::string> valued() const;       // the flags that take a value
  std::vector<std::string> flags() const;        // the flags that take none
  // The options given on the command line as the JSON object the task's *_params() reads.
  nlohmann::json read(const Args& args, const std::string& command) const;
};
// "  --num-beams N     beam width (…) [1..64; default: the model's]" lines of a contract's options.
std::string contract_help(const api::Contract& contract, const std::vector<std::string>& skip);

// The subcommands (src/cli/<command>.cpp): argv[1] is the command; return the exit status.
int bpe_command(int argc, char** argv);
int words_command(int argc, char** argv);
int bundle_command(int argc, char** argv);
int sentiment_command(int argc, char** argv);
int sort_command(int argc, char** argv);
int translate_command(int argc, char** argv);
int align_command(int argc, char** argv);
int caption_command(int argc, char** argv);
int vqa_command(int argc, char** argv);
int classify_command(int argc, char** argv);
int text_classification_command(int argc, char** argv);
int feature_extraction_command(int argc, char** argv);

template <class Fn>
void for_each_line(Fn&& fn, bool skip_empty) {
  std::string line;
  while (read_line(line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (skip_empty && line.empty()) continue;
    fn(line);
  }
}

}  // namespace attnlens::cli
