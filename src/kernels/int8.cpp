// int8 weights (kernels.h, Precision::int8): packing, the input quantisation and the products.
//
// The sums are integers, so the three implementations below (WASM SIMD128's i32x4.dot_i16x8_s, SSE2's pmaddwd,
// plain C++) give the same int32 accumulators, and the shared float epilogue gives the same bits everywhere.
// Not in the per-instruction-set kernel table: pmaddwd is SSE2, which every x86-64 has, and AVX2 would only
// widen a product that is bound by reading the weights.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels.h"

namespace attnlens::kernels {
namespace {

constexpr std::size_t kMaxInt8Cols = 65536;  // keeps the input codes' range A ≥ 258

std::size_t even(std::size_t k) { return k + (k & 1u); }

// A = min(32767, ⌊(2³¹ − 1) / (127·k2)⌋): |Σ q·c| ≤ 127·A·k2 fits an int32.
std::int32_t input_range(std::size_t k2) {
  if (k2 == 0) return 32767;
  const long long a = 2147483647LL / (127LL * static_cast<long long>(k2));
  return static_cast<std::int32_t>(std::min<long long>(32767, a));
}

// s_j = max|row| / 127 and the code of v: round-half-even(v / s), clamped (kernels.h, Precision::int8).
float row_scale(const float* row, std::size_t k) {
  float amax = 0.0f;
  for (std::size_t p = 0; p < k; ++p) amax = std::max(amax, std::fabs(row[p]));
  return amax / 127.0f;
}
std::int8_t code_of(float v, float s) {
  return static_cast<std::int8_t>(std::max(-127.0f, std::min(127.0f, std::nearbyint(v / s))));
}

float activate(float v, Activation act) {
  if (act == Activation::none) return v;
  float r = v < 0.0f ? 0.0f : v;
  if (act == Activation::relu6 && r > 6.0f) r = 6.0f;
  return r;
}

std::int32_t pair_of(const std::int16_t* c) {
  std::int32_t v;
  std::memcpy(&v, c, sizeof v);  // c[0] in the low half, c[1] in the high half (little-endian, as WASM and x86)
  return v;
}

// acc[o] = Σ_p q[o][p]·c[p] over one panel (`pairs` input pairs, 2·kPanel codes each).
void panel_dot(const std::int8_t* q, std::size_t pairs, const std::int16_t* c, std::int32_t* acc) {
#if defined(__wasm_simd128__)
  v128_t a0 = wasm_i32x4_splat(0), a1 = wasm_i32x4_splat(0), b0 = a0, b1 = a0;
  std::size_t i = 0;
  for (; i + 2 <= pairs; i += 2) {  // two pairs per iteration, two accumulator sets (integer sums: order-free)
    const v128_t w = wasm_v128_load(q + i * 2 * kPanel), v = wasm_v128_load(q + (i + 1) * 2 * kPanel);
    const v128_t x = wasm_v128_load32_splat(c + 2 * i), y = wasm_v128_load32_splat(c + 2 * i + 2);
    a0 = wasm_i32x4_add(a0, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(w), x));
    a1 = wasm_i32x4_add(a1, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(w), x));
    b0 = wasm_i32x4_add(b0, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(v), y));
    b1 = wasm_i32x4_add(b1, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(v), y));
  }
  if (i < pairs) {
    const v128_t w = wasm_v128_load(q + i * 2 * kPanel);
    const v128_t x = wasm_v128_load32_splat(c + 2 * i);
    a0 = wasm_i32x4_add(a0, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(w), x));
    a1 = wasm_i32x4_add(a1, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(w), x));
  }
  wasm_v128_store(acc, wasm_i32x4_add(a0, b0));
  wasm_v128_store(acc + 4, wasm_i32x4_add(a1, b1));
#elif defined(__SSE2__)
  __m128i a0 = _mm_setzero_si128(), a1 = _mm_setzero_si128();
  for (std::size_t i = 0; i < pairs; ++i) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i * 2 * kPanel));
    const __m128i x = _mm_set1_epi32(pair_of(c + 2 * i));
    a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_srai_epi16(_mm_unpacklo_epi8(w, w), 8), x));
    a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_srai_epi16(_mm_unpackhi_epi8(w, w), 8), x));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc), a0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + 4), a1);
#else
  for (std::size_t o = 0; o < kPanel; ++o) acc[o] = 0;
  for (std::size_t i = 0; i < pairs; ++i)
    for (std::size_t o = 0; o < kPanel; ++o)
      acc[o] += q[i * 2 * kPanel + 2 * o] * c[2 * i] + q[i * 2 * kPanel + 2 * o + 1] * c[2 * i + 1];
#endif
}

// The same for two input rows with one pass over the panel (a beam's rows in pairs).
void panel_dot2(const std::int8_t* q, std::size_t pairs, const std::int16_t* ca, const std::int16_t* cb,
                std::int32_t* acca, std::int32_t* accb) {
#if defined(__wasm_simd128__)
  v128_t a0 = wasm_i32x4_splat(0), a1 = a0, b0 = a0, b1 = a0;
  for (std::size_t i = 0; i < pairs; ++i) {
    const v128_t w = wasm_v128_load(q + i * 2 * kPanel);
    const v128_t lo = wasm_i16x8_extend_low_i8x16(w), hi = wasm_i16x8_extend_high_i8x16(w);
    const v128_t xa = wasm_i32x4_splat(pair_of(ca + 2 * i)), xb = wasm_i32x4_splat(pair_of(cb + 2 * i));
    a0 = wasm_i32x4_add(a0, wasm_i32x4_dot_i16x8(lo, xa));
    a1 = wasm_i32x4_add(a1, wasm_i32x4_dot_i16x8(hi, xa));
    b0 = wasm_i32x4_add(b0, wasm_i32x4_dot_i16x8(lo, xb));
    b1 = wasm_i32x4_add(b1, wasm_i32x4_dot_i16x8(hi, xb));
  }
  wasm_v128_store(acca, a0);
  wasm_v128_store(acca + 4, a1);
  wasm_v128_store(accb, b0);
  wasm_v128_store(accb + 4, b1);
#elif defined(__SSE2__)
  __m128i a0 = _mm_setzero_si128(), a1 = a0, b0 = a0, b1 = a0;
  for (std::size_t i = 0; i < pairs; ++i) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i * 2 * kPanel));
    const __m128i lo = _mm_srai_epi16(_mm_unpacklo_epi8(w, w), 8), hi = _mm_srai_epi16(_mm_unpackhi_epi8(w, w), 8);
    const __m128i xa = _mm_set1_epi32(pair_of(ca + 2 * i)), xb = _mm_set1_epi32(pair_of(cb + 2 * i));
    a0 = _mm_add_epi32(a0, _mm_madd_epi16(lo, xa));
    a1 = _mm_add_epi32(a1, _mm_madd_epi16(hi, xa));
    b0 = _mm_add_epi32(b0, _mm_madd_epi16(lo, xb));
    b1 = _mm_add_epi32(b1, _mm_madd_epi16(hi, xb));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acca), a0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acca + 4), a1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(accb), b0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(accb + 4), b1);
#else
  panel_dot(q, pairs, ca, acca);
  panel_dot(q, pairs, cb, accb);
#endif
}

#if defined(__wasm_simd128__)
// The eight int32 sums of one panel for four rows, in registers: panel_dot4 stores them, panel_dot4_store (below)
// takes them straight into the epilogue.
struct Sums4 {
  v128_t a0, a1, b0, b1, c0, c1, d0, d1;
};
[[gnu::always_inline]] inline Sums4 dot4(const std::int8_t* q, std::size_t pairs, const std::int16_t* const c[4]) {
  Sums4 t;
  t.a0 = t.a1 = t.b0 = t.b1 = t.c0 = t.c1 = t.d0 = t.d1 = wasm_i32x4_splat(0);
  for (std::size_t i = 0; i < pairs; ++i) {
    const v128_t w = wasm_v128_load(q + i * 2 * kPanel);
    const v128_t lo = wasm_i16x8_extend_low_i8x16(w), hi = wasm_i16x8_extend_high_i8x16(w);
    const v128_t xa = wasm_v128_load32_splat(c[0] + 2 * i), xb = wasm_v128_load32_splat(c[1] + 2 * i);
    const v128_t xc = wasm_v128_load32_splat(c[2] + 2 * i), xd = wasm_v128_load32_splat(c[3] + 2 * i);
    t.a0 = wasm_i32x4_add(t.a0, wasm_i32x4_dot_i16x8(lo, xa));
    t.a1 = wasm_i32x4_add(t.a1, wasm_i32x4_dot_i16x8(hi, xa));
    t.b0 = wasm_i32x4_add(t.b0, wasm_i32x4_dot_i16x8(lo, xb));
    t.b1 = wasm_i32x4_add(t.b1, wasm_i32x4_dot_i16x8(hi, xb));
    t.c0 = wasm_i32x4_add(t.c0, wasm_i32x4_dot_i16x8(lo, xc));
    t.c1 = wasm_i32x4_add(t.c1, wasm_i32x4_dot_i16x8(hi, xc));
    t.d0 = wasm_i32x4_add(t.d0, wasm_i32x4_dot_i16x8(lo, xd));
    t.d1 = wasm_i32x4_add(t.d1, wasm_i32x4_dot_i16x8(hi, xd));
  }
  return t;
}
#endif

// The same for four input rows (many rows: a 1×1 convolution's pixels): each weight load serves four rows.
void panel_dot4(const std::int8_t* q, std::size_t pairs, const std::int16_t* const c[4], std::int32_t* const acc[4]) {
#if defined(__wasm_simd128__)
  const Sums4 t = dot4(q, pairs, c);
  wasm_v128_store(acc[0], t.a0);
  wasm_v128_store(acc[0] + 4, t.a1);
  wasm_v128_store(acc[1], t.b0);
  wasm_v128_store(acc[1] + 4, t.b1);
  wasm_v128_store(acc[2], t.c0);
  wasm_v128_store(acc[2] + 4, t.c1);
  wasm_v128_store(acc[3], t.d0);
  wasm_v128_store(acc[3] + 4, t.d1);
#elif defined(__SSE2__)
  __m128i a0 = _mm_setzero_si128(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0;
  for (std::size_t i = 0; i < pairs; ++i) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i * 2 * kPanel));
    const __m128i lo = _mm_srai_epi16(_mm_unpacklo_epi8(w, w), 8), hi = _mm_srai_epi16(_mm_unpackhi_epi8(w, w), 8);
    const __m128i xa = _mm_set1_epi32(pair_of(c[0] + 2 * i)), xb = _mm_set1_epi32(pair_of(c[1] + 2 * i));
    const __m128i xc = _mm_set1_epi32(pair_of(c[2] + 2 * i)), xd = _mm_set1_epi32(pair_of(c[3] + 2 * i));
    a0 = _mm_add_epi32(a0, _mm_madd_epi16(lo, xa));
    a1 = _mm_add_epi32(a1, _mm_madd_epi16(hi, xa));
    b0 = _mm_add_epi32(b0, _mm_madd_epi16(lo, xb));
    b1 = _mm_add_epi32(b1, _mm_madd_epi16(hi, xb));
    c0 = _mm_add_epi32(c0, _mm_madd_epi16(lo, xc));
    c1 = _mm_add_epi32(c1, _mm_madd_epi16(hi, xc));
    d0 = _mm_add_epi32(d0, _mm_madd_epi16(lo, xd));
    d1 = _mm_add_epi32(d1, _mm_madd_epi16(hi, xd));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[0]), a0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[0] + 4), a1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[1]), b0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[1] + 4), b1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[2]), c0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[2] + 4), c1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[3]), d0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc[3] + 4), d1);
#else
  for (std::size_t r = 0; r < 4; ++r) panel_dot(q, pairs, c[r], acc[r]);
#endif
}

#if defined(__wasm_simd128__)
// Four outputs' epilogue: dst = act(float(sums)·(sx·qs) + bias), the scalar loop's operations four lanes at a time.
[[gnu::always_inline]] inline void store4(v128_t sums, float sx, const float* qs, const float* bias, float* dst,
                                          Activation act) {
  v128_t v = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), wasm_f32x4_mul(wasm_f32x4_splat(sx), wasm_v128_load(qs)));
  if (bias != nullptr) v = wasm_f32x4_add(v, wasm_v128_load(bias));
  if (act != Activation::none) v = wasm_f32x4_pmax(v, wasm_f32x4_splat(0.0f));   // v < 0 ? 0 : v
  if (act == Activation::relu6) v = wasm_f32x4_pmin(v, wasm_f32x4_splat(6.0f));  // 6 < v ? 6 : v
  wasm_v128_store(dst, v);
}
#endif

void store(const std::int32_t* acc, float sx, const PackedMatrix& w, std::size_t j0, const float* bias, float* y,
           Activation act) {
#if defined(__wasm_simd128__) || defined(__SSE2__)
  if (j0 + kPanel <= w.rows) {  // a whole panel: the scalar loop's operations, four lanes at a time
    for (std::size_t h = 0; h < kPanel; h += 4) {
#if defined(__wasm_simd128__)
      store4(wasm_v128_load(acc + h), sx, w.qscale.data() + j0 + h, bias ? bias + j0 + h : nullptr, y + j0 + h, act);
#else
      const __m128 s = _mm_mul_ps(_mm_set1_ps(sx), _mm_loadu_ps(w.qscale.data() + j0 + h));
      __m128 v = _mm_mul_ps(_mm_cvtepi32_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(acc + h))), s);
      if (bias != nullptr) v = _mm_add_ps(v, _mm_loadu_ps(bias + j0 + h));
      if (act != Activation::none) v = _mm_max_ps(_mm_setzero_ps(), v);  // 0 > v ? 0 : v (keeps −0 and NaN)
      if (act == Activation::relu6) v = _mm_min_ps(_mm_set1_ps(6.0f), v);  // 6 < v ? 6 : v
      _mm_storeu_ps(y + j0 + h, v);
#endif
    }
    return;
  }
#endif
  for (std::size_t o = 0; o < kPanel && j0 + o < w.rows; ++o) {
    const std::size_t j = j0 + o;
    const float v = static_cast<float>(acc[o]) * (sx * w.qscale[j]);
    y[j] = activate(bias != nullptr ? v + bias[j] : v, act);
  }
}

// panel_dot4, then store() for the four rows. For a whole panel in WASM the sums go from registers straight into
// store()'s epilogue (store4: the same operations, so the same bits): with the few inputs of MobileNetV2's early
// 1×1 convolutions (k = 16–32) the round trip of 64 accumulators through memory and the calls cost about as much as
// the dots.
void panel_dot4_store(const std::int8_t* q, std::size_t pairs, const std::int16_t* const c[4], const float sx[4],
                      const PackedMatrix& w, std::size_t j0, const float* bias, float* const y[4], Activation act,
                      std::int32_t* const acc[4]) {
#if defined(__wasm_simd128__)
  if (j0 + kPanel <= w.rows) {
    const Sums4 t = dot4(q, pairs, c);
    const float* qs = w.qscale.data() + j0;
    const float* b0 = bias ? bias + j0 : nullptr;
    const float* b1 = bias ? bias + j0 + 4 : nullptr;
    store4(t.a0, sx[0], qs, b0, y[0] + j0, act);
    store4(t.a1, sx[0], qs + 4, b1, y[0] + j0 + 4, act);
    store4(t.b0, sx[1], qs, b0, y[1] + j0, act);
    store4(t.b1, sx[1], qs + 4, b1, y[1] + j0 + 4, act);
    store4(t.c0, sx[2], qs, b0, y[2] + j0, act);
    store4(t.c1, sx[2], qs + 4, b1, y[2] + j0 + 4, act);
    store4(t.d0, sx[3], qs, b0, y[3] + j0, act);
    store4(t.d1, sx[3], qs + 4, b1, y[3] + j0 + 4, act);
    return;
  }
#endif
  panel_dot4(q, pairs, c, acc);
  for (std::size_t r = 0; r < 4; ++r) store(acc[r], sx[r], w, j0, bias, y[r], act);
}

// An int8 matrix of n rows × k inputs, all codes and scales zero, in the packed layout of kernels.h.
PackedMatrix empty_int8(std::size_t n, std::size_t k) {
  PackedMatrix w;
  w.rows = n;
  w.cols = k;
  w.precision = Precision::int8;
  w.qdata.assign((n + kPanel - 1) / kPanel * kPanel * even(k), std::int8_t{0});
  w.qscale.assign(n, 0.0f);
  return w;
}

// Row j ← codes [k] with scale s: q[j][p] at (j / kPanel)·kPanel·k2 + (p / 2)·2·kPanel + (j % kPanel)·2 + p % 2.
void put_row(PackedMatrix& w, std::size_t j, const std::int8_t* codes, float s) {
  w.qscale[j] = s;
  std::int8_t* dst = w.qdata.data() + (j / kPanel) * kPanel * even(w.cols) + (j % kPanel) * 2;
  for (std::size_t p = 0; p < w.cols; ++p) dst[(p / 2) * 2 * kPanel + p % 2] = codes[p];
}

}  // namespace

float quantize_row_int8(const float* row, std::size_t k, std::int8_t* codes) {
  const float s = row_scale(row, k);
  for (std::size_t p = 0; p < k; ++p) codes[p] = s == 0.0f ? std::int8_t{0} : code_of(row[p], s);
  return s;
}

PackedMatrix pack_int8_codes(std::size_t n, std::size_t k, const std::int8_t* codes, std::size_t ldq,
                             const float* scales) {
  require(k <= kMaxInt8Cols, "pack_int8_codes: int8 weights take at most 65536 inputs");
  require(ldq >= k, "pack_int8_codes: ldq is smaller than k");
  require(n == 0 || k == 0 || (codes != nullptr && scales != nullptr), "pack_int8_codes: null codes or scales");
  PackedMatrix w = empty_int8(n, k);
  for (std::size_t j = 0; j < n; ++j) {
    if (!(std::isfinite(scales[j]) && scales[j] >= 0.0f))
      throw Error("pack_int8_codes: row " + std::to_string(j) + " has a negative or non-finite scale");
    for (std::size_t p = 0; p < k; ++p)
      if (codes[j * ldq + p] < -127)
        throw Error("pack_int8_codes: code −128 at row " + std::to_string(j) + " (codes are in [−127, 127])");
    put_row(w, j, codes + j * ldq, scales[j]);
  }
  return w;
}

void round_through_int8(float* w, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = w + r * cols;
    const float s = row_scale(row, cols);
    for (std::size_t c = 0; c < cols; ++c) row[c] = s == 0.0f ? 0.0f : static_cast<float>(code_of(row[c], s)) * s;
  }
}

float quantize_input_int16_ref(const float* x, std::size_t k, std::int16_t* codes) {
  const std::size_t k2 = even(k);
  float amax = 0.0f;
  bool finite = true;
  for (std::size_t p = 0; p < k; ++p) {
    finite = finite && std::isfinite(x[p]);
    amax = std::max(amax, std::fabs(x[p]));
  }
  std::fill(codes, codes + k2, std::int16_t{0});
  if (!finite) return std::nanf("");  // the outputs become NaN, as the float32 product's would
  if (amax == 0.0f) return 0.0f;
  const std::int32_t a = input_range(k2);
  const float inv = static_cast<float>(a) / amax;
  for (std::size_t p = 0; p < k; ++p) {
    const float c = std::nearbyint(x[p] * inv);
    codes[p] = static_cast<std::int16_t>(std::max(-static_cast<float>(a), std::min(static_cast<float>(a), c)));
  }
  return amax / static_cast<float>(a);
}

// The same codes four at a time (for a 1×1 convolution, every pixel's input is quantised): the same float
// operations in the same order, so the same bits as the reference above (test_kernels checks it). Clamping before
// rounding equals rounding before clamping, A being an integer; the conversions round half to even (SSE2 in the
// default rounding mode, WASM's f32x4.nearest).
float quantize_input_int16(const float* x, std::size_t k, std::int16_t* codes) {
#if defined(__wasm_simd128__) || defined(__SSE2__)
  const std::size_t k2 = even(k), k4 = k - k % 4;
  float amax = 0.0f, probe = 0.0f;  // probe = Σ x·0: NaN iff some x is NaN or ±Inf
#if defined(__wasm_simd128__)
  v128_t vmax = wasm_f32x4_splat(0.0f), vprobe = vmax;
  for (std::size_t p = 0; p < k4; p += 4) {
    const v128_t v = wasm_v128_load(x + p);
    vmax = wasm_f32x4_pmax(vmax, wasm_f32x4_abs(v));
    vprobe = wasm_f32x4_add(vprobe, wasm_f32x4_mul(v, wasm_f32x4_splat(0.0f)));
  }
  alignas(16) float lanes[4], probes[4];
  wasm_v128_store(lanes, vmax);
  wasm_v128_store(probes, vprobe);
#else
  __m128 vmax = _mm_setzero_ps(), vprobe = vmax;
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  for (std::size_t p = 0; p < k4; p += 4) {
    const __m128 v = _mm_loadu_ps(x + p);
    vmax = _mm_max_ps(vmax, _mm_and_ps(v, abs_mask));
    vprobe = _mm_add_ps(vprobe, _mm_mul_ps(v, _mm_setzero_ps()));
  }
  alignas(16) float lanes[4], probes[4];
  _mm_store_ps(lanes, vmax);
  _mm_store_ps(probes, vprobe);
#endif
  for (int l = 0; l < 4; ++l) {
    amax = std::max(amax, lanes[l]);
    probe += probes[l];
  }
  for (std::size_t p = k4; p < k; ++p) {
    amax = std::max(amax, std::fabs(x[p]));
    probe += x[p] * 0.0f;
  }
  std::fill(codes, codes + k2, std::int16_t{0});
  if (!(probe == 0.0f)) return std::nanf("");  // a NaN or ±Inf input: NaN outputs, as float32 would give
  if (amax == 0.0f) return 0.0f;
  const std::int32_t a = input_range(k2);
  const float fa = static_cast<float>(a), inv = fa / amax;
  const std::size_t k8 = k - k % 8;
#if defined(__wasm_simd128__)
  const v128_t vinv = wasm_f32x4_splat(inv), hi = wasm_f32x4_splat(fa), lo = wasm_f32x4_splat(-fa);
  for (std::size_t p = 0; p < k8; p += 8) {
    const v128_t t0 = wasm_f32x4_pmax(lo, wasm_f32x4_pmin(hi, wasm_f32x4_mul(wasm_v128_load(x + p), vinv)));
    const v128_t t1 = wasm_f32x4_pmax(lo, wasm_f32x4_pmin(hi, wasm_f32x4_mul(wasm_v128_load(x + p + 4), vinv)));
    const v128_t c0 = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(t0));
    const v128_t c1 = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(t1));
    wasm_v128_store(codes + p, wasm_i16x8_narrow_i32x4(c0, c1));
  }
#else
  const __m128 vinv = _mm_set1_ps(inv), hi = _mm_set1_ps(fa), lo = _mm_set1_ps(-fa);
  for (std::size_t p = 0; p < k8; p += 8) {
    const __m128 t0 = _mm_max_ps(lo, _mm_min_ps(hi, _mm_mul_ps(_mm_loadu_ps(x + p), vinv)));
    const __m128 t1 = _mm_max_ps(lo, _mm_min_ps(hi, _mm_mul_ps(_mm_loadu_ps(x + p + 4), vinv)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + p),
                     _mm_packs_epi32(_mm_cvtps_epi32(t0), _mm_cvtps_epi32(t1)));
  }
#endif
  for (std::size_t p = k8; p < k; ++p) {
    const float c = std::nearbyint(x[p] * inv);
    codes[p] = static_cast<std::int16_t>(std::max(-fa, std::min(fa, c)));
  }
  return amax / fa;
#else
  return quantize_input_int16_ref(x, k, codes);
#endif
}

namespace detail {

PackedMatrix pack_rows_int8(std::size_t n, std::size_t k, const float* b, std::size_t ldb) {
  require(k <= kMaxInt8Cols, "pack_rows: int8 weights take at most 65536 inputs");
  PackedMatrix w = empty_int8(n, k);
  std::vector<std::int8_t> codes(k);
  for (std::size_t j = 0; j < n; ++j) {
    const float* src = b + j * ldb;
    for (std::size_t p = 0; p < k; ++p)
      if (!std::isfinite(src[p])) throw Error("pack_rows: weight row " + std::to_string(j) + " holds a non-finite value");
    const float s = quantize_row_int8(src, k, codes.data());
    put_row(w, j, codes.data(), s);
  }
  return w;
}

void packed_row_int8(const PackedMatrix& w, std::size_t j, float* out) {
  const std::int8_t* src = w.qdata.data() + (j / kPanel) * kPanel * even(w.cols) + (j % kPanel) * 2;
  for (std::size_t p = 0; p < w.cols; ++p)
    out[p] = static_cast<float>(src[(p / 2) * 2 * kPanel + p % 2]) * w.qscale[j];
}

void linear_int8(std::size_t m, const float* x, std::size_t ldx, const PackedMatrix& w, const float* bias,
                 float* y, std::size_t ldy, Activation act, std::size_t j_begin, std::size_t j_end) {
  const std::size_t k2 = even(w.cols), pairs = k2 / 2;
  if (w.qdata.size() != (w.rows + kPanel - 1) / kPanel * kPanel * k2 || w.qscale.size() != w.rows)
    throw Error("linear_packed: the int8 matrix does not hold rows × cols");
  thread_local std::vector<std::int16_t> ca, cb, cc, cd;  // grow to the largest k a thread sees, then stay
  if (ca.size() < k2) {
    ca.resize(k2);
    cb.resize(k2);
  }
  alignas(16) std::int32_t acca[kPanel], accb[kPanel], accc[kPanel], accd[kPanel];
  std::size_t i = 0;
  if (m >= 4) {  // many rows (a 1×1 convolution's pixels): four at a time, each weight load serving all four
    if (cc.size() < k2) {
      cc.resize(k2);
      cd.resize(k2);
    }
    std::int16_t* const codes[4] = {ca.data(), cb.data(), cc.data(), cd.data()};
    std::int32_t* const accs[4] = {acca, accb, accc, accd};
    for (; i + 4 <= m; i += 4) {
      float sx[4];
      for (std::size_t r = 0; r < 4; ++r)
        sx[r] = quantize_input_int16(x + (i + r) * ldx, w.cols, codes[r]);
      float* const ys[4] = {y + i * ldy, y + (i + 1) * ldy, y + (i + 2) * ldy, y + (i + 3) * ldy};
      for (std::size_t j0 = j_begin; j0 < j_end; j0 += kPanel)
        panel_dot4_store(w.qdata.data() + j0 * k2, pairs, codes, sx, w, j0, bias, ys, act, accs);
    }
  }
  for (; i + 2 <= m; i += 2) {
    const float sa = quantize_input_int16(x + i * ldx, w.cols, ca.data());
    const float sb = quantize_input_int16(x + (i + 1) * ldx, w.cols, cb.data());
    for (std::size_t j0 = j_begin; j0 < j_end; j0 += kPanel) {
      panel_dot2(w.qdata.data() + j0 * k2, pairs, ca.data(), cb.data(), acca, accb);
      store(acca, sa, w, j0, bias, y + i * ldy, act);
      store(accb, sb, w, j0, bias, y + (i + 1) * ldy, act);
    }
  }
  if (i < m) {
    const float sa = quantize_input_int16(x + i * ldx, w.cols, ca.data());
    for (std::size_t j0 = j_begin; j0 < j_end; j0 += kPanel) {
      panel_dot(w.qdata.data() + j0 * k2, pairs, ca.data(), acca);
      store(acca, sa, w, j0, bias, y + i * ldy, act);
    }
  }
}

}  // namespace detail
}  // namespace attnlens::kernels
