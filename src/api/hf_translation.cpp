// "hf-marian" for api::Translator (api/translation_models.h): the model (models/hf_marian.h), recording its maps
// under the translation task's kind names, and MarianTokenizer's text handling over the bundle's tokenizer.json +
// vocab.json (api/hf_tokenizer_file.h): pieces → vocab.json ids, </s> appended by the translator, decoding joins the
// pieces and turns ▁ into spaces (the tokenizer's Metaspace decoder), special tokens skipped.
#include <memory>
#include <utility>

#include "api/hf_tokenizer_file.h"
#include "api/translation_models.h"
#include "models/hf_marian.h"

namespace attnlens::api {

namespace {

class MarianTranslationTokenizer : public TranslationTokenizer {
 public:
  MarianTranslationTokenizer(text::HfTokenizer tok, int bos, int eos)
      : TranslationTokenizer(bos, eos), tok_(std::move(tok)) {}
  std::vector<int> encode(std::string_view text) const override { return tok_.encode(text, false).ids; }
  std::string piece(int id) const override { return tok_.id_to_token(id); }
  std::string decode(const std::vector<int>& ids) const override { return tok_.decode(ids, true); }
  std::size_t vocab_size() const override { return tok_.vocab_size(); }

 private:
  text::HfTokenizer tok_;
};

// The translation task's map names (api/translation.h), which its alignment and selection read.
const models::HfMarian::MapNames kTranslationNames{"encoder_self", "decoder_self", "cross"};

}  // namespace

void register_hf_architectures() {
  TranslationArchitecture marian;
  marian.model = [](const io::Bundle& b) -> std::unique_ptr<models::Seq2SeqModel> {
    return std::make_unique<models::HfMarian>(b, kTranslationNames);
  };
  marian.tokenizer = [](const io::Bundle& b) -> std::unique_ptr<TranslationTokenizer> {
    const models::hf::HfConfig cfg(b);
    const auto eos = static_cast<int>(cfg.integer("eos_token_id", 0, 0, 1 << 30));
    const auto pad = static_cast<int>(cfg.integer("pad_token_id", 58100, 0, 1 << 30));
    const auto start = static_cast<int>(cfg.integer("decoder_start_token_id", pad, 0, 1 << 30));
    return std::make_unique<MarianTranslationTokenizer>(load_hf_tokenizer(b), start, eos);
  };
  marian.cross_maps = [](const io::Bundle& b) -> std::pair<int, int> {
    const models::hf::HfConfig cfg(b);
    return {static_cast<int>(cfg.integer("decoder_layers", 12, 1, 1 << 16)),
            static_cast<int>(cfg.integer("decoder_attention_heads", 16, 1, 1 << 16))};
  };
  register_translation_architecture("hf-marian", marian);
}

}  // namespace attnlens::api
