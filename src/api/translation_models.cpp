#include "api/translation_models.h"

#include <map>
#include <mutex>

#include "common.h"
#include "models/rnn_seq2seq.h"
#include "models/transformer_seq2seq.h"
#include "text/bpe.h"

namespace attnlens::api {

namespace {

// The project's BPE (config "tokenizer": {"type": "bpe", "vocab", "merges"}), ids fixed by text/bpe.h.
class BpeTranslationTokenizer : public TranslationTokenizer {
 public:
  explicit BpeTranslationTokenizer(const io::Bundle& b) : TranslationTokenizer(text::kBosId, text::kEosId) {
    const std::string where = "config.json in " + b.name();
    const io::ConfigObject tok = b.config_object().object("tokenizer");
    require(tok.string_or("type", "") == "bpe", where + ": tokenizer.type must be \"bpe\"");
    for (const auto& [key, expected] : std::vector<std::pair<const char*, int>>{
             {"pad_id", text::kPadId}, {"unk_id", text::kUnkId}, {"bos_id", text::kBosId}, {"eos_id", text::kEosId}})
      if (tok.has(key))
        require(tok.at(key) == expected, where + ": tokenizer." + key + " must be " + std::to_string(expected) +
                                             " (the project's BPE ids)");
    const std::string vocab_file = tok.string("vocab");
    const std::string merges_file = tok.string("merges");
    bpe_ = text::BpeTokenizer::from_text(b.file(vocab_file), b.file(merges_file), vocab_file + " in " + b.name(),
                                         merges_file + " in " + b.name());
  }
  std::vector<int> encode(std::string_view text) const override { return bpe_.encode(text); }
  std::string piece(int id) const override { return bpe_.piece(id); }
  std::string decode(const std::vector<int>& ids) const override { return bpe_.decode(ids); }
  std::size_t vocab_size() const override { return bpe_.vocab_size(); }

 private:
  text::BpeTokenizer bpe_;
};

std::unique_ptr<TranslationTokenizer> bpe_tokenizer(const io::Bundle& b) {
  return std::make_unique<BpeTranslationTokenizer>(b);
}

std::pair<int, int> transformer_cross_maps(const io::Bundle& b) {
  const io::ConfigObject cfg = b.config_object();
  return {static_cast<int>(cfg.integer("decoder_layers", 1, 1 << 16)), static_cast<int>(cfg.integer("heads", 1, 1 << 16))};
}

std::mutex registry_mutex;

std::map<std::string, TranslationArchitecture>& registry() {
  static std::map<std::string, TranslationArchitecture> r{
      {"transformer-seq2seq",
       {[](const io::Bundle& b) -> std::unique_ptr<models::Seq2SeqModel> {
          return std::make_unique<models::TransformerSeq2Seq>(b);
        },
        bpe_tokenizer, transformer_cross_maps}},
      {"rnn-seq2seq", {[](const io::Bundle& b) { return models::make_rnn_seq2seq(b); }, bpe_tokenizer, nullptr}},
  };
  return r;
}

}  // namespace

void register_translation_architecture(const std::string& name, const TranslationArchitecture& arch) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[name] = arch;
}

const TranslationArchitecture& translation_architecture(const io::Bundle& b) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  const auto& r = registry();
  const auto it = r.find(b.architecture());
  if (it != r.end()) return it->second;
  std::string known;
  for (const auto& [name, arch] : r) known += (known.empty() ? "" : ", ") + name;
  throw Error("bundle " + b.name() + ": architecture '" + b.architecture() + "' is not a translator (expected " +
              known + (b.architecture() == "hf-marian" ? "; call api::register_hf_architectures() for hf-marian" : "") +
              ")");
}

}  // namespace attnlens::api
