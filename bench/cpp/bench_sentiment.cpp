// Sentiment benchmark: sentences per second of api::SentimentClassifier::classify (raw text → tokens → model →
// label, probabilities and the full attention map) over the SST-2 dev set (872 sentences), one sentence at a time,
// single-threaded — natively and, compiled with em++, under Node (node bench_sentiment.js). One JSON line per model:
//   {"bench":"sentiment","model":"sst2-selfattn","sentences":872,"tokens":16717,"sentences_per_s":…,
//    "sentences_per_s_best":…,"ms_per_sentence":…,"load_ms":…,"backend":"avx2+fma","reps":5,"data":"sst2-dev",
//    "accuracy":0.8612,"checksum":…}
// accuracy (share of dev labels matched; -1 without dev.tsv) and checksum (Σ score) show that the build being timed
// computes the same answers as the others.
// Method: one warm-up pass over all sentences, then `reps` timed passes; the median pass is the headline number,
// the fastest beside it (on a shared, loaded machine the closer estimate of the uncontended speed). load_ms is the
// time to load the bundle (parse, validate, convert weights) once.
//
// Options (paths relative to the working directory; bench/run.mjs runs from the repo root):
//   --models DIR     folder holding the bundles (default models)
//   --model NAME     only this bundle (repeatable; default sst2-selfattn and sst2-relation)
//   --data FILE      SST-2 dev.tsv (default ../shared/data/sst2/dev.tsv). When it is missing, the 8 golden
//                    sentences of each bundle's golden.json are used instead ("data":"golden").
//   --reps N         timed passes (default 5)
//   --backend NAME   kernels' SIMD backend (auto, sse2, avx2+fma)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.h"
#include "kernels/kernels.h"

namespace {

struct Options {
  std::string models = "models";
  std::vector<std::string> names;
  std::string data = "../shared/data/sst2/dev.tsv";
  int reps = 5;
  std::string backend;
};

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// dev.tsv: a header line, then "sentence<TAB>label" lines. Labels go to `labels` (0/1).
std::vector<std::string> read_dev(const std::string& path, std::vector<int>& labels) {
  std::string text;
  std::vector<std::string> out;
  if (!read_file(path, text)) return out;
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    const auto tab = line.find('\t');
    if (tab != std::string::npos) {
      out.push_back(line.substr(0, tab));
      labels.push_back(std::atoi(line.c_str() + tab + 1));
    }
  }
  return out;
}

std::vector<std::string> read_golden_texts(const std::string& bundle_dir) {
  std::string text;
  std::vector<std::string> out;
  if (!read_file(bundle_dir + "/golden.json", text)) return out;
  const nlohmann::json golden = nlohmann::json::parse(text);  // named: a temporary would die before the loop
  for (const auto& c : golden.at("cases")) out.push_back(c.at("text").get<std::string>());
  return out;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int run(const Options& opt) {
  if (!opt.backend.empty()) attnlens::kernels::select_simd_backend(opt.backend.c_str());
  const std::vector<std::string> names =
      opt.names.empty() ? std::vector<std::string>{"sst2-selfattn", "sst2-relation"} : opt.names;
  std::vector<int> dev_labels;
  const std::vector<std::string> dev = read_dev(opt.data, dev_labels);
  if (dev.empty())
    std::fprintf(stderr, "bench_sentiment: %s not found; timing the golden sentences instead\n", opt.data.c_str());
  for (const auto& name : names) {
    const std::string dir = opt.models + "/" + name;
    const auto t_load = std::chrono::steady_clock::now();
    const auto clf = attnlens::api::SentimentClassifier::load(dir);
    const double load_ms = ms_since(t_load);
    const std::vector<std::string> sentences = dev.empty() ? read_golden_texts(dir) : dev;
    if (sentences.empty()) throw attnlens::Error("no sentences to time (neither " + opt.data + " nor " + dir + "/golden.json)");

    std::size_t tokens = 0, correct = 0;
    double checksum = 0.0;  // Σ score of the last pass: keeps the work observable, and equal natively and in WASM
    auto pass = [&] {
      tokens = correct = 0;
      checksum = 0.0;
      for (std::size_t i = 0; i < sentences.size(); ++i) {
        const auto r = clf->classify(sentences[i]);
        tokens += r.tokens.size();
        checksum += r.score;
        if (!dev.empty() && r.label_index == dev_labels[i]) ++correct;
      }
    };
    pass();  // warm-up
    std::vector<double> samples;
    for (int r = 0; r < opt.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      pass();
      samples.push_back(ms_since(t0));
    }
    std::sort(samples.begin(), samples.end());
    const double median = samples[samples.size() / 2];
    const double n = static_cast<double>(sentences.size());
    std::printf(
        "{\"bench\":\"sentiment\",\"model\":\"%s\",\"sentences\":%zu,\"tokens\":%zu,\"sentences_per_s\":%.1f,"
        "\"sentences_per_s_best\":%.1f,\"ms_per_sentence\":%.4f,\"load_ms\":%.1f,\"backend\":\"%s\",\"reps\":%d,"
        "\"data\":\"%s\",\"accuracy\":%.4f,\"checksum\":%.4f}\n",
        name.c_str(), sentences.size(), tokens, n / median * 1000.0, n / samples.front() * 1000.0, median / n, load_ms,
        attnlens::api::simd_backend(), opt.reps, dev.empty() ? "golden" : "sst2-dev",
        dev.empty() ? -1.0 : static_cast<double>(correct) / n, checksum);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--models" && has_value) {
      opt.models = argv[++i];
    } else if (a == "--model" && has_value) {
      opt.names.push_back(argv[++i]);
    } else if (a == "--data" && has_value) {
      opt.data = argv[++i];
    } else if (a == "--reps" && has_value) {
      opt.reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--backend" && has_value) {
      opt.backend = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: bench_sentiment [--models DIR] [--model NAME]... [--data dev.tsv] [--reps N] "
                   "[--backend NAME]\n");
      return 2;
    }
  }
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sentiment: %s\n", e.what());
    return 1;
  }
}
