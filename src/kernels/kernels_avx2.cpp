// AVX2+FMA instantiation of the SIMD kernels (compiled with -mavx2 -mfma by the *_avx2.cpp CMake convention,
// left out of the WASM build). dispatch.cpp selects it at run time only when the CPU reports avx2 and fma.
#include "kernels/kernels_simd.hpp"

namespace attnlens::kernels::detail {
template KernelTable make_kernel_table<xsimd::fma3<xsimd::avx2>>();
}  // namespace attnlens::kernels::detail
