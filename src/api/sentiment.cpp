// api::SentimentClassifier: bundle → (tokenizer, vocabulary, model); text → label, probabilities and attention.
// Behaviour and limits are documented in api/sentiment.h.
#include "api/sentiment.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "common.h"
#include "io/bundle.h"
#include "kernels/parallel.h"
#include "models/sentiment.h"
#include "text/words.h"

namespace attnlens::api {

namespace {

// At 1024 tokens the relation model computes 1M word pairs (~35 GFLOP, seconds in WASM); beyond, a call could
// look like a hang.
constexpr std::size_t kMaxTokensLimit = 1024;

void check_max_tokens(std::size_t n, const std::string& where) {
  require(n >= 1 && n <= kMaxTokensLimit, where + ": max_tokens must be in [1, " + std::to_string(kMaxTokensLimit) +
                                              "], got " + std::to_string(n));
}

}  // namespace

const Contract& sentiment_contract() {
  static const Contract c{
      "sentiment-analysis",
      "",
      {
          integer_option("max_tokens", OptionTime::kCreation, 1, static_cast<long long>(kMaxTokensLimit),
                         SentimentParams{}.max_tokens,
                         "only the first max_tokens tokens are classified (`truncated` says when text was cut)"),
          output_attentions_option("false: `attentions` comes back empty").package_only(),
      },
      {
        {"label", "string", "the most probable label, e.g. 'POSITIVE'"},
        {"label_index", "integer", "index of `label` in `labels` (the first on a tie)"},
        {"score", "number", "the probability of `label`"},
        {"probabilities", "float32[]", "softmax of the logits, one per label"},
        {"logits", "float32[]", "the classifier's logits, one per label"},
        {"tokens", "string[]", "the tokens the model saw, out-of-vocabulary ones as '<unk>'"},
        {"ids", "int32[]", "their vocabulary ids"},
        {"attentions", "maps", "'self-attention' [hops, T] or 'pair-attention' [T, T]; rows sum to 1"},
        {"truncated", "boolean", "the text had more than max_tokens tokens; only the first were used"},
        {"num_input_tokens", "integer", "tokens before truncation (at most max_tokens + 1)"},
          {"labels", "string[]", "the model's labels, in the order of `probabilities`", false},
      }};
  return c;
}

SentimentParams sentiment_params(const std::string& params_json) {
  const OptionValues v = read_options(sentiment_contract(), OptionTime::kCreation, "sentiment params", params_json);
  SentimentParams p;
  p.max_tokens = static_cast<std::size_t>(v.integer("max_tokens", static_cast<long long>(p.max_tokens)));
  return p;
}

struct SentimentClassifier::Impl {
  std::string name;
  std::string architecture;
  std::vector<std::string> labels;
  text::WordVocab vocab;
  std::unique_ptr<models::SentimentModel> model;
  SentimentParams params;

  static std::unique_ptr<Impl> from_bundle(const io::Bundle& b, const SentimentParams& params) {
    const std::string where = "config.json in " + b.name();
    check_max_tokens(params.max_tokens, "sentiment classifier " + b.name());
    auto impl = std::make_unique<Impl>();
    impl->name = b.name();
    impl->architecture = b.architecture();
    impl->params = params;
    const auto& cfg = b.config();
    if (cfg.contains("task")) {
      require(cfg["task"] == "sentiment-analysis",
              where + ": \"task\" is " + cfg["task"].dump() + ", expected \"sentiment-analysis\"");
    }
    // The model first: it rejects bundles of other architectures with the clearest message.
    impl->model = models::SentimentModel::from_bundle(b);

    for (const auto& l : b.config_object().array("labels")) {
      require(l.is_string() && !l.get<std::string>().empty(), where + ": \"labels\" must hold non-empty strings");
      impl->labels.push_back(l.get<std::string>());
    }
    require(impl->labels.size() == impl->model->num_labels(), where + ": \"labels\" has " +
                                                                  std::to_string(impl->labels.size()) +
                                                                  " names but the model has " +
                                                                  std::to_string(impl->model->num_labels()) + " outputs");

    const io::ConfigObject tok = b.config_object().object("tokenizer");
    const std::string type = tok.string_or("type", "");
    require(type == "whitespace-vocab" || type == "words",
            where + ": tokenizer.type must be \"whitespace-vocab\" (SST-2 word tokens), got \"" + type + "\"");
    const std::string vocab_file = tok.string("vocab");
    const std::string unk = tok.string_or("unk_token", "<unk>");
    impl->vocab = text::WordVocab::from_text(b.file(vocab_file), unk, vocab_file + " in " + b.name());
    if (tok.has("unk_id")) {
      require(tok.integer("unk_id", 0, 1 << 30) == impl->vocab.unk_id(),
              where + ": tokenizer.unk_id " + tok.at("unk_id").dump() + " is not the line of '" + unk + "' in " +
                  vocab_file + " (" + std::to_string(impl->vocab.unk_id()) + ")");
    }
    require(impl->vocab.size() == impl->model->vocab_size(),
            vocab_file + " in " + b.name() + " has " + std::to_string(impl->vocab.size()) +
                " tokens but config.json \"vocab_size\" (the embedding rows) is " +
                std::to_string(impl->model->vocab_size()));
    return impl;
  }
};

SentimentClassifier::SentimentClassifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SentimentClassifier::~SentimentClassifier() = default;

std::unique_ptr<SentimentClassifier> SentimentClassifier::load(const std::string& dir, const SentimentParams& params) {
  const io::Bundle bundle = io::Bundle::load(dir);
  return std::unique_ptr<SentimentClassifier>(new SentimentClassifier(Impl::from_bundle(bundle, params)));
}

std::unique_ptr<SentimentClassifier> SentimentClassifier::from_memory(const std::string& config_json,
                                                                      std::vector<std::uint8_t> weights,
                                                                      std::map<std::string, std::string> files,
                                                                      const SentimentParams& params,
                                                                      const std::string& name) {
  const io::Bundle bundle = io::Bundle::from_memory(config_json, std::move(weights), std::move(files), name);
  return std::unique_ptr<SentimentClassifier>(new SentimentClassifier(Impl::from_bundle(bundle, params)));
}

std::vector<SentimentResult> SentimentClassifier::classify_many(const std::vector<std::string>& texts) const {
  std::vector<SentimentResult> out(texts.size());
  kernels::parallel_each(texts.size(), [&](std::size_t i) { out[i] = classify(texts[i]); });
  return out;
}

SentimentResult SentimentClassifier::classify(const std::string& text) const {
  // Tokenization stops one token past max_tokens: enough to know the text is truncated, without tokenizing the
  // rest of a long text (num_input_tokens is then max_tokens + 1, see api/sentiment.h).
  return classify_tokens(text::tokenize_words(text, impl_->params.max_tokens + 1));
}

SentimentResult SentimentClassifier::classify_tokens(const std::vector<std::string>& input_tokens) const {
  const Impl& m = *impl_;
  require(!input_tokens.empty(),
          "sentiment: empty input: the text has no words or punctuation to classify (got an empty or all-space text)");
  SentimentResult r;
  r.num_input_tokens = input_tokens.size();
  r.truncated = input_tokens.size() > m.params.max_tokens;
  const std::size_t t = r.truncated ? m.params.max_tokens : input_tokens.size();
  r.ids.reserve(t);
  r.tokens.reserve(t);
  for (std::size_t i = 0; i < t; ++i) {
    const int id = m.vocab.id_of(input_tokens[i]);
    r.ids.push_back(id);
    // Shown as the model sees it: "<unk>" for out-of-vocabulary words (always valid UTF-8: vocab entries are).
    r.tokens.push_back(m.vocab.token(id));
  }
  models::SentimentForward f = m.model->forward(r.ids);
  r.logits = std::move(f.logits);
  r.probabilities = std::move(f.probabilities);
  r.label_index = 0;
  for (std::size_t i = 1; i < r.probabilities.size(); ++i)
    if (r.probabilities[i] > r.probabilities[static_cast<std::size_t>(r.label_index)]) r.label_index = static_cast<int>(i);
  r.label = m.labels[static_cast<std::size_t>(r.label_index)];
  r.score = r.probabilities[static_cast<std::size_t>(r.label_index)];
  r.attentions.record(f.attention);
  return r;
}

const std::vector<std::string>& SentimentClassifier::labels() const { return impl_->labels; }
const std::string& SentimentClassifier::architecture() const { return impl_->architecture; }
const std::string& SentimentClassifier::name() const { return impl_->name; }
std::size_t SentimentClassifier::vocab_size() const { return impl_->vocab.size(); }
std::size_t SentimentClassifier::max_tokens() const { return impl_->params.max_tokens; }

}  // namespace attnlens::api
