// PNM decoding (src/image/pnm.*) and the captioning encoder's preprocessing (src/image/preprocess.*).
//   byte 0 even: the rest is a PNM file; decoded, then preprocessed to out×out (out = 1 + byte 1 % 48, or 224);
//   byte 0 odd:  raw pixels: width, height (2 bytes each, may be 0 or past the 65536 limit), channels (1 byte, may
//                be invalid), then pixel bytes whose count may not match; both the contiguous preprocess() and
//                the row-callback form (rows served from a buffer that repeats the pixel bytes).
// Checks: no exception but attnlens::Error; the callback sees only rows < height, increasing, each once (as
// documented); every output value is finite and in [-1, 1].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "image/pnm.h"
#include "image/preprocess.h"

namespace {

// The harness's own per-element loops carry no coverage instrumentation: their loop tests were a third of the
// harness's time (perf) and say nothing about the input.
__attribute__((no_sanitize("coverage"))) void check_output(const float* v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]) || v[i] < -1.0001f || v[i] > 1.0001f) __builtin_trap();
}

// One row of `bytes` bytes cycled from the pixel bytes.
__attribute__((no_sanitize("coverage"))) std::vector<std::uint8_t> cycled_row(const std::uint8_t* px, std::size_t n,
                                                                              std::size_t bytes) {
  std::vector<std::uint8_t> row(bytes);
  for (std::size_t i = 0; i < bytes; ++i) row[i] = px[i % n];
  return row;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnlens::image;
  if (size < 2) return 0;
  const std::size_t out = (data[1] & 0x80) ? 224 : 1 + data[1] % 48;
  if ((data[0] & 1) == 0) {
    const std::string file(reinterpret_cast<const char*>(data + 2), size - 2);
    fuzz::ok_or_error([&] {
      const DecodedImage img = decode_pnm(file, "fuzz.pnm");
      if (img.pixels.size() != img.width * img.height * img.channels) __builtin_trap();
      const std::vector<float> x = preprocess(img.pixels.data(), img.pixels.size(), img.width, img.height,
                                              img.channels, out);
      if (x.size() != out * out * 3) __builtin_trap();
      check_output(x.data(), x.size());
    });
    return 0;
  }
  if (size < 7) return 0;
  // Sizes: up to 65535 from two bytes; the high bit of byte 0 adds 65536 − 255 to test the upper limit.
  std::size_t width = data[2] | (data[3] << 8);
  std::size_t height = data[4] | (data[5] << 8);
  if (data[0] & 0x80) width += 65281;
  if (data[0] & 0x40) height += 65281;
  const std::size_t channels = data[6] % 6;
  const std::uint8_t* px = data + 7;
  const std::size_t n = size - 7;
  fuzz::ok_or_error([&] {
    const std::vector<float> x = preprocess(px, n, width, height, channels, out);
    check_output(x.data(), x.size());
  });
  // Row callback: one row of width·channels bytes (≤ 1 MB) cycled from the pixel bytes, built once and served for
  // every row asked (filling it per row made wide images cost up to 448 MB of writes per input: ~50 inputs/s).
  if (width * channels > (1u << 20) || n == 0) return 0;
  const std::vector<std::uint8_t> row_buf = cycled_row(px, n, width * channels);
  std::size_t last = 0;
  bool any = false;
  fuzz::ok_or_error([&] {
    std::vector<float> x(out * out * 3);
    preprocess(
        [&](std::size_t y) -> const std::uint8_t* {
          if (y >= height || (any && y <= last)) __builtin_trap();
          any = true;
          last = y;
          return row_buf.data();
        },
        width, height, channels, out, x.data());
    check_output(x.data(), x.size());
    const auto rows = rows_needed(height, out);
    if (rows.size() > 2 * out) __builtin_trap();
  });
  if (width < 1 || width > kMaxImageSide) return 0;  // resize_axis' precondition (preprocess checks it first)
  fuzz::ok_or_error([&] {
    const ResizeAxis a = resize_axis(width, out);
    for (std::size_t d = 0; d < out; ++d)
      if (a.i0[d] >= width || a.i1[d] >= width || !(a.w[d] >= 0.0f && a.w[d] <= 1.0f)) __builtin_trap();
  });
  return 0;
}
