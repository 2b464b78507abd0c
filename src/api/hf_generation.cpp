#include "api/hf_generation.h"

#include <algorithm>
#include <utility>

#include "api/hf_tokenizer_file.h"
#include "common.h"
#include "io/bundle.h"
#include "models/hf_gpt2.h"

namespace attnlens::api {

const Contract& text_generation_contract() {
  static const Contract c{
      "text-generation",
      "",
      {
          integer_option("max_new_tokens", OptionTime::kCall, 1, 4096, TextGenerationParams{}.max_new_tokens,
                         "most ids generated after the prompt (fewer when eos comes first or the context is full)"),
          option("do_sample", OptionKind::kBoolean, OptionTime::kCall, false,
                 "false: greedy decoding (sampling is not implemented: true is an error)"),
          output_attentions_option("false: `attentions` comes back empty"),
          output_qk_option(),
      },
      {
          {"generated_text", "string", "the prompt followed by the generated text"},
          {"new_text", "string", "the generated text alone (special tokens skipped)"},
          {"prompt_ids", "int32[]", "the prompt's ids (bos_token_id for an empty prompt)"},
          {"new_ids", "int32[]", "the generated ids, eos included when produced"},
          {"tokens", "string[]", "the tokens of prompt_ids then new_ids"},
          {"stopped", "string", "'eos' or 'length'"},
          {"attentions", "maps", "'self-attention' [N, N] per layer and head over the positions fed"},
          qk_field("'self-attention' over the positions fed (one more forward after generation)"),
      }};
  return c;
}

TextGenerationParams text_generation_params(const std::string& params_json) {
  const OptionValues v = read_options(text_generation_contract(), OptionTime::kCall, "text-generation params",
                                      params_json);
  require(!v.boolean("do_sample", false),
          "text-generation params: \"do_sample\": true is not supported (greedy decoding only)");
  TextGenerationParams p;
  p.max_new_tokens = static_cast<int>(v.integer("max_new_tokens", p.max_new_tokens));
  p.output_attentions = v.boolean("output_attentions", p.output_attentions);
  p.output_qk = v.boolean("output_qk", p.output_qk);
  return p;
}

struct TextGenerator::Impl {
  explicit Impl(const io::Bundle& b) : model(b), tokenizer(load_hf_tokenizer(b)) {
    bos = static_cast<int>(models::hf::HfConfig(b).integer("bos_token_id", 50256, 0,
                                                   static_cast<std::int64_t>(model.vocab_size()) - 1));
  }
  models::HfGpt2 model;
  text::HfTokenizer tokenizer;
  int bos = 0;
};

namespace {

io::Bundle checked(io::Bundle b) {
  require(b.architecture() == "hf-gpt2", "text-generation: bundle " + b.name() + " is '" + b.architecture() +
                                             "'; text generation takes an hf-gpt2 bundle");
  return b;
}

// Rows fed in order (each block: rows × total positions, per layer × head, from HfGpt2::feed) → one [N, N] map
// per layer × head.
void assemble(const std::vector<AttentionTrace>& blocks, std::size_t n, std::size_t maps, AttentionTrace& out) {
  for (std::size_t m = 0; m < maps; ++m) {
    const MapView first = blocks.front().at(m);
    float* map = out.add(first.name, first.layer, first.head, -1, {n, n});
    std::fill(map, map + n * n, 0.0f);
    std::size_t row = 0;
    for (const AttentionTrace& block : blocks) {
      const MapView v = block.at(m);
      const std::size_t rows = v.dims[0], cols = v.dims[1];
      for (std::size_t r = 0; r < rows; ++r, ++row) std::copy_n(v.data.data() + r * cols, cols, map + row * n);
    }
  }
}

}  // namespace

TextGenerator::TextGenerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TextGenerator::~TextGenerator() = default;

std::unique_ptr<TextGenerator> TextGenerator::load(const std::string& dir) {
  const io::Bundle b = checked(io::Bundle::load(dir));
  return std::unique_ptr<TextGenerator>(new TextGenerator(std::make_unique<Impl>(b)));
}

std::unique_ptr<TextGenerator> TextGenerator::from_memory(const std::string& config_json,
                                                          std::vector<std::uint8_t> weights,
                                                          std::map<std::string, std::string> files,
                                                          const std::string& name) {
  const io::Bundle b = checked(io::Bundle::from_memory(config_json, std::move(weights), std::move(files), name));
  return std::unique_ptr<TextGenerator>(new TextGenerator(std::make_unique<Impl>(b)));
}

TextGenerationResult TextGenerator::generate(const std::string& prompt, const TextGenerationParams& params) const {
  TextGenerationResult r = generate_ids(impl_->tokenizer.encode(prompt).ids, params);
  r.generated_text = prompt + r.new_text;
  return r;
}

TextGenerationResult TextGenerator::generate_ids(const std::vector<int>& prompt_ids,
                                                 const TextGenerationParams& params) const {
  const models::HfGpt2& model = impl_->model;
  require(params.max_new_tokens >= 1, "text-generation: max_new_tokens must be at least 1");
  TextGenerationResult r;
  r.prompt_ids = prompt_ids.empty() ? std::vector<int>{impl_->bos} : prompt_ids;
  require(r.prompt_ids.size() < model.max_positions(),
          "text-generation: the prompt has " + std::to_string(r.prompt_ids.size()) +
              " ids; the model's context (n_positions) is " + std::to_string(model.max_positions()));
  const std::size_t V = model.vocab_size();
  auto state = model.start();
  std::vector<AttentionTrace> blocks;
  std::vector<float> logits(r.prompt_ids.size() * V);
  const auto feed = [&](const int* ids, std::size_t n) {
    AttentionTrace* trace = nullptr;
    if (params.output_attentions) trace = &blocks.emplace_back();
    model.feed(state, ids, n, logits.data(), trace);
  };
  feed(r.prompt_ids.data(), r.prompt_ids.size());
  const float* last = logits.data() + (r.prompt_ids.size() - 1) * V;
  r.stopped = "length";
  for (int i = 0; i < params.max_new_tokens; ++i) {
    const int next = static_cast<int>(std::max_element(last, last + V) - last);  // the first maximum
    r.new_ids.push_back(next);
    if (next == model.eos_token_id()) {
      r.stopped = "eos";
      break;
    }
    if (i + 1 == params.max_new_tokens || state.length() == model.max_positions()) break;
    feed(&next, 1);
    last = logits.data();
  }
  for (int id : r.prompt_ids) r.tokens.push_back(impl_->tokenizer.id_to_token(id));
  for (int id : r.new_ids) r.tokens.push_back(impl_->tokenizer.id_to_token(id));
  r.new_text = impl_->tokenizer.decode(r.new_ids);
  r.generated_text = impl_->tokenizer.decode(r.prompt_ids) + r.new_text;
  if (params.output_attentions)
    assemble(blocks, state.length(), model.layers() * model.heads(), r.attentions);
  if (params.output_qk) {
    // the vectors behind those maps: one forward over the ids fed (the last new id is never fed)
    std::vector<int> fed = r.prompt_ids;
    fed.insert(fed.end(), r.new_ids.begin(), r.new_ids.end());
    fed.resize(state.length());
    model.forward(fed, nullptr, nullptr, &r.qk);
  }
  return r;
}

}  // namespace attnlens::api
