// Threads (kernels/parallel.h): the pool runs every index once, errors come back to the caller, nested calls stay
// on their thread, and — what the threaded WebAssembly module relies on — kernels, models and whole pipelines give
// the same bits for 1, 2 and 3 threads. In a build without threads (the default WebAssembly module) set_threads
// stays at 1, which is checked instead.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/captioning.h"
#include "api/sentiment.h"
#include "api/translation.h"
#include "common.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace k = attnlens::kernels;

namespace {

// Sets the thread count for one scope, back to 1 after.
struct Threads {
  explicit Threads(std::size_t n) { k::set_threads(n); }
  ~Threads() { k::set_threads(1); }
};

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

template <typename A, typename B>  // std::vector<float> or attnlens::FloatSpan
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs body() with 1, 2 and 3 threads in turn (the count captured for failure messages).
template <class F>
void for_thread_counts(F body) {
  for (std::size_t n : {1, 2, 3}) {
    Threads t(n);
    CAPTURE(n);
    body();
  }
}

// Runs `compute` (which fills and returns a vector) with 1, 2 and 3 threads; every result must equal the first.
template <class F>
void check_thread_invariant(F compute) {
  std::vector<float> one;
  bool first = true;  // the 1-thread run gives the reference
  for_thread_counts([&] {
    if (first)
      one = compute();
    else
      CHECK(same_bits(compute(), one));
    first = false;
  });
}

}  // namespace

TEST_CASE("parallel: set_threads reports what the build can do") {
  if (!k::threads_supported()) {
    CHECK(k::set_threads(4) == 1);
    CHECK(k::threads() == 1);
    return;
  }
  CHECK(k::set_threads(3) == 3);
  CHECK(k::threads() == 3);
  CHECK(k::set_threads(1000) == k::kMaxThreads);
  CHECK(k::set_threads(0) == k::hardware_threads());
  CHECK(k::set_threads(1) == 1);
}

TEST_CASE("parallel: parallel_for and parallel_each run every index once, errors reach the caller") {
  for (std::size_t threads : {1, 2, 3, 5}) {
    Threads t(threads);
    CAPTURE(threads);
    for (std::size_t n : {0, 1, 2, 7, 64, 1000}) {
      for (std::size_t grain : {1, 3, 64}) {
        CAPTURE(n);
        CAPTURE(grain);
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> bad_bounds{0};
        k::parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
          if (b % grain != 0 || e > n || b >= e) ++bad_bounds;
          for (std::size_t i = b; i < e; ++i) ++hits[i];
        });
        CHECK(bad_bounds.load() == 0);
        for (std::size_t i = 0; i < n; ++i) CHECK(hits[i].load() == 1);
      }
      std::vector<std::atomic<int>> each(n);
      k::parallel_each(n, [&](std::size_t i) { ++each[i]; });
      for (std::size_t i = 0; i < n; ++i) CHECK(each[i].load() == 1);
    }
    // An error thrown by one task comes back to the caller, after the others finished; the pool stays usable.
    CHECK_THROWS_WITH_AS(k::parallel_each(50, [](std::size_t i) {
      if (i == 17) throw attnlens::Error("task 17 failed");
    }), "task 17 failed", attnlens::Error);
    std::atomic<int> after{0};
    k::parallel_each(10, [&](std::size_t) { ++after; });
    CHECK(after.load() == 10);
    // Nested calls run on the task's own thread, and still cover their range.
    std::atomic<long> sum{0};
    k::parallel_each(6, [&](std::size_t) {
      k::parallel_for(100, 1, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) sum += static_cast<long>(i);
      });
    });
    CHECK(sum.load() == 6 * 4950);
  }
}

TEST_CASE("parallel: kernels give the same bits for any thread count") {
  // Sizes past kParallelMinWork per thread, with edges that are not multiples of any tile, panel or vector.
  SUBCASE("gemm / gemm_nt with bias and activation, row and column splits") {
    for (const auto& size : {std::array<std::size_t, 3>{1, 1000, 300}, {2, 777, 301}, {3, 513, 257},
                             {200, 37, 300}, {37, 900, 130}, {301, 301, 65}}) {
      const std::size_t m = size[0], n = size[1], k_ = size[2];  // (lambdas cannot capture structured bindings)
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k_);
      const auto a = random_vector(m * k_, 1), b = random_vector(k_ * n, 2), bias = random_vector(n, 3);
      check_thread_invariant([&] {
        std::vector<float> c(m * n);
        k::gemm(m, n, k_, a.data(), k_, b.data(), n, c.data(), n);
        return c;
      });
      check_thread_invariant([&] {
        std::vector<float> c(m * n);
        k::gemm_nt_bias_act(m, n, k_, a.data(), k_, b.data(), k_, c.data(), n, bias.data(), k::Activation::relu6);
        return c;
      });
    }
  }
  SUBCASE("linear_packed, float32 and int8 weights") {
    for (auto precision : {k::Precision::f32, k::Precision::int8}) {
      // (the last: many rows, as a 1×1 convolution's pixels — int8 then splits the rows among threads)
      for (const auto& size : {std::array<std::size_t, 3>{1, 5000, 256}, {4, 1027, 255}, {7, 333, 513}, {787, 96, 24}}) {
        const std::size_t m = size[0], n = size[1], k_ = size[2];
        CAPTURE(m);
        CAPTURE(n);
        const auto w = random_vector(n * k_, 4), x = random_vector(m * k_, 5), bias = random_vector(n, 6);
        const k::PackedMatrix packed = k::pack_rows(n, k_, w.data(), k_, precision);
        check_thread_invariant([&] {
          std::vector<float> y(m * n);
          k::linear_packed(m, x.data(), k_, packed, bias.data(), y.data(), n, k::Activation::relu);
          return y;
        });
      }
    }
  }
  SUBCASE("depthwise and im2col convolutions") {
    // in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride, padding, pad_h, pad_w, activation
    k::Conv2dParams p{57, 43, 96, 96, 3, 3, 2, k::Padding::same_tf, 0, 0, k::Activation::relu6};
    const auto g = k::conv2d_geometry(p);
    const auto input = random_vector(p.in_h * p.in_w * p.in_c, 7), dw = random_vector(9 * p.in_c, 8),
               bias = random_vector(p.out_c, 9);
    check_thread_invariant([&] {
      std::vector<float> out(g.out_h * g.out_w * p.out_c);
      k::depthwise_conv2d(p, input.data(), dw.data(), bias.data(), out.data());
      return out;
    });
    p.out_c = 40;
    const auto hwio = random_vector(9 * p.in_c * p.out_c, 10);
    check_thread_invariant([&] {
      std::vector<float> out(g.out_h * g.out_w * p.out_c);
      k::conv2d(p, input.data(), hwio.data(), bias.data(), out.data());
      return out;
    });
  }
}

TEST_CASE("parallel: translate_many and classify_many equal one call per text, for any thread count") {
  const std::vector<std::string> texts = {"Wie geht es dir?", "Ein Mann fährt Fahrrad auf der Straße.", "",
                                          "Ich habe heute keine Zeit, aber morgen komme ich gern.", "Danke!"};
  // The Transformer and both RNN translators (greedy lists decoded together, beams one text at a time).
  for (const char* name : {"de-en-general", "de-en-rnn-general", "de-en-rnn-additive"}) for (int beams : {1, 4}) {
    CAPTURE(name);
    CAPTURE(beams);
    const auto translator = attnlens::api::Translator::load(std::string(ATTNLENS_SOURCE_DIR) + "/models/" + name);
    attnlens::api::TranslationParams params;
    params.num_beams = beams;
    std::vector<attnlens::api::TranslationResult> single;
    for (const auto& t : texts) single.push_back(translator->translate(t, params));
    for_thread_counts([&] {
      const auto many = translator->translate_many(texts, params);
      REQUIRE(many.size() == texts.size());
      for (std::size_t i = 0; i < texts.size(); ++i) {
        CAPTURE(texts[i]);
        CHECK(many[i].text == single[i].text);
        CHECK(many[i].target_ids == single[i].target_ids);
        CHECK(many[i].score == single[i].score);
        REQUIRE(many[i].attentions.size() == single[i].attentions.size());
        for (std::size_t m = 0; m < many[i].attentions.size(); ++m)
          CHECK(same_bits(many[i].attentions[m].data, single[i].attentions[m].data));
      }
    });
  }
  {
    const auto translator = attnlens::api::Translator::load(std::string(ATTNLENS_SOURCE_DIR) + "/models/de-en-general");
    Threads t(2);
    attnlens::api::TranslationParams bad;
    bad.num_beams = 1000;
    CHECK_THROWS_AS(translator->translate_many(texts, bad), attnlens::Error);
  }

  const auto classifier = attnlens::api::SentimentClassifier::load(std::string(ATTNLENS_SOURCE_DIR) + "/models/sst2-selfattn");
  const std::vector<std::string> reviews = {"a gorgeous , witty film", "dull and far too long",
                                            "not bad at all , in fact quite moving"};
  std::vector<attnlens::api::SentimentResult> one;
  for (const auto& r : reviews) one.push_back(classifier->classify(r));
  Threads t(2);
  const auto many = classifier->classify_many(reviews);
  REQUIRE(many.size() == reviews.size());
  for (std::size_t i = 0; i < reviews.size(); ++i) {
    CHECK(many[i].label == one[i].label);
    CHECK(same_bits(many[i].probabilities, one[i].probabilities));
    CHECK(same_bits(many[i].attentions.at(0).data, one[i].attentions.at(0).data));
  }
  // One call at a time with two threads: the BiLSTM's directions run side by side, same bits.
  for (std::size_t i = 0; i < reviews.size(); ++i) {
    const auto r = classifier->classify(reviews[i]);
    CHECK(same_bits(r.probabilities, one[i].probabilities));
    CHECK(same_bits(r.attentions.at(0).data, one[i].attentions.at(0).data));
  }
  // One thread, nine sentences of different lengths, both SST-2 models: a list equals one call per text.
  {
    Threads single(1);
    const std::vector<std::string> nine = {"good", "a gorgeous , witty film", "dull and far too long", "bad .",
                                           "not bad at all , in fact quite moving , and the cast is wonderful",
                                           "meh", "the plot goes nowhere", "an utter delight from start to finish", "!"};
    const auto relation = attnlens::api::SentimentClassifier::load(std::string(ATTNLENS_SOURCE_DIR) + "/models/sst2-relation");
    for (const auto* clf : {classifier.get(), relation.get()}) {
      const auto batch = clf->classify_many(nine);
      REQUIRE(batch.size() == nine.size());
      for (std::size_t i = 0; i < nine.size(); ++i) {
        CAPTURE(nine[i]);
        const auto alone = clf->classify(nine[i]);
        CHECK(batch[i].tokens == alone.tokens);
        CHECK(same_bits(batch[i].probabilities, alone.probabilities));
        CHECK(same_bits(batch[i].attentions.at(0).data, alone.attentions.at(0).data));
      }
    }
  }
  // One text the classifier refuses (empty) fails the whole call with that text's error.
  CHECK_THROWS_WITH_AS(classifier->classify_many({"fine", "  "}), doctest::Contains("empty input"), attnlens::Error);
}

TEST_CASE("parallel: a greedy list longer than one batch (16 texts) equals one call per text") {
  const auto translator = attnlens::api::Translator::load(std::string(ATTNLENS_SOURCE_DIR) + "/models/de-en-general");
  const std::vector<std::string> words = {"Hallo!", "Ein Hund.", "Danke schön.", "Wo ist der Bahnhof?", "",
                                          "Zwei Kinder spielen im Park.", "Gute Nacht."};
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < 19; ++i) texts.push_back(words[i % words.size()]);  // two batches on one thread
  attnlens::api::TranslationParams params;
  params.num_beams = 1;
  // A list of texts with nothing to translate: empty results, no decoder run.
  const auto blank = translator->translate_many({"", "   ", "\n"}, params);
  REQUIRE(blank.size() == 3);
  for (const auto& r : blank) {
    CHECK(r.text.empty());
    CHECK(r.target_ids.empty());
    CHECK(r.attentions.empty());
  }
  // Maps off, but a text with numbers still needs its maps for the number copy (the batch records them for it).
  {
    attnlens::api::TranslationParams quiet = params;
    quiet.output_attentions = false;
    const std::vector<std::string> mixed = {"Tom kauft 3 Äpfel für 2,50 Euro.", "Hallo!", "Es ist 10 Uhr."};
    const auto batch = translator->translate_many(mixed, quiet);
    for (std::size_t i = 0; i < mixed.size(); ++i) {
      const auto one = translator->translate(mixed[i], quiet);
      CHECK(batch[i].text == one.text);
      CHECK(batch[i].number_copies.size() == one.number_copies.size());
      CHECK(batch[i].attentions.empty());
    }
  }
  const auto many = translator->translate_many(texts, params);
  REQUIRE(many.size() == texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(i);
    const auto one = translator->translate(texts[i], params);
    CHECK(many[i].text == one.text);
    CHECK(many[i].score == one.score);
    REQUIRE(many[i].attentions.size() == one.attentions.size());
    for (std::size_t m = 0; m < one.attentions.size(); ++m)
      CHECK(same_bits(many[i].attentions[m].data, one.attentions[m].data));
  }
}

TEST_CASE("parallel: caption_many equals caption_rows of each image, for any thread count") {
  const auto cap = attnlens::api::Captioner::load(std::string(ATTNLENS_SOURCE_DIR) + "/models/flickr8k-mobilenet");
  struct Image {
    std::size_t width, height, channels;
    std::vector<std::uint8_t> pixels;
  };
  std::vector<Image> images;
  for (auto [w, h, c] : {std::array<std::size_t, 3>{96, 80, 4}, {224, 224, 3}, {50, 130, 1}, {300, 200, 3},
                         {64, 64, 1}}) {
    Image im{w, h, c, std::vector<std::uint8_t>(w * h * c)};
    for (std::size_t i = 0; i < im.pixels.size(); ++i) im.pixels[i] = static_cast<std::uint8_t>((i * 7 + i / (w * c) * 13) & 255);
    images.push_back(std::move(im));
  }
  auto rows_of = [](const Image& im) {
    return [&im](std::size_t y) { return im.pixels.data() + y * im.width * im.channels; };
  };
  std::vector<attnlens::api::Captioner::ImageRows> list;
  for (const Image& im : images) list.push_back({rows_of(im), im.width, im.height, im.channels});
  // Beam 3 (each image searched on its own) and greedy (the images decoded together as rows, captions of different
  // lengths finishing at different steps): every result equals the image captioned alone.
  for (int beams : {3, 1}) {
    CAPTURE(beams);
    attnlens::api::CaptionParams params;
    params.num_beams = beams;
    std::vector<attnlens::api::CaptionResult> single;
    for (const Image& im : images) single.push_back(cap->caption_rows(rows_of(im), im.width, im.height, params, im.channels));
    std::set<std::size_t> lengths;
    for (const auto& r : single) lengths.insert(r.token_ids.size());
    if (beams == 1) CHECK(lengths.size() > 1);
    for_thread_counts([&] {
      const auto many = cap->caption_many(list, params);
      REQUIRE(many.size() == images.size());
      for (std::size_t i = 0; i < images.size(); ++i) {
        CAPTURE(i);
        CHECK(many[i].text == single[i].text);
        CHECK(many[i].token_ids == single[i].token_ids);
        CHECK(many[i].finished == single[i].finished);
        CHECK(many[i].num_beams == single[i].num_beams);
        CHECK(many[i].score == single[i].score);
        CHECK(same_bits(many[i].betas, single[i].betas));
        REQUIRE(many[i].attentions.size() == 1);
        CHECK(same_bits(many[i].attentions[0].data, single[i].attentions[0].data));
      }
    });
  }
  attnlens::api::CaptionParams params;
  params.num_beams = 1;
  // An image of a bad size is refused before any captioning.
  list.push_back({rows_of(images[0]), 0, 10, 4});
  CHECK_THROWS_AS(cap->caption_many(list, params), attnlens::Error);
}

TEST_CASE("parallel: an RNN translator's bidirectional encoder gives the same bits on two threads") {
  const std::string dir = std::string(ATTNLENS_SOURCE_DIR) + "/models/de-en-rnn-general";
  const auto translator = attnlens::api::Translator::load(dir);
  const std::string text = "Ein kleiner Junge spielt mit seinem Hund im Garten.";
  const auto one = translator->translate(text);
  Threads t(2);
  const auto two = translator->translate(text);
  CHECK(two.text == one.text);
  CHECK(two.score == one.score);
  REQUIRE(two.attentions.size() == one.attentions.size());
  for (std::size_t m = 0; m < one.attentions.size(); ++m) CHECK(same_bits(two.attentions[m].data, one.attentions[m].data));
}
