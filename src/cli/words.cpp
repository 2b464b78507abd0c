// attnlens-cli words tokenize: the SST-2 word tokenizer (api/text.h), one line in, one line of tokens out.
#include "cli.h"

namespace attnlens::cli {

int words_command(int argc, char** argv) {
  subcommand(argc, argv, "words", {"tokenize"});
  const Args args = parse_args(argc, argv, 3, {}, {}, "words tokenize");
  no_positional(args, "words tokenize");
  std::string line;
  while (read_line(line)) {
    std::string out;
    for (const auto& t : api::tokenize_words(line)) out += (out.empty() ? "" : " ") + t;
    write_line(out);
  }
  finish_io("words tokenize");
  return 0;
}

}  // namespace attnlens::cli
