// attnlens-cli: the engine's native command line. Training recipes call it so that they tokenize with the very
// implementation that inference uses (native and WASM). Run `attnlens-cli --help` for the commands; each command
// lives in src/cli/<command>.cpp, and this file only dispatches.
#include <iostream>
#include <string>

#include "cli.h"

namespace {

using attnlens::cli::UsageError;

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
  attnlens-cli translate --model DIR [--beams N] [--alpha A] [--coverage-beta B] [--candidates-per-beam C]
                        [--max-new-tokens N]
                        [--json [--attentions] [--word-maps] [--qk]] [--no-copy-numbers]
      Translate stdin lines with a translation bundle (e.g. models/de-en-transformer), one output line per input
      line. Defaults come from the bundle's config (decoding): beams 1 = greedy. A line is handled as the
      package handles a text: normalised (NFC), split into sentences that share the model's positions, ALL-CAPS
      or all-lower-case sentences re-cased (--no-restore-case: as typed), the translations joined with a space.
      --json prints one JSON object per line with the package's result fields {text, source_tokens,
      target_tokens, source_ids, target_ids, truncated, score, num_beams, sentences, source_start, source_end,
      ...}; --attentions adds every attention map {name, layer, head, dims, data}.
      With --json every result also has "source_words"/"target_words" ({text, start, end, pieces}: string
      indices, UTF-16 code units as JavaScript counts, into the input line / the translation), "alignment"
      ([[source word, target word], ...]) and
      "alignment_method" (see align); --word-maps adds "word_attentions" (every map merged to words); --qk
      adds "qk": the query and key vectors behind every map ("<kind>.query" [rows, d_head], "<kind>.key"
      [columns, d_head] per layer and head; Transformer and Marian translators only), for the neuron view.
      Numbers are copied by alignment (a number the model wrote differently from the source number it is
      aligned with is replaced by that number in English notation, "2,50" → "2.50"; JSON lists them in
      "number_copies"); --no-copy-numbers prints the model's own text.
  attnlens-cli align --model DIR [--method head|layer-mean] [--extraction argmax|gdfa] [--layer L] [--head H]
                    [--json [--attentions] [--word-maps] [--qk]]
      Forced decoding: each stdin line is "German<TAB>English"; the model is run over the given English
      (teacher forcing) instead of searching. Prints one line per pair: the word alignment as "i-j" links
      (German word i, English word j, from 0; words = BPE pieces merged, punctuation and hyphens separate, as
      \w+|[^\w\s]) — the format of ../shared/align's aer.py — or with --json the whole result (words with
      string indices, links, per-piece log-probabilities "token_logprobs", score, and with --attentions every map).
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
  attnlens-cli text-classification --model DIR [--no-attention]
  attnlens-cli feature-extraction --model DIR [--no-attention]
      A converted BERT or DistilBERT bundle (npx attnlens convert) over stdin lines, tokenized with its
      tokenizer.json: one JSON line per input, text-classification {label, score, scores, logits, ids, tokens,
      attentions} (softmax over the labels), feature-extraction {features, dims, pooled, ids, tokens, attentions}
      (the last hidden state [T, d]). A line longer than max_position_embeddings tokens gives {"error": ...}
      and exit status 1 at the end.
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

The task options of sentiment, translate, align and caption come from each task's contract (the same names,
ranges and defaults as the JS package's options, _ written -); they are listed below. The older spellings
--beams, --method, --extraction, --layer, --head and --qk still work.
Pieces mark a preceding space with "▁" (U+2581); decode(encode(text)) restores whitespace-normalised text.
Exit status: 0 on success, 1 on an error (message on stderr), 2 on wrong usage.
)";

// The usage text, then each task's contract options as flags (help from the declaration's doc lines).
void print_help() {
  namespace api = attnlens::api;
  using attnlens::cli::contract_help;
  std::cout << kUsage << "\nsentiment:\n" << contract_help(api::sentiment_contract(), {})
            << "translate:\n" << contract_help(api::translation_contract(), {"output_attentions"})
            << "align:\n" << contract_help(api::align_contract(), {"output_attentions"})
            << "caption:\n" << contract_help(api::caption_contract(), {"output_attentions"});
}

int run(int argc, char** argv) {
  namespace cli = attnlens::cli;
  if (argc < 2) throw UsageError("no command given");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h" || (i == 1 && a == "help")) {
      print_help();
      return 0;
    }
  }
  const std::string cmd = argv[1];
  if (cmd == "bpe") return cli::bpe_command(argc, argv);
  if (cmd == "bundle") return cli::bundle_command(argc, argv);
  if (cmd == "words") return cli::words_command(argc, argv);
  if (cmd == "translate") return cli::translate_command(argc, argv);
  if (cmd == "align") return cli::align_command(argc, argv);
  if (cmd == "caption") return cli::caption_command(argc, argv);
  if (cmd == "classify") return cli::classify_command(argc, argv);
  if (cmd == "text-classification") return cli::text_classification_command(argc, argv);
  if (cmd == "feature-extraction") return cli::feature_extraction_command(argc, argv);
  if (cmd == "vqa") return cli::vqa_command(argc, argv);
  if (cmd == "sentiment") return cli::sentiment_command(argc, argv);
  if (cmd == "sort") return cli::sort_command(argc, argv);
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  try {
    attnlens::api::register_hf_architectures();  // `translate` and `align` take converted MarianMT bundles too
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "attnlens-cli: " << e.what() << "\nRun 'attnlens-cli --help' for usage.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnlens-cli: error: " << e.what() << "\n";
    return 1;
  }
}
