// attnlens-cli bpe learn | encode | decode: the BPE tokenizer of the translation recipes (api/text.h).
#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "cli.h"

namespace attnlens::cli {

namespace {

int bpe_learn(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 3, {"--merges", "--min-frequency", "--output"}, {}, "bpe learn");
  const std::string* merges = find_option(args, "--merges");
  if (merges == nullptr) throw UsageError("bpe learn: --merges N is required");
  const std::string& output = required_option(args, "--output", "PREFIX", "bpe learn");
  if (args.positional.empty()) throw UsageError("bpe learn: give at least one input FILE");
  api::BpeLearnParams options;
  options.num_merges = parse_int(*merges, "--merges", 0, 10'000'000);
  if (const std::string* k = find_option(args, "--min-frequency"))
    options.min_frequency = parse_int(*k, "--min-frequency", 1, 2'000'000'000);
  const auto tok = api::BpeTokenizer::learn_files(args.positional, options);
  tok->save(output);
  std::cerr << "bpe learn: " << tok->num_merges() << " merges, vocabulary of " << tok->vocab_size() << " pieces -> "
            << output << ".vocab, " << output << ".merges\n";
  if (static_cast<int>(tok->num_merges()) < options.num_merges)
    std::cerr << "bpe learn: stopped before " << options.num_merges
              << " merges: no remaining pair occurs more than once\n";
  return 0;
}

// One line of space-separated ids → the ids, each checked against the vocabulary.
std::vector<int> parse_ids(const std::string& line, std::size_t vocab_size, std::size_t line_no) {
  std::vector<int> ids;
  for (const auto& f : split_spaces(line)) {
    errno = 0;
    char* end = nullptr;
    const long v = std::strtol(f.c_str(), &end, 10);
    require(*end == '\0' && errno != ERANGE && v >= 0 && static_cast<std::size_t>(v) < vocab_size,
            "bpe decode: line " + std::to_string(line_no) + ": '" + f + "' is not a token id of this model (0.." +
                std::to_string(vocab_size - 1) + ")");
    ids.push_back(static_cast<int>(v));
  }
  return ids;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

int bpe_apply(int argc, char** argv, bool encode) {
  const std::string command = encode ? "bpe encode" : "bpe decode";
  const Args args = parse_args(argc, argv, 3, {"--model"}, {"--ids"}, command);
  no_positional(args, command);
  const std::string& model = required_option(args, "--model", "PREFIX", command);
  const bool ids = has_flag(args, "--ids");
  const auto tok = api::BpeTokenizer::load(model);

  std::string line;
  std::size_t line_no = 0;
  while (read_line(line)) {
    ++line_no;
    if (encode) {
      const api::BpeEncoding enc = tok->encode(line);
      if (ids) {
        std::vector<std::string> text;
        for (int id : enc.ids) text.push_back(std::to_string(id));
        write_line(joined(text));
      } else {
        write_line(joined(enc.pieces));
      }
    } else {
      write_line(ids ? tok->decode(parse_ids(line, tok->vocab_size(), line_no)) : tok->decode_pieces(split_spaces(line)));
    }
  }
  finish_io(command);
  return 0;
}

}  // namespace

int bpe_command(int argc, char** argv) {
  const std::string sub = subcommand(argc, argv, "bpe", {"learn", "encode", "decode"});
  return sub == "learn" ? bpe_learn(argc, argv) : bpe_apply(argc, argv, sub == "encode");
}

}  // namespace attnlens::cli
