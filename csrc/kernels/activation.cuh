// The activation as a run-time argument of one epilogue functor: one kernel serves every
// activation (a uniform branch per fragment, outside the unrolled element loop).
#pragma once

#include <cutlass/array.h>
#include <cutlass/cutlass.h>

#include "../gemm_api.h"

namespace cutlass_gemm::epilogue {

struct ActivationArguments {
  int32_t kind = static_cast<int32_t>(Activation::kNone);
};

CUTLASS_DEVICE float relu(float x) {  // max.NaN: NaN stays NaN, as torch.relu
  float y;
  asm("max.NaN.f32 %0, %1, 0f00000000;" : "=f"(y) : "f"(x));
  return y;
}
CUTLASS_DEVICE float ex2_approx(float x) {  // 2^x by MUFU.EX2 (~2 ulp), subnormal results flushed to 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
template <class... C>
CUTLASS_DEVICE float horner(float t, float c0, C... c) {  // c0 + t (c1 + t (c2 + ...)), one fmaf per term
  if constexpr (sizeof...(C) == 0) return c0;
  else return fmaf(horner(t, c...), t, c0);
}

// The GELUs of 16-bit outputs: x F(x) = max(x, 0) - |x| q(|x|), q the tail of F (erf GELU: the normal
// upper tail Q; tanh GELU: sigmoid(-2u)), q(t) = 2^P(min(t, clamp)), P fit to log2 q by tools/fit_gelu.py
// (which checks these values). Relative error <= 4.7e-5 (erf) / 9.1e-5 (tanh) for x >= -6 / -5.5, below
// 2e-9 |x| further out; bf16 rounds at 2e-3, fp16 at 4.9e-4. One MUFU.EX2 and ~10 FP32 instructions:
// erff took ~25 (H200, session 23: erf GELU cost 1024^3's 64x128 ping-pong 37% over relu),
// tanh.approx's 2^-11 error near tanh = -1 was all of 1 + tanh(u) past x = -3.7. Past the clamp 2^P
// flushes to 0: GELU(x) = max(x, 0) exactly, so +inf gives +inf, -inf gives 0 (the limit); NaN stays NaN.
constexpr float kErfTail0 = -1.000064785e+00f, kErfTail1 = -1.150174270e+00f, kErfTail2 = -4.612719107e-01f,
                kErfTail3 = -5.118534278e-02f, kErfTail4 = 7.195566695e-03f, kErfTail5 = -6.111001042e-04f,
                kErfTail6 = 2.299006043e-05f, kErfTailClamp = 14.0f;
constexpr float kTanhTail0 = -9.998749890e-01f, kTanhTail1 = -1.154724547e+00f, kTanhTail2 = -4.421182570e-01f,
                kTanhTail3 = -8.168156750e-02f, kTanhTail4 = 3.273435994e-02f, kTanhTail5 = -1.019158565e-02f,
                kTanhTail6 = 1.249645794e-03f, kTanhTail7 = -5.732278095e-05f, kTanhTailClamp = 10.0f;
template <class... C>
CUTLASS_DEVICE float gelu_tail(float x, float clamp, C... p) {
  const float t = fminf(fabsf(x), clamp);
  return fmaf(-t, ex2_approx(horner(t, p...)), relu(x));
}
CUTLASS_DEVICE float gelu16(float x) {
  return gelu_tail(x, kErfTailClamp, kErfTail0, kErfTail1, kErfTail2, kErfTail3, kErfTail4, kErfTail5, kErfTail6);
}
CUTLASS_DEVICE float gelu_tanh16(float x) {
  return gelu_tail(x, kTanhTailClamp, kTanhTail0, kTanhTail1, kTanhTail2, kTanhTail3, kTanhTail4, kTanhTail5,
                   kTanhTail6, kTanhTail7);
}

// The GELUs of float32 outputs, as torch.nn.functional.gelu: erf GELU by erff; tanh GELU in its sigmoid
// form x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3) (2 MUFU, relative error ~1e-6 everywhere).
CUTLASS_DEVICE float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }
CUTLASS_DEVICE float gelu_tanh(float x) {
  const float v = x * fmaf(-0.1029432396f, x * x, -2.302208198f);  // -2u log2(e)
  return __fdividef(x, 1.f + ex2_approx(v));
}
// __fdividef (approximate reciprocal and multiply, ~2 ulp), not IEEE division: its ~150-instruction
// sequence and slow-path call, unrolled per output element, made every activation of the run-time
// switch slower (H200, session 20: 128x128 c1x2 ping-pong 4096^3 silu 270 -> 225 us, gelu 264 -> 232).
// A denominator past 2^126 gives 0, silu's limit there.
CUTLASS_DEVICE float silu(float x) { return __fdividef(x, 1.f + __expf(-x)); }

// kOut16: the output is 16-bit, so the GELUs are gelu16 / gelu_tanh16 (f32 outputs keep ~1e-6 accuracy).
template <class T, bool kOut16>
struct RuntimeActivationT {
  using Arguments = ActivationArguments;
  CUTLASS_HOST_DEVICE T operator()(T const& x, Arguments const&) const { return x; }  // only the Array form runs
};

template <int N, bool kOut16>
struct RuntimeActivationT<cutlass::Array<float, N>, kOut16> {
  using Arguments = ActivationArguments;
  using Frag = cutlass::Array<float, N>;

  template <class Fn>
  CUTLASS_DEVICE static Frag apply(Frag const& x, Fn fn) {
    Frag y;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) y[i] = fn(x[i]);
    return y;
  }

  CUTLASS_DEVICE Frag operator()(Frag const& x, Arguments const& args) const {
    switch (static_cast<Activation>(args.kind)) {
      case Activation::kRelu: return apply(x, [](float v) { return relu(v); });
      case Activation::kGelu: return apply(x, [](float v) { return kOut16 ? gelu16(v) : gelu(v); });
      case Activation::kGeluTanh: return apply(x, [](float v) { return kOut16 ? gelu_tanh16(v) : gelu_tanh(v); });
      case Activation::kSilu: return apply(x, [](float v) { return silu(v); });
      default: return x;
    }
  }
};

template <class T>
using RuntimeActivation = RuntimeActivationT<T, false>;
template <class T>
using RuntimeActivation16 = RuntimeActivationT<T, true>;

}  // namespace cutlass_gemm::epilogue
