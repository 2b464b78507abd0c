// SSE2 instantiation of the SIMD kernels: the portable x86-64 fallback natively, and under Emscripten
// (-msimd128 -msse2) the WebAssembly SIMD128 path, since Emscripten lowers SSE2 intrinsics to f32x4
// operations.
#include "kernels/kernels_simd.hpp"

namespace attnlens::kernels::detail {
template KernelTable make_kernel_table<xsimd::sse2>();
}  // namespace attnlens::kernels::detail
