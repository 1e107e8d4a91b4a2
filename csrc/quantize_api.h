// Torch-free boundary of the FP8 quantization kernel (csrc/kernels/quantize_fp8.cu).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "generated/enums.h"  // DType

namespace cutlass_gemm {

// q = x / scale per group, scale = max(amax(|group|) / max(out), 2^-126) (1 where amax == 0, NaN
// where the group holds a NaN): the rules of cutlass_gemm.quantize_fp8, in one read of x per
// group (the row is re-read from L2 for whole-row groups) and one write of q.
struct QuantizeParams {
  const void* x = nullptr;  // [rows, cols], row stride ldx (elements), unit column stride
  DType in = DType::kBf16;  // bf16, f16 or f32
  void* q = nullptr;        // [rows, cols] contiguous, `out`
  DType out = DType::kE4m3;
  float* scale = nullptr;   // element (r, g) at r * scale_rs + g * scale_gs
  int64_t rows = 0, cols = 0, ldx = 0;
  int64_t scale_rs = 1, scale_gs = 0;
  int group = 0;            // 0: one group per row ("row"); 128: 1x128 blocks
};

// 0 on success, else a cudaError_t value. One per arch unit; weak: null when the arch is not built.
int quantize_fp8_sm90(const QuantizeParams& p, cudaStream_t stream) __attribute__((weak));
int quantize_fp8_sm100(const QuantizeParams& p, cudaStream_t stream) __attribute__((weak));

}  // namespace cutlass_gemm
