// The L2 promotion of the TMA descriptors CUTLASS builds. CUTLASS 4.2's cute::make_tma_copy_desc encodes
// every descriptor with 128 B promotion and takes no parameter for it; DeepGEMM and most hand-written
// Hopper GEMMs use 256 B, which fetches the next k-block's half of a K-major row into L2 with this one.
// CUTLASS makes its driver call through the CUTLASS_CUDA_DRIVER_WRAPPER_CALL macro: this header points
// that macro at a wrapper that puts the promotion set for the calling thread (ScopedL2Promotion, around
// the kernel's to_underlying_arguments) in place of CUTLASS's, and otherwise passes every argument on.
// It also looks the driver's entry point up once, where CUTLASS's wrapper asks the runtime per encode.
// Torch-free. It must come before every CUTLASS header of the translation unit (checked below).
#pragma once

#if defined(CUTLASS_CUDA_DRIVER_WRAPPER_CALL)
#error "include kernels/tma_l2_promotion.cuh before any CUTLASS header: it redirects CUTLASS's tensor-map encode"
#endif

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <cutlass/cuda_host_adapter.hpp>

#include "../gemm_api.h"  // count_tma_encode

namespace cutlass_gemm::kernels::tma {

// Bytes of L2 promotion for the descriptors this thread encodes: 64, 128 or 256; 0 keeps CUTLASS's.
inline thread_local int l2_promotion_bytes = 0;
// Encodes the driver refused on this thread. CUTLASS only prints such a failure and builds the kernel's
// parameters anyway, so the launch checks this count instead of running on a descriptor that is garbage.
inline thread_local int failed_encodes = 0;

// Sets the promotion for the encodes in its scope; failed() says whether any of them was refused.
struct ScopedL2Promotion {
  int saved, failed_before;
  explicit ScopedL2Promotion(int bytes) : saved(l2_promotion_bytes), failed_before(failed_encodes) {
    l2_promotion_bytes = bytes;
  }
  ~ScopedL2Promotion() { l2_promotion_bytes = saved; }
  bool failed() const { return failed_encodes != failed_before; }
  ScopedL2Promotion(const ScopedL2Promotion&) = delete;
  ScopedL2Promotion& operator=(const ScopedL2Promotion&) = delete;
};

inline CUtensorMapL2promotion promotion(int bytes, CUtensorMapL2promotion cutlass_choice) {
  switch (bytes) {
    case 64: return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case 128: return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case 256: return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    default: return cutlass_choice;
  }
}

inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_entry() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* pfn = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if __CUDACC_VER_MAJOR__ > 12
    cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pfn, 12000, cudaEnableDefault, &found);
#else
    cudaError_t err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &pfn, cudaEnableDefault, &found);
#endif
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // leave no sticky error for the op's own checks
      pfn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pfn);
  }();
  return fn;
}

// cuTensorMapEncodeTiled as CUTLASS calls it, with the thread's promotion.
inline CUresult call_cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* address,
                                            const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                            const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                            CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2_promotion,
                                            CUtensorMapFloatOOBfill oob_fill) {
  PFN_cuTensorMapEncodeTiled_v12000 fn = encode_tiled_entry();
  const CUtensorMapL2promotion used = promotion(l2_promotion_bytes, l2_promotion);
  const CUresult r = fn == nullptr ? CUDA_ERROR_NOT_FOUND
                                   : fn(map, dtype, rank, address, dims, strides, box, element_strides, interleave,
                                        swizzle, used, oob_fill);
  if (r == CUDA_SUCCESS) {
    count_tma_encode(int(used));
  } else {
    ++failed_encodes;
  }
  return r;
}

// The other encode CUTLASS routes through the macro (im2col convolutions; no kernel here uses it).
template <class... Args>
CUresult call_cuTensorMapEncodeIm2col(Args... args) {
  return ::cutlass::call_cuTensorMapEncodeIm2col(args...);
}

}  // namespace cutlass_gemm::kernels::tma

#undef CUTLASS_CUDA_DRIVER_WRAPPER_CALL
#define CUTLASS_CUDA_DRIVER_WRAPPER_CALL(func) ::cutlass_gemm::kernels::tma::call_##func
