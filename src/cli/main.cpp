// attnlens-cli: the engine's native command line. Training recipes call it so that they tokenize with the very
// implementation that inference uses (native and WASM). Run `attnlens-cli --help` for the commands.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api.h"
#include "common.h"

namespace {

using attnlens::Error;
using attnlens::require;

// Every map of a trace as [{name, layer, head, dims, data}].
nlohmann::json maps_json(const attnlens::AttentionTrace& maps) {
  nlohmann::json a = nlohmann::json::array();
  for (const attnlens::MapView m : maps)
    a.push_back({{"name", m.name}, {"layer", m.layer}, {"head", m.head}, {"dims", m.dims}, {"data", m.data.to_vector()}});
  return a;
}

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
  attnlens-cli sentiment --model DIR [--max-tokens N] [--pretokenized] [--no-attention]
      stdin lines of text -> stdout, one JSON object per line: {"label", "label_index", "score",
      "probabilities", "tokens", "ids", "truncated", "num_input_tokens", "attention": {"name", "dims", "data"}}.
      DIR is a sentiment bundle (models/sst2-selfattn, models/sst2-relation). Text is tokenized the SST-2 way
      (lowercased, punctuation and clitics split: "Don't!" -> do n't !); unknown words show as "<unk>".
      --pretokenized splits lines on spaces only (lines of SST-2's dev.tsv); --max-tokens N (1..1024, default
      256) keeps the first N tokens and sets "truncated"; --no-attention leaves out "attention". A line that
      cannot be classified (an empty line) gives {"error": MESSAGE}; the exit status is then 1 at the end.
  attnlens-cli bundle check DIR
      Load and validate a model bundle (config.json, weights.safetensors: offsets, sizes, dtypes, finite
      weights, known architecture) and list its tensors.
  attnlens-cli translate --model DIR [--beams N] [--alpha A] [--coverage-beta B] [--max-new-tokens N]
                        [--json [--attentions] [--word-maps] [--qk]] [--no-copy-numbers]
      Translate stdin lines with a translation bundle (e.g. models/de-en-transformer), one output line per input
      line. Defaults come from the bundle's config (decoding): beams 1 = greedy. --json prints one JSON object
      per line {text, source_tokens, target_tokens, source_ids, target_ids, truncated, score}; --attentions adds
      every attention map {name, layer, head, dims, data}.
      With --json every result also has "source_words"/"target_words" ({text, begin, end}: byte offsets into
      the input line / the translation), "alignment" ([[source word, target word], ...]) and
      "alignment_method" (see align); --word-maps adds "word_attentions" (every map merged to words); --qk
      adds "qk": the query and key vectors behind every map ("<kind>.query" [rows, d_head], "<kind>.key"
      [columns, d_head] per layer and head; Transformer translators only), for the neuron view.
      Numbers are copied by alignment (a number the model wrote differently from the source number it is
      aligned with is replaced by that number in English notation, "2,50" → "2.50"; JSON lists them in
      "number_copies"); --no-copy-numbers prints the model's own text.
  attnlens-cli align --model DIR [--method head|layer-mean] [--extraction argmax|gdfa] [--layer L] [--head H]
                    [--json [--attentions] [--word-maps] [--qk]]
      Forced decoding: each stdin line is "German<TAB>English"; the model is run over the given English
      (teacher forcing) instead of searching. Prints one line per pair: the word alignment as "i-j" links
      (German word i, English word j, from 0; words = BPE pieces merged, punctuation and hyphens separate, as
      \w+|[^\w\s]) — the format of ../shared/align's aer.py — or with --json the whole result (words with
      byte offsets, links, per-piece log-probabilities "token_logprobs", score, and with --attentions every map).
      Methods: "head" = the bundle's trained alignment head (or --layer/--head), "layer-mean" = the mean of one
      decoder layer's cross heads; default: the bundle's "alignment" setting. Extraction: argmax per English
      word, or "gdfa" (grow-diag-final-and of both argmax directions). A bad line gives {"error": ...} with
      --json (or "ERROR: ..."), and exit status 1 at the end.
  attnlens-cli caption --model DIR [--encoder DIR] [--beams N] [--max-new-tokens N] [--allow-unk]
                      [--raw-size WxH] [--caption TEXT | --forced] [--json [--attentions]] [IMAGE ...]
      Caption images with a captioning bundle (models/flickr8k-mobilenet, models/shapes). The encoder bundle
      its config.json names ("encoder.bundle") is read from ../NAME next to DIR unless --encoder DIR is given.
      Images are the given paths, or else one path per stdin line; each is a binary PPM (P6, RGB) or PGM (P5,
      grey) file, or with --raw-size WxH a raw RGBA file of W*H*4 bytes (alpha composited over white). Any
      size; the engine resizes to the bundle's image.input_size itself (352x352 for flickr8k-mobilenet, 224x224
      for shapes; bilinear, half-pixel centres). One output line per image:
      the caption, or with --json {image, text, tokens, token_ids, finished, score, betas} and, with
      --attentions, "attention": {dims [T, g, g], data} (g = input size / 32: 11 or 7). Beams default to the bundle's decoding.num_beams
      (1 = greedy). The search never emits "<unk>" unless --allow-unk is given (then it is the reference
      search of sat.py exactly). An image that cannot be read gives {"image", "error"} (or "ERROR: ..."
      without --json) and exit status 1 at the end.
      Forced caption (teacher forcing, no search): --caption TEXT scores TEXT on every image; --forced reads
      stdin lines "IMAGE<TAB>CAPTION" (one caption per image). The caption is lowercased and split as in
      training (\w+|[^\w\s]); tokens are its words then "<end>", words outside the vocabulary become "<unk>"
      and are listed in "unknown_words" [{word, position}]. --json adds "token_logprobs" (each token's
      log-probability; "score" is their sum); --attentions gives one g x g map per token. Without --json: the
      score, a TAB, then each token with its log-probability. An empty caption or one of more than 1000 words
      is an error for that image. --beams/--max-new-tokens/--allow-unk do not apply.
  attnlens-cli classify --model DIR [--top N] [IMAGE ...]
      ImageNet classes of images with an image classifier bundle (models/mobilenet-v2-imagenet): one JSON line
      per image {image, classes: [{index, label, probability}]}, the N (default 5) most probable first. Images as
      for caption (PPM/PGM paths as arguments or stdin lines).
  attnlens-cli vqa --model DIR [--encoder DIR] [--question TEXT IMAGE ...] [--json [--attentions]]
      Answer questions about images with a VQA bundle (models/shapes-vqa-coattn, models/shapes-vqa-aoa): with
      --question TEXT, that question about every IMAGE; else stdin lines "IMAGE<TAB>QUESTION" (consecutive lines
      about the same image encode it once). Images as for caption (PPM/PGM). One output line per question: the
      answer, or with --json {image, question, answer, score, answers, scores, logits, tokens, token_ids,
      unknown_words, count, attention, where} and with --attentions every map {name, layer, head, dims, data}
      (region_attention, word_attention, affinity or aoa_*, count_density). An empty question, one with no
      known word or more than the bundle's max_question_words words gives {"error": ...} and exit status 1.
  attnlens-cli sort --model DIR [--json [--attentions]] [NUMBER ...]
      Sort numbers with a pointer-network bundle (models/pointer-sort): the given NUMBERs as one list, or else
      each stdin line as one list (numbers separated by commas, semicolons or white space). One output line per
      list: the sorted numbers, or with --json {values, order, sorted, sorted_ok, step_probabilities, inputs}
      ("order" = input positions in output order, from 0) and with --attentions every map {name, layer, head,
      dims, data}: "pointer" [n, n] (row = output step) and "encoder_self" per layer and head. A list that is
      empty, holds a non-number, NaN/inf or more than the bundle's max_length numbers gives {"error": ...} (or
      "ERROR: ..." without --json) and exit status 1 at the end.
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
  attnlens::api::BpeLearnParams options;
  options.num_merges = parse_int(*merges, "--merges", 0, 10'000'000);
  if (const std::string* k = find_option(args, "--min-frequency"))
    options.min_frequency = parse_int(*k, "--min-frequency", 1, 2'000'000'000);
  const auto tok = attnlens::api::BpeTokenizer::learn_files(args.positional, options);
  tok->save(*output);
  std::cerr << "bpe learn: " << tok->num_merges() << " merges, vocabulary of " << tok->vocab_size()
            << " pieces -> " << *output << ".vocab, " << *output << ".merges\n";
  if (static_cast<int>(tok->num_merges()) < options.num_merges)
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
  const auto tok = attnlens::api::BpeTokenizer::load(*model);

  std::string line, out;
  std::size_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    out.clear();
    if (encode) {
      const attnlens::api::BpeEncoding enc = tok->encode(line);
      if (ids) {
        for (int id : enc.ids) {
          if (!out.empty()) out += ' ';
          out += std::to_string(id);
        }
      } else {
        for (const auto& p : enc.pieces) {
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
          require(*end == '\0' && errno != ERANGE && v >= 0 && static_cast<std::size_t>(v) < tok->vocab_size(),
                  "bpe decode: line " + std::to_string(line_no) + ": '" + f + "' is not a token id of this model (0.." +
                      std::to_string(tok->vocab_size() - 1) + ")");
          id_list.push_back(static_cast<int>(v));
        }
        out = tok->decode(id_list);
      } else {
        out = tok->decode_pieces(fields);
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
    for (const auto& t : attnlens::api::tokenize_words(line)) {
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

int sentiment(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--max-tokens"}, {"--pretokenized", "--no-attention"},
                               "sentiment");
  if (!args.positional.empty())
    throw UsageError("sentiment: unexpected argument '" + args.positional[0] + "' (input is read from stdin)");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("sentiment: --model DIR is required");
  attnlens::api::SentimentParams params;
  if (const std::string* n = find_option(args, "--max-tokens"))
    params.max_tokens = static_cast<std::size_t>(parse_int(*n, "--max-tokens", 1, 1024));
  const bool pretokenized = find_option(args, "--pretokenized") != nullptr;
  const bool attention = find_option(args, "--no-attention") == nullptr;
  const auto clf = attnlens::api::SentimentClassifier::load(*model, params);

  std::string line, out;
  bool failed = false;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    nlohmann::json j;
    try {
      const auto r = pretokenized ? clf->classify_tokens(split_spaces(line)) : clf->classify(line);
      j["label"] = r.label;
      j["label_index"] = r.label_index;
      j["score"] = r.score;
      j["probabilities"] = r.probabilities;
      j["tokens"] = r.tokens;
      j["ids"] = r.ids;
      j["truncated"] = r.truncated;
      j["num_input_tokens"] = r.num_input_tokens;
      if (attention) {
        const attnlens::MapView a = r.attentions.at(0);
        j["attention"] = {{"name", a.name}, {"dims", a.dims}, {"data", a.data.to_vector()}};
      }
    } catch (const Error& e) {
      j = {{"error", e.what()}};
      failed = true;
    }
    out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += '\n';
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  }
  require(!std::cin.bad(), "sentiment: error while reading stdin");
  std::cout.flush();
  require(static_cast<bool>(std::cout), "sentiment: error while writing stdout");
  return failed ? 1 : 0;
}

int sort_numbers(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model"}, {"--json", "--attentions"}, "sort");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("sort: --model DIR is required");
  const bool json = find_option(args, "--json") != nullptr;
  const bool attentions = find_option(args, "--attentions") != nullptr;
  if (attentions && !json) throw UsageError("sort: --attentions needs --json");
  const auto sorter = attnlens::api::PointerSorter::load(*model);
  attnlens::api::PointerSortParams params;
  params.output_attentions = attentions;

  bool failed = false;
  const auto one = [&](const std::string& text) {
    nlohmann::json j;
    std::string out;
    try {
      const auto r = sorter->sort(attnlens::api::parse_number_list(text), params);
      if (json) {
        j["values"] = r.values;
        j["order"] = r.order;
        j["sorted"] = r.sorted;
        j["sorted_ok"] = r.sorted_ok;
        j["step_probabilities"] = r.step_probabilities;
        j["inputs"] = r.inputs;
        if (attentions) {
          j["attentions"] = maps_json(r.attentions);
        }
        out = j.dump();
      } else {
        for (std::size_t i = 0; i < r.sorted.size(); ++i) out += (i ? " " : "") + nlohmann::json(r.sorted[i]).dump();
      }
    } catch (const Error& e) {
      failed = true;
      out = json ? nlohmann::json({{"error", e.what()}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                 : std::string("ERROR: ") + e.what();
    }
    out += '\n';
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  };
  if (!args.positional.empty()) {
    std::string text;
    for (const auto& a : args.positional) text += a + " ";
    one(text);
  } else {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      one(line);
    }
    require(!std::cin.bad(), "sort: error while reading stdin");
  }
  std::cout.flush();
  require(static_cast<bool>(std::cout), "sort: error while writing stdout");
  return failed ? 1 : 0;
}

int bundle_check(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 3, {}, {}, "bundle check");
  if (args.positional.size() != 1) throw UsageError("bundle check: give exactly one bundle directory");
  const attnlens::api::BundleSummary bundle = attnlens::api::inspect_bundle(args.positional[0]);
  for (const auto& t : bundle.tensors) std::cout << t.name << "\t" << t.dtype << "\t" << t.shape_text << "\n";
  std::cout << "ok: " << args.positional[0] << ": architecture " << bundle.architecture << ", "
            << bundle.tensors.size() << " tensors, " << bundle.values << " values\n";
  return 0;
}

double parse_double(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !(v == v) || v > 1e9 || v < -1e9)
    throw UsageError(what + " must be a number, got '" + text + "'");
  return v;
}

nlohmann::json words_json(const std::vector<attnlens::api::WordSpan>& words) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& w : words) a.push_back({{"text", w.text}, {"begin", w.byte_begin}, {"end", w.byte_end}});
  return a;
}

// One translation (or forced decode) as JSON; `attentions`: with every map.
nlohmann::json translation_json(const attnlens::api::TranslationResult& r, bool attentions) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : r.alignment) links.push_back({l.source, l.target});
  nlohmann::json j = {{"text", r.text},
                      {"source_tokens", r.source_tokens},
                      {"target_tokens", r.target_tokens},
                      {"source_ids", r.source_ids},
                      {"target_ids", r.target_ids},
                      {"source_words", words_json(r.source_words)},
                      {"target_words", words_json(r.target_words)},
                      {"alignment", std::move(links)},
                      {"alignment_method", r.alignment_method},
                      {"truncated", r.truncated},
                      {"score", r.score}};
  if (!r.token_logprobs.empty()) j["token_logprobs"] = r.token_logprobs;
  if (attentions) j["attentions"] = maps_json(r.attentions);
  if (!r.word_attentions.empty()) j["word_attentions"] = maps_json(r.word_attentions);
  if (!r.qk.empty()) j["qk"] = maps_json(r.qk);
  if (!r.number_copies.empty()) {
    nlohmann::json copies = nlohmann::json::array();
    for (const auto& c : r.number_copies)
      copies.push_back({{"source_number", c.source_number}, {"target_word", c.target_word}, {"model", c.model_text},
                        {"text", c.text}, {"weight", c.weight}});
    j["number_copies"] = std::move(copies);
  }
  return j;
}

void write_line(std::string out) {
  out += '\n';
  std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
}

// --method/--extraction/--layer/--head/--word-maps of translate and align.
void read_alignment_options(const Args& args, attnlens::api::TranslationParams& params) {
  if (const std::string* v = find_option(args, "--method")) params.alignment_method = *v;
  if (const std::string* v = find_option(args, "--extraction")) params.alignment_extraction = *v;
  if (const std::string* v = find_option(args, "--layer")) params.alignment_layer = parse_int(*v, "--layer", 0, 1024);
  if (const std::string* v = find_option(args, "--head")) params.alignment_head = parse_int(*v, "--head", 0, 1024);
  params.word_maps = find_option(args, "--word-maps") != nullptr;
  params.output_qk = find_option(args, "--qk") != nullptr;
}

int align(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--method", "--extraction", "--layer", "--head"},
                               {"--json", "--attentions", "--word-maps", "--qk"}, "align");
  if (!args.positional.empty())
    throw UsageError("align: unexpected argument '" + args.positional[0] + "' (pairs are read from stdin)");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("align: --model DIR is required");
  attnlens::api::TranslationParams params;
  read_alignment_options(args, params);
  const bool json = find_option(args, "--json") != nullptr;
  const bool attentions = find_option(args, "--attentions") != nullptr;
  if ((attentions || params.word_maps || params.output_qk) && !json)
    throw UsageError("align: --attentions/--word-maps/--qk need --json");
  const auto translator = attnlens::api::Translator::load(*model);
  std::string line;
  int status = 0;
  while (std::getline(std::cin, line)) {
    try {
      const auto tab = line.find('\t');
      attnlens::require(tab != std::string::npos, "align: a line must be German<TAB>English");
      const auto r = translator->align(line.substr(0, tab), line.substr(tab + 1), params);
      if (json) {
        write_line(translation_json(r, attentions).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        std::string out;
        for (const auto& l : r.alignment)
          out += (out.empty() ? "" : " ") + std::to_string(l.source) + "-" + std::to_string(l.target);
        write_line(out);
      }
    } catch (const attnlens::Error& e) {
      status = 1;
      write_line(json ? nlohmann::json({{"error", e.what()}}).dump(-1, ' ', false,
                                                                   nlohmann::json::error_handler_t::replace)
                      : std::string("ERROR: ") + e.what());
    }
  }
  require(!std::cin.bad(), "align: error while reading stdin");
  std::cout.flush();
  require(static_cast<bool>(std::cout), "align: error while writing stdout");
  return status;
}

int translate(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--beams", "--alpha", "--coverage-beta", "--max-new-tokens",
                                               "--method", "--extraction", "--layer", "--head"},
                               {"--json", "--attentions", "--word-maps", "--qk", "--no-copy-numbers"}, "translate");
  if (!args.positional.empty())
    throw UsageError("translate: unexpected argument '" + args.positional[0] + "' (input is read from stdin)");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("translate: --model DIR is required");
  attnlens::api::TranslationParams params;
  if (const std::string* v = find_option(args, "--beams")) params.num_beams = parse_int(*v, "--beams", 1, 64);
  if (const std::string* v = find_option(args, "--max-new-tokens"))
    params.max_new_tokens = parse_int(*v, "--max-new-tokens", 1, 65536);
  if (const std::string* v = find_option(args, "--alpha")) params.alpha = parse_double(*v, "--alpha");
  if (const std::string* v = find_option(args, "--coverage-beta"))
    params.coverage_beta = parse_double(*v, "--coverage-beta");
  const bool json = find_option(args, "--json") != nullptr;
  const bool attentions = find_option(args, "--attentions") != nullptr;
  read_alignment_options(args, params);
  if ((attentions || params.word_maps || params.output_qk) && !json)
    throw UsageError("translate: --attentions/--word-maps/--qk need --json");
  // Maps are computed for the alignment too whenever JSON is asked for; plain text output needs none.
  params.output_attentions = json;
  params.copy_numbers = find_option(args, "--no-copy-numbers") == nullptr;
  const auto translator = attnlens::api::Translator::load(*model);

  std::string line;
  while (std::getline(std::cin, line)) {
    const auto r = translator->translate(line, params);
    write_line(json ? translation_json(r, attentions).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                    : r.text);
  }
  require(!std::cin.bad(), "translate: error while reading stdin");
  std::cout.flush();
  require(static_cast<bool>(std::cout), "translate: error while writing stdout");
  return 0;
}

std::string read_binary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  require(f.good(), "cannot open image '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  require(!f.bad(), "error while reading '" + path + "'");
  return bytes;
}

int caption(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2,
                               {"--model", "--encoder", "--beams", "--max-new-tokens", "--raw-size", "--caption"},
                               {"--json", "--attentions", "--forced", "--allow-unk"}, "caption");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("caption: --model DIR is required");
  const std::string* encoder = find_option(args, "--encoder");
  attnlens::api::CaptionParams params;
  if (const std::string* v = find_option(args, "--beams")) params.num_beams = parse_int(*v, "--beams", 1, 64);
  if (const std::string* v = find_option(args, "--max-new-tokens"))
    params.max_new_tokens = parse_int(*v, "--max-new-tokens", 1, 1000);
  params.allow_unk = find_option(args, "--allow-unk") != nullptr;
  std::size_t raw_w = 0, raw_h = 0;
  if (const std::string* v = find_option(args, "--raw-size")) {
    const std::size_t x = v->find('x');
    if (x == std::string::npos) throw UsageError("caption: --raw-size must look like 640x480");
    raw_w = static_cast<std::size_t>(parse_int(v->substr(0, x), "--raw-size width", 1, 65536));
    raw_h = static_cast<std::size_t>(parse_int(v->substr(x + 1), "--raw-size height", 1, 65536));
  }
  const bool json = find_option(args, "--json") != nullptr;
  params.output_attentions = find_option(args, "--attentions") != nullptr;
  if (params.output_attentions && !json) throw UsageError("caption: --attentions needs --json");
  const std::string* forced_caption = find_option(args, "--caption");
  const bool forced_lines = find_option(args, "--forced") != nullptr;
  if (forced_caption != nullptr && forced_lines) throw UsageError("caption: give --caption TEXT or --forced, not both");
  if (forced_lines && !args.positional.empty())
    throw UsageError("caption: with --forced, images and captions are read from stdin (IMAGE<TAB>CAPTION lines)");
  const auto captioner = attnlens::api::Captioner::load(*model, encoder ? *encoder : "");

  int status = 0;
  // caption == nullptr: search; else forced decoding of *caption
  auto one = [&](const std::string& path, const std::string* caption) {
    std::string out;
    try {
      const std::string bytes = read_binary(path);
      attnlens::api::CaptionResult r;
      if (raw_w != 0) {
        const auto* px = reinterpret_cast<const std::uint8_t*>(bytes.data());
        r = caption ? captioner->attend(px, bytes.size(), raw_w, raw_h, *caption, params, 4)
                    : captioner->caption(px, bytes.size(), raw_w, raw_h, params, 4);
      } else {
        const attnlens::api::DecodedImage img = attnlens::api::decode_pnm(bytes, path);
        r = caption ? captioner->attend(img.pixels.data(), img.pixels.size(), img.width, img.height, *caption, params,
                                        img.channels)
                    : captioner->caption(img.pixels.data(), img.pixels.size(), img.width, img.height, params,
                                         img.channels);
      }
      if (json) {
        nlohmann::json j = {{"image", path},     {"text", r.text},         {"tokens", r.tokens},
                            {"token_ids", r.token_ids}, {"finished", r.finished}, {"score", r.score},
                            {"betas", r.betas}};
        if (caption) {
          j["forced"] = true;
          j["token_logprobs"] = r.token_logprobs;
          nlohmann::json unknown = nlohmann::json::array();
          for (const auto& u : r.unknown_words) unknown.push_back({{"word", u.word}, {"position", u.position}});
          j["unknown_words"] = std::move(unknown);
        }
        if (params.output_attentions && !r.attentions.empty())
          j["attention"] = {{"dims", r.attentions[0].dims}, {"data", r.attentions[0].data.to_vector()}};
        out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      } else if (caption) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(r.score));
        out = std::string(buf) + '\t';
        for (std::size_t t = 0; t < r.tokens.size(); ++t) {
          std::snprintf(buf, sizeof buf, "(%.4f)", static_cast<double>(r.token_logprobs[t]));
          out += (t ? " " : "") + r.tokens[t] + buf;
        }
      } else {
        out = r.text;
      }
    } catch (const Error& e) {
      status = 1;
      out = json ? nlohmann::json({{"image", path}, {"error", e.what()}})
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                 : std::string("ERROR: ") + e.what();
    }
    out += '\n';
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  };
  if (!args.positional.empty()) {
    for (const std::string& p : args.positional) one(p, forced_caption);
  } else {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      if (!forced_lines) {
        one(line, forced_caption);
        continue;
      }
      const std::size_t tab = line.find('\t');
      // a line without a TAB has no caption: reported for that line as an empty caption
      const std::string caption = tab == std::string::npos ? std::string() : line.substr(tab + 1);
      one(line.substr(0, tab), &caption);
    }
    require(!std::cin.bad(), "caption: error while reading stdin");
  }
  std::cout.flush();
  require(static_cast<bool>(std::cout), "caption: error while writing stdout");
  return status;
}

int vqa(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--encoder", "--question"}, {"--json", "--attentions"}, "vqa");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("vqa: --model DIR is required");
  const std::string* encoder = find_option(args, "--encoder");
  const std::string* question = find_option(args, "--question");
  const bool json = find_option(args, "--json") != nullptr;
  attnlens::api::VqaParams params;
  params.output_attentions = find_option(args, "--attentions") != nullptr;
  if (params.output_attentions && !json) throw UsageError("vqa: --attentions needs --json");
  if (question == nullptr && !args.positional.empty())
    throw UsageError("vqa: give --question TEXT with image paths, or IMAGE<TAB>QUESTION lines on stdin");
  const auto vqa = attnlens::api::VisualQA::load(*model, encoder ? *encoder : "");
  int status = 0;
  std::string grid_path;  // the grid of the last image, reused while the next lines ask about the same image
  attnlens::api::Tensor grid;
  auto one = [&](const std::string& path, const std::string& q) {
    std::string out;
    try {
      if (path != grid_path || grid.data.empty()) {
        grid_path.clear();
        const attnlens::api::DecodedImage img = attnlens::api::decode_pnm(read_binary(path), path);
        grid = vqa->encode(img.pixels.data(), img.pixels.size(), img.width, img.height, img.channels);
        grid_path = path;
      }
      const attnlens::api::VqaResult r = vqa->answer_grid(grid, q, params);
      if (json) {
        nlohmann::json unknown = nlohmann::json::array();
        for (const auto& u : r.unknown_words) unknown.push_back({{"word", u.word}, {"position", u.position}});
        nlohmann::json j = {{"image", path},   {"question", q},          {"answer", r.answer},
                            {"score", r.score}, {"answers", r.answers},   {"scores", r.scores},
                            {"logits", r.logits}, {"tokens", r.tokens},  {"token_ids", r.token_ids},
                            {"unknown_words", unknown}, {"count", r.count}, {"attention", r.attention},
                            {"where", r.where}};
        if (params.output_attentions) {
          j["attentions"] = maps_json(r.attentions);
        }
        out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      } else {
        out = r.answer;
      }
    } catch (const Error& e) {
      status = 1;
      out = json ? nlohmann::json({{"image", path}, {"question", q}, {"error", e.what()}})
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                 : std::string("ERROR: ") + e.what();
    }
    out += '\n';
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  };
  if (question != nullptr) {
    if (args.positional.empty()) throw UsageError("vqa: --question TEXT needs at least one IMAGE");
    for (const std::string& p : args.positional) one(p, *question);
  } else {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      const std::size_t tab = line.find('\t');
      one(line.substr(0, tab), tab == std::string::npos ? std::string() : line.substr(tab + 1));
    }
    require(!std::cin.bad(), "vqa: error while reading stdin");
  }
  std::cout.flush();
  require(static_cast<bool>(std::cout), "vqa: error while writing stdout");
  return status;
}

int classify(int argc, char** argv) {
  const Args args = parse_args(argc, argv, 2, {"--model", "--top"}, {}, "classify");
  const std::string* model = find_option(args, "--model");
  if (model == nullptr || model->empty()) throw UsageError("classify: --model DIR is required");
  std::size_t top = 5;
  if (const std::string* v = find_option(args, "--top")) top = static_cast<std::size_t>(parse_int(*v, "--top", 1, 1000));
  const auto clf = attnlens::api::ImageClassifier::load(*model);
  int status = 0;
  auto one = [&](const std::string& path) {
    nlohmann::json j = {{"image", path}};
    try {
      const attnlens::api::DecodedImage img = attnlens::api::decode_pnm(read_binary(path), path);
      nlohmann::json classes = nlohmann::json::array();
      for (const auto& c : clf->classify(img.pixels.data(), img.pixels.size(), img.width, img.height, top, img.channels))
        classes.push_back({{"index", c.index}, {"label", c.label}, {"probability", c.probability}});
      j["classes"] = std::move(classes);
    } catch (const Error& e) {
      status = 1;
      j["error"] = e.what();
    }
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  };
  if (!args.positional.empty()) {
    for (const std::string& p : args.positional) one(p);
  } else {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) one(line);
    }
  }
  std::cout.flush();
  return status;
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
  if (cmd == "translate") return translate(argc, argv);
  if (cmd == "align") return align(argc, argv);
  if (cmd == "caption") return caption(argc, argv);
  if (cmd == "classify") return classify(argc, argv);
  if (cmd == "vqa") return vqa(argc, argv);
  if (cmd == "sentiment") return sentiment(argc, argv);
  if (cmd == "sort") return sort_numbers(argc, argv);
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
