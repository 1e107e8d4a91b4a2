// Per-token ("row") and 1x128 FP8 quantization of activations for Fp8Linear: one kernel instead of
// eager PyTorch's several passes. Same rules as cutlass_gemm/quantize.py (IEEE division, round to
// nearest even, no saturation: |x / scale| <= max(out) for finite x). Plain CUDA; each arch's unit
// (quantize_fp8_sm90.cu, quantize_fp8_sm100.cu) compiles its own copy (internal linkage).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

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

// A whole-row group's scale from each thread's partial amax: warp, then block reduction; every
// thread gets the scale, thread 0 stores it. Shared by the scalar and the vectorized kernels.
__device__ __forceinline__ float row_scale_of(float m, float inv_fmax, float* scale_out) {
  __shared__ float partial[kThreads / 32];
  __shared__ float row_scale;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  m = warp_max(m);
  if (lane == 0) partial[warp] = m;
  __syncthreads();
  if (warp == 0) {
    float t = lane < kThreads / 32 ? partial[lane] : 0.0f;
    t = warp_max(t);
    if (lane == 0) {
      row_scale = scale_of(t, inv_fmax);
      *scale_out = row_scale;
    }
  }
  __syncthreads();
  return row_scale;
}

// Lets the stream's next kernel, when launched with programmatic dependent launch (the GEMM that
// consumes q: GemmParams::pdl), be scheduled as this grid's last CTAs run; it still waits for this
// grid to complete before reading anything. A no-op for a plain launch and before sm_90.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
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
  allow_dependent_launch();
  const int64_t r = blockIdx.x;
  const TIn* xr = x + r * ldx;
  __nv_fp8_storage_t* qr = q + r * cols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (group == 0) {
    float m = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) m = nan_max(m, fabsf(load(xr + c)));
    const float s = row_scale_of(m, inv_fmax, scale + r * scale_rs);
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

// ---------------------------------------------------------------------------------------------
// Vectorized path (16-byte loads of x, 8- or 4-byte stores of q): taken when x's rows are 16-byte
// aligned and cols is a multiple of the vector. A whole-row group of up to 1024 vectors is held in
// registers between its amax and its division (one read of x), a longer one is read twice; 1x128
// groups are read by 16 (2-byte x) or 32 (f32) lanes.

template <class TIn>
struct Vec16 {
  static constexpr int kN = 16 / sizeof(TIn);
};

__device__ __forceinline__ void unpack(const uint4& u, const __nv_bfloat16*, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 t = __bfloat1622float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
__device__ __forceinline__ void unpack(const uint4& u, const __half*, float* f) {
  const __half2* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 t = __half22float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
__device__ __forceinline__ void unpack(const uint4& u, const float*, float* f) {
  f[0] = __uint_as_float(u.x);
  f[1] = __uint_as_float(u.y);
  f[2] = __uint_as_float(u.z);
  f[3] = __uint_as_float(u.w);
}

// kN values / s into kN fp8 bytes at dst. For a finite s derived from the group's own amax every
// |v / s| is at most max(out) plus an ulp, which the hardware's satfinite RNE conversion and the
// no-saturation RNE conversion map to the same byte; a NaN group takes the exact NOSAT path.
template <int kN, __nv_fp8_interpretation_t kInterp>
__device__ __forceinline__ void store_q(const float* v, float s, __nv_fp8_storage_t* dst) {
  uint32_t w[kN / 4];
  if (s != s) {
#pragma unroll
    for (int i = 0; i < kN / 4; ++i) {
      w[i] = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j) w[i] |= uint32_t(to_fp8<kInterp>(__fdiv_rn(v[4 * i + j], s))) << (8 * j);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kN / 4; ++i) {
      const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(__fdiv_rn(v[4 * i], s), __fdiv_rn(v[4 * i + 1], s)),
                                                   __NV_SATFINITE, kInterp);
      const uint32_t hi = __nv_cvt_float2_to_fp8x2(
          make_float2(__fdiv_rn(v[4 * i + 2], s), __fdiv_rn(v[4 * i + 3], s)), __NV_SATFINITE, kInterp);
      w[i] = lo | (hi << 16);
    }
  }
  if constexpr (kN == 8)
    *reinterpret_cast<uint2*>(dst) = make_uint2(w[0], w[1]);
  else
    *reinterpret_cast<uint32_t*>(dst) = w[0];
}

// kRegs: 16-byte vectors a thread holds for a whole-row group: 4 (rows up to 256*4 vectors: one
// read of x, 32-40 registers, several CTAs per SM); kStream (longer rows): no row cache, the row is
// read twice, the second time mostly from L2 (a 64 KB row stays there while its CTA runs), so long
// rows keep the short rows' occupancy instead of a 94-register cache at 2 CTAs per SM; 0: the 1x128
// path, which holds one vector (its own instantiation, so no row cache limits its occupancy).
constexpr int kRowRegs = 4;
constexpr int kStream = -1;
// The kStream loops issue kUnroll independent 16-byte loads before using any (one CTA per row makes
// short grids latency-bound). Not the 1x128 path: unrolled the same way it ran 3-12% slower.
constexpr int kUnroll = 4;

// f(j, vector j) for this thread's vectors j = threadIdx.x + i * kThreads of a row, in order.
template <class F>
__device__ __forceinline__ void for_row_vectors(const uint4* __restrict__ xr, int64_t nvec, F&& f) {
  for (int64_t j0 = threadIdx.x; j0 < nvec; j0 += kUnroll * kThreads) {
    uint4 u[kUnroll];
#pragma unroll
    for (int i = 0; i < kUnroll; ++i)
      if (j0 + i * kThreads < nvec) u[i] = __ldg(xr + j0 + i * kThreads);
#pragma unroll
    for (int i = 0; i < kUnroll; ++i)
      if (j0 + i * kThreads < nvec) f(j0 + i * kThreads, u[i]);
  }
}

template <class TIn, __nv_fp8_interpretation_t kInterp, int kRegs>
__global__ void __launch_bounds__(kThreads) quantize_rows_vec(const TIn* __restrict__ x, int64_t cols, int64_t ldx,
                                                              __nv_fp8_storage_t* __restrict__ q,
                                                              float* __restrict__ scale, int64_t scale_rs,
                                                              int64_t scale_gs, int group, float inv_fmax) {
  allow_dependent_launch();
  constexpr int kN = Vec16<TIn>::kN;
  const int64_t r = blockIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(x + r * ldx);
  __nv_fp8_storage_t* qr = q + r * cols;
  const int64_t nvec = cols / kN;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float v[kN];
  if constexpr (kRegs == kStream) {
    float m = 0.0f;
    for_row_vectors(xr, nvec, [&](int64_t, const uint4& u) {
      unpack(u, x, v);
#pragma unroll
      for (int e = 0; e < kN; ++e) m = nan_max(m, fabsf(v[e]));
    });
    const float s = row_scale_of(m, inv_fmax, scale + r * scale_rs);
    for_row_vectors(xr, nvec, [&](int64_t j, const uint4& u) {
      unpack(u, x, v);
      store_q<kN, kInterp>(v, s, qr + j * kN);
    });
  } else if constexpr (kRegs > 0) {
    uint4 cache[kRegs];
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < kRegs; ++i) {
      const int64_t j = threadIdx.x + int64_t(i) * kThreads;
      if (j < nvec) {
        cache[i] = __ldg(xr + j);
        unpack(cache[i], x, v);
#pragma unroll
        for (int e = 0; e < kN; ++e) m = nan_max(m, fabsf(v[e]));
      }
    }
    const float s = row_scale_of(m, inv_fmax, scale + r * scale_rs);
#pragma unroll
    for (int i = 0; i < kRegs; ++i) {
      const int64_t j = threadIdx.x + int64_t(i) * kThreads;
      if (j < nvec) {
        unpack(cache[i], x, v);
        store_q<kN, kInterp>(v, s, qr + j * kN);
      }
    }
  } else {
    // 1x128: kLanes lanes per group (each one vector), 32 / kLanes groups per warp step.
    constexpr int kLanes = 128 / kN, kPerWarp = 32 / kLanes;
    const int sub = lane / kLanes, gl = lane % kLanes;
    const int64_t groups = (cols + 127) / 128;
    for (int64_t base = int64_t(warp) * kPerWarp; base < groups; base += int64_t(kThreads / 32) * kPerWarp) {
      const int64_t g = base + sub, j = g * kLanes + gl;
      const bool in = g < groups && j < nvec;  // a partial last group reads zeros past cols
      float m = 0.0f;
      if (in) {
        unpack(__ldg(xr + j), x, v);
#pragma unroll
        for (int e = 0; e < kN; ++e) m = nan_max(m, fabsf(v[e]));
      }
#pragma unroll
      for (int o = kLanes / 2; o > 0; o >>= 1) m = nan_max(m, __shfl_xor_sync(0xffffffff, m, o));
      const float s = scale_of(m, inv_fmax);
      if (g < groups && gl == 0) scale[r * scale_rs + g * scale_gs] = s;
      if (in) store_q<kN, kInterp>(v, s, qr + j * kN);
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
  constexpr int kN = Vec16<TIn>::kN;
  const bool vec = reinterpret_cast<uintptr_t>(x) % 16 == 0 && p.ldx % kN == 0 && p.cols % kN == 0 &&
                   reinterpret_cast<uintptr_t>(q) % kN == 0;
  const int regs = p.group == 128 ? 0 : (p.cols <= int64_t(kRowRegs) * kThreads * kN ? kRowRegs : kStream);
#define CUTLASS_GEMM_QUANT_LAUNCH(KERNEL, ...) \
  KERNEL<__VA_ARGS__><<<grid, kThreads, 0, stream>>>(x, p.cols, p.ldx, q, p.scale, p.scale_rs, p.scale_gs, p.group, inv_fmax)
#define CUTLASS_GEMM_QUANT_VEC(INTERP)                                     \
  if (regs == 0) CUTLASS_GEMM_QUANT_LAUNCH(quantize_rows_vec, TIn, INTERP, 0); \
  else if (regs == kRowRegs) CUTLASS_GEMM_QUANT_LAUNCH(quantize_rows_vec, TIn, INTERP, kRowRegs); \
  else CUTLASS_GEMM_QUANT_LAUNCH(quantize_rows_vec, TIn, INTERP, kStream)
  if (vec && e4m3) {
    CUTLASS_GEMM_QUANT_VEC(__NV_E4M3);
  } else if (vec) {
    CUTLASS_GEMM_QUANT_VEC(__NV_E5M2);
  } else if (e4m3) {
    CUTLASS_GEMM_QUANT_LAUNCH(quantize_rows, TIn, __NV_E4M3);
  } else {
    CUTLASS_GEMM_QUANT_LAUNCH(quantize_rows, TIn, __NV_E5M2);
  }
#undef CUTLASS_GEMM_QUANT_VEC
#undef CUTLASS_GEMM_QUANT_LAUNCH
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
