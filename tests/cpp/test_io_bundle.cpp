// Tests of src/io: the safetensors reader and model bundles. Fixtures are written at test time: a tiny valid
// bundle, then corrupt copies, each of which must fail with its own clear message (natively, under ASan/UBSan,
// and compiled to WASM under Node).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "io/bundle.h"
#include "io/safetensors.h"
#include "kernels/kernels.h"
#include "nn/linear.h"
#include "test_support.h"

using attnlens::io::Bundle;
using attnlens::io::SafeTensors;
using nlohmann::json;
using Bytes = std::vector<std::uint8_t>;

namespace {

struct Fixture {
  std::string name, dtype;
  std::vector<std::size_t> shape;
  Bytes data;
};

template <typename T>
Bytes bytes_of(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// The tiny valid model: one tensor of each supported dtype.
std::vector<Fixture> tiny_tensors() {
  return {
      {"embedding", "F32", {3, 2}, bytes_of<float>({0.5f, -1.0f, 2.0f, 3.25f, -0.125f, 4.0f})},
      {"bias", "F16", {2}, bytes_of<std::uint16_t>({0x3C00, 0xC000})},    // 1, -2
      {"scale", "BF16", {2}, bytes_of<std::uint16_t>({0x3F80, 0x4040})},  // 1, 3
      {"ids", "I64", {3}, bytes_of<std::int64_t>({7, -1, 1LL << 40})},
      {"count", "I32", {1}, bytes_of<std::int32_t>({42})},
      {"empty", "F32", {0, 4}, {}},
  };
}

// Header + data laid out contiguously in the given order; `edit` may change the header before it is written.
Bytes assemble(const std::vector<Fixture>& tensors, const std::function<void(json&)>& edit = nullptr) {
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}};
  Bytes data;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.data.size()}}};
    data.insert(data.end(), t.data.begin(), t.data.end());
  }
  if (edit) edit(header);
  const std::string h = header.dump();
  Bytes out(8 + h.size() + data.size());
  const std::uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * i));  // little-endian length
  std::memcpy(out.data() + 8, h.data(), h.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + h.size(), data.data(), data.size());
  return out;
}

const std::string kConfig = R"({"architecture": "test-tiny", "version": 1, "d_model": 2, "vocab": 3})";

std::string write_bundle(const std::string& name, const std::string& config, const Bytes& weights) {
  const std::string dir = "/tmp/attnlens_test_io_" + name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json", std::ios::binary | std::ios::trunc) << config;
  std::ofstream w(dir + "/weights.safetensors", std::ios::binary | std::ios::trunc);
  w.write(reinterpret_cast<const char*>(weights.data()), static_cast<std::streamsize>(weights.size()));
  return dir;
}

using attnlens::testing::error_of;

// Loads the bytes both ways (file bundle and in-memory) and checks that both fail with `expected` in the message.
void expect_weights_error(const std::string& case_name, const Bytes& weights, const std::string& expected) {
  CAPTURE(case_name);
  const std::string dir = write_bundle(case_name, kConfig, weights);
  const std::string from_file = error_of([&] { Bundle::load(dir); });
  CHECK_MESSAGE(from_file.find("weights.safetensors in " + dir + ": ") == 0, from_file);
  CHECK_MESSAGE(from_file.find(expected) != std::string::npos, from_file);
  const std::string from_memory = error_of([&] { Bundle::from_memory(kConfig, weights, {}, "mem"); });
  CHECK_MESSAGE(from_memory.find(expected) != std::string::npos, from_memory);
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_SUITE("io.safetensors") {
  TEST_CASE("half and bfloat16 conversion is exact") {
    using attnlens::io::bf16_to_float;
    using attnlens::io::f16_to_float;
    CHECK(f16_to_float(0x0000) == 0.0f);
    CHECK(std::signbit(f16_to_float(0x8000)));
    CHECK(f16_to_float(0x3C00) == 1.0f);
    CHECK(f16_to_float(0xC000) == -2.0f);
    CHECK(f16_to_float(0x7BFF) == 65504.0f);                   // largest half
    CHECK(f16_to_float(0x0400) == std::ldexp(1.0f, -14));      // smallest normal
    CHECK(f16_to_float(0x0001) == std::ldexp(1.0f, -24));      // smallest subnormal
    CHECK(f16_to_float(0x03FF) == std::ldexp(1023.0f, -24));   // largest subnormal
    CHECK(f16_to_float(0x3555) == 0.333251953125f);
    CHECK(std::isinf(f16_to_float(0x7C00)));
    CHECK(std::isnan(f16_to_float(0x7E00)));
    CHECK(bf16_to_float(0x3F80) == 1.0f);
    CHECK(bf16_to_float(0xC040) == -3.0f);
    CHECK(std::isinf(bf16_to_float(0xFF80)));
    // Every finite half value round-trips through float back to the same bits (checked via the inverse formula).
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
      const float f = f16_to_float(static_cast<std::uint16_t>(h));
      if (!std::isfinite(f)) continue;
      const float mag = std::fabs(f);
      int e = 0;
      const float m = std::frexp(mag, &e);  // mag = m·2^e, m in [0.5, 1)
      std::uint32_t back;
      if (mag == 0.0f) {
        back = 0;
      } else if (e - 1 < -14) {
        back = static_cast<std::uint32_t>(std::ldexp(mag, 24));  // subnormal: mantissa = mag·2^24
      } else {
        back = (static_cast<std::uint32_t>(e - 1 + 15) << 10) | static_cast<std::uint32_t>(std::ldexp(m * 2 - 1, 10));
      }
      if (std::signbit(f)) back |= 0x8000;
      REQUIRE(back == h);
    }
  }

  TEST_CASE("a valid file: every dtype, metadata, values") {
    const auto st = SafeTensors::from_buffer(assemble(tiny_tensors()), "tiny");
    CHECK(st.names() == std::vector<std::string>{"bias", "count", "embedding", "empty", "ids", "scale"});
    CHECK(st.metadata().at("format") == "pt");
    CHECK(st.info("embedding").shape == std::vector<std::size_t>{3, 2});
    CHECK(st.to_float("embedding") == std::vector<float>{0.5f, -1.0f, 2.0f, 3.25f, -0.125f, 4.0f});
    CHECK(st.to_float("bias") == std::vector<float>{1.0f, -2.0f});
    CHECK(st.to_float("scale") == std::vector<float>{1.0f, 3.0f});
    CHECK(st.to_int64("ids") == std::vector<std::int64_t>{7, -1, 1LL << 40});
    CHECK(st.to_int64("count") == std::vector<std::int64_t>{42});
    CHECK(st.to_float("empty").empty());
    CHECK(error_of([&] { st.to_float("ids"); }).find("tensor 'ids' has dtype I64 but a floating-point tensor") !=
          std::string::npos);
    CHECK(error_of([&] { st.to_int64("bias"); }).find("has dtype F16 but an integer tensor") != std::string::npos);
    // A header with no tensors and no data is valid too.
    CHECK(SafeTensors::from_buffer(assemble({}), "none").names().empty());
  }

  TEST_CASE("unaligned tensors are read correctly") {
    auto t = tiny_tensors();
    std::vector<Fixture> odd = {{"byte_pair", "F16", {1}, bytes_of<std::uint16_t>({0x4200})}, t[0]};  // 3.0, then F32 at offset 2
    const auto st = SafeTensors::from_buffer(assemble(odd), "odd");
    CHECK(st.to_float("byte_pair") == std::vector<float>{3.0f});
    CHECK(st.to_float("embedding")[3] == 3.25f);
  }
}

TEST_SUITE("io.bundle") {
  TEST_CASE("the tiny bundle loads from a directory and from memory") {
    const std::string dir = write_bundle("valid", kConfig, assemble(tiny_tensors()));
    std::ofstream(dir + "/words.txt") << "<unk>\nhello\n";
    const Bundle b = Bundle::load(dir);
    CHECK(b.architecture() == "test-tiny");
    CHECK(b.config_int("d_model") == 2);
    CHECK(b.tensor("embedding", {3, 2})[5] == 4.0f);
    CHECK(b.tensor("bias", {2}) == std::vector<float>{1.0f, -2.0f});
    CHECK(b.int_tensor("count", {1}) == std::vector<std::int64_t>{42});
    CHECK(b.has_file("words.txt"));
    CHECK(b.file("words.txt") == "<unk>\nhello\n");
    CHECK(!b.has_file("../valid/words.txt"));
    CHECK(error_of([&] { b.file("../../etc/passwd"); }).find("must be a plain name") != std::string::npos);
    CHECK(error_of([&] { b.file("absent.txt"); }).find("cannot open") != std::string::npos);

    const Bundle m = Bundle::from_memory(kConfig, assemble(tiny_tensors()), {{"words.txt", "<unk>\n"}}, "tiny-mem");
    CHECK(m.tensor("scale", {2}) == std::vector<float>{1.0f, 3.0f});
    CHECK(m.file("words.txt") == "<unk>\n");
    CHECK(error_of([&] { m.file("other.txt"); }) == "model bundle tiny-mem: file 'other.txt' was not provided");
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("int8 tensors (I8 codes + per-row .qscale) read as code·scale; weight_precision is checked") {
    const std::vector<Fixture> tensors = {
        {"w", "I8", {2, 3}, bytes_of<std::int8_t>({127, -64, 0, -127, 1, 2})},
        {"w.qscale", "F32", {2}, bytes_of<float>({0.5f, 0.25f})},
        {"v", "I8", {2, 2}, bytes_of<std::int8_t>({1, 2, 3, 4})},
        {"v.qscale", "F32", {3}, bytes_of<float>({1.0f, 1.0f, 1.0f})},
        {"u", "I8", {1, 2}, bytes_of<std::int8_t>({1, 2})},
        // a convolution's weights [out 2, in 1, 2, 1]: one scale per output channel (scripts/quantize.mjs on a
        // MobileNetV2 encoder bundle), rows of in·kh·kw values
        {"c", "I8", {2, 1, 2, 1}, bytes_of<std::int8_t>({4, -8, 127, 1})},
        {"c.qscale", "F32", {2}, bytes_of<float>({0.5f, 2.0f})},
        {"s", "I8", {3}, bytes_of<std::int8_t>({1, 2, 3})},
        {"s.qscale", "F32", {3}, bytes_of<float>({1.0f, 1.0f, 1.0f})},
    };
    const Bundle b = Bundle::from_memory(
        R"({"architecture": "test-tiny", "weight_precision": "int8"})", assemble(tensors), {}, "q");
    CHECK(b.weight_precision() == attnlens::kernels::Precision::int8);
    CHECK(b.tensor("w", {2, 3}) == std::vector<float>{63.5f, -32.0f, 0.0f, -31.75f, 0.25f, 0.5f});
    CHECK(error_of([&] { b.tensor("v", {2, 2}); }).find("'v.qscale' has shape [3]") != std::string::npos);
    CHECK(error_of([&] { b.tensor("u", {1, 2}); }).find("has no 'u.qscale'") != std::string::npos);
    CHECK(b.tensor("c", {2, 1, 2, 1}) == std::vector<float>{2.0f, -4.0f, 254.0f, 2.0f});
    CHECK(error_of([&] { b.tensor("s", {3}); }).find("must have at least 2 dimensions") != std::string::npos);
    CHECK(Bundle::from_memory(kConfig, assemble(tiny_tensors()), {}, "f").weight_precision() ==
          attnlens::kernels::Precision::f32);
    CHECK(error_of([&] { Bundle::from_memory(R"({"architecture": "test-tiny", "weight_precision": "int4"})",
                                             assemble(tiny_tensors()), {}, "p").weight_precision(); })
              .find("\"weight_precision\" must be \"f32\" or \"int8\"") != std::string::npos);
  }

  // nn::Linear takes the bundle's precision: the float32 GEMM, or only the int8 codes of a matrix the int8 bundle
  // would store as codes, multiplied through the int8 product — each the same bits as that kernel called directly,
  // and a row the same alone as among others.
  TEST_CASE("nn::Linear: float32 GEMM or packed rows, or int8 codes by the bundle's weight precision") {
    namespace k = attnlens::kernels;
    const std::size_t out = 40, in = 32, m = 7;  // 1280 weights: at least io::kInt8MinValues
    std::vector<float> w(out * in), bias(out), small(4 * 8, 0.5f), x(m * in);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * static_cast<float>(i)) * 0.8f;
    for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * static_cast<float>(i) - 0.2f;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * static_cast<float>(i) + 0.3f);
    const std::vector<Fixture> tensors = {{"w", "F32", {out, in}, bytes_of<float>(w)},
                                          {"b", "F32", {out}, bytes_of<float>(bias)},
                                          {"small", "F32", {4, 8}, bytes_of<float>(small)}};
    const Bundle f32 = Bundle::from_memory(R"({"architecture": "test-tiny"})", assemble(tensors), {}, "f");
    const Bundle int8 =
        Bundle::from_memory(R"({"architecture": "test-tiny", "weight_precision": "int8"})", assemble(tensors), {}, "q");

    const attnlens::nn::Linear lf(f32, "w", out, in, "b"), lq(int8, "w", out, in, "b");
    CHECK_FALSE(lf.int8());
    CHECK(lq.int8());
    CHECK_FALSE(attnlens::nn::Linear(int8, "small", 4, 8).int8());  // 32 weights: float in an int8 bundle too

    std::vector<float> yf(m * out), yq(m * out), ref(m * out), one(out);
    lf.forward(m, x.data(), in, yf.data(), out, k::Activation::relu);
    k::gemm_nt_bias_act(m, out, in, x.data(), in, w.data(), in, ref.data(), out, bias.data(), k::Activation::relu);
    CHECK(yf == ref);

    lq.forward(m, x.data(), in, yq.data(), out, k::Activation::relu);
    const std::vector<float> rounded = int8.tensor("w", {out, in});  // the codes times their scales
    const k::PackedMatrix codes = k::pack_rows(out, in, rounded.data(), in, k::Precision::int8);
    k::linear_packed(m, x.data(), in, codes, bias.data(), ref.data(), out, k::Activation::relu);
    CHECK(yq == ref);
    CHECK(yq != yf);  // the int8 product is not the float one
    double worst = 0;
    for (std::size_t i = 0; i < yq.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(yq[i] - yf[i])));
    MESSAGE("nn::Linear int8 against float32: max abs difference " << worst);
    CHECK(worst < 0.05);  // |Σ x (w − q·s)| ≤ Σ|x|·s/2 with s ≤ 0.8/127: at most ~0.1, typically far less
    for (std::size_t r = 0; r < m; ++r) {
      lq.forward(1, x.data() + r * in, in, one.data(), out, k::Activation::relu);
      CHECK(std::equal(one.begin(), one.end(), yq.begin() + static_cast<std::ptrdiff_t>(r * out)));
    }

    // Rows::few keeps W packed (the float32 one-row product, kernels::linear_packed), Rows::any both: packed up to
    // kFewRows rows, the GEMM beyond; int8 keeps only its codes whatever the rows.
    using Rows = attnlens::nn::Linear::Rows;
    const std::size_t many = attnlens::nn::Linear::kFewRows + 3;
    std::vector<float> xm(many * in), got(many * out), want(many * out);
    for (std::size_t i = 0; i < xm.size(); ++i) xm[i] = std::sin(0.23f * static_cast<float>(i) - 1.0f);
    const k::PackedMatrix packed = k::pack_rows(out, in, w.data(), in, k::Precision::f32);
    const attnlens::nn::Linear few(f32, "w", out, in, "b", Rows::few), any(f32, "w", out, in, "b", Rows::any);
    for (const std::size_t rows : {std::size_t{1}, attnlens::nn::Linear::kFewRows, many}) {
      CAPTURE(rows);
      few.forward(rows, xm.data(), in, got.data(), out);
      k::linear_packed(rows, xm.data(), in, packed, bias.data(), want.data(), out);
      CHECK(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(rows * out), want.begin()));
      any.forward(rows, xm.data(), in, got.data(), out);
      if (rows > attnlens::nn::Linear::kFewRows)
        k::gemm_nt_bias_act(rows, out, in, xm.data(), in, w.data(), in, want.data(), out, bias.data(),
                            k::Activation::none);
      CHECK(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(rows * out), want.begin()));
      const attnlens::nn::Linear q_few(int8, "w", out, in, "b", Rows::few);
      CHECK(q_few.int8());
      q_few.forward(rows, xm.data(), in, got.data(), out);
      k::linear_packed(rows, xm.data(), in, codes, bias.data(), want.data(), out);
      CHECK(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(rows * out), want.begin()));
    }
  }

  TEST_CASE("missing tensor, wrong shape and wrong dtype name the file and the tensor") {
    const std::string dir = write_bundle("shape", kConfig, assemble(tiny_tensors()));
    const Bundle b = Bundle::load(dir);
    const std::string prefix = "weights.safetensors in " + dir + ": tensor ";
    CHECK(error_of([&] { b.tensor("decoder.weight", {2, 2}); }) ==
          prefix + "'decoder.weight' is missing (the test-tiny model needs it with shape [2, 2])");
    CHECK(error_of([&] { b.tensor("embedding", {2, 3}); }) ==
          prefix + "'embedding' has shape [3, 2] but the test-tiny model with this config.json expects [2, 3]");
    CHECK(error_of([&] { b.tensor("embedding", {6}); }).find("has shape [3, 2]") != std::string::npos);
    CHECK(error_of([&] { b.tensor("ids", {3}); }) ==
          prefix + "'ids' has dtype I64 but a floating-point tensor (F32, F16, BF16) is expected");
    CHECK(error_of([&] { b.check_all_tensors_used(); }) ==
          prefix + "'bias' is not used by the test-tiny model (misnamed, or exported for another configuration?)");
    b.tensor("bias", {2});
    b.tensor("scale", {2});
    b.int_tensor("count", {1});
    CHECK(error_of([&] { b.check_all_tensors_used(); }).find("tensor 'empty' is not used") != std::string::npos);
    b.tensor("empty", {0, 4});  // "embedding" and "ids" were asked for above
    CHECK(error_of([&] { b.check_all_tensors_used(); }) == "(no error)");
    CHECK(error_of([&] { b.config_int("nope"); }) == "config.json in " + dir + ": \"nope\" is missing");
    CHECK(error_of([&] { b.config_string("d_model"); }).find("must be a string") != std::string::npos);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("config problems: missing files, invalid JSON, unknown architecture") {
    CHECK(error_of([] { Bundle::load("/tmp/attnlens_test_io_no_such_dir"); })
              .find("cannot open '/tmp/attnlens_test_io_no_such_dir/config.json'") != std::string::npos);
    const std::string dir = write_bundle("config", "{\"architecture\": \"test-tiny\",", assemble(tiny_tensors()));
    CHECK(error_of([&] { Bundle::load(dir); }).find("config.json in " + dir + ": not valid JSON") == 0);
    write_bundle("config", R"({"architecture": "gpt-5"})", assemble(tiny_tensors()));
    CHECK(error_of([&] { Bundle::load(dir); }).find("config.json in " + dir + ": unknown architecture 'gpt-5' (known: "
                                                    "rnn-seq2seq, transformer-seq2seq") == 0);
    write_bundle("config", R"({"dims": 3})", assemble(tiny_tensors()));
    CHECK(error_of([&] { Bundle::load(dir); }).find("\"architecture\" is missing") != std::string::npos);
    write_bundle("config", R"([1, 2])", assemble(tiny_tensors()));
    CHECK(error_of([&] { Bundle::load(dir); }).find("must be a JSON object") != std::string::npos);
    std::filesystem::remove(dir + "/weights.safetensors");
    write_bundle("config", kConfig, {});
    std::filesystem::remove(dir + "/weights.safetensors");
    CHECK(error_of([&] { Bundle::load(dir); }).find("cannot open '" + dir + "/weights.safetensors'") !=
          std::string::npos);
    CHECK(error_of([&] { Bundle::from_memory(kConfig, {}, {{"../x", ""}}); }).find("must be a plain name") !=
          std::string::npos);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("corrupt weights: each fails with its own message") {
    const Bytes good = assemble(tiny_tensors());
    Bytes truncated(good.begin(), good.end() - 5);
    expect_weights_error("truncated_data", truncated, "point past the end of the data region");
    expect_weights_error("truncated_header", Bytes(good.begin(), good.begin() + 20), "is larger than the rest of the file");
    expect_weights_error("too_short", Bytes(good.begin(), good.begin() + 5), "too short for the 8-byte header length");
    expect_weights_error("empty_file", Bytes{}, "the file is 0 bytes long");

    Bytes long_header = good;
    long_header[0] = 0xFF;
    long_header[1] = 0xFF;  // header length 65535+... > file size
    expect_weights_error("header_longer_than_file", long_header, "is larger than the rest of the file");
    Bytes huge_header = good;
    huge_header[7] = 0x80;
    expect_weights_error("header_over_limit", huge_header, "larger than the format's limit");

    expect_weights_error("lying_offsets",
                         assemble(tiny_tensors(), [](json& h) { h["embedding"]["data_offsets"] = {0, 8}; }),
                         "tensor 'embedding': data_offsets [0,8] span 8 bytes but shape [3, 2] of F32 needs 24");
    expect_weights_error("offsets_past_end",
                         assemble(tiny_tensors(), [](json& h) { h["count"]["data_offsets"] = {1000, 1004}; }),
                         "tensor 'count': data_offsets [1000,1004] point past the end of the data region");
    expect_weights_error("begin_after_end",
                         assemble(tiny_tensors(), [](json& h) { h["bias"]["data_offsets"] = {28, 24}; }),
                         "tensor 'bias': data_offsets [28,24] have begin > end");
    expect_weights_error("overlap", assemble(tiny_tensors(), [](json& h) {
                           h["bias"]["data_offsets"] = {20, 24};  // inside embedding's bytes 0..24
                         }),
                         "overlaps tensor 'embedding'");
    expect_weights_error("hole", assemble(tiny_tensors(), [](json& h) { h.erase("bias"); }),
                         "bytes 24..28 of the data region belong to no tensor");
    expect_weights_error("negative_offset",
                         assemble(tiny_tensors(), [](json& h) { h["bias"]["data_offsets"] = {-4, 0}; }),
                         "must be non-negative integers");
    expect_weights_error("wrong_dtype", assemble(tiny_tensors(), [](json& h) { h["embedding"]["dtype"] = "F64"; }),
                         "tensor 'embedding': unsupported dtype 'F64' (supported: F32, F16, BF16, I32, I64, I8)");
    expect_weights_error("dtype_size_mismatch",
                         assemble(tiny_tensors(), [](json& h) { h["count"]["dtype"] = "I64"; }),
                         "tensor 'count': data_offsets [56,60] span 4 bytes but shape [1] of I64 needs 8");
    expect_weights_error("bad_shape", assemble(tiny_tensors(), [](json& h) { h["bias"]["shape"] = {2.5}; }),
                         "must hold non-negative integers");
    expect_weights_error("overflowing_shape", assemble(tiny_tensors(), [](json& h) {
                           h["bias"]["shape"] = {1ULL << 31, 1ULL << 31, 1ULL << 31};  // overflows 32- and 64-bit size_t
                         }),
                         "is too large");
    expect_weights_error("missing_offsets", assemble(tiny_tensors(), [](json& h) { h["bias"].erase("data_offsets"); }),
                         "\"data_offsets\" must be [begin, end]");
    expect_weights_error("not_an_object", assemble(tiny_tensors(), [](json& h) { h["bias"] = 3; }),
                         "tensor 'bias': the header entry must be an object");

    // Invalid JSON in the header: replace the header text in place, keeping its length.
    Bytes bad_json = good;
    bad_json[8] = '[';
    bad_json[9] = '}';
    expect_weights_error("invalid_json", bad_json, "the header is not valid JSON");

    // Non-finite weights, one per float dtype.
    auto with_value = [](const std::string& tensor, std::size_t byte, std::vector<std::uint8_t> value) {
      auto t = tiny_tensors();
      for (auto& f : t)
        if (f.name == tensor) std::copy(value.begin(), value.end(), f.data.begin() + byte);
      return assemble(t);
    };
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    Bytes nan_bytes(4), inf_bytes(4);
    std::memcpy(nan_bytes.data(), &nan, 4);
    std::memcpy(inf_bytes.data(), &inf, 4);
    expect_weights_error("nan_f32", with_value("embedding", 12, nan_bytes), "tensor 'embedding' element 3 is NaN");
    expect_weights_error("inf_f32", with_value("embedding", 0, inf_bytes), "tensor 'embedding' element 0 is infinite");
    expect_weights_error("inf_f16", with_value("bias", 2, {0x00, 0x7C}), "tensor 'bias' element 1 is infinite");
    expect_weights_error("nan_bf16", with_value("scale", 0, {0xC0, 0x7F}), "tensor 'scale' element 0 is NaN");
    expect_weights_error("nan_f16", with_value("bias", 0, {0x01, 0xFE}), "tensor 'bias' element 0 is NaN");
    expect_weights_error("neg_inf_bf16", with_value("scale", 2, {0x80, 0xFF}), "tensor 'scale' element 1 is infinite");
    // The largest finite values (exponent one below all ones) and the subnormals load and convert exactly.
    {
      auto t = tiny_tensors();
      for (auto& f : t) {
        if (f.name == "bias") f.data = bytes_of<std::uint16_t>({0xFBFF, 0x0001});   // -65504, 2^-24
        if (f.name == "scale") f.data = bytes_of<std::uint16_t>({0x7F7F, 0x0001});  // max bfloat16, its least subnormal
      }
      const auto st = SafeTensors::from_buffer(assemble(t), "extremes");
      const auto bias = st.to_float("bias"), scale = st.to_float("scale");
      CHECK(bias[0] == -65504.0f);
      CHECK(bias[1] == std::ldexp(1.0f, -24));
      CHECK(scale[0] == std::ldexp(255.0f, 120));  // 0x7F7F: 1.9921875 · 2^127
      CHECK(scale[1] == std::ldexp(1.0f, -133));
    }
  }

  TEST_CASE("random corruption either loads or throws attnlens::Error, never anything else") {
    const Bytes good = assemble(tiny_tensors());
    std::uint32_t state = 12345;
    auto next = [&state] {  // xorshift32: deterministic, identical natively and in WASM
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      return state;
    };
    int loaded = 0, rejected = 0;
    for (int t = 0; t < 3000; ++t) {
      Bytes b = good;
      const int flips = 1 + static_cast<int>(next() % 4);
      for (int f = 0; f < flips; ++f) b[next() % b.size()] = static_cast<std::uint8_t>(next());
      if (next() % 4 == 0) b.resize(next() % (b.size() + 1));
      try {
        const auto st = SafeTensors::from_buffer(std::move(b), "fuzz");
        for (const auto& name : st.names()) {
          const auto& info = st.info(name);
          if (info.dtype == attnlens::io::DType::kI32 || info.dtype == attnlens::io::DType::kI64) {
            CHECK(st.to_int64(name).size() == info.element_count());
          } else {
            CHECK(st.to_float(name).size() == info.element_count());
          }
        }
        ++loaded;
      } catch (const attnlens::Error&) {
        ++rejected;
      }
    }
    CHECK(loaded + rejected == 3000);
    CHECK(rejected > 1000);  // most random corruptions must be caught
    CHECK(loaded > 0);       // flips inside weight bytes that stay finite are legitimately accepted
  }
}
