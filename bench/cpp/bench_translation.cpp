// Translation benchmark: sentences per second of api::Translator over a file of source sentences (one per line),
// greedy and beam search, for one bundle. Natively (build/bench_translation) and compiled to WASM under Node
// (build-wasm/bench_translation.js, NODERAWFS), driven by bench/run.mjs, which passes test_2016_flickr (or, when
// ../shared/data is missing, the committed golden sentences). One JSON line per measurement on stdout:
//   {"bench":"translation","model":"de-en-transformer","beams":4,"sentences":1000,"seconds":40.1,
//    "sentences_per_second":24.9,"target_tokens":13012,"backend":"avx2+fma"}
// Each configuration translates the whole input once, after a short warm-up (3 sentences); timing covers
// tokenizing, encoding, search and detokenizing; by default without attention maps (output_attentions = false).
// --maps 0,1 times each configuration without and then with every attention map returned (a "maps" field in each
// line); --rounds N repeats the whole set N times (one line per round), for medians on a noisy machine.
//   bench_translation --model DIR --input FILE [--beams 1,4] [--maps 0|1|0,1] [--rounds N] [--limit N]
//                     [--backend NAME]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "api.h"
#include "kernels/kernels.h"

namespace {

std::vector<int> parse_beams(const std::string& s) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(std::atoi(s.substr(i, j - i).c_str()));
    i = j + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, input, backend;
  std::vector<int> beams = {1, 4};
  std::vector<int> maps = {0};
  long limit = -1, rounds = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--model" && has_value) model = argv[++i];
    else if (a == "--input" && has_value) input = argv[++i];
    else if (a == "--beams" && has_value) beams = parse_beams(argv[++i]);
    else if (a == "--maps" && has_value) maps = parse_beams(argv[++i]);
    else if (a == "--rounds" && has_value) rounds = std::atol(argv[++i]);
    else if (a == "--limit" && has_value) limit = std::atol(argv[++i]);
    else if (a == "--backend" && has_value) backend = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_translation --model DIR --input FILE [--beams 1,4] [--maps 0,1] [--rounds N] "
                           "[--limit N] [--backend NAME]\n");
      return 2;
    }
  }
  if (model.empty() || input.empty()) {
    std::fprintf(stderr, "bench_translation: --model and --input are required\n");
    return 2;
  }
  try {
    if (!backend.empty()) attnlens::kernels::select_simd_backend(backend.c_str());
    std::ifstream in(input);
    if (!in) throw attnlens::Error("bench_translation: cannot open " + input);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      if (limit < 0 || static_cast<long>(lines.size()) < limit) lines.push_back(line);
    const auto tr = attnlens::api::Translator::load(model);
    for (long round = 0; round < rounds; ++round)
      for (int beams_k : beams)
        for (int with_maps : maps) {
          attnlens::api::TranslationParams p;
          p.num_beams = beams_k;
          p.output_attentions = with_maps != 0;
          for (std::size_t i = 0; i < lines.size() && i < 3; ++i) tr->translate(lines[i], p);  // warm-up
          std::size_t tokens = 0, map_values = 0;
          const auto t0 = std::chrono::steady_clock::now();
          const std::clock_t c0 = std::clock();
          for (const auto& line : lines) {
            const auto r = tr->translate(line, p);
            tokens += r.target_ids.size();
            for (const auto& m : r.attentions) map_values += m.data.size();
          }
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          // Process CPU time beside wall time: on a shared, loaded machine it is the closer estimate of the
          // uncontended speed (under Emscripten clock() follows wall time).
          const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
          std::printf("{\"bench\":\"translation\",\"model\":\"%s\",\"beams\":%d,\"maps\":%d,\"round\":%ld,"
                      "\"sentences\":%zu,\"seconds\":%.3f,\"sentences_per_second\":%.2f,\"cpu_seconds\":%.3f,"
                      "\"sentences_per_cpu_second\":%.2f,\"target_tokens\":%zu,\"map_values\":%zu,\"backend\":\"%s\"}\n",
                      tr->name().c_str(), beams_k, with_maps, round, lines.size(), s,
                      s > 0 ? static_cast<double>(lines.size()) / s : 0.0, cpu,
                      cpu > 0 ? static_cast<double>(lines.size()) / cpu : 0.0, tokens, map_values,
                      attnlens::kernels::simd_backend());
          std::fflush(stdout);
        }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_translation: %s\n", e.what());
    return 1;
  }
  return 0;
}
