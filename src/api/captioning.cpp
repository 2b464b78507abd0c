#include "api/captioning.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "common.h"
#include "image/preprocess.h"
#include "kernels/parallel.h"
#include "io/bundle.h"
#include "kernels/kernels.h"
#include "models/image_grid.h"
#include "models/mobilenet_v2.h"
#include "models/show_attend_tell.h"
#include "text/utf8.h"
#include "text/words.h"

namespace attnlens::api {

namespace {

std::vector<FieldSpec> caption_fields(bool forced) {
  std::vector<FieldSpec> f = {
      {"text", "string", "the caption: its words joined with single spaces (no <end>)"},
      {"tokens", "string[]", "one per decoder step: the words, then '<end>' when the caption finished"},
      {"token_ids", "int32[]", "their vocabulary ids"},
      {"finished", "boolean", "the decoder chose <end> (else it stopped at max_new_tokens)"},
      {"attentions", "maps", "one 'visual' map [T, g, g]: row t is where the model looked choosing tokens[t]"},
      {"betas", "float32[]", "the gate beta_t of each step"},
      {"score", "number", "sum of the chosen words' log-probabilities"},
      {"num_beams", "integer", "the beams the search used (0 for attend())"},
      {"token_logprobs", "float32[]", "attend(): each token's log-probability (score is their sum); else empty"},
      {"unknown_words", "UnknownWord[]", "attend(): {word, position} of each caption word read as '<unk>'; else empty"},
  };
  if (forced) f.push_back({"forced", "boolean", "true: the result of attend() (teacher forcing)", false});
  return f;
}

}  // namespace

const Contract& caption_contract() {
  const auto call = OptionTime::kCall;
  static const Contract c{
      "image-to-text",
      "",
      {
          integer_option("num_beams", call, 1, 64, nullptr,
                         "beam width (1 = greedy); the model's default is its decoding.num_beams"),
          integer_option("max_new_tokens", call, 1, 1000, nullptr,
                         "most decoder steps, counting the <end> step; the model's default is its max_len"),
          output_attentions_option("false: `attentions` comes back empty"),
          option("allow_unk", OptionKind::kBoolean, call, false,
                 "true: the search may emit '<unk>' (the reference search exactly); false: it never does"),
      },
      caption_fields(false)};
  return c;
}

const Contract& attend_contract() {
  static const Contract c{"image-to-text", "attend", {caption_contract().option("output_attentions")}, caption_fields(true)};
  return c;
}

namespace {

CaptionParams read_caption_params(const Contract& contract, const std::string& params_json) {
  const OptionValues v = read_options(contract, OptionTime::kCall, "caption options", params_json);
  CaptionParams p;
  p.num_beams = static_cast<int>(v.integer("num_beams", p.num_beams));
  p.max_new_tokens = static_cast<int>(v.integer("max_new_tokens", p.max_new_tokens));
  p.output_attentions = v.boolean("output_attentions", p.output_attentions);
  p.allow_unk = v.boolean("allow_unk", p.allow_unk);
  return p;
}

}  // namespace

CaptionParams caption_params(const std::string& params_json) { return read_caption_params(caption_contract(), params_json); }
CaptionParams attend_params(const std::string& params_json) { return read_caption_params(attend_contract(), params_json); }

namespace {

// config.json "image.input_size": [s, s], the side the whole image is resized to before the encoder (default
// 224): a multiple of 32 in [32, 512], so the grid is s/32 cells a side (7 at 224, 13 at 416).
std::size_t image_input_size(const io::ConfigObject& cfg) {
  if (!cfg.has("image") || !cfg.object("image").has("input_size")) return models::MobileNetV2::kInputSize;
  const io::ConfigObject image = cfg.object("image");
  const nlohmann::json& v = image.array("input_size");
  const auto side = [](const nlohmann::json& x) { return x.is_number_integer() ? x.get<std::int64_t>() : -1; };
  if (v.size() != 2 || side(v[0]) != side(v[1]) || side(v[0]) < 32 || side(v[0]) > 512 || side(v[0]) % 32 != 0)
    image.fail("input_size", "expected [s, s] with s a multiple of 32 in [32, 512], got " + v.dump());
  return static_cast<std::size_t>(side(v[0]));
}

}  // namespace

struct Captioner::Impl {
  std::string name;
  nlohmann::json config;
  models::MobileNetV2 encoder;
  models::ShowAttendTell decoder;
  std::vector<std::string> vocab;
  std::unordered_map<std::string, int> word_ids;  // vocab → id (attend)
  int unk_id = 3;                                  // config.json tokenizer.unk_id
  int default_beams = 1;
  double length_norm = 0;  // config.json decoding.length_norm (sat.beam_decode's final choice: score / len^norm)
  std::size_t input_size = models::MobileNetV2::kInputSize;
  // config.json "encoder.cell_colour": "mean_rgb" → each grid cell also carries the mean of the preprocessed input
  // over its 32×32 pixels, channels R, G, B (models/training/captioning/mobilenet.py cell_colour): D = 1280 + 3.
  bool cell_colour = false;
  // config.json "encoder.cell_position": "xy" → then the cell centre ((c + 0.5)/g·2 − 1, (r + 0.5)/g·2 − 1)
  // (mobilenet.py cell_position): D += 2.
  bool cell_position = false;
  std::size_t grid_dim() const {
    return models::MobileNetV2::kFeatDim + (cell_colour ? 3 : 0) + (cell_position ? 2 : 0);
  }

  void init(const io::Bundle& cap, const io::Bundle& enc) {
    name = cap.name();
    config = cap.config();
    const std::string where = "config.json in " + cap.name();
    require(cap.architecture() == "show-attend-tell",
            "model bundle " + cap.name() + " is a '" + cap.architecture() + "' bundle, not an image captioner");
    require(enc.architecture() == "mobilenet-v2", "encoder bundle " + enc.name() + " is a '" + enc.architecture() +
                                                      "' bundle; the captioner needs a mobilenet-v2 encoder");
    encoder = models::MobileNetV2::from_bundle(enc, "", cap.weight_precision());  // the captioner's precision
    enc.check_all_tensors_used();
    decoder = models::ShowAttendTell::from_bundle(cap, "decoder.");
    cap.check_all_tensors_used();
    const io::ConfigObject cfg = cap.config_object();
    input_size = image_input_size(cfg);
    const models::CellChannels channels = models::cell_channels(cap);  // encoder.cell_colour / cell_position
    cell_colour = channels.colour;
    cell_position = channels.position;
    require(decoder.config().feat_dim == grid_dim(),
            where + ": encoder.feat_dim must be " + std::to_string(grid_dim()) +
                " (the MobileNetV2 grid's 1280 channels" + (cell_colour ? " + 3 of encoder.cell_colour" : "") +
                (cell_position ? " + 2 of encoder.cell_position" : "") + ")");
    if (cfg.has("decoding")) {
      const io::ConfigObject decoding = cfg.object("decoding");
      default_beams = static_cast<int>(decoding.integer_or("num_beams", default_beams, 1, 64));
      length_norm = decoding.number_or("length_norm", length_norm);
      require(length_norm >= 0 && length_norm <= 10, where + ": decoding.length_norm must be a number in [0, 10]");
    }
    std::string vocab_file = "vocab.txt";
    if (cfg.has("tokenizer")) vocab_file = cfg.object("tokenizer").string_or("vocab", vocab_file);
    const std::string text = cap.file(vocab_file);
    for (std::string_view line : text::split_lines(text)) vocab.emplace_back(line);
    require(vocab.size() == decoder.config().vocab_size,
            "model bundle " + cap.name() + ": " + vocab_file + " has " + std::to_string(vocab.size()) +
                " lines but decoder.vocab_size is " + std::to_string(decoder.config().vocab_size));
    if (cfg.has("tokenizer"))
      unk_id = static_cast<int>(cfg.object("tokenizer").integer_or("unk_id", unk_id, 0,
                                                                   static_cast<long long>(vocab.size()) - 1));
    require(static_cast<std::size_t>(unk_id) < vocab.size(),
            where + ": tokenizer.unk_id must be an id inside the vocabulary");
    for (std::size_t i = 0; i < vocab.size(); ++i) word_ids.emplace(vocab[i], static_cast<int>(i));
  }

  // A caption to force → its words (text::tokenize_caption), checked before any image work.
  static std::vector<std::string> caption_words(const std::string& caption) {
    std::vector<std::string> words = text::tokenize_caption(caption, kMaxCaptionWords + 1);
    require(!words.empty(), "attend: the caption is empty (give the words to score)");
    require(words.size() <= kMaxCaptionWords, "attend: the caption has more than " +
                                                  std::to_string(kMaxCaptionWords) + " words");
    return words;
  }

  Tensor grid_from_input(const std::vector<float>& input) const {
    const std::size_t g = encoder.grid_side(input_size);
    models::CellChannels channels;
    channels.colour = cell_colour;
    channels.position = cell_position;
    return Tensor({g, g, grid_dim()}, models::image_grid(encoder, input, input_size, channels));
  }

  // What a caption call asks for, over the bundle's defaults (caption_grid and caption_many alike).
  void check_call(const Tensor& grid, const CaptionParams& params) const;
  int beams(const CaptionParams& params) const { return params.num_beams > 0 ? params.num_beams : default_beams; }
  std::size_t max_words(const CaptionParams& params) const {  // 0: the bundle's max_len
    return params.max_new_tokens > 0 ? static_cast<std::size_t>(params.max_new_tokens) : 0;
  }
  std::vector<int> banned(const CaptionParams& params) const {  // <unk> is never emitted unless the caller allows it
    if (params.allow_unk || unk_id == decoder.config().end_id) return {};
    return {unk_id};
  }
  // A decoded caption of a gh × gw grid as the API returns it.
  CaptionResult result(const models::SatDecodeResult& r, int num_beams, std::size_t gh, std::size_t gw,
                       const CaptionParams& params) const;
};

Captioner::Captioner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Captioner::~Captioner() = default;

std::unique_ptr<Captioner> Captioner::load(const std::string& dir, const std::string& encoder_dir) {
  const io::Bundle cap = io::Bundle::load(dir);
  const io::Bundle enc = models::load_encoder_bundle(cap, dir, encoder_dir, "captioning");
  auto impl = std::make_unique<Impl>();
  impl->init(cap, enc);
  return std::unique_ptr<Captioner>(new Captioner(std::move(impl)));
}

std::unique_ptr<Captioner> Captioner::from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                  const std::map<std::string, std::string>& files,
                                                  const std::string& encoder_config_json,
                                                  std::vector<std::uint8_t> encoder_weights, const std::string& name) {
  const io::Bundle cap = io::Bundle::from_memory(config_json, std::move(weights), files, name);
  const io::Bundle enc =
      models::encoder_bundle_from_memory(cap, encoder_config_json, std::move(encoder_weights), name);
  auto impl = std::make_unique<Impl>();
  impl->init(cap, enc);
  return std::unique_ptr<Captioner>(new Captioner(std::move(impl)));
}

Tensor Captioner::encode(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                         std::size_t channels) const {
  const std::vector<float> input = image::preprocess(pixels, size, width, height, channels, impl_->input_size);
  return impl_->grid_from_input(input);
}

CaptionResult Captioner::caption(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                                 const CaptionParams& params, std::size_t channels) const {
  return caption_grid(encode(pixels, size, width, height, channels), params);
}

CaptionResult Captioner::caption_rows(const std::function<const std::uint8_t*(std::size_t)>& row, std::size_t width,
                                      std::size_t height, const CaptionParams& params, std::size_t channels) const {
  std::vector<float> input(impl_->input_size * impl_->input_size * 3);
  image::preprocess(row, width, height, channels, impl_->input_size, input.data());
  return caption_grid(impl_->grid_from_input(input), params);
}

std::vector<CaptionResult> Captioner::caption_many(const std::vector<ImageRows>& images,
                                                  const CaptionParams& params) const {
  const std::size_t side = impl_->input_size, n = images.size();
  std::vector<std::vector<float>> inputs(n, std::vector<float>(side * side * 3));
  for (std::size_t i = 0; i < n; ++i)
    image::preprocess(images[i].row, images[i].width, images[i].height, images[i].channels, side, inputs[i].data());
  std::vector<CaptionResult> out(n);
  if (impl_->beams(params) != 1 || n < 2) {  // beam search: each image on its own, the images among the threads
    kernels::parallel_each(n, [&](std::size_t i) { out[i] = caption_grid(impl_->grid_from_input(inputs[i]), params); });
    return out;
  }
  // Greedy: the encoders among the threads, then the images in as many batches as threads (dealt round-robin),
  // each batch decoded as rows (ShowAttendTell::greedy_many). Each result equals caption()'s, bit for bit.
  std::vector<Tensor> grids(n);
  kernels::parallel_each(n, [&](std::size_t i) { grids[i] = impl_->grid_from_input(inputs[i]); });
  for (std::size_t i = 0; i < n; ++i) impl_->check_call(grids[i], params);
  const std::size_t batches = std::min<std::size_t>(n, std::max<std::size_t>(1, kernels::threads()));
  const auto& dec = impl_->decoder;
  kernels::parallel_each(batches, [&](std::size_t b) {
    std::vector<std::size_t> mine;
    for (std::size_t i = b; i < n; i += batches) mine.push_back(i);
    std::vector<models::ShowAttendTell::Encoded> encs;
    encs.reserve(mine.size());
    std::vector<const models::ShowAttendTell::Encoded*> ptrs;
    for (std::size_t i : mine) {
      encs.push_back(dec.encode(grids[i].data.data(), grids[i].dims[0] * grids[i].dims[1]));
      ptrs.push_back(&encs.back());
    }
    const std::vector<models::SatDecodeResult> rs =
        dec.greedy_many(ptrs, impl_->max_words(params), impl_->banned(params));
    for (std::size_t j = 0; j < mine.size(); ++j)
      out[mine[j]] = impl_->result(rs[j], 1, grids[mine[j]].dims[0], grids[mine[j]].dims[1], params);
  });
  return out;
}

namespace {

// Grids come from callers (encode() of another call, a file, JS): a NaN or Inf feature is refused up front.
void require_finite_grid(const Tensor& grid, const std::string& what) {
  const std::size_t bad = first_non_finite(grid.data.data(), grid.data.size());
  if (bad == grid.data.size()) return;
  std::string where;
  for (std::size_t k = grid.dims.size(), rest = bad; k-- > 0;) {
    where = std::to_string(rest % grid.dims[k]) + (where.empty() ? "" : ", ") + where;
    rest /= grid.dims[k];
  }
  throw Error(what + " holds a non-finite value (" + std::to_string(grid.data[bad]) + ") at [" + where +
              "]: features must be finite numbers");
}

// A decoder grid from a caller: dims [H, W, D] with D the bundle's grid_dim(), every value finite.
void check_grid(const Tensor& grid, std::size_t grid_dim, const std::string& what) {
  grid.validate(what + ": grid");
  require_finite_grid(grid, what + ": the grid");
  require(grid.rank() == 3 && grid.dims[2] == grid_dim && grid.dims[0] >= 1 && grid.dims[1] >= 1,
          what + ": the grid must have dims [H, W, " + std::to_string(grid_dim) + "]" +
              (grid_dim != models::MobileNetV2::kFeatDim
                   ? " (1280 MobileNetV2 channels + the bundle's cell colour/position channels, as encode() returns)"
                   : ""));
}

// Teacher forcing of `words` over a checked grid (Captioner::attend*).
CaptionResult force_words(const models::ShowAttendTell& dec, const Tensor& grid, const std::vector<std::string>& words,
                          const std::vector<std::string>& vocab, const std::unordered_map<std::string, int>& word_ids,
                          int unk_id, const CaptionParams& params) {
  const std::size_t gh = grid.dims[0], gw = grid.dims[1];
  CaptionResult out;
  out.num_beams = 0;
  std::vector<int> ids;  // [n] the words as vocabulary ids, unknown → <unk>
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto it = word_ids.find(words[i]);
    const bool known = it != word_ids.end() && it->second != unk_id;
    ids.push_back(known ? it->second : unk_id);
    if (!known) out.unknown_words.push_back({words[i], i});
    if (i) out.text += ' ';
    out.text += words[i];
  }
  const models::ShowAttendTell::Encoded enc = dec.encode(grid.data.data(), gh * gw);
  models::SatDecodeResult r = dec.force(enc, ids);  // steps = n + 1 (the last one scores <end>)
  out.finished = r.finished;
  out.score = r.score;
  out.betas = std::move(r.betas);
  out.token_logprobs = std::move(r.logprobs);
  out.token_ids = ids;
  out.token_ids.push_back(dec.config().end_id);
  for (int id : out.token_ids) out.tokens.push_back(vocab[static_cast<std::size_t>(id)]);
  if (params.output_attentions)  // [n + 1, gh, gw]
    out.attentions.record("visual", -1, -1, -1, {r.steps, gh, gw}, r.alphas.data());
  return out;
}

}  // namespace

CaptionResult Captioner::attend(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                                const std::string& caption, const CaptionParams& params, std::size_t channels) const {
  const std::vector<std::string> words = Impl::caption_words(caption);
  const Tensor grid = encode(pixels, size, width, height, channels);
  return force_words(impl_->decoder, grid, words, impl_->vocab, impl_->word_ids, impl_->unk_id, params);
}

CaptionResult Captioner::attend_rows(const std::function<const std::uint8_t*(std::size_t)>& row, std::size_t width,
                                     std::size_t height, const std::string& caption, const CaptionParams& params,
                                     std::size_t channels) const {
  const std::vector<std::string> words = Impl::caption_words(caption);
  std::vector<float> input(impl_->input_size * impl_->input_size * 3);
  image::preprocess(row, width, height, channels, impl_->input_size, input.data());
  return force_words(impl_->decoder, impl_->grid_from_input(input), words, impl_->vocab, impl_->word_ids,
                     impl_->unk_id, params);
}

CaptionResult Captioner::attend_grid(const Tensor& grid, const std::string& caption, const CaptionParams& params) const {
  const std::vector<std::string> words = Impl::caption_words(caption);
  check_grid(grid, impl_->grid_dim(), "attend");
  return force_words(impl_->decoder, grid, words, impl_->vocab, impl_->word_ids, impl_->unk_id, params);
}

void Captioner::Impl::check_call(const Tensor& grid, const CaptionParams& params) const {
  check_grid(grid, grid_dim(), "caption");
  require(params.num_beams >= 0 && params.max_new_tokens >= 0, "caption: num_beams and max_new_tokens must be >= 0");
}

CaptionResult Captioner::Impl::result(const models::SatDecodeResult& r, int num_beams, std::size_t gh, std::size_t gw,
                                      const CaptionParams& params) const {
  CaptionResult out;
  out.num_beams = num_beams;
  out.finished = r.finished;
  out.score = r.score;
  out.betas = r.betas;
  out.token_ids = r.tokens;
  if (r.finished) out.token_ids.push_back(decoder.config().end_id);
  for (std::size_t i = 0; i < r.tokens.size(); ++i) {
    if (i) out.text += ' ';
    out.text += vocab[static_cast<std::size_t>(r.tokens[i])];
  }
  for (int id : out.token_ids) out.tokens.push_back(vocab[static_cast<std::size_t>(id)]);
  if (params.output_attentions) out.attentions.record("visual", -1, -1, -1, {r.steps, gh, gw}, r.alphas.data());
  return out;
}

CaptionResult Captioner::caption_grid(const Tensor& grid, const CaptionParams& params) const {
  impl_->check_call(grid, params);
  const std::size_t gh = grid.dims[0], gw = grid.dims[1];
  const auto& dec = impl_->decoder;
  const models::ShowAttendTell::Encoded enc = dec.encode(grid.data.data(), gh * gw);
  const int beams = impl_->beams(params);
  const models::SatDecodeResult r =
      beams == 1 ? dec.greedy(enc, impl_->max_words(params), impl_->banned(params))
                 : dec.beam(enc, static_cast<std::size_t>(beams), impl_->max_words(params), impl_->length_norm,
                            impl_->banned(params));
  return impl_->result(r, beams, gh, gw, params);
}

Tensor Captioner::classify_grid(const Tensor& grid) const {
  grid.validate("classify: grid");
  require_finite_grid(grid, "classify: the grid");
  constexpr std::size_t F = models::MobileNetV2::kFeatDim;
  require(grid.rank() == 3 && (grid.dims[2] == F || grid.dims[2] == impl_->grid_dim()),
          "classify: the grid must have dims [H, W, 1280]" +
              (impl_->grid_dim() != F ? " or [H, W, " + std::to_string(impl_->grid_dim()) + "] (as encode() returns)"
                                      : std::string()));
  const std::size_t cells = grid.dims[0] * grid.dims[1], D = grid.dims[2];
  std::vector<float> feats;
  if (D != F) {  // drop the cell colours
    feats.resize(cells * F);
    for (std::size_t i = 0; i < cells; ++i)
      std::copy(grid.data.begin() + static_cast<std::ptrdiff_t>(i * D),
                grid.data.begin() + static_cast<std::ptrdiff_t>(i * D + F), feats.begin() + static_cast<std::ptrdiff_t>(i * F));
  }
  std::vector<float> logits = impl_->encoder.classify(D != F ? feats.data() : grid.data.data(), cells);
  const std::size_t n = logits.size();
  return Tensor({n}, std::move(logits));
}

std::size_t Captioner::vocab_size() const { return impl_->vocab.size(); }
const std::vector<std::string>& Captioner::vocabulary() const { return impl_->vocab; }
std::string Captioner::config_json() const { return impl_->config.dump(); }

struct ImageClassifier::Impl {
  models::MobileNetV2 encoder;
  std::vector<std::string> labels;
  std::size_t input_size = models::MobileNetV2::kInputSize;  // config.json image.input_size (the pooled logits
                                                              // take any grid)

  void init(const io::Bundle& b) {
    require(b.architecture() == "mobilenet-v2",
            "model bundle " + b.name() + " is a '" + b.architecture() + "' bundle, not a mobilenet-v2 image classifier");
    encoder = models::MobileNetV2::from_bundle(b, "", b.weight_precision());
    b.check_all_tensors_used();
    require(encoder.has_classifier(), "model bundle " + b.name() + " has no classifier (classifier.1.*)");
    const io::ConfigObject cfg = b.config_object();
    input_size = image_input_size(cfg);
    if (cfg.has("classifier") && cfg.object("classifier").has("labels")) {
      const std::string file = cfg.object("classifier").string("labels");
      if (b.has_file(file)) {
        const std::string text = b.file(file);
        for (std::string_view line : text::split_lines(text)) labels.emplace_back(line);
        require(labels.size() == encoder.num_classes(),
                "model bundle " + b.name() + ": " + file + " has " + std::to_string(labels.size()) + " lines for " +
                    std::to_string(encoder.num_classes()) + " classes");
      }
    }
  }
};

ImageClassifier::ImageClassifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ImageClassifier::~ImageClassifier() = default;

std::unique_ptr<ImageClassifier> ImageClassifier::load(const std::string& dir) {
  auto impl = std::make_unique<Impl>();
  impl->init(io::Bundle::load(dir));
  return std::unique_ptr<ImageClassifier>(new ImageClassifier(std::move(impl)));
}

std::unique_ptr<ImageClassifier> ImageClassifier::from_memory(const std::string& config_json,
                                                              std::vector<std::uint8_t> weights,
                                                              const std::map<std::string, std::string>& files,
                                                              const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->init(io::Bundle::from_memory(config_json, std::move(weights), files, name));
  return std::unique_ptr<ImageClassifier>(new ImageClassifier(std::move(impl)));
}

std::vector<ImageClass> ImageClassifier::classify(const std::uint8_t* pixels, std::size_t size, std::size_t width,
                                                  std::size_t height, std::size_t top_k, std::size_t channels) const {
  const std::size_t s = impl_->input_size;
  const std::vector<float> input = image::preprocess(pixels, size, width, height, channels, s);
  const std::vector<float> grid = impl_->encoder.features(input.data(), s);
  const std::size_t side = impl_->encoder.grid_side(s);
  const std::vector<float> logits = impl_->encoder.classify(grid.data(), side * side);
  std::vector<float> prob(logits);
  kernels::softmax(prob.data(), prob.size());
  std::vector<int> order(logits.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  top_k = std::min(top_k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top_k), order.end(), [&](int a, int b) {
    return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)] ||
           (logits[static_cast<std::size_t>(a)] == logits[static_cast<std::size_t>(b)] && a < b);
  });
  std::vector<ImageClass> out;
  for (std::size_t i = 0; i < top_k; ++i) {
    const auto k = static_cast<std::size_t>(order[i]);
    out.push_back({order[i], impl_->labels.empty() ? std::string() : impl_->labels[k], prob[k], logits[k]});
  }
  return out;
}

std::size_t ImageClassifier::num_classes() const { return impl_->encoder.num_classes(); }

}  // namespace attnlens::api
