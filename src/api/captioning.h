// Image captioning API (docs/DESIGN.md §7): pixels of any size → caption, with the attention over the encoder grid
// for every generated word. The whole path runs in the engine:
//   image::preprocess (alpha over white, bilinear half-pixel resize to s×s, x/127.5 − 1; image/preprocess.h; s =
//   config.json "image.input_size", 224 by default) → models::MobileNetV2 (grid g×g×1280, g = s/32: 7 at 224)
//   → models::ShowAttendTell (greedy or beam search).
//
// Bundles: a captioning bundle (architecture "show-attend-tell": config.json, the decoder weights, vocab.txt)
// names its encoder bundle in config.json "encoder.bundle" (e.g. "mobilenet-v2-imagenet", architecture
// "mobilenet-v2"), which is stored once and shared by every captioner. load(dir) finds it next to `dir`
// (../<name>/) unless an encoder directory is given.
//
// Inputs: 8-bit pixels, row-major, 4 (RGBA, straight alpha — e.g. ImageData), 3 (RGB) or 1 (grey) channels per
// pixel; width and height in [1, 65536]; the buffer must hold exactly width·height·channels bytes. Fully
// transparent pixels become white. Anything else is an attnlens::Error naming the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/contract.h"
#include "api/tensor.h"
#include "trace/trace.h"

namespace attnlens::api {

struct CaptionParams {
  int num_beams = 0;           // 0 → the bundle's decoding.num_beams; 1 = greedy; at most 64 from JSON
  int max_new_tokens = 0;      // 0 → the bundle's decoder.max_len; counts the <end> step; at most 1000 from JSON
  bool output_attentions = true;
  // false (the default): the search never chooses <unk> (tokenizer.unk_id; greedy takes the best other word, beam
  // never keeps an extension by it; probabilities are not renormalised). true: sat.py's search exactly. caption only.
  bool allow_unk = false;
};
// Parses {"num_beams", "max_new_tokens", "output_attentions", "allow_unk"} (unknown keys are an error) over the
// defaults.
// The contracts (api/contract.h) of a caption (the search) and of attend() (teacher forcing of a given caption):
// their options and result fields. caption_params / attend_params read the options as declared.
const Contract& caption_contract();
const Contract& attend_contract();
CaptionParams caption_params(const std::string& params_json);
CaptionParams attend_params(const std::string& params_json);

struct CaptionResult {
  std::string text;                 // words joined with single spaces (no <end>)
  std::vector<int> token_ids;       // one per decoder step: the words, then <end> when the caption finished
  std::vector<std::string> tokens;  // the same as strings ("<end>" last when finished)
  bool finished = false;            // the decoder chose <end> (else it stopped at max_new_tokens)
  // One "visual" map, the attention α_t over the grid for every step: dims [T, grid_h, grid_w], T = tokens.size(),
  // layer and head −1 (no map when output_attentions is false), as every task returns its maps (trace/trace.h).
  AttentionTrace attentions;
  std::vector<float> betas;  // the gate β_t per step [T]
  float score = 0;           // sum of the chosen words' log-probabilities
  int num_beams = 1;         // 0 for attend()
  // attend() only (teacher forcing of a given caption): the log-probability of each token (<end> last; `score` is
  // their sum), and the caption's words that are not in the vocabulary: tokens[position] is "<unk>" for each.
  std::vector<float> token_logprobs;
  struct UnknownWord {
    std::string word;           // as tokenized (lowercased)
    std::size_t position = 0;   // index into tokens
    template <class F>
    void fields(F&& f) const {
      f("word", word), f("position", position);
    }
  };
  std::vector<UnknownWord> unknown_words;

  template <class F>
  void fields(F&& f) const {
    f("text", text), f("tokens", tokens), f("token_ids", token_ids), f("finished", finished);
    f("attentions", attentions), f("betas", betas), f("score", score), f("num_beams", num_beams);
    f("token_logprobs", token_logprobs), f("unknown_words", unknown_words);
  }
};

class Captioner {
 public:
  // From bundle directories. encoder_dir "" → the sibling directory named by config.json "encoder.bundle".
  static std::unique_ptr<Captioner> load(const std::string& dir, const std::string& encoder_dir = "");
  // From bytes (WASM): the captioning bundle's config.json text, weights and other files (vocab.txt), and the
  // encoder bundle's config.json text and weights.
  static std::unique_ptr<Captioner> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                const std::map<std::string, std::string>& files,
                                                const std::string& encoder_config_json,
                                                std::vector<std::uint8_t> encoder_weights,
                                                const std::string& name = "<memory>");
  ~Captioner();
  Captioner(const Captioner&) = delete;
  Captioner& operator=(const Captioner&) = delete;

  CaptionResult caption(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                        const CaptionParams& params = {}, std::size_t channels = 4) const;
  // The same from rows handed out one at a time (row(y) → width·channels bytes; see image/preprocess.h): the
  // WASM binding uses it to read only the ≤ 2s rows the s×s resize needs out of a JS buffer.
  CaptionResult caption_rows(const std::function<const std::uint8_t*(std::size_t)>& row, std::size_t width,
                             std::size_t height, const CaptionParams& params = {}, std::size_t channels = 4) const;

  // Several images at once: each image's rows are read and preprocessed on the calling thread (as caption_rows
  // does; a JS row source is not thread-safe), then the images are encoded and captioned shared among
  // kernels::threads() threads (kernels/parallel.h). Results equal caption_rows() of each, bit for bit, for any
  // thread count; the first error (e.g. an image of a bad size, found before any captioning) is thrown.
  struct ImageRows {
    std::function<const std::uint8_t*(std::size_t)> row;
    std::size_t width = 0, height = 0, channels = 4;
  };
  std::vector<CaptionResult> caption_many(const std::vector<ImageRows>& images, const CaptionParams& params = {}) const;

  // Forced caption (teacher forcing, sat.forced_decode): runs the decoder over the given caption instead of
  // searching and returns, for each of its words and then <end>, the attention α over the grid, the gate β and the
  // log-probability of that word given the image and the words before it. The caption is split like the training
  // text (text::tokenize_caption: lowercase, \w+|[^\w\s]); words outside the vocabulary are scored as <unk> and
  // listed in unknown_words. `text` is the split caption joined with spaces (unknown words as written), `tokens`
  // the words the model saw then "<end>", finished = true, num_beams = 0. Of the params only output_attentions
  // applies. Errors: an empty (or all white space / no word) caption, one of more than kMaxCaptionWords words, and
  // every image error of caption().
  static constexpr std::size_t kMaxCaptionWords = 1000;
  CaptionResult attend(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                       const std::string& caption, const CaptionParams& params = {}, std::size_t channels = 4) const;
  CaptionResult attend_rows(const std::function<const std::uint8_t*(std::size_t)>& row, std::size_t width,
                            std::size_t height, const std::string& caption, const CaptionParams& params = {},
                            std::size_t channels = 4) const;
  CaptionResult attend_grid(const Tensor& grid, const std::string& caption, const CaptionParams& params = {}) const;

  // The two halves, for benchmarks and tools: pixels → grid [grid_h, grid_w, D]; grid → caption. D = 1280 (the
  // MobileNetV2 features), + 3 for bundles with config.json "encoder.cell_colour": "mean_rgb" (each cell also
  // carries the mean of the preprocessed input over its 32×32 pixels, R, G, B), + 2 for "encoder.cell_position":
  // "xy" (the cell centre ((c + 0.5)/7·2 − 1, (r + 0.5)/7·2 − 1)), in that order; the `shapes` captioner has both.
  Tensor encode(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                std::size_t channels = 4) const;
  CaptionResult caption_grid(const Tensor& grid, const CaptionParams& params = {}) const;
  // ImageNet logits [1000] of the encoder's classifier for a grid [H, W, 1280] or an encode() grid (Error when
  // the encoder bundle has none).
  Tensor classify_grid(const Tensor& grid) const;

  std::size_t vocab_size() const;
  const std::vector<std::string>& vocabulary() const;
  std::string config_json() const;  // the captioning bundle's config.json, as parsed and re-serialised

 private:
  struct Impl;
  explicit Captioner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The encoder bundle on its own as an ImageNet classifier (mobilenet-v2-imagenet: 1000 classes, labels.txt).
struct ImageClass {
  int index = 0;       // ImageNet class, 0..999
  std::string label;   // line `index` of labels.txt ("" when the bundle has no labels file)
  float probability = 0;
  float logit = 0;
};

class ImageClassifier {
 public:
  static std::unique_ptr<ImageClassifier> load(const std::string& dir);
  static std::unique_ptr<ImageClassifier> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                                      const std::map<std::string, std::string>& files = {},
                                                      const std::string& name = "<memory>");
  ~ImageClassifier();
  ImageClassifier(const ImageClassifier&) = delete;
  ImageClassifier& operator=(const ImageClassifier&) = delete;

  // The `top_k` most probable classes (softmax over the logits), best first; pixels as for Captioner::caption.
  std::vector<ImageClass> classify(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                                   std::size_t top_k = 5, std::size_t channels = 4) const;
  std::size_t num_classes() const;

 private:
  struct Impl;
  explicit ImageClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
