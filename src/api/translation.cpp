// api::Translator: bundle → tokenizer + seq2seq model; text → search → text, tokens and attention maps.
#include "api/translation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "decode/search.h"
#include "io/bundle.h"
#include "kernels/parallel.h"
#include "models/rnn_seq2seq.h"
#include "models/seq2seq.h"
#include "models/transformer_seq2seq.h"
#include "api/translation_input.h"
#include "api/translation_models.h"
#include "text/bpe.h"
#include "text/recase.h"
#include "text/word_spans.h"

namespace attnlens::api {

namespace {

constexpr int kMaxBeams = 64;
constexpr int kMaxNewTokensLimit = 1 << 16;
// The most floats (64 MiB) a translation may hold in its search-time map arena (every beam row's map rows of every
// step); beyond it the maps of the chosen hypothesis are recomputed by teacher forcing after the search. Default
// beams stay far below it (de-en-transformer, beam 4, 256-piece source and limit: about 19 MB).
constexpr std::size_t kMaxRecordedFloats = std::size_t{16} << 20;
// Most texts of a greedy list decoded together in one batch (translate_many).
constexpr std::size_t kMaxBatchRows = 16;

// Indices of `texts`, longest (in bytes) first; ties keep their order.
std::vector<std::size_t> longest_first(const std::vector<std::string>& texts) {
  std::vector<std::size_t> order(texts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return texts[a].size() > texts[b].size(); });
  return order;
}

struct DecodingDefaults {
  int num_beams = 4;
  int candidates_per_beam = 1;
  double alpha = 0.6, beta = 0.0, max_len_a = 2.0, max_len_b = 10.0;
};

DecodingDefaults read_decoding(const io::Bundle& b) {
  DecodingDefaults d;
  const io::ConfigObject cfg = b.config_object();
  if (!cfg.has("decoding")) return d;
  const std::string where = "config.json in " + b.name() + ": decoding";
  const io::ConfigObject dec = cfg.object("decoding");
  const double beams = dec.number_or("num_beams", d.num_beams);
  require(beams >= 1 && beams <= kMaxBeams, where + ": num_beams must be in [1, 64]");  // before the cast
  d.num_beams = static_cast<int>(beams);
  const double per_beam = dec.number_or("candidates_per_beam", d.candidates_per_beam);
  require(per_beam >= 1 && per_beam <= decode::kMaxCandidatesPerBeam && per_beam == std::floor(per_beam),
          where + ": candidates_per_beam must be an integer in [1, 8]");
  d.candidates_per_beam = static_cast<int>(per_beam);
  d.alpha = dec.number_or("alpha", d.alpha);
  d.beta = dec.number_or("coverage_penalty_beta", d.beta);
  d.max_len_a = dec.number_or("max_len_a", d.max_len_a);
  d.max_len_b = dec.number_or("max_len_b", d.max_len_b);
  require(d.max_len_a >= 0 && d.max_len_a <= 1000 && d.max_len_b >= 0 && d.max_len_b <= 1e6,
          where + ": max_len_a/max_len_b out of range");
  return d;
}

// Where a translator's word alignment comes from by default (config.json "alignment_head" and "alignment").
struct AlignmentDefaults {
  int layers = 1, heads = 1;        // decoder layers / cross heads (RNN: one map)
  bool has_head = false;            // a trained alignment head exists
  int head_layer = -1, head_head = -1;
  std::string method;               // "head" | "layer-mean"
  int layer = 0;                    // for "layer-mean"
  std::string extraction;           // "argmax" | "gdfa"
};

int int_in(const nlohmann::json& obj, const char* key, int lo, int hi, const std::string& where) {
  require(obj.contains(key) && obj[key].is_number_integer(), where + ": \"" + key + "\" must be an integer");
  const auto v = obj[key].get<long long>();
  require(v >= lo && v <= hi, where + ": \"" + key + "\" must be in [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "], got " + std::to_string(v));
  return static_cast<int>(v);
}

AlignmentDefaults read_alignment(const io::Bundle& b) {
  AlignmentDefaults d;
  const auto& cfg = b.config();
  const std::string where = "config.json in " + b.name();
  if (const auto cross_maps = translation_architecture(b).cross_maps) std::tie(d.layers, d.heads) = cross_maps(b);
  if (cfg.contains("alignment_head")) {
    const auto& h = cfg["alignment_head"];
    require(h.is_object(), where + ": \"alignment_head\" must be an object {\"layer\": L, \"head\": H}");
    d.has_head = true;
    d.head_layer = int_in(h, "layer", 0, d.layers - 1, where + ": alignment_head");
    d.head_head = int_in(h, "head", 0, d.heads - 1, where + ": alignment_head");
  }
  d.method = d.has_head ? "head" : "layer-mean";
  d.layer = d.has_head ? d.head_layer : std::max(0, d.layers - 2);
  if (cfg.contains("alignment")) {
    const auto& a = cfg["alignment"];
    require(a.is_object(), where + ": \"alignment\" must be an object");
    if (a.contains("method")) {
      require(a["method"].is_string() && (a["method"] == "head" || a["method"] == "layer-mean"),
              where + ": alignment.method must be \"head\" or \"layer-mean\"");
      d.method = a["method"].get<std::string>();
      require(d.method != "head" || d.has_head, where + ": alignment.method \"head\" needs an alignment_head");
    }
    if (a.contains("layer")) d.layer = int_in(a, "layer", 0, d.layers - 1, where + ": alignment");
    if (a.contains("extraction")) {
      require(a["extraction"].is_string(), where + ": alignment.extraction must be \"argmax\" or \"gdfa\"");
      d.extraction = analysis::link_extraction_name(analysis::parse_link_extraction(a["extraction"].get<std::string>()));
    }
  }
  if (d.extraction.empty()) d.extraction = d.method == "head" ? "argmax" : "gdfa";
  return d;
}

}  // namespace

struct Translator::Impl {
  std::string name, architecture;
  std::unique_ptr<const TranslationTokenizer> tokenizer;
  std::unique_ptr<models::Seq2SeqModel> model;
  DecodingDefaults decoding;
  AlignmentDefaults alignment;

  struct Prepared;
  Prepared prepare(const std::string& text, const TranslationParams& params) const;
  TranslationResult finish(Prepared& p, const decode::SearchResult& r, const TranslationParams& params) const;
  bool translate_batch(const std::vector<const std::string*>& texts, const TranslationParams& params,
                       std::vector<TranslationResult>& results) const;
  // One sentence as the model gets it (no text handling), and a list of them (the threads and batches of
  // translate_many); align() of one prepared pair.
  TranslationResult translate_one(const std::string& text, const TranslationParams& params) const;
  std::vector<TranslationResult> translate_list(const std::vector<std::string>& texts,
                                                const TranslationParams& params) const;
  TranslationResult align_one(const std::string& source, const std::string& target,
                              const TranslationParams& params) const;
  // The pieces a text takes under this translator's BPE (restore_case, the sentences' shared positions).
  detail::PieceCount piece_count() const {
    return [this](std::string_view t) { return tokenizer->encode(t).size(); };
  }

  explicit Impl(const io::Bundle& b) {
    architecture = b.architecture();
    name = b.config_object().string_or("name", b.name());
    const TranslationArchitecture& arch = translation_architecture(b);
    tokenizer = arch.tokenizer(b);
    model = arch.model(b);
    decoding = read_decoding(b);
    alignment = read_alignment(b);
    require(tokenizer->vocab_size() == model->vocab_size(),
            "bundle " + b.name() + ": the tokenizer's vocabulary has " + std::to_string(tokenizer->vocab_size()) +
                " pieces but the model's vocab_size is " + std::to_string(model->vocab_size()));
  }
};

Translator::Translator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Translator::~Translator() = default;

std::unique_ptr<Translator> Translator::load(const std::string& dir) {
  const auto bundle = io::Bundle::load(dir);
  return std::unique_ptr<Translator>(new Translator(std::make_unique<Impl>(bundle)));
}

std::unique_ptr<Translator> Translator::from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                    std::map<std::string, std::string> files, const std::string& name) {
  const auto bundle = io::Bundle::from_memory(config_json, std::move(weights), std::move(files), name);
  return std::unique_ptr<Translator>(new Translator(std::make_unique<Impl>(bundle)));
}

const std::string& Translator::name() const { return impl_->name; }
const std::string& Translator::architecture() const { return impl_->architecture; }
std::size_t Translator::vocab_size() const { return impl_->model->vocab_size(); }
std::size_t Translator::max_source_tokens() const { return impl_->model->max_source_ids(); }
int Translator::default_num_beams() const { return impl_->decoding.num_beams; }

namespace {

void check_qk_param(const TranslationParams& p, const models::Seq2SeqModel& model, const std::string& architecture) {
  require(!p.output_qk || model.has_query_key_vectors(),
          "translate: output_qk (query/key vectors) needs dot-product attention; this model is " + architecture +
              " (only transformer-seq2seq and hf-marian translators have them)");
}

void check_alignment_params(const TranslationParams& p, const AlignmentDefaults& d) {
  require(p.alignment_method.empty() || p.alignment_method == "head" || p.alignment_method == "layer-mean",
          "translate: alignment method must be \"head\" or \"layer-mean\", got \"" + p.alignment_method + "\"");
  if (!p.alignment_extraction.empty()) analysis::parse_link_extraction(p.alignment_extraction);
  require(p.alignment_layer >= -1 && p.alignment_layer < d.layers,
          "translate: alignment layer must be in [0, " + std::to_string(d.layers - 1) + "] (or -1 for the default), got " +
              std::to_string(p.alignment_layer));
  require(p.alignment_head >= -1 && p.alignment_head < d.heads,
          "translate: alignment head must be in [0, " + std::to_string(d.heads - 1) + "] (or -1 for the default), got " +
              std::to_string(p.alignment_head));
}

// Words of both sides, the word alignment and (on request) every map at word level.
void attach_words_and_alignment(TranslationResult& out, const std::string& source_text,
                                const std::string& target_text, const TranslationParams& p,
                                const AlignmentDefaults& d, bool rnn) {
  out.source_words = text::words_of_pieces(out.source_tokens, source_text);
  out.target_words = text::words_of_pieces(out.target_tokens, target_text);
  if (out.attentions.empty()) return;
  const std::vector<int> src_of = text::word_index_of_pieces(out.source_words, out.source_tokens.size());
  const std::vector<int> tgt_of = text::word_index_of_pieces(out.target_words, out.target_tokens.size());
  const std::size_t ns = out.source_words.size(), nt = out.target_words.size();

  // The piece-level cross map of the chosen method.
  const std::string method = p.alignment_method.empty() ? d.method : p.alignment_method;
  std::string how;
  int layer = -1, head = -1;
  if (rnn) {
    how = "cross";
  } else if (method == "head") {
    require(d.has_head || p.alignment_head >= 0,
            "translate: this model has no trained alignment head: give alignment_head, or use \"layer-mean\"");
    layer = p.alignment_layer >= 0 ? p.alignment_layer : (d.has_head ? d.head_layer : d.layer);
    head = p.alignment_head >= 0 ? p.alignment_head : d.head_head;
    how = "head " + std::to_string(layer) + "." + std::to_string(head);
  } else {
    layer = p.alignment_layer >= 0 ? p.alignment_layer : (d.method == "layer-mean" ? d.layer : std::max(0, d.layers - 2));
    how = "layer-mean " + std::to_string(layer);
  }
  const std::size_t rows = out.target_tokens.size(), cols = out.source_tokens.size();
  std::vector<float> piece(rows * cols, 0.0f);
  int used = 0;
  for (const MapView m : out.attentions) {
    if (m.name != "cross" || (!rnn && (m.layer != layer || (head >= 0 && m.head != head)))) continue;
    require(m.dims.size() == 2 && m.dims[0] == rows && m.dims[1] == cols,
            "translate: internal error: a cross map does not match the tokens");
    for (std::size_t k = 0; k < piece.size(); ++k) piece[k] += m.data[k];
    ++used;
  }
  require(used > 0, "translate: internal error: no cross map for the alignment");
  for (float& v : piece) v /= static_cast<float>(used);
  const std::string extraction = p.alignment_extraction.empty()
                                     ? (p.alignment_method.empty() ? d.extraction : (method == "head" ? "argmax" : "gdfa"))
                                     : p.alignment_extraction;
  const analysis::LinkExtraction ex = analysis::parse_link_extraction(extraction);
  out.alignment_map = analysis::merge_to_words(piece.data(), rows, cols, tgt_of, nt, src_of, ns);
  out.alignment = analysis::extract_links(out.alignment_map, nt, ns, ex);
  out.alignment_method = how + ", " + analysis::link_extraction_name(ex);

  if (!p.word_maps) return;
  for (const MapView m : out.attentions) {
    const bool rows_tgt = m.name != "encoder_self", cols_tgt = m.name == "decoder_self";
    const auto& rw = rows_tgt ? tgt_of : src_of;
    const auto& cw = cols_tgt ? tgt_of : src_of;
    const std::size_t nr = rows_tgt ? nt : ns, nc = cols_tgt ? nt : ns;
    require(m.dims.size() == 2 && m.dims[0] == rw.size() && m.dims[1] == cw.size(),
            "translate: internal error: map " + m.name + " does not match the tokens");
    const std::vector<float> w = analysis::merge_to_words(m.data.data(), m.dims[0], m.dims[1], rw, nr, cw, nc);
    out.word_attentions.record(m.name, m.layer, m.head, m.step, {nr, nc}, w.data());
  }
}

}  // namespace

namespace {

std::vector<OptionSpec> map_options() {
  const auto call = OptionTime::kCall;
  std::vector<OptionSpec> o = {
      option("output_attentions", OptionKind::kBooleanOrKinds, call, true,
             "false: no maps (faster; no alignment either); a list of kinds: only those maps",
             {"encoder_self", "decoder_self", "cross"}),
      option("head_mean", OptionKind::kBoolean, call, false, "each layer's heads averaged into one map (head -1)"),
      option("copy_numbers", OptionKind::kBoolean, call, true,
             "a number the model wrote differently from its aligned source number is replaced by it"),
      option("alignment_method", OptionKind::kEnum, call, nullptr,
             "which attention gives the word alignment", {"head", "layer-mean"}),
      option("alignment_extraction", OptionKind::kEnum, call, nullptr,
             "how links are read from it; the default is argmax for a head, gdfa for a layer mean", {"argmax", "gdfa"}),
      integer_option("alignment_layer", call, 0, 1023, nullptr, "the decoder layer of the alignment"),
      integer_option("alignment_head", call, 0, 1023, nullptr, "the cross head of the alignment (method head)"),
      option("word_maps", OptionKind::kBoolean, call, false, "also every map merged to words (word_attentions)"),
      option("output_qk", OptionKind::kBoolean, call, false,
             "the query and key vectors behind every map (qk; Transformer and Marian translators only)"),
      option("restore_case", OptionKind::kBoolean, call, true,
             "an ALL-CAPS or all-lower-case sentence is re-cased before the model sees it"),
  };
  return o;
}

std::vector<FieldSpec> translation_fields() {
  std::vector<FieldSpec> f = {
      {"text", "string", "the translation, detokenized"},
      {"source_tokens", "string[]", "BPE pieces of the source, '</s>' last (the columns of cross maps)"},
      {"target_tokens", "string[]", "the generated pieces, '</s>' last when produced (the rows of maps)"},
      {"source_ids", "int32[]", "ids of source_tokens"},
      {"target_ids", "int32[]", "ids of target_tokens"},
      {"attentions", "maps", "'encoder_self', 'decoder_self', 'cross' per layer and head (RNN: one 'cross')"},
      {"source_words", "Word[]", "source pieces merged into words, with string indices into the caller's input"},
      {"target_words", "Word[]", "target pieces merged into words, with string indices into `text`"},
      {"alignment", "Link[]", "hard word alignment [source word, target word], sorted"},
      {"alignment_method", "string", "how the alignment was made, e.g. 'head 1.0, argmax'"},
      {"alignment_map", "map", "the word-level cross map the alignment came from [target words, source words]"},
      {"word_attentions", "maps", "with word_maps: every map at word level"},
      {"qk", "maps", "with output_qk: '<kind>.query' and '<kind>.key' per layer and head"},
      {"number_copies", "NumberCopy[]", "with copy_numbers: the numbers replaced in `text`"},
      {"token_logprobs", "float32[]", "align() only: each target piece's log-probability (</s> last)"},
      {"truncated", "boolean", "the source was cut to the model's positions"},
      {"score", "number", "sum of the output's log-probabilities"},
      {"num_beams", "integer", "the beams used"},
      {"source_text", "string", "the text the engine saw, when it was re-cased"},
      {"source_start", "integer", "translate(): [start, end) of the translated text in the caller's input"},
      {"source_end", "integer", "translate(): the end of that span"},
      {"sentences", "TranslationResult[]", "translate(): one result per sentence of the input"},
  };
  return f;
}

}  // namespace

const Contract& translation_contract() {
  static const Contract c = [] {
    const auto call = OptionTime::kCall;
    std::vector<OptionSpec> options = {
        integer_option("num_beams", call, 1, kMaxBeams, nullptr,
                       "beam width (1 = greedy); the model's default is its decoding.num_beams"),
        integer_option("max_new_tokens", call, 1, kMaxNewTokensLimit, nullptr,
                       "most target pieces; the model's default is max_len_a * source pieces + max_len_b"),
        option("alpha", OptionKind::kNumber, call, nullptr, "GNMT length penalty exponent"),
        option("coverage_beta", OptionKind::kNumber, call, nullptr, "GNMT coverage penalty weight"),
        integer_option("candidates_per_beam", call, 1, decode::kMaxCandidatesPerBeam, nullptr,
                       "finished hypotheses per beam that the final choice weighs"),
    };
    for (auto& o : map_options()) options.push_back(std::move(o));
    return Contract{"translation", "", std::move(options), translation_fields()};
  }();
  return c;
}

const Contract& align_contract() {
  static const Contract c{"translation", "align", map_options(), translation_fields()};
  return c;
}

TranslationParams translation_params(const std::string& params_json) {
  const OptionValues v = read_options(translation_contract(), OptionTime::kCall, "translation options", params_json);
  TranslationParams p;
  p.num_beams = static_cast<int>(v.integer("num_beams", p.num_beams));
  p.max_new_tokens = static_cast<int>(v.integer("max_new_tokens", p.max_new_tokens));
  if (v.has("alpha")) p.alpha = v.number("alpha", 0.0);
  if (v.has("coverage_beta")) p.coverage_beta = v.number("coverage_beta", 0.0);
  p.candidates_per_beam = static_cast<int>(v.integer("candidates_per_beam", p.candidates_per_beam));
  if (v.has("output_attentions") && v.raw("output_attentions").is_array()) {  // a list of kinds: only those maps
    p.output_attentions = true;
    for (const auto& k : v.raw("output_attentions")) p.attention_selection.kinds.push_back(k.get<std::string>());
  } else {
    p.output_attentions = v.boolean("output_attentions", p.output_attentions);
  }
  p.attention_selection.head_mean = v.boolean("head_mean", p.attention_selection.head_mean);
  p.copy_numbers = v.boolean("copy_numbers", p.copy_numbers);
  p.alignment_method = v.text("alignment_method", p.alignment_method);
  p.alignment_extraction = v.text("alignment_extraction", p.alignment_extraction);
  p.alignment_layer = static_cast<int>(v.integer("alignment_layer", p.alignment_layer));
  p.alignment_head = static_cast<int>(v.integer("alignment_head", p.alignment_head));
  p.word_maps = v.boolean("word_maps", p.word_maps);
  p.output_qk = v.boolean("output_qk", p.output_qk);
  p.restore_case = v.boolean("restore_case", p.restore_case);
  return p;
}

// One text on its way through translate(): the result so far, the source ids and how to decode them.
struct Translator::Impl::Prepared {
  TranslationResult out;
  const std::string* text = nullptr;
  std::vector<int> ids;  // empty: nothing to translate (out is the whole, empty, result)
  decode::SearchParams sp;
  bool copy_numbers = false;  // the source has a digit and params.copy_numbers
  bool want_maps = false;     // output_attentions, or the number copy needs the alignment
  AttentionTrace trace;
};

Translator::Impl::Prepared Translator::Impl::prepare(const std::string& text, const TranslationParams& params) const {
  const auto& dec = decoding;
  Prepared p;
  p.text = &text;
  TranslationResult& out = p.out;
  out.num_beams = params.num_beams == 0 ? dec.num_beams : params.num_beams;
  std::vector<int> ids = tokenizer->encode(text);
  out.source_pieces = ids.size();
  if (ids.empty()) return p;  // nothing to translate: an empty translation
  const std::size_t max_src = model->max_source_ids();
  if (ids.size() + 1 > max_src) {
    ids.resize(max_src - 1);
    out.truncated = true;
  }
  ids.push_back(tokenizer->eos_id());
  out.source_ids = ids;
  for (int id : ids) out.source_tokens.push_back(tokenizer->piece(id));

  decode::SearchParams& sp = p.sp;
  sp.num_beams = out.num_beams;
  sp.alpha = params.alpha.value_or(dec.alpha);
  sp.coverage_beta = params.coverage_beta.value_or(dec.beta);
  sp.candidates_per_beam = params.candidates_per_beam == 0 ? dec.candidates_per_beam : params.candidates_per_beam;
  sp.bos_id = tokenizer->bos_id();
  sp.eos_id = tokenizer->eos_id();
  // int(a·n + b) as decoding.py, never beyond the decoder's positions.
  double limit = params.max_new_tokens > 0 ? params.max_new_tokens
                                           : std::floor(dec.max_len_a * static_cast<double>(ids.size()) + dec.max_len_b);
  limit = std::min(limit, static_cast<double>(model->max_target_positions()));
  limit = std::min(limit, static_cast<double>(kMaxNewTokensLimit));
  sp.max_new_tokens = std::max(1, static_cast<int>(limit));
  // Number copying needs the alignment, hence the maps, whenever the source has a digit.
  p.copy_numbers = params.copy_numbers && text.find_first_of("0123456789") != std::string::npos;
  p.want_maps = params.output_attentions || p.copy_numbers;
  p.trace = AttentionTrace(p.want_maps);
  p.ids = std::move(ids);
  return p;
}

// The search's tokens → text; the maps (already in p.trace: the encoder's, then the decoder's read back by the
// caller) → words, alignment, number copies and the selection asked for.
TranslationResult Translator::Impl::finish(Prepared& p, const decode::SearchResult& r,
                                           const TranslationParams& params) const {
  TranslationResult& out = p.out;
  out.target_ids = r.tokens;
  out.score = r.score;
  for (int id : r.tokens) out.target_tokens.push_back(tokenizer->piece(id));
  std::vector<int> body;
  for (int id : r.tokens) {
    if (id == tokenizer->eos_id()) break;
    body.push_back(id);
  }
  out.text = tokenizer->decode(body);
  if (p.want_maps && !r.tokens.empty()) out.attentions = std::move(p.trace);
  if (params.output_qk && !r.tokens.empty()) {
    std::vector<int> tgt_in{tokenizer->bos_id()};
    tgt_in.insert(tgt_in.end(), r.tokens.begin(), r.tokens.end() - 1);
    AttentionTrace vectors;
    model->query_key_vectors(p.ids, tgt_in, vectors);
    out.qk = std::move(vectors);
  }
  const std::string& text = *p.text;
  attach_words_and_alignment(out, text, out.text, params, alignment, architecture == "rnn-seq2seq");
  if (p.copy_numbers && !out.alignment_map.empty()) {
    out.number_copies = analysis::plan_number_copies(text, out.source_words, out.text, out.target_words,
                                                     out.alignment_map);
    analysis::apply_number_copies(out.number_copies, out.text, out.target_words);
  }
  if (!params.output_attentions) {  // computed only for the number copy
    out.attentions.clear();
    out.alignment.clear();
    out.alignment_map.clear();
    out.alignment_method.clear();
    out.word_attentions.clear();
  }
  out.attentions = select_maps(std::move(out.attentions), params.attention_selection);
  out.word_attentions = select_maps(std::move(out.word_attentions), params.attention_selection);
  detail::set_string_indices(out.source_words, text);
  detail::set_string_indices(out.target_words, out.text);
  return std::move(out);
}

// Greedy texts decoded together, one decoder row each (models/seq2seq.h start_many): every layer of a step takes
// all the rows at once. Each result equals translate()'s bit for bit. False when the model cannot batch or the
// recorded maps would exceed kMaxRecordedFloats (the caller then translates the texts one by one).
bool Translator::Impl::translate_batch(const std::vector<const std::string*>& texts, const TranslationParams& params,
                                       std::vector<TranslationResult>& results) const {
  std::vector<Prepared> prepared;
  prepared.reserve(texts.size());
  for (const std::string* t : texts) prepared.push_back(prepare(*t, params));
  std::vector<std::size_t> live;  // the texts with something to translate
  std::vector<std::vector<int>> srcs;
  std::vector<AttentionTrace*> traces;
  std::vector<int> limits;
  bool want_maps = false;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    if (prepared[i].ids.empty()) continue;
    live.push_back(i);
    srcs.push_back(prepared[i].ids);
    traces.push_back(prepared[i].want_maps ? &prepared[i].trace : nullptr);
    limits.push_back(prepared[i].sp.max_new_tokens);
    want_maps = want_maps || prepared[i].want_maps;
  }
  std::unique_ptr<models::Seq2SeqDecoder> step;
  if (!live.empty()) {
    const std::size_t steps = static_cast<std::size_t>(*std::max_element(limits.begin(), limits.end()));
    step = model->start_many(srcs, traces);
    if (step == nullptr) return false;
    if (want_maps) {
      if (step->recorded_floats(live.size(), steps) > kMaxRecordedFloats) return false;
      step->record_maps(live.size(), steps);
    }
  }
  std::vector<decode::SearchResult> found;
  if (!live.empty()) found = decode::greedy_search_many(*step, limits, tokenizer->bos_id(), tokenizer->eos_id());
  results.resize(prepared.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    if (prepared[i].ids.empty()) {
      results[i] = std::move(prepared[i].out);
      continue;
    }
    const decode::SearchResult& r = found[k++];
    if (prepared[i].want_maps && !r.tokens.empty()) step->trace_hypothesis(r.rows, prepared[i].trace);
    results[i] = finish(prepared[i], r, params);
  }
  return true;
}

std::vector<TranslationResult> Translator::Impl::translate_list(const std::vector<std::string>& texts,
                                                              const TranslationParams& params) const {
  std::vector<TranslationResult> out(texts.size());
  const int beams = params.num_beams == 0 ? decoding.num_beams : params.num_beams;
  if (beams == 1 && !params.output_qk && texts.size() > 1 && model->decodes_sources_together()) {
    // Greedy lists: the texts in batches decoded together, the batches shared among the threads
    // (kernels/parallel.h; a batch's kernels stay on its thread). Each result equals translate()'s, bit for bit,
    // whatever batch it lands in. At most kMaxBatchRows texts a batch: each row holds its own key/value cache
    // (de-en-general: 1.6 MB a row). The batch count is a multiple of the thread count, so that every thread gets as
    // many batches (40 texts, 2 threads: 4 batches of 10, not 3 of 14 with one thread decoding two of them), and the
    // texts are dealt longest first, back and forth (batch 0, 1, …, B−1, B−1, …, 0, 0, 1, …), so that every batch
    // gets a like share of long and short texts: a batch decodes until its longest output ends, and batches of
    // unequal work leave a thread idle at the end (dealt in input order, the first 40 test2016 sentences made batches
    // of 106 to 148 ms for de-en-general: `node bench/balance.mjs`). A text's bytes stand in for its length.
    const std::size_t n = texts.size();
    const std::size_t threads = std::max<std::size_t>(1, static_cast<std::size_t>(kernels::threads()));
    const std::size_t needed = (n + kMaxBatchRows - 1) / kMaxBatchRows;
    const std::size_t batches = std::min<std::size_t>(n, (needed + threads - 1) / threads * threads);
    const std::vector<std::size_t> by_length = longest_first(texts);
    std::vector<std::vector<std::size_t>> dealt(batches);
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t lap = j / batches, at = j % batches;
      dealt[lap % 2 == 0 ? at : batches - 1 - at].push_back(by_length[j]);
    }
    std::vector<char> done(batches, 0);
    kernels::parallel_each(batches, [&](std::size_t b) {
      std::vector<const std::string*> mine;
      for (std::size_t i : dealt[b]) mine.push_back(&texts[i]);
      std::vector<TranslationResult> results;
      if (!translate_batch(mine, params, results)) return;
      for (std::size_t j = 0; j < results.size(); ++j) out[dealt[b][j]] = std::move(results[j]);
      done[b] = 1;
    });
    for (std::size_t b = 0; b < batches; ++b)  // a batch the model could not take: one text at a time
      if (!done[b])
        for (std::size_t i : dealt[b]) out[i] = translate_one(texts[i], params);
    return out;
  }
  // One text at a time (beams): the threads take the texts longest first, so that a long one does not start last
  // while the other threads have nothing left to do.
  const std::vector<std::size_t> by_length = longest_first(texts);
  kernels::parallel_each(texts.size(), [&](std::size_t j) {
    const std::size_t i = by_length[j];
    out[i] = translate_one(texts[i], params);
  });
  return out;
}

void Translator::check_params(const TranslationParams& params) const {
  require(params.num_beams >= 0 && params.num_beams <= kMaxBeams,
          "translate: num_beams must be in [1, 64] (0 = the model's default), got " + std::to_string(params.num_beams));
  require(params.max_new_tokens >= 0 && params.max_new_tokens <= kMaxNewTokensLimit,
          "translate: max_new_tokens must be in [1, 65536] (0 = the model's default), got " +
              std::to_string(params.max_new_tokens));
  require(params.candidates_per_beam >= 0 && params.candidates_per_beam <= decode::kMaxCandidatesPerBeam,
          "translate: candidates_per_beam must be in [1, 8] (0 = the model's default)");
  check_qk_param(params, *impl_->model, impl_->architecture);
  if (params.alpha) require(std::isfinite(*params.alpha), "translate: alpha must be a finite number");
  if (params.coverage_beta)
    require(std::isfinite(*params.coverage_beta), "translate: coverage_beta must be a finite number");
  check_alignment_params(params, impl_->alignment);
}

std::vector<TranslationResult> Translator::translate_many(const std::vector<std::string>& texts,
                                                      const TranslationParams& params) const {
  check_params(params);
  // Every sentence of every text goes to the model in one list; each text's results are then assembled.
  const detail::PieceCount pieces = impl_->piece_count();
  std::vector<detail::InputPlan> plans;
  plans.reserve(texts.size());
  std::vector<std::string> units;
  for (const std::string& t : texts) {
    plans.push_back(detail::plan_input(t, params.restore_case, max_source_tokens(), pieces));
    if (plans.back().sentences.empty()) units.emplace_back();  // an empty translation
    for (const auto& u : plans.back().sentences) units.push_back(u.text);
  }
  std::vector<TranslationResult> results;
  if (units.size() == 1) {
    results.push_back(impl_->translate_one(units.front(), params));
  } else {
    results = impl_->translate_list(units, params);
  }
  std::vector<TranslationResult> out;
  out.reserve(texts.size());
  std::size_t at = 0;
  for (const detail::InputPlan& plan : plans) {
    const std::size_t n = std::max<std::size_t>(1, plan.sentences.size());
    std::vector<TranslationResult> mine(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(at)),
                                        std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(at + n)));
    at += n;
    out.push_back(detail::assemble_input(plan, std::move(mine)));
  }
  return out;
}

TranslationResult Translator::translate(const std::string& text, const TranslationParams& params) const {
  return std::move(translate_many({text}, params).front());
}

TranslationResult Translator::Impl::translate_one(const std::string& text, const TranslationParams& params) const {
  Prepared p = prepare(text, params);
  if (p.ids.empty()) return std::move(p.out);
  // The maps come from the search itself: the encoder's from its one run, the decoder's recorded per step and row
  // and read back along the chosen hypothesis (models/seq2seq.h). Only when that recording would exceed
  // kMaxRecordedFloats (many beams over a long source and limit) are they recomputed by teacher forcing instead.
  auto step = model->start(p.ids, p.want_maps ? &p.trace : nullptr);
  const std::size_t rows = static_cast<std::size_t>(std::max(1, p.sp.num_beams));
  const std::size_t steps = static_cast<std::size_t>(p.sp.max_new_tokens);
  const bool record = p.want_maps && step->recorded_floats(rows, steps) <= kMaxRecordedFloats;
  if (record) step->record_maps(rows, steps);
  const decode::SearchResult r = decode::search(*step, p.sp);
  if (p.want_maps && !r.tokens.empty()) {
    if (record) {
      step->trace_hypothesis(r.rows, p.trace);
    } else {
      // The decoder fed <s> + the chosen tokens (but the last), step by step, exactly as during the search.
      step.reset();
      p.trace.clear();
      std::vector<int> tgt_in{tokenizer->bos_id()};
      tgt_in.insert(tgt_in.end(), r.tokens.begin(), r.tokens.end() - 1);
      model->forward(p.ids, tgt_in, &p.trace);
    }
  }
  step.reset();
  return finish(p, r, params);
}

TranslationResult Translator::align(const std::string& source, const std::string& target,
                                    const TranslationParams& params) const {
  // Both texts normalised the same way; the source re-cased as translate() does (restore_case).
  const detail::PreparedInput src(source), tgt(target);
  const std::string& seen = src.prepared.text;
  const std::string cased = params.restore_case ? text::restore_case(seen, impl_->piece_count()) : seen;
  TranslationResult out = impl_->align_one(cased, tgt.prepared.text, params);
  src.place_words(out.source_words, 0);
  tgt.place_words(out.target_words, 0);
  if (cased != seen) out.source_text = cased;
  return out;
}

TranslationResult Translator::Impl::align_one(const std::string& source, const std::string& target,
                                              const TranslationParams& params) const {
  check_alignment_params(params, alignment);
  check_qk_param(params, *model, architecture);
  TranslationResult out;
  out.num_beams = 0;
  std::vector<int> ids = tokenizer->encode(source);
  out.source_pieces = ids.size();
  require(!ids.empty(), "align: the source text is empty");
  const std::size_t max_src = model->max_source_ids();
  if (ids.size() + 1 > max_src) {
    ids.resize(max_src - 1);
    out.truncated = true;
  }
  ids.push_back(tokenizer->eos_id());
  out.source_ids = ids;
  for (int id : ids) out.source_tokens.push_back(tokenizer->piece(id));

  std::vector<int> tgt = tokenizer->encode(target);
  require(!tgt.empty(), "align: the target text is empty (give the translation to align)");
  const std::size_t max_tgt = model->max_target_positions();
  require(tgt.size() + 1 <= max_tgt, "align: the target has " + std::to_string(tgt.size()) +
                                         " pieces; this model's decoder takes at most " + std::to_string(max_tgt - 1));
  std::vector<int> tgt_in{tokenizer->bos_id()};
  tgt_in.insert(tgt_in.end(), tgt.begin(), tgt.end());
  tgt.push_back(tokenizer->eos_id());
  out.target_ids = tgt;
  for (int id : tgt) out.target_tokens.push_back(tokenizer->piece(id));
  out.text = target;

  AttentionTrace trace(params.output_attentions);
  const std::vector<float> logits = model->forward(ids, tgt_in, params.output_attentions ? &trace : nullptr);
  const std::size_t v = model->vocab_size();
  require(logits.size() == tgt.size() * v, "align: internal error: logits do not match the target");
  out.score = 0;
  for (std::size_t t = 0; t < tgt.size(); ++t) {
    const float* row = &logits[t * v];
    const float mx = *std::max_element(row, row + v);
    double sum = 0;
    for (std::size_t k = 0; k < v; ++k) sum += std::exp(static_cast<double>(row[k] - mx));
    const float lp = static_cast<float>(static_cast<double>(row[tgt[t]] - mx) - std::log(sum));
    require(std::isfinite(lp), "align: the model produced a non-finite log-probability");
    out.token_logprobs.push_back(lp);
    out.score += lp;
  }
  if (params.output_attentions) out.attentions = std::move(trace);
  if (params.output_qk) {
    AttentionTrace vectors;
    model->query_key_vectors(ids, tgt_in, vectors);
    out.qk = std::move(vectors);
  }
  attach_words_and_alignment(out, source, target, params, alignment, architecture == "rnn-seq2seq");
  detail::set_string_indices(out.source_words, source);
  detail::set_string_indices(out.target_words, target);
  out.attentions = select_maps(std::move(out.attentions), params.attention_selection);
  out.word_attentions = select_maps(std::move(out.word_attentions), params.attention_selection);
  return out;
}

}  // namespace attnlens::api
