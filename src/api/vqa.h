// Visual question answering API (docs/DESIGN.md §7): an image and a question → the answer, its score over every
// answer of the bundle, and every attention map of the forward pass. The whole path runs in the engine:
//   image::preprocess → models::MobileNetV2 + cell colour/position (models/image_grid.h, as the shapes captioner)
//   → models::VqaModel (co-attention or attention-over-attention between question words and grid regions).
//
// Bundles (architecture "vqa": config.json, weights.safetensors, vocab.txt, answers.txt) name their encoder bundle
// in config.json "encoder.bundle", found next to the VQA bundle unless an encoder directory is given.
//
// Questions are split like the shapes captions (lowercase, \w+|[^\w\s]; text::tokenize_caption); words outside
// the vocabulary are read as <unk> and listed in unknown_words. Errors (attnlens::Error): an empty question (no
// word), one of more than the bundle's max_question_words (config.json "vqa.max_question_words", 24 in the shipped
// bundles), a question none of whose words is known, and every image error of the captioner (pixels of the wrong
// size, sides outside [1, 65536], channels other than 1, 3, 4).
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

struct VqaParams {
  bool output_attentions = true;
};
// Parses {"output_attentions"} (unknown keys are an error) over the defaults.
// The task's contract (api/contract.h): its options and result fields; vqa_params reads the options as declared.
const Contract& vqa_contract();
VqaParams vqa_params(const std::string& params_json);

struct VqaResult {
  std::string answer;                // the best answer
  float score = 0;                   // its probability
  std::vector<std::string> answers;  // every answer of the bundle (answers.txt order)
  std::vector<float> scores;         // softmax over the logits, one per answer
  std::vector<float> logits;
  std::vector<std::string> tokens;   // the question's words as the model read them (unknown ones as "<unk>")
  std::vector<int> token_ids;
  struct UnknownWord {
    std::string word;
    std::size_t position = 0;  // index into tokens
    template <class F>
    void fields(F&& f) const {
      f("word", word), f("position", position);
    }
  };
  std::vector<UnknownWord> unknown_words;
  float count = 0;                    // the count readout (Σ count_density)
  // The relation readout's input, when the model has one (config "relation_units"): the question level's region
  // attention centroid minus the word level's, in grid cells (x right, y down); empty otherwise.
  std::vector<float> where;
  std::string attention;              // "parallel-co-attention" or "attention-over-attention"
  AttentionTrace attentions;  // empty when output_attentions is false (models/vqa.h lists them)

  template <class F>
  void fields(F&& f) const {
    f("answer", answer), f("score", score), f("answers", answers), f("scores", scores), f("logits", logits);
    f("tokens", tokens), f("token_ids", token_ids), f("unknown_words", unknown_words), f("count", count);
    f("where", where), f("attention", attention), f("attentions", attentions);
  }
};

class VisualQA {
 public:
  static std::unique_ptr<VisualQA> load(const std::string& dir, const std::string& encoder_dir = "");
  static std::unique_ptr<VisualQA> from_memory(const std::string& config_json, std::vector<std::uint8_t> weights,
                                               const std::map<std::string, std::string>& files,
                                               const std::string& encoder_config_json,
                                               std::vector<std::uint8_t> encoder_weights,
                                               const std::string& name = "<memory>");
  ~VisualQA();
  VisualQA(const VisualQA&) = delete;
  VisualQA& operator=(const VisualQA&) = delete;

  // pixels: 8-bit, row-major, `channels` (4 RGBA, 3 RGB, 1 grey) per pixel, exactly width·height·channels bytes.
  VqaResult answer(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                   const std::string& question, const VqaParams& params = {}, std::size_t channels = 4) const;
  // The same from rows handed out one at a time (the WASM binding reads only the rows the resize needs).
  VqaResult answer_rows(const std::function<const std::uint8_t*(std::size_t)>& row, std::size_t width,
                        std::size_t height, const std::string& question, const VqaParams& params = {},
                        std::size_t channels = 4) const;
  // The two halves: pixels → grid [g, g, D]; grid → answer (D = 1285 for the shapes bundles).
  Tensor encode(const std::uint8_t* pixels, std::size_t size, std::size_t width, std::size_t height,
                std::size_t channels = 4) const;
  VqaResult answer_grid(const Tensor& grid, const std::string& question, const VqaParams& params = {}) const;

  const std::vector<std::string>& answer_list() const;
  const std::vector<std::string>& vocabulary() const;
  std::size_t max_question_words() const;
  std::string config_json() const;

 private:
  struct Impl;
  explicit VisualQA(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlens::api
