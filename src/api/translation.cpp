// api::Translator: bundle → tokenizer + seq2seq model; text → search → text, tokens and attention maps.
#include "api/translation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "decode/search.h"
#include "io/bundle.h"
#include "models/rnn_seq2seq.h"
#include "models/seq2seq.h"
#include "models/transformer_seq2seq.h"
#include "text/bpe.h"

namespace attnlens::api {

namespace {

constexpr int kMaxBeams = 64;
constexpr int kMaxNewTokensLimit = 1 << 16;

struct DecodingDefaults {
  int num_beams = 4;
  double alpha = 0.6, beta = 0.0, max_len_a = 2.0, max_len_b = 10.0;
};

double number_or(const nlohmann::json& obj, const char* key, double fallback, const std::string& where) {
  if (!obj.contains(key)) return fallback;
  require(obj[key].is_number(), where + ": \"" + key + "\" must be a number, got " + obj[key].dump());
  const double v = obj[key].get<double>();
  require(std::isfinite(v), where + ": \"" + key + "\" must be finite");
  return v;
}

DecodingDefaults read_decoding(const io::Bundle& b) {
  DecodingDefaults d;
  const auto& cfg = b.config();
  if (!cfg.contains("decoding")) return d;
  const std::string where = "config.json in " + b.name() + ": decoding";
  const auto& dec = cfg["decoding"];
  require(dec.is_object(), where + " must be an object");
  d.num_beams = static_cast<int>(number_or(dec, "num_beams", d.num_beams, where));
  d.alpha = number_or(dec, "alpha", d.alpha, where);
  d.beta = number_or(dec, "coverage_penalty_beta", d.beta, where);
  d.max_len_a = number_or(dec, "max_len_a", d.max_len_a, where);
  d.max_len_b = number_or(dec, "max_len_b", d.max_len_b, where);
  require(d.num_beams >= 1 && d.num_beams <= kMaxBeams, where + ": num_beams must be in [1, 64]");
  require(d.max_len_a >= 0 && d.max_len_a <= 1000 && d.max_len_b >= 0 && d.max_len_b <= 1e6,
          where + ": max_len_a/max_len_b out of range");
  return d;
}

text::BpeTokenizer read_tokenizer(const io::Bundle& b) {
  const std::string where = "config.json in " + b.name();
  const auto& cfg = b.config();
  require(cfg.contains("tokenizer") && cfg["tokenizer"].is_object(), where + ": \"tokenizer\" is missing");
  const auto& tok = cfg["tokenizer"];
  require(tok.value("type", std::string()) == "bpe", where + ": tokenizer.type must be \"bpe\"");
  require(tok.contains("vocab") && tok["vocab"].is_string() && tok.contains("merges") && tok["merges"].is_string(),
          where + ": tokenizer.vocab and tokenizer.merges must name the bundle's BPE files");
  for (const auto& [key, expected] : std::vector<std::pair<const char*, int>>{
           {"pad_id", text::kPadId}, {"unk_id", text::kUnkId}, {"bos_id", text::kBosId}, {"eos_id", text::kEosId}})
    if (tok.contains(key))
      require(tok[key] == expected, where + ": tokenizer." + key + " must be " + std::to_string(expected) +
                                        " (the project's BPE ids)");
  const std::string vocab_file = tok["vocab"].get<std::string>();
  const std::string merges_file = tok["merges"].get<std::string>();
  return text::BpeTokenizer::from_text(b.file(vocab_file), b.file(merges_file), vocab_file + " in " + b.name());
}

std::unique_ptr<models::Seq2SeqModel> make_model(const io::Bundle& b) {
  if (b.architecture() == "transformer-seq2seq") return std::make_unique<models::TransformerSeq2Seq>(b);
  if (b.architecture() == "rnn-seq2seq") return models::make_rnn_seq2seq(b);
  throw Error("bundle " + b.name() + ": architecture '" + b.architecture() +
              "' is not a translator (expected transformer-seq2seq or rnn-seq2seq)");
}

}  // namespace

struct Translator::Impl {
  std::string name, architecture;
  text::BpeTokenizer tokenizer;
  std::unique_ptr<models::Seq2SeqModel> model;
  DecodingDefaults decoding;

  explicit Impl(const io::Bundle& b) {
    architecture = b.architecture();
    name = b.config().value("name", b.name());
    tokenizer = read_tokenizer(b);
    model = make_model(b);
    decoding = read_decoding(b);
    require(tokenizer.vocab_size() == model->vocab_size(),
            "bundle " + b.name() + ": the BPE vocabulary has " + std::to_string(tokenizer.vocab_size()) +
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

TranslationResult Translator::translate(const std::string& text, const TranslationParams& params) const {
  const auto& dec = impl_->decoding;
  require(params.num_beams >= 0 && params.num_beams <= kMaxBeams,
          "translate: num_beams must be in [1, 64] (0 = the model's default), got " + std::to_string(params.num_beams));
  require(params.max_new_tokens >= 0 && params.max_new_tokens <= kMaxNewTokensLimit,
          "translate: max_new_tokens must be in [1, 65536] (0 = the model's default), got " +
              std::to_string(params.max_new_tokens));
  if (params.alpha) require(std::isfinite(*params.alpha), "translate: alpha must be a finite number");
  if (params.coverage_beta)
    require(std::isfinite(*params.coverage_beta), "translate: coverage_beta must be a finite number");

  TranslationResult out;
  out.num_beams = params.num_beams == 0 ? dec.num_beams : params.num_beams;
  std::vector<int> ids = impl_->tokenizer.encode(text);
  out.source_pieces = ids.size();
  if (ids.empty()) return out;  // nothing to translate: an empty translation
  const std::size_t max_src = impl_->model->max_source_ids();
  if (ids.size() + 1 > max_src) {
    ids.resize(max_src - 1);
    out.truncated = true;
  }
  ids.push_back(text::kEosId);
  out.source_ids = ids;
  for (int id : ids) out.source_tokens.push_back(impl_->tokenizer.piece(id));

  decode::SearchParams sp;
  sp.num_beams = out.num_beams;
  sp.alpha = params.alpha.value_or(dec.alpha);
  sp.coverage_beta = params.coverage_beta.value_or(dec.beta);
  sp.bos_id = text::kBosId;
  sp.eos_id = text::kEosId;
  // int(a·n + b) as decoding.py, never beyond the decoder's positions.
  double limit = params.max_new_tokens > 0 ? params.max_new_tokens
                                           : std::floor(dec.max_len_a * static_cast<double>(ids.size()) + dec.max_len_b);
  limit = std::min(limit, static_cast<double>(impl_->model->max_target_positions()));
  limit = std::min(limit, static_cast<double>(kMaxNewTokensLimit));
  sp.max_new_tokens = std::max(1, static_cast<int>(limit));

  auto step = impl_->model->start(ids, nullptr);
  const decode::SearchResult r = decode::search(*step, sp);
  step.reset();
  out.target_ids = r.tokens;
  out.score = r.score;
  for (int id : r.tokens) out.target_tokens.push_back(impl_->tokenizer.piece(id));
  std::vector<int> body;
  for (int id : r.tokens) {
    if (id == text::kEosId) break;
    body.push_back(id);
  }
  out.text = impl_->tokenizer.decode(body);

  if (params.output_attentions && !r.tokens.empty()) {
    // The maps of the chosen hypothesis: the decoder fed <s> + its tokens (but the last), step by step, exactly
    // as during the search (the incremental decoder equals teacher forcing).
    std::vector<int> tgt_in{text::kBosId};
    tgt_in.insert(tgt_in.end(), r.tokens.begin(), r.tokens.end() - 1);
    AttentionTrace trace;
    impl_->model->forward(ids, tgt_in, &trace);
    out.attentions = trace.maps();
  }
  return out;
}

}  // namespace attnlens::api
