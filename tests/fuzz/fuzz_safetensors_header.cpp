// The safetensors reader (src/io/safetensors.*) with the fuzzer writing the header JSON.
//   bytes 0-1: length of the data region (0..1023) and its fill (byte 1 high bit: 0xff bytes, i.e. NaN floats;
//              else a ramp of small values); the rest: the JSON header, placed after its 8-byte length.
// Every accepted file is read back: each tensor's info, float or integer values, raw data.
// Checks: no exception but attnlens::Error; accepted tensors lie inside the data region and hold finite floats.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t region = (data[0] | ((data[1] & 0x03) << 8));
  const bool nan_fill = data[1] & 0x80;
  const std::uint64_t header_len = size - 2;
  std::vector<std::uint8_t> file(8);
  std::memcpy(file.data(), &header_len, 8);
  file.insert(file.end(), data + 2, data + size);
  for (std::size_t i = 0; i < region; ++i)
    file.push_back(nan_fill ? 0xff : static_cast<std::uint8_t>(i % 4 == 3 ? 0x3c : (i * 7) & 0x3f));
  fuzz::ok_or_error([&] {
    const auto st = attnlens::io::SafeTensors::from_buffer(std::move(file), "fuzz.safetensors");
    for (const auto& name : st.names()) {
      const auto& info = st.info(name);
      if (info.begin > info.end || info.end > region) __builtin_trap();
      if (info.end - info.begin != info.element_count() * attnlens::io::dtype_size(info.dtype)) __builtin_trap();
      st.data(name);
      fuzz::ok_or_error([&] {
        for (float v : st.to_float(name))
          if (!std::isfinite(v)) __builtin_trap();
      });
      fuzz::ok_or_error([&] { st.to_int64(name); });
    }
    st.metadata();
  });
  return 0;
}
