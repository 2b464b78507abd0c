// No heap allocation per decode step: the decoders' hot loop (step, reorder, recording the maps) reuses its buffers.
// A counting global operator new (this file replaces it for the test binary; it only counts while a test asks)
// proves it: after the first steps have sized every buffer, further steps allocate nothing, with one row or a beam,
// with the maps recorded or not, for the Transformer and the RNN translators; and a whole search allocates a
// bounded number of times however long it runs (its result vectors grow by doubling).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/search.h"
#include "io/bundle.h"
#include "models/rnn_seq2seq.h"
#include "models/transformer_seq2seq.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* counted(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

// Every non-aligned form, so that no allocation of one family is freed by another (ASan checks the pairing; the
// nothrow forms are what std::stable_sort's temporary buffer uses).
void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted(n); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted(n); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

std::string source_path(const std::string& relative) { return std::string(ATTNLENS_SOURCE_DIR) + "/" + relative; }

// Allocations made by f().
template <typename F>
long allocations_of(F&& f) {
  g_allocations = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_allocations.load();
}

// Steps a decoder `warm` times, then counts the allocations of `count` more steps (with reorder() when beam).
long steady_state_allocations(attnlens::models::Seq2SeqDecoder& dec, std::size_t rows, bool record, int warm,
                              int count) {
  const std::size_t V = dec.vocab_size(), S = dec.source_length();
  if (record) dec.record_maps(rows, static_cast<std::size_t>(warm + count + 1));
  std::vector<float> logits(rows * V), attention(rows * S);
  std::vector<int> prev(rows, 2);
  if (rows > 1) dec.reorder(std::vector<int>(rows, 0));  // a beam: `rows` copies of the start row
  std::vector<int> parents(rows);
  for (std::size_t r = 0; r < rows; ++r) parents[r] = static_cast<int>(r / 2);  // some rows repeat, some drop
  auto one_step = [&] {
    dec.step(prev.data(), logits.data(), attention.data());
    for (std::size_t r = 0; r < rows; ++r) prev[r] = 4 + static_cast<int>(r);
    if (rows > 1) dec.reorder(parents);
  };
  for (int i = 0; i < warm; ++i) one_step();
  return allocations_of([&] {
    for (int i = 0; i < count; ++i) one_step();
  });
}

// One row and a beam of 4, recording maps or not: no allocation in 12 steps after 3 warm ones.
void check_warm_steps_allocate_nothing(const attnlens::models::Seq2SeqModel& model) {
  const std::vector<int> src{10, 20, 30, 40, 50, 3};
  for (std::size_t rows : {std::size_t{1}, std::size_t{4}})
    for (bool record : {false, true}) {
      CAPTURE(rows);
      CAPTURE(record);
      auto dec = model.start(src, nullptr);
      CHECK(steady_state_allocations(*dec, rows, record, 3, 12) == 0);
    }
}

}  // namespace

TEST_CASE("allocations: the Transformer decoder's steps allocate nothing once warm (1 row, beam, recording)") {
  check_warm_steps_allocate_nothing(
      attnlens::models::TransformerSeq2Seq(attnlens::io::Bundle::load(source_path("models/de-en-transformer"))));
}

TEST_CASE("allocations: with int8 step weights too (the input codes' buffer grows once per thread)") {
  std::ifstream in(source_path("models/de-en-transformer/config.json"));
  nlohmann::json config;
  in >> config;
  config["weight_precision"] = "int8";
  std::ifstream w(source_path("models/de-en-transformer/weights.safetensors"), std::ios::binary);
  std::vector<std::uint8_t> weights((std::istreambuf_iterator<char>(w)), std::istreambuf_iterator<char>());
  check_warm_steps_allocate_nothing(attnlens::models::TransformerSeq2Seq(
      attnlens::io::Bundle::from_memory(config.dump(), std::move(weights), {}, "de-en-transformer int8")));
}

TEST_CASE("allocations: the RNN decoders' steps allocate nothing once warm") {
  for (const char* name : {"rnn-additive", "rnn-general"}) {
    CAPTURE(name);
    const auto bundle = attnlens::io::Bundle::load(source_path(std::string("tests/goldens/translation/") + name));
    const auto model = attnlens::models::make_rnn_seq2seq(bundle);
    const std::vector<int> src{5, 6, 7, 3};
    for (std::size_t rows : {std::size_t{1}, std::size_t{4}})
      for (bool record : {false, true}) {
        CAPTURE(rows);
        CAPTURE(record);
        auto dec = model->start(src, nullptr);
        CHECK(steady_state_allocations(*dec, rows, record, 3, 12) == 0);
      }
    // A list's sources decoded together (start_many: each row its own source), recording.
    const std::vector<std::vector<int>> srcs{src, {8, 3}, {9, 10, 11, 12, 13, 3}};
    auto list = model->start_many(srcs, std::vector<attnlens::AttentionTrace*>(srcs.size(), nullptr));
    REQUIRE(list != nullptr);
    list->record_maps(srcs.size(), 16);
    std::vector<float> logits(srcs.size() * list->vocab_size());
    std::vector<int> prev(srcs.size(), 2);
    for (int i = 0; i < 3; ++i) list->step(prev.data(), logits.data(), nullptr);
    CHECK(allocations_of([&] {
            for (int i = 0; i < 12; ++i) list->step(prev.data(), logits.data(), nullptr);
          }) == 0);
  }
}

namespace {

// A decoder that never ends a sentence (</s> masked), so that a search runs exactly max_new_tokens steps.
class NoEos : public attnlens::decode::StepModel {
 public:
  NoEos(attnlens::decode::StepModel& m, int eos) : m_(m), eos_(eos) {}
  std::size_t vocab_size() const override { return m_.vocab_size(); }
  std::size_t source_length() const override { return m_.source_length(); }
  std::size_t rows() const override { return m_.rows(); }
  void step(const int* prev, float* logits, float* attention) override {
    m_.step(prev, logits, attention);
    for (std::size_t r = 0; r < rows(); ++r) logits[r * vocab_size() + static_cast<std::size_t>(eos_)] = -1e30f;
  }
  void reorder(const std::vector<int>& parents) override { m_.reorder(parents); }

 private:
  attnlens::decode::StepModel& m_;
  int eos_;
};

}  // namespace

TEST_CASE("allocations: a whole search allocates a bounded number of times, not per step") {
  const attnlens::models::TransformerSeq2Seq model(attnlens::io::Bundle::load(source_path("models/de-en-transformer")));
  const std::vector<int> src{10, 20, 30, 40, 50, 3};
  for (int beams : {1, 4}) {
    CAPTURE(beams);
    auto allocations_for = [&](int steps) {
      attnlens::decode::SearchParams p;
      p.num_beams = beams;
      p.max_new_tokens = steps;
      auto dec = model.start(src, nullptr);
      NoEos never_ends(*dec, p.eos_id);
      return allocations_of([&] { attnlens::decode::search(never_ends, p); });
    };
    const long short_run = allocations_for(8), long_run = allocations_for(64);
    MESSAGE("beam " << beams << ": " << short_run << " allocations for 8 steps, " << long_run << " for 64");
    // 56 more steps may only add the doublings of the result vectors (a few), nothing per step.
    CHECK(long_run - short_run <= 12);
  }
}
