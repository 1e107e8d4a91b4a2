// Per-token ("row") and 1x128 FP8 quantization of activations for Fp8Linear: one kernel instead of
// eager PyTorch's several passes. Same rules as cutlass_gemm/quantize.py (IEEE division, round to
// nearest even, no saturation: |x / scale| <= max(out) for finite x). Plain CUDA; each arch's unit
// (quantize_fp8_sm90.cu, quantize_fp8_sm100.cu) compiles its own copy (internal linkage).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "../quantize_api.h"

namespace cutlass_gemm {
namespace {

constexpr int kThreads = 256;
constexpr float kFltMin = 1.17549435e-38f;  // 2^-126: the scale floor

__device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ float load(const float* p) { return *p; }

// |v| folded into a running max that a NaN poisons for good (fmaxf would drop it).
__device__ __forceinline__ float nan_max(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

// amax times the float32 reciprocal of max(out): bit-identical to the eager CUDA path (PyTorch
// divides a tensor by a scalar through its reciprocal); the CPU's IEEE division may differ by an ulp.
__device__ __forceinline__ float scale_of(float amax, float inv_fmax) {
  if (amax != amax) return amax;  // NaN group: NaN scale, as documented
  return amax == 0.0f ? 1.0f : fmaxf(__fmul_rn(amax, inv_fmax), kFltMin);
}

template <__nv_fp8_interpretation_t kInterp>
__device__ __forceinline__ __nv_fp8_storage_t to_fp8(float v) {
  return __nv_cvt_float_to_fp8(v, __NV_NOSAT, kInterp);
}

// One CTA per row. group == 0: the whole row is one group (block-wide amax, then a second pass);
// group == 128: each warp takes 128-wide groups (4 elements a lane), amax by shuffles.
template <class TIn, __nv_fp8_interpretation_t kInterp>
__global__ void __launch_bounds__(kThreads) quantize_rows(const TIn* __restrict__ x, int64_t cols, int64_t ldx,
                                                          __nv_fp8_storage_t* __restrict__ q, float* __restrict__ scale,
                                                          int64_t scale_rs, int64_t scale_gs, int group, float inv_fmax) {
  const int64_t r = blockIdx.x;
  const TIn* xr = x + r * ldx;
  __nv_fp8_storage_t* qr = q + r * cols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (group == 0) {
    __shared__ float partial[kThreads / 32];
    __shared__ float row_scale;
    float m = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) m = nan_max(m, fabsf(load(xr + c)));
    m = warp_max(m);
    if (lane == 0) partial[warp] = m;
    __syncthreads();
    if (warp == 0) {
      float v = lane < kThreads / 32 ? partial[lane] : 0.0f;
      v = warp_max(v);
      if (lane == 0) {
        row_scale = scale_of(v, inv_fmax);
        scale[r * scale_rs] = row_scale;
      }
    }
    __syncthreads();
    const float s = row_scale;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) qr[c] = to_fp8<kInterp>(__fdiv_rn(load(xr + c), s));
    return;
  }
  const int64_t groups = (cols + 127) / 128;
  for (int64_t g = warp; g < groups; g += kThreads / 32) {
    float v[4];
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t c = g * 128 + i * 32 + lane;  // coalesced across the warp
      v[i] = c < cols ? load(xr + c) : 0.0f;
      m = nan_max(m, fabsf(v[i]));
    }
    const float s = scale_of(warp_max(m), inv_fmax);
    if (lane == 0) scale[r * scale_rs + g * scale_gs] = s;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t c = g * 128 + i * 32 + lane;
      if (c < cols) qr[c] = to_fp8<kInterp>(__fdiv_rn(v[i], s));
    }
  }
}

template <class TIn>
int launch(const QuantizeParams& p, cudaStream_t stream) {
  const bool e4m3 = p.out == DType::kE4m3;
  const float inv_fmax = 1.0f / (e4m3 ? 448.0f : 57344.0f);
  auto* x = static_cast<const TIn*>(p.x);
  auto* q = static_cast<__nv_fp8_storage_t*>(p.q);
  dim3 grid(static_cast<unsigned>(p.rows));
  if (e4m3)
    quantize_rows<TIn, __NV_E4M3><<<grid, kThreads, 0, stream>>>(x, p.cols, p.ldx, q, p.scale, p.scale_rs, p.scale_gs, p.group, inv_fmax);
  else
    quantize_rows<TIn, __NV_E5M2><<<grid, kThreads, 0, stream>>>(x, p.cols, p.ldx, q, p.scale, p.scale_rs, p.scale_gs, p.group, inv_fmax);
  return static_cast<int>(cudaGetLastError());
}

inline int quantize_fp8_run(const QuantizeParams& p, cudaStream_t stream) {
  if (p.rows <= 0 || p.cols <= 0) return 0;
  switch (p.in) {
    case DType::kBf16: return launch<__nv_bfloat16>(p, stream);
    case DType::kF16: return launch<__half>(p, stream);
    case DType::kF32: return launch<float>(p, stream);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace
}  // namespace cutlass_gemm
