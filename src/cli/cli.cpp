// The shared parts of attnlens-cli (cli.h): arguments, contract flags, JSON and line output.
#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace attnlens::cli {

Args parse_args(int argc, char** argv, int first, const std::vector<std::string>& valued,
                const std::vector<std::string>& flags, const std::string& command) {
  Args args;
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a, value;
      const std::size_t eq = a.find('=');
      const bool has_inline = eq != std::string::npos;
      if (has_inline) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
      }
      if (std::find(valued.begin(), valued.end(), name) != valued.end()) {
        if (!has_inline) {
          if (i + 1 >= argc) throw UsageError(command + ": option " + name + " needs a value");
          value = argv[++i];
        }
        args.options.emplace_back(name, value);
      } else if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
        if (has_inline) throw UsageError(command + ": option " + name + " takes no value");
        args.options.emplace_back(name, "");
      } else {
        throw UsageError(command + ": unknown option '" + a + "'");
      }
    } else {
      args.positional.push_back(a);
    }
  }
  return args;
}

const std::string* find_option(const Args& args, const std::string& name) {
  const std::string* found = nullptr;
  for (const auto& [n, v] : args.options)
    if (n == name) found = &v;  // the last occurrence wins, as in most Unix tools
  return found;
}

bool has_flag(const Args& args, const std::string& name) { return find_option(args, name) != nullptr; }

const std::string& required_option(const Args& args, const std::string& name, const std::string& what,
                                   const std::string& command) {
  const std::string* v = find_option(args, name);
  if (v == nullptr || v->empty()) throw UsageError(command + ": " + name + " " + what + " is required");
  return *v;
}

void no_positional(const Args& args, const std::string& command, const std::string& input) {
  if (!args.positional.empty())
    throw UsageError(command + ": unexpected argument '" + args.positional[0] + "' (" + input + ")");
}

std::string subcommand(int argc, char** argv, const std::string& command, const std::vector<std::string>& known) {
  std::string list;
  for (std::size_t i = 0; i < known.size(); ++i)
    list += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
  if (argc < 3) throw UsageError(command + ": give a subcommand: " + list);
  const std::string sub = argv[2];
  if (std::find(known.begin(), known.end(), sub) == known.end())
    throw UsageError(command + ": unknown subcommand '" + sub + "' (expected " + list + ")");
  return sub;
}

int parse_int(const std::string& text, const std::string& what, long long min_value, long long max_value) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min_value || v > max_value)
    throw UsageError(what + " must be an integer in [" + std::to_string(min_value) + ", " +
                     std::to_string(max_value) + "], got '" + text + "'");
  return static_cast<int>(v);
}

double parse_double(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !(v == v) || v > 1e9 || v < -1e9)
    throw UsageError(what + " must be a number, got '" + text + "'");
  return v;
}

std::vector<std::string> split_spaces(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string read_binary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  require(f.good(), "cannot open image '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  require(!f.bad(), "error while reading '" + path + "'");
  return bytes;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

void write_line(std::string out) {
  out += '\n';
  std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
}

bool read_line(std::string& line) { return static_cast<bool>(std::getline(std::cin, line)); }

void finish_io(const std::string& command, bool read_stdin) {
  if (read_stdin) require(!std::cin.bad(), command + ": error while reading stdin");
  std::cout.flush();
  require(static_cast<bool>(std::cout), command + ": error while writing stdout");
}

nlohmann::json maps_json(const AttentionTrace& maps) {
  nlohmann::json a = nlohmann::json::array();
  for (const MapView m : maps)
    a.push_back({{"name", m.name}, {"layer", m.layer}, {"head", m.head}, {"dims", m.dims}, {"data", m.data.to_vector()}});
  return a;
}

// ---- contract flags ---------------------------------------------------------------------------------------------

std::string flag_of(const std::string& option) {
  std::string f = "--" + option;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

namespace {

// The options of a contract the CLI offers as flags: those the engine reads, less the ones the command sets.
std::vector<const api::OptionSpec*> flag_options(const api::Contract& c, const std::vector<std::string>& skip) {
  std::vector<const api::OptionSpec*> out;
  for (const auto& o : c.options)
    if (o.engine && o.kind != api::OptionKind::kBooleanOrKinds &&
        std::find(skip.begin(), skip.end(), o.name) == skip.end())
      out.push_back(&o);
  return out;
}

nlohmann::json flag_value(const api::OptionSpec& o, const std::string& flag, const std::string& text,
                          const std::string& command) {
  switch (o.kind) {
    case api::OptionKind::kInteger:
      return parse_int(text, flag, o.lo, o.hi);
    case api::OptionKind::kNumber:
      return parse_double(text, flag);
    case api::OptionKind::kEnum:
      if (std::find(o.values.begin(), o.values.end(), text) == o.values.end()) {
        std::string list;
        for (const auto& v : o.values) list += (list.empty() ? "" : "|") + v;
        throw UsageError(command + ": " + flag + " must be " + list + ", got '" + text + "'");
      }
      return text;
    default:
      return nullptr;
  }
}

}  // namespace

std::vector<std::string> ContractFlags::valued() const {
  std::vector<std::string> out;
  for (const auto* o : flag_options(*contract, skip))
    if (o->kind != api::OptionKind::kBoolean) out.push_back(flag_of(o->name));
  for (const auto& [flag, name] : aliases)
    if (contract->option(name).kind != api::OptionKind::kBoolean) out.push_back(flag);
  return out;
}

std::vector<std::string> ContractFlags::flags() const {
  std::vector<std::string> out;
  for (const auto* o : flag_options(*contract, skip))
    if (o->kind == api::OptionKind::kBoolean) {
      out.push_back(flag_of(o->name));
      out.push_back("--no-" + flag_of(o->name).substr(2));
    }
  for (const auto& [flag, name] : aliases)
    if (contract->option(name).kind == api::OptionKind::kBoolean) out.push_back(flag);
  return out;
}

nlohmann::json ContractFlags::read(const Args& args, const std::string& command) const {
  std::map<std::string, const api::OptionSpec*> by_flag;  // every accepted spelling → its option
  std::map<std::string, bool> negated;
  for (const auto* o : flag_options(*contract, skip)) {
    by_flag[flag_of(o->name)] = o;
    if (o->kind == api::OptionKind::kBoolean) {
      const std::string no = "--no-" + flag_of(o->name).substr(2);
      by_flag[no] = o;
      negated[no] = true;
    }
  }
  for (const auto& [flag, name] : aliases) by_flag[flag] = &contract->option(name);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [flag, text] : args.options) {  // in order: the last spelling given wins
    const auto it = by_flag.find(flag);
    if (it == by_flag.end()) continue;
    const api::OptionSpec& o = *it->second;
    out[o.name] = o.kind == api::OptionKind::kBoolean ? nlohmann::json(!negated.count(flag))
                                                       : flag_value(o, flag, text, command);
  }
  return out;
}

std::string contract_help(const api::Contract& contract, const std::vector<std::string>& skip) {
  std::string out;
  for (const auto* o : flag_options(contract, skip)) {
    std::string left = "      " + flag_of(o->name);
    std::string range;
    switch (o->kind) {
      case api::OptionKind::kInteger:
        left += " N";
        range = std::to_string(o->lo) + ".." + std::to_string(o->hi) + "; ";
        break;
      case api::OptionKind::kNumber:
        left += " X";
        break;
      case api::OptionKind::kEnum:
        left += " ";
        for (std::size_t i = 0; i < o->values.size(); ++i) left += (i ? "|" : "") + o->values[i];
        break;
      default:
        left += " | --no-" + flag_of(o->name).substr(2);
        break;
    }
    const std::string fallback = o->fallback.is_null() ? std::string("the model's") : o->fallback.dump();
    out += left + "\n          " + o->doc + " [" + range + "default: " + fallback + "]\n";
  }
  return out;
}

}  // namespace attnlens::cli
