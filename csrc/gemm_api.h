// Torch-free boundary between the glue (torch_bindings.cpp) and the kernel units.
// Kernel units see only this header: raw pointers, sizes, strides, scalars, a stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "generated/enums.h"  // DType, ScaleMode, Accum, Schedule, Scheduler, Activation

namespace cutlass_gemm {

// D = act(alpha * (A @ B^T) * scales + bias) + beta * residual   (row-major A [M,K], B [N,K], D [M,N])
struct GemmParams {
  const void* a = nullptr;  // [M, K], row stride lda (elements), unit column stride
  const void* b = nullptr;  // [N, K], row stride ldb
  void* d = nullptr;        // [M, N], row stride ldd
  const void* bias = nullptr;      // [N] or null
  DType bias_dtype = DType::kF32;  // the output dtype or f32
  const void* residual = nullptr;  // [M, N] in the output dtype, row stride ldr, or null
  const float* scale_a = nullptr;  // FP8 only: per-tensor [1], per-row [M], blockwise [M, ceil(K/128)]
  const float* scale_b = nullptr;  // FP8 only: per-tensor [1], per-col [N], blockwise [ceil(N/128), ceil(K/128)]
  int64_t scale_a_numel = 0;
  int64_t scale_b_numel = 0;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldd = 0, ldr = 0;
  float alpha = 1.0f;
  float beta = 0.0f;  // ignored (treated as 0) when residual is null
  Activation act = Activation::kNone;
  int device = 0;
  int sm_count = 0;  // cached by the caller; CUTLASS would otherwise query per call
  int fp8_promotion_interval = 0;  // promoted FP8 mainloop: MMAs (k-blocks of 32) per FP32 promotion; 0 = default
  int swizzle = 0;  // tile scheduler max swizzle 1/2/4/8; 0 = the library's (kernels::default_swizzle)
  int raster = 0;   // tile scheduler raster order: 1 along M, 2 along N; 0 = CUTLASS's heuristic
  int tma_l2_promotion = 0;  // bytes of L2 promotion of every TMA descriptor: 64, 128 or 256; 0 = CUTLASS's (128)
  // Programmatic dependent launch: the kernel may start (prologue: barriers, descriptor prefetch,
  // scheduler) while the stream's previous kernel drains; CUTLASS's kernels (built with
  // CUTLASS_ENABLE_GDC_FOR_SM90/100) wait for that kernel's completion before any global access.
  bool pdl = false;
  // Stream-K kernels only (CUTLASS's SM90 stream-K scheduler arguments; 0 = its defaults):
  int decomposition = 0;  // 1 data-parallel, 2 split-K, 3 stream-K; 0 its heuristic
  int splits = 0;         // split-K factor (>= 2)
  int reduction = 0;      // 1 non-deterministic; 0 deterministic (turnstile) reduction
};

// Status codes returned by KernelFns (0 = success). Values >= 100 are cutlass::Status + 100.
enum : int {
  kOk = 0,
  kCannotImplement = 1,
  kNotCompiledForArch = 2,
  kTooManyTiles = 3,  // a one-CTA-per-tile kernel (schedule ws): more tiles along grid.y than CUDA allows
  kTmaEncodeFailed = 4,  // the driver refused a TMA descriptor (kernels/tma_l2_promotion.cuh): nothing launched
  kCutlassStatusBase = 100,
};

// TMA descriptors the kernels encode (kernels/tma_l2_promotion.cuh), counted by the L2 promotion they
// got (CUtensorMapL2promotion: 0 none, 1 64 B, 2 128 B, 3 256 B): the op `_tma_encode_counts` reads them,
// so a test sees that CUTLASS_GEMM_TMA_L2_PROMOTION reaches the descriptors.
void count_tma_encode(int l2_promotion);
int64_t tma_encode_count(int l2_promotion);

// One compiled kernel. Entries whose arch was not built are null (weak symbols).
struct KernelFns {
  size_t (*workspace_size)(const GemmParams&);
  int (*can_implement)(const GemmParams&);
  int (*run)(const GemmParams&, void* workspace, cudaStream_t stream);
};

struct KernelInfo {
  const char* name;
  int arch;
  DType a, b, out;
  ScaleMode scale;
  Accum accum;
  const KernelFns* fns;  // null when not compiled into this build
};

// The generated table (csrc/generated/kernel_table.cpp), in kernel_table.py's order.
extern const KernelInfo kKernels[];
extern const int kNumKernels;
extern const uint64_t kKernelTableHash;

// A CUTLASS status code as text, for error messages.
const char* status_string(int status);

}  // namespace cutlass_gemm
