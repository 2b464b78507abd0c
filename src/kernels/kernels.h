// attnlens kernels: SIMD building blocks over raw pointers and sizes (row-major, explicit leading dims).
//
// Layer rule: kernels know nothing above them. Every kernel has a scalar *_ref twin (kernels_ref.h) that the
// tests compare against in double precision. Native builds pick AVX2+FMA at run time when the CPU has it and
// fall back to SSE2; the WASM build uses xsimd's SSE2 backend, which Emscripten lowers to SIMD128.
//
// CONTRACT: the signatures below are used by src/attention and later layers. Add kernels freely; do not change
// these signatures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnlens::kernels {

// ---- linear algebra ----
// C[m×n] = A[m×k]·B[k×n]            (accumulate: C += A·B)
void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
          std::size_t ldb, float* c, std::size_t ldc, bool accumulate = false);
// C[m×n] = A[m×k]·B[n×k]ᵀ           (PyTorch Linear weight layout [out, in]; Q·Kᵀ)
void gemm_nt(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
             std::size_t ldb, float* c, std::size_t ldc, bool accumulate = false);
// y[n] = x[k]·B[k×n]
void gemv(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
          bool accumulate = false);
// y[n] = B[n×k]·x[k]                (one row of a Linear layer with weight [out, in])
void gemv_nt(std::size_t n, std::size_t k, const float* x, const float* b, std::size_t ldb, float* y,
             bool accumulate = false);
float dot(const float* a, const float* b, std::size_t n);
// y += alpha·x
void axpy(float alpha, const float* x, float* y, std::size_t n);
// y = x + y (elementwise), y = x ⊙ y
void add(const float* x, float* y, std::size_t n);
void mul(const float* x, float* y, std::size_t n);
void scale(float alpha, float* x, std::size_t n);

// ---- normalisation ----
// Numerically stable softmax in place: x_i ← exp(x_i − max)/Σ. With `keep` (1 = attend, 0 = masked) masked
// entries become exactly 0 and take no part in max or sum. A row with every entry masked becomes all zeros
// (PyTorch would give NaN); callers that need to know check for it.
void softmax(float* x, std::size_t n, const std::uint8_t* keep = nullptr);
void log_softmax(float* x, std::size_t n);
// y = (x − mean)/sqrt(var + eps)·gamma + beta   (biased variance, as torch.nn.LayerNorm). x may alias y.
void layer_norm(const float* x, float* y, std::size_t n, const float* gamma, const float* beta, float eps);

// ---- activations, in place ----
void vtanh(float* x, std::size_t n);
void vsigmoid(float* x, std::size_t n);
void vrelu(float* x, std::size_t n);
void vrelu6(float* x, std::size_t n);
void vgelu(float* x, std::size_t n);  // exact erf form, as torch.nn.GELU()
void vexp(float* x, std::size_t n);

// Name of the instruction set the dispatcher chose ("avx2+fma", "sse2", "wasm-simd128"), for benchmarks.
const char* simd_backend();

}  // namespace attnlens::kernels

// ======================================================================================================
// Additions beyond the original contract (new declarations only; the signatures above are unchanged).
// ======================================================================================================
//
// Behaviour shared by all kernels (implemented in dispatch.cpp, kernels_simd.hpp, kernels_ref.cpp):
//   - Any size may be 0 (nothing happens; gemm with k = 0 writes C = 0, or leaves C when accumulating).
//     Pointers need no alignment. A leading dimension smaller than its row length throws attnlens::Error.
//   - Without `accumulate`, C/y is write-only: its old contents (even NaN) never leak into the result.
//   - layer_norm accepts gamma/beta = nullptr (no scale / no shift).
//   - Accuracy (measured by tests/cpp/test_kernels.cpp against double): exp, tanh, sigmoid ≤ 2e-7 relative;
//     gelu ≤ 7e-7 relative (absolute 1e-9 in the far negative tail, where float rounding of x/√2 dominates);
//     softmax ≤ 1e-6 relative per entry; GEMM-like kernels within the classic γ_k·Σ|a||b| bound.
//   - Thread-safe: the backend choice is an atomic pointer, GEMM/im2col scratch is thread_local.
//   - GEMM, packed/int8 linears and depthwise convolutions split large products across kernels::threads()
//     (parallel.h; 1 unless set_threads() was called), with the same bits for any thread count.
namespace attnlens::kernels {

// Overrides the run-time choice of instruction set, for tests and benchmarks: "auto" (the default: AVX2+FMA
// when the CPU has both, else SSE2; the environment variable ATTNLENS_SIMD=sse2 forces SSE2), "sse2" or
// "avx2+fma". Throws Error naming the choices when the name is unknown or the CPU/build lacks it. Under
// WebAssembly the only backend is "wasm-simd128" (xsimd's SSE2 code lowered to SIMD128); "sse2" and "auto"
// select it.
void select_simd_backend(const char* name);

// ---- reductions and small helpers ----
float vsum(const float* x, std::size_t n);
float vmax(const float* x, std::size_t n);  // -inf for n == 0
// Softmax of `rows` rows of length n with row stride ld (ld ≥ n); keep, when given, is rows×n with stride n.
void softmax_rows(float* x, std::size_t rows, std::size_t n, std::size_t ld,
                  const std::uint8_t* keep = nullptr);
// y[i] += bias[i % n] for an m×n row-major block with leading dim ldy (bias broadcast over rows).
void add_bias_rows(float* y, std::size_t m, std::size_t n, std::size_t ldy, const float* bias);

// ---- convolution ----
//
// LAYOUT (chosen for SIMD):
//   activations  HWC, channels-last, one image: x[(y·W + x)·C + c]. A 1×1 convolution is then exactly a GEMM
//                [H·W × C_in]·[C_in × C_out], and the depthwise kernel vectorises over the contiguous
//                channels.
//   conv2d weights      HWIO: w[((ky·KW + kx)·C_in + ci)·C_out + co] — the im2col patch row (ky, kx, ci)
//   times
//                this [KH·KW·C_in × C_out] matrix is one output pixel.
//   depthwise weights   HWC:  w[(ky·KW + kx)·C + c].
//   bias                [C_out] (may be null).
// PyTorch stores conv weights as OIHW and depthwise weights as C1HW: convert them once with the helpers
// below.
enum class Padding : std::uint8_t {
  explicit_symmetric,  // pad_h rows on top and bottom, pad_w columns left and right (PyTorch Conv2d padding=)
  same_tf,  // TensorFlow 'SAME': out = ceil(in/stride), total pad = max((out−1)·stride + k − in, 0),
            // pad_before = total/2, the odd extra row/column on the bottom/right (as TFLite MobileNetV2)
};
// Fused epilogue after the bias: none, max(0,x) or min(max(0,x),6) (MobileNetV2 uses ReLU6).
enum class Activation : std::uint8_t { none, relu, relu6 };

// Fused GEMM epilogues (one pass over C instead of three): C = act(A·B + bias) and C = act(A·Bᵀ + bias), with
// bias [n] broadcast over rows (may be null). gemm_nt_bias_act with B = a PyTorch Linear weight [out, in] is
// nn.Linear followed by the activation.
void gemm_bias_act(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                   const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                   Activation act);
void gemm_nt_bias_act(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                      const float* b, std::size_t ldb, float* c, std::size_t ldc, const float* bias,
                      Activation act);

// ---- weights packed for one-row products (a decoder step) ----
// A weight B [n×k] in PyTorch's Linear layout, repacked once (at model load) into panels of kPanel outputs stored
// k-major: B[j][p] lives at data[(j / kPanel)·kPanel·k + p·kPanel + j % kPanel], the last panel zero-padded. A
// product then reads the weights front to back as one stream, with the panel's outputs held in registers: in
// WASM SIMD128 2.5× the speed of the row-by-row dot products of gemv_nt over a decoder step's 18 MB of weights
// (bench/README.md). Summation order per output: even p and odd p in two partial sums, added at the end, the same
// for every row count, so a row gives the same bits alone or in a batch.
constexpr std::size_t kPanel = 8;
//
// int8 (Precision::int8, as bergamot's intgemm and onnxruntime's MatMulInteger): each output row j is stored as
// int8 codes q[j][p] ∈ [−127, 127] with one float scale s_j = max_p |B[j][p]| / 127 (per-output-channel,
// symmetric; q = round-half-even(B / s_j)), in panels of kPanel outputs with the inputs in pairs:
// q[j][p] at qdata[(j / kPanel)·kPanel·k2 + (p / 2)·2·kPanel + (j % kPanel)·2 + p % 2], k2 = k rounded up to even,
// zero-padded. A product quantises each input row x to int16 codes c_p = round-half-even(x_p / s_x) with
// s_x = max|x| / A, A = min(32767, ⌊(2³¹ − 1) / (127·k2)⌋) (so no int32 sum can overflow; A ≥ 8191 for k ≤ 2048),
// sums q·c exactly in int32 (WASM i32x4.dot_i16x8_s, SSE2 pmaddwd, or plain C++: the same integers), and writes
// y_j = act(float(acc_j)·(s_x·s_j) + bias_j). Every instruction set gives the same bits. The weights are 4× smaller
// than float32 (a step's GEMVs are bound by reading them); the maps change by a measured amount (MODEL_CARDs).
enum class Precision : std::uint8_t { f32, int8 };
struct PackedMatrix {
  std::size_t rows = 0, cols = 0;  // n outputs, k inputs
  std::vector<float> data;         // f32: ceil(n / kPanel)·kPanel·k floats
  std::vector<std::int8_t> qdata;  // int8: ceil(n / kPanel)·kPanel·k2 codes
  std::vector<float> qscale;       // int8: s_j, one per output row
  Precision precision = Precision::f32;
  bool empty() const { return data.empty() && qdata.empty(); }
};
PackedMatrix pack_rows(std::size_t n, std::size_t k, const float* b, std::size_t ldb,
                       Precision precision = Precision::f32);
// Row j of B (k floats), read back from the packed layout (an embedding lookup in a packed table; int8: q·s_j).
void packed_row(const PackedMatrix& w, std::size_t j, float* out);
// y_i = act(B·x_i + bias) for m rows x_i (stride ldx) into y_i (stride ldy); bias [n] may be null. Rows go in
// pairs through one pass over the weights; every row's result has the same bits as the row alone. int8 matrices
// take the int8 path above (no heap allocation once a thread has seen its largest k).
void linear_packed(std::size_t m, const float* x, std::size_t ldx, const PackedMatrix& w, const float* bias,
                   float* y, std::size_t ldy, Activation act = Activation::none);
// One row's int8 codes and scale by the rule above (s = max|row| / 127, q = round-half-even(row / s)); returns s.
float quantize_row_int8(const float* row, std::size_t k, std::int8_t* codes);
// An int8 matrix from codes the caller already has (weights published as integer codes times a scale): row j is
// codes[j·ldq + p]·scales[j], stored exactly as pack_rows(..., Precision::int8) stores its own codes. Codes must be
// in [−127, 127] and scales finite and ≥ 0 (Error otherwise).
PackedMatrix pack_int8_codes(std::size_t n, std::size_t k, const std::int8_t* codes, std::size_t ldq,
                             const float* scales);
// w [rows × cols] ← q·s_j row by row, in place: the weights as an int8 bundle stores them (scripts/quantize.mjs).
void round_through_int8(float* w, std::size_t rows, std::size_t cols);
// The int8 path's input quantisation, exposed for tests: codes[k2] (zero-padded) and s_x as described above.
float quantize_input_int16(const float* x, std::size_t k, std::int16_t* codes);

struct Conv2dParams {
  std::size_t in_h = 0, in_w = 0, in_c = 0;  // input image, HWC
  std::size_t out_c = 0;                     // output channels (ignored by depthwise_conv2d: out_c = in_c)
  std::size_t kernel_h = 1, kernel_w = 1;
  std::size_t stride = 1;  // same stride along both axes (1 and 2 are what the models use; any ≥ 1 works)
  Padding padding = Padding::explicit_symmetric;
  std::size_t pad_h = 0, pad_w = 0;  // only for Padding::explicit_symmetric
  Activation activation = Activation::none;
};

struct ConvGeometry {
  std::size_t out_h = 0, out_w = 0;
  std::size_t pad_top = 0, pad_left = 0;  // the bottom/right padding follows from out size
};

// Output size and leading padding. Throws Error for a zero stride/kernel or a kernel larger than the padded
// input.
ConvGeometry conv2d_geometry(const Conv2dParams& p);

// output[out_h × out_w × out_c] (HWC) = conv(input HWC, weights HWIO) + bias, then the activation.
void conv2d(const Conv2dParams& p, const float* input, const float* weights_hwio, const float* bias,
            float* output);
// output[out_h × out_w × C] (HWC), one KH×KW filter per channel (groups = C in PyTorch terms).
void depthwise_conv2d(const Conv2dParams& p, const float* input, const float* weights_hwc, const float* bias,
                      float* output);

// PyTorch weight[out_c][in_c][kh][kw] (OIHW) → HWIO. `hwio` must hold out_c·in_c·kh·kw floats (no aliasing).
void conv_weights_from_oihw(const float* oihw, std::size_t out_c, std::size_t in_c, std::size_t kh,
                            std::size_t kw, float* hwio);
// PyTorch depthwise weight[c][1][kh][kw] (C1HW) → HWC. `hwc` must hold c·kh·kw floats (no aliasing).
void depthwise_weights_from_c1hw(const float* c1hw, std::size_t c, std::size_t kh, std::size_t kw,
                                 float* hwc);
// Image tensors: CHW (PyTorch, batch 1) ↔ HWC.
void chw_to_hwc(const float* chw, std::size_t c, std::size_t h, std::size_t w, float* hwc);
void hwc_to_chw(const float* hwc, std::size_t h, std::size_t w, std::size_t c, float* chw);

}  // namespace attnlens::kernels
