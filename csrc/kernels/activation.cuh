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

CUTLASS_DEVICE float relu(float x) { return x < 0.f ? 0.f : x; }  // NaN stays NaN, as torch.relu
// erf GELU, as torch.nn.functional.gelu(approximate="none").
CUTLASS_DEVICE float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }
CUTLASS_DEVICE float ex2_approx(float x) {  // 2^x by MUFU.EX2 (~2 ulp), subnormal results flushed to 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// erf GELU for 16-bit outputs: x * Phi(x), Phi = 1 - q (x >= 0) or q (x < 0), q = Q(|x|) = 2^P(|x|) the
// normal upper tail, P of degree 6 fit to log2 Q by tools/fit_gelu.py (which checks these values):
// relative error <= 4.7e-5 for x >= -6 (40x below bf16's rounding), below 1e-9 |x| past it, in 12
// instructions to erff's ~25 and a branch (H200, session 23: erf GELU cost 1024^3's 64x128 ping-pong 37%
// over relu). Past |x| = 14, 2^P flushes to 0 (x or -0, the float32 erf formula's values); NaN and -inf
// give NaN, +inf gives +inf, as gelu() does.
constexpr float kGelu16P0 = -1.000064784e+00f, kGelu16P1 = -1.150174274e+00f, kGelu16P2 = -4.612719059e-01f, kGelu16P3 = -5.118534470e-02f,
                kGelu16P4 = 7.195567003e-03f, kGelu16P5 = -6.111001156e-04f, kGelu16P6 = 2.299005954e-05f;
CUTLASS_DEVICE float gelu16(float x) {
  const float t = fminf(fabsf(x), 14.f);
  float p = fmaf(kGelu16P6, t, kGelu16P5);
  p = fmaf(p, t, kGelu16P4);
  p = fmaf(p, t, kGelu16P3);
  p = fmaf(p, t, kGelu16P2);
  p = fmaf(p, t, kGelu16P1);
  p = fmaf(p, t, kGelu16P0);
  const float q = ex2_approx(p);
  return x * (x >= 0.f ? 1.f - q : q);
}
// tanh GELU, as torch.nn.functional.gelu(approximate="tanh"), in its sigmoid form x / (1 + e^(-2u)),
// u = sqrt(2/pi) (x + 0.044715 x^3): relative error ~1e-6 everywhere. In 0.5 x (1 + tanh.approx(u)) the
// specified 2^-11 relative error of tanh.approx is 20% of 1 + tanh(u) at x = -3 and all of it past -3.7.
CUTLASS_DEVICE float gelu_tanh(float x) {
  const float v = x * fmaf(-0.1029432396f, x * x, -2.302208198f);  // -2u log2(e)
  return __fdividef(x, 1.f + ex2_approx(v));
}
// __fdividef (approximate reciprocal and multiply, ~2 ulp), not IEEE division: its ~150-instruction
// sequence and slow-path call, unrolled per output element, made every activation of the run-time
// switch slower (H200, session 20: 128x128 c1x2 ping-pong 4096^3 silu 270 -> 225 us, gelu 264 -> 232).
// A denominator past 2^126 gives 0, silu's limit there.
CUTLASS_DEVICE float silu(float x) { return __fdividef(x, 1.f + __expf(-x)); }

// kOut16: the output is 16-bit, so erf GELU is gelu16 (f32 outputs keep erff's accuracy).
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
      case Activation::kGeluTanh: return apply(x, [](float v) { return gelu_tanh(v); });
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
