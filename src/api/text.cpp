// attnlens C++ API: the tokenizers (see api/text.h).
#include "api/text.h"

#include <fstream>

#include <utility>

#include <nlohmann/json.hpp>

#include "text/bpe.h"
#include "text/words.h"

namespace attnlens::api {

// ---- text ----

struct BpeTokenizer::Impl {
  text::BpeTokenizer bpe;
};

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeTokenizer::~BpeTokenizer() = default;

std::unique_ptr<BpeTokenizer> BpeTokenizer::from_text(const std::string& vocab_text, const std::string& merges_text) {
  auto impl = std::make_unique<Impl>();
  impl->bpe = text::BpeTokenizer::from_text(vocab_text, merges_text, "BPE vocab/merges text");
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::from_json(const std::string& json_text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("BPE tokenizer JSON is not valid JSON (") + e.what() + ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->bpe = text::BpeTokenizer::from_json(j, "BPE tokenizer JSON");
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::learn(const std::vector<std::string>& lines, const BpeLearnParams& params) {
  require(params.num_merges >= 0, "BPE learn: num_merges must be ≥ 0");
  require(params.min_frequency >= 1, "BPE learn: min_frequency must be ≥ 1");
  text::BpeLearnOptions options;
  options.num_merges = params.num_merges;
  options.min_frequency = params.min_frequency;
  auto impl = std::make_unique<Impl>();
  impl->bpe = text::BpeTokenizer::learn(lines, options);
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::learn_files(const std::vector<std::string>& paths,
                                                        const BpeLearnParams& params) {
  require(params.num_merges >= 0, "BPE learn: num_merges must be ≥ 0");
  require(params.min_frequency >= 1, "BPE learn: min_frequency must be ≥ 1");
  text::BpeLearnOptions options;
  options.num_merges = params.num_merges;
  options.min_frequency = params.min_frequency;
  std::vector<std::ifstream> files;
  files.reserve(paths.size());
  std::vector<std::istream*> inputs;
  for (const auto& path : paths) {
    files.emplace_back(path, std::ios::binary);
    require(static_cast<bool>(files.back()), "BPE learn: cannot open input file '" + path + "'");
    inputs.push_back(&files.back());
  }
  auto impl = std::make_unique<Impl>();
  impl->bpe = text::BpeTokenizer::learn(inputs, options);
  for (std::size_t i = 0; i < files.size(); ++i)
    require(!files[i].bad(), "BPE learn: error while reading '" + paths[i] + "'");
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::load(const std::string& prefix) {
  auto impl = std::make_unique<Impl>();
  impl->bpe = text::BpeTokenizer::load(prefix);
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
}

BpeEncoding BpeTokenizer::encode(const std::string& text) const {
  BpeEncoding out;
  out.ids = impl_->bpe.encode(text);
  out.pieces.reserve(out.ids.size());
  for (int id : out.ids) out.pieces.push_back(impl_->bpe.piece(id));
  return out;
}

std::string BpeTokenizer::decode(const std::vector<int>& ids) const { return impl_->bpe.decode(ids); }
std::string BpeTokenizer::decode_pieces(const std::vector<std::string>& pieces) const {
  return impl_->bpe.decode_pieces(pieces);
}
void BpeTokenizer::save(const std::string& prefix) const { impl_->bpe.save(prefix); }
std::size_t BpeTokenizer::vocab_size() const { return impl_->bpe.vocab_size(); }
std::size_t BpeTokenizer::num_merges() const { return impl_->bpe.num_merges(); }
std::string BpeTokenizer::to_json() const { return impl_->bpe.to_json().dump(); }

std::vector<std::string> tokenize_words(const std::string& text) { return text::tokenize_words(text); }

}  // namespace attnlens::api
