// attnlens-cli: the engine's native command line. Training recipes call it so that they tokenize with the very
// implementation that inference uses (native and WASM). Run `attnlens-cli --help` for the commands.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "common.h"
#include "io/bundle.h"
#include "text/bpe.h"
#include "text/words.h"

namespace {

using attnlens::Error;
using attnlens::require;

constexpr const char* kUsage =
    R"(attnlens-cli — command-line tools of the attnlens attention engine

usage:
  attnlens-cli bpe learn --merges N [--min-frequency K] --output PREFIX FILE [FILE ...]
      Learn a BPE model from plain-text files (one sentence per line, UTF-8; invalid bytes become U+FFFD).
      Writes PREFIX.vocab (one piece per line, line number = id; <pad>=0 <unk>=1 <s>=2 </s>=3 first) and
      PREFIX.merges (one "left right" merge per line, in rank order). N >= 0 merges; characters seen fewer than
      K times (default 1) are left out of the vocabulary and encode as <unk>.
  attnlens-cli bpe encode --model PREFIX [--ids]
      stdin lines -> stdout lines of space-separated pieces (or ids with --ids). An empty line stays empty.
  attnlens-cli bpe decode --model PREFIX [--ids]
      stdin lines of space-separated pieces (or ids with --ids) -> stdout text lines.
  attnlens-cli words tokenize
      stdin lines of raw text -> stdout lines of space-separated tokens in the SST-2 (Penn Treebank, lowercased)
      form: "It's not bad." -> "it 's not bad ."
  attnlens-cli bundle check DIR
      Load and validate a model bundle (config.json, weights.safetensors: offsets, sizes, dtypes, finite
      weights, known architecture) and list its tensors.
  attnlens-cli --help

Pieces mark a preceding space with "▁" (U+2581); decode(encode(text)) restores whitespace-normalised text.
Exit status: 0 on success, 1 on an error (message on stderr), 2 on wrong usage.
)";

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

int parse_int(const std::string& text, const std::string& what, long min_value, long max_value) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min_value || v > max_value)
    throw UsageError(what + " must be an integer in [" + std::to_string(min_value) + ", " +
                     std::to_string(max_value) + "], got '" + text + "'");
  return static_cast<int>(v);
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

int bpe_learn(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 3, {"--merges", "--min-frequency", "--output"}, {}, "bpe learn");
  const std::string* merges = find_option(args, "--merges");
  const std::string* output = find_option(args, "--output");
  if (merges == nullptr) throw UsageError("bpe learn: --merges N is required");
  if (output == nullptr || output->empty()) throw UsageError("bpe learn: --output PREFIX is required");
  if (args.positional.empty()) throw UsageError("bpe learn: give at least one input FILE");
  attnlens::text::BpeLearnOptions options;
  options.num_merges = parse_int(*merges, "--merges", 0, 10'000'000);
  if (const std::string* k = find_option(args, "--min-frequency"))
    options.min_frequency = parse_int(*k, "--min-frequency", 1, 2'000'000'000);

  std::vector<std::ifstream> files;
  files.reserve(args.positional.size());
  std::vector<std::istream*> inputs;
  for (const auto& path : args.positional) {
    files.emplace_back(path, std::ios::binary);
    require(static_cast<bool>(files.back()), "bpe learn: cannot open input file '" + path + "'");
    inputs.push_back(&files.back());
  }
  const auto tok = attnlens::text::BpeTokenizer::learn(inputs, options);
  for (std::size_t i = 0; i < files.size(); ++i)
    require(!files[i].bad(), "bpe learn: error while reading '" + args.positional[i] + "'");
  tok.save(*output);
  std::cerr << "bpe learn: " << tok.num_merges() << " merges, vocabulary of " << tok.vocab_size()
            << " pieces -> " << *output << ".vocab, " << *output << ".merges\n";
  if (static_cast<int>(tok.num_merges()) < options.num_merges)
    std::cerr << "bpe learn: stopped before " << options.num_merges
              << " merges: no remaining pair occurs more than once\n";
  return 0;
}

int bpe_apply(int argc, char** argv, bool encode) {
  const std::string command = encode ? "bpe encode" : "bpe decode";
  const Args args = parse_args(argc, argv, 3, {"--model"}, {"--ids"}, command);
  if (!args.positional.empty()) throw UsageError(command + ": unexpected argument '" + args.positional[0] +
                                                 "' (input is read from stdin)");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError(command + ": --model PREFIX is required");
  const bool ids = find_option(args, "--ids") != nullptr;
  const auto tok = attnlens::text::BpeTokenizer::load(*model);

  std::string line, out;
  std::size_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    out.clear();
    if (encode) {
      if (ids) {
        for (int id : tok.encode(line)) {
          if (!out.empty()) out += ' ';
          out += std::to_string(id);
        }
      } else {
        for (const auto& p : tok.encode_pieces(line)) {
          if (!out.empty()) out += ' ';
          out += p;
        }
      }
    } else {
      const std::vector<std::string> fields = split_spaces(line);
      if (ids) {
        std::vector<int> id_list;
        for (const auto& f : fields) {
          errno = 0;
          char* end = nullptr;
          const long v = std::strtol(f.c_str(), &end, 10);
          require(*end == '\0' && errno != ERANGE && v >= 0 && static_cast<std::size_t>(v) < tok.vocab_size(),
                  "bpe decode: line " + std::to_string(line_no) + ": '" + f + "' is not a token id of this model (0.." +
                      std::to_string(tok.vocab_size() - 1) + ")");
          id_list.push_back(static_cast<int>(v));
        }
        out = tok.decode(id_list);
      } else {
        out = tok.decode_pieces(fields);
      }
    }
    out += '\n';
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  }
  require(!std::cin.bad(), command + ": error while reading stdin");
  std::cout.flush();
  require(static_cast<bool>(std::cout), command + ": error while writing stdout");
  return 0;
}

int words_tokenize(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 3, {}, {}, "words tokenize");
  if (!args.positional.empty())
    throw UsageError("words tokenize: unexpected argument '" + args.positional[0] + "' (input is read from stdin)");
  std::string line, out;
  while (std::getline(std::cin, line)) {
    out.clear();
    for (const auto& t : attnlens::text::tokenize_words(line)) {
      if (!out.empty()) out += ' ';
      out += t;
    }
    out += '\n';
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  }
  require(!std::cin.bad(), "words tokenize: error while reading stdin");
  std::cout.flush();
  require(static_cast<bool>(std::cout), "words tokenize: error while writing stdout");
  return 0;
}

int bundle_check(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 3, {}, {}, "bundle check");
  if (args.positional.size() != 1) throw UsageError("bundle check: give exactly one bundle directory");
  const auto bundle = attnlens::io::Bundle::load(args.positional[0]);
  const auto& w = bundle.weights();
  std::size_t params = 0;
  for (const auto& name : w.names()) {
    const auto& info = w.info(name);
    params += info.element_count();
    std::cout << name << "\t" << attnlens::io::dtype_name(info.dtype) << "\t"
              << attnlens::io::shape_to_string(info.shape) << "\n";
  }
  std::cout << "ok: " << args.positional[0] << ": architecture " << bundle.architecture() << ", "
            << w.names().size() << " tensors, " << params << " values\n";
  return 0;
}

int run(int argc, char** argv) {
  if (argc < 2) throw UsageError("no command given");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h" || (i == 1 && a == "help")) {
      std::cout << kUsage;
      return 0;
    }
  }
  const std::string cmd = argv[1];
  if (cmd == "bpe") {
    if (argc < 3) throw UsageError("bpe: give a subcommand: learn, encode or decode");
    const std::string sub = argv[2];
    if (sub == "learn") return bpe_learn(argc, argv);
    if (sub == "encode") return bpe_apply(argc, argv, true);
    if (sub == "decode") return bpe_apply(argc, argv, false);
    throw UsageError("bpe: unknown subcommand '" + sub + "' (expected learn, encode or decode)");
  }
  if (cmd == "bundle") {
    if (argc < 3) throw UsageError("bundle: give a subcommand: check");
    const std::string sub = argv[2];
    if (sub == "check") return bundle_check(argc, argv);
    throw UsageError("bundle: unknown subcommand '" + sub + "' (expected check)");
  }
  if (cmd == "words") {
    if (argc < 3) throw UsageError("words: give a subcommand: tokenize");
    const std::string sub = argv[2];
    if (sub == "tokenize") return words_tokenize(argc, argv);
    throw UsageError("words: unknown subcommand '" + sub + "' (expected tokenize)");
  }
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "attnlens-cli: " << e.what() << "\nRun 'attnlens-cli --help' for usage.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnlens-cli: error: " << e.what() << "\n";
    return 1;
  }
}
