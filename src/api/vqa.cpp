#include "api/vqa.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/options.h"
#include "common.h"
#include "image/preprocess.h"
#include "io/bundle.h"
#include "kernels/kernels.h"
#include "models/image_grid.h"
#include "models/mobilenet_v2.h"
#include "models/vqa.h"
#include "text/utf8.h"
#include "text/words.h"

namespace attnlens::api {

const Contract& vqa_contract() {
  static const Contract c{
      "visual-question-answering",
      "",
      {output_attentions_option("false: `attentions` comes back empty")},
      {
        {"answer", "string", "the most probable answer"},
        {"score", "number", "its probability"},
        {"answers", "string[]", "every answer the model knows (answers.txt order)"},
        {"scores", "float32[]", "softmax over the logits, one per answer"},
        {"logits", "float32[]", "the answer logits"},
        {"tokens", "string[]", "the question's words as the model read them (unknown ones as '<unk>')"},
        {"token_ids", "int32[]", "their vocabulary ids"},
        {"unknown_words", "UnknownWord[]", "{word, position} of each word read as '<unk>' (position indexes tokens)"},
        {"count", "number", "the count readout (sum of count_density)"},
        {"where", "float32[]", "relation readout input: region-attention centroid shift in grid cells; empty if none"},
        {"attention", "string", "'parallel-co-attention' or 'attention-over-attention'"},
          {"attentions", "maps", "region_attention, word_attention, affinity or aoa_* maps, count_density"},
      }};
  return c;
}

VqaParams vqa_params(const std::string& params_json) {
  const OptionValues v = read_options(vqa_contract(), OptionTime::kCall, "vqa options", params_json);
  VqaParams p;
  p.output_attentions = v.boolean("output_attentions", p.output_attentions);
  return p;
}

struct VisualQA::Impl {
  std::string name;
  nlohmann::json config;
  models::MobileNetV2 encoder;
  models::CellChannels channels;
  models::VqaModel model;
  std::vector<std::string> vocab, answers;
  std::unordered_map<std::string, int> word_ids;
  int unk_id = 1;
  std::size_t max_words = 24;
  std::size_t input_size = models::MobileNetV2::kInputSize;

  static std::vector<std::string> read_lines(const io::Bundle& b, const std::string& file) {
    std::vector<std::string> out;
    const std::string text = b.file(file);
    for (std::string_view line : text::split_lines(text)) out.emplace_back(line);
    return out;
  }

  void init(const io::Bundle& b, const io::Bundle& enc) {
    name = b.name();
    config = b.config();
    const std::string where = "config.json in " + b.name();
    require(b.architecture() == "vqa", "model bundle " + b.name() + " is a '" + b.architecture() +
                                           "' bundle, not a visual question answering model");
    require(enc.architecture() == "mobilenet-v2", "encoder bundle " + enc.name() + " is a '" + enc.architecture() +
                                                      "' bundle; the VQA model needs a mobilenet-v2 encoder");
    encoder = models::MobileNetV2::from_bundle(enc, "", b.weight_precision());  // the VQA model's precision
    enc.check_all_tensors_used();
    channels = models::cell_channels(b);
    model = models::VqaModel::from_bundle(b);
    const models::VqaConfig& mc = model.config();
    require(mc.grid_dim == channels.dim(), where + ": vqa.grid_dim must be " + std::to_string(channels.dim()) +
                                               " (the encoder grid's channels with the cell colour/position ones)");
    const io::ConfigObject cfg = b.config_object();
    const io::ConfigObject tok = cfg.object("tokenizer");
    vocab = read_lines(b, tok.string_or("vocab", "vocab.txt"));
    answers = read_lines(b, cfg.object("vqa").string_or("answers", "answers.txt"));
    require(vocab.size() == mc.vocab_size, "model bundle " + b.name() + ": the vocabulary has " +
                                               std::to_string(vocab.size()) + " words but vqa.vocab_size is " +
                                               std::to_string(mc.vocab_size));
    require(answers.size() == mc.num_answers, "model bundle " + b.name() + ": the answer list has " +
                                                  std::to_string(answers.size()) + " lines but vqa.num_answers is " +
                                                  std::to_string(mc.num_answers));
    unk_id = static_cast<int>(tok.integer_or("unk_id", unk_id, 0, static_cast<long long>(vocab.size()) - 1));
    max_words = static_cast<std::size_t>(cfg.object("vqa").integer_or("max_question_words", 24, 1, 1000));
    for (std::size_t i = 0; i < vocab.size(); ++i) word_ids.emplace(vocab[i], static_cast<int>(i));
  }

  // The question → words, checked before any image work.
  std::vector<std::string> question_words(const std::string& question) const {
    std::vector<std::string> words = text::tokenize_caption(question, max_words + 1);
    require(!words.empty(), "vqa: the question is empty (type a question, e.g. \"what colour is the circle?\")");
    require(words.size() <= max_words, "vqa: the question has more than " + std::to_string(max_words) +
                                           " words (the model reads at most " + std::to_string(max_words) + ")");
    bool any_known = false;
    for (const auto& w : words) {
      const auto it = word_ids.find(w);
      any_known = any_known || (it != word_ids.end() && it->second != unk_id);
    }
    require(any_known, "vqa: none of the question's words is in the model's vocabulary (it knows words such as "
                       "\"what colour is the circle\", \"how many squares are there\", \"is the red object left "
                       "of the triangle\")");
    return words;
  }

  Tensor grid_from_input(const std::vector<float>& input) const {
    const std::size_t g = encoder.grid_side(input_size);
    return Tensor({g, g, channels.dim()}, models::image_grid(encoder, input, input_size, channels));
  }

  VqaResult run(const Tensor& grid, const std::vector<std::string>& words, const VqaParams& params) const {
    VqaResult out;
    out.attention = model.config().attention;
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto it = word_ids.find(words[i]);
      const bool known = it != word_ids.end() && it->second != unk_id;
      out.token_ids.push_back(known ? it->second : unk_id);
      out.tokens.push_back(known ? words[i] : vocab[static_cast<std::size_t>(unk_id)]);
      if (!known) out.unknown_words.push_back({words[i], i});
    }
    AttentionTrace trace(true);  // the maps are needed anyway for the count; dropped below when not asked for
    models::VqaForward f = model.forward(grid.data.data(), grid.dims[0], out.token_ids, trace);
    require(first_non_finite(f.logits.data(), f.logits.size()) == f.logits.size(),
            "vqa: the model produced a non-finite score (are the weights or the grid corrupt?)");
    out.count = f.count;
    out.where = f.where;
    out.logits = f.logits;
    out.scores = f.logits;
    kernels::softmax(out.scores.data(), out.scores.size());
    const std::size_t best = static_cast<std::size_t>(
        std::max_element(out.logits.begin(), out.logits.end()) - out.logits.begin());
    out.answer = answers[best];
    out.score = out.scores[best];
    out.answers = answers;
    if (params.output_attentions) out.attentions = std::move(trace);
    return out;
  }
};

VisualQA::VisualQA(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VisualQA::~VisualQA() = default;

std::unique_ptr<VisualQA> VisualQA::load(const std::string& dir, const std::string& encoder_dir) {
  const io::Bundle b = io::Bundle::load(dir);
  const io::Bundle enc = models::load_encoder_bundle(b, dir, encoder_dir, "vqa");
  auto impl = std::make_unique<Impl>();
  impl->init(b, enc);
  return std::unique_ptr<VisualQA>(new VisualQA(std::move(impl)));
}

std::unique_ptr<VisualQA> VisualQA::from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                const std::map<std::string, std::string>& files,
                                                const std::string& encoder_config_json,
                                                std::vector<std::uint8_t> encoder_weights, const std::string& name) {
  const io::Bundle b = io::Bundle::from_memory(config_json, std::move(weights), files, name);
  const io::Bundle enc =
      models::encoder_bundle_from_memory(b, encoder_config_json, std::move(encoder_weights), name);
  auto impl = std::make_unique<Impl>();
  impl->init(b, enc);
  return std::unique_ptr<VisualQA>(new VisualQA(std::move(impl)));
}

Tensor VisualQA::encode(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                        std::size_t channels) const {
  return impl_->grid_from_input(image::preprocess(pixels, size, width, height, channels, impl_->input_size));
}

VqaResult VisualQA::answer(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                           const std::string& question, const VqaParams& params, std::size_t channels) const {
  const std::vector<std::string> words = impl_->question_words(question);
  return impl_->run(encode(pixels, size, width, height, channels), words, params);
}

VqaResult VisualQA::answer_rows(const std::function<const std::uint8_t*(std::size_t)>& row, std::size_t width,
                                std::size_t height, const std::string& question, const VqaParams& params,
                                std::size_t channels) const {
  const std::vector<std::string> words = impl_->question_words(question);
  std::vector<float> input(impl_->input_size * impl_->input_size * 3);
  image::preprocess(row, width, height, channels, impl_->input_size, input.data());
  return impl_->run(impl_->grid_from_input(input), words, params);
}

VqaResult VisualQA::answer_grid(const Tensor& grid, const std::string& question, const VqaParams& params) const {
  const std::vector<std::string> words = impl_->question_words(question);
  grid.validate("vqa: grid");
  const std::size_t D = impl_->channels.dim();
  require(grid.rank() == 3 && grid.dims[0] >= 1 && grid.dims[0] == grid.dims[1] && grid.dims[2] == D,
          "vqa: the grid must have dims [g, g, " + std::to_string(D) + "] (as encode() returns)");
  const std::size_t bad = first_non_finite(grid.data.data(), grid.data.size());
  require(bad == grid.data.size(), "vqa: the grid holds a non-finite value at flat index " + std::to_string(bad));
  return impl_->run(grid, words, params);
}

const std::vector<std::string>& VisualQA::answer_list() const { return impl_->answers; }
const std::vector<std::string>& VisualQA::vocabulary() const { return impl_->vocab; }
std::size_t VisualQA::max_question_words() const { return impl_->max_words; }
std::string VisualQA::config_json() const { return impl_->config.dump(); }

}  // namespace attnlens::api
