// The activation as a run-time argument of one epilogue functor: one kernel serves every
// activation (a uniform branch per fragment, outside the unrolled element loop).
#pragma once

#include <cutlass/array.h>
#include <cutlass/cutlass.h>
#include <cutlass/fast_math.h>

#include "../gemm_api.h"

namespace cutlass_gemm::epilogue {

struct ActivationArguments {
  int32_t kind = static_cast<int32_t>(Activation::kNone);
};

CUTLASS_DEVICE float relu(float x) { return x > 0.f ? x : 0.f; }
// erf GELU, as torch.nn.functional.gelu(approximate="none").
CUTLASS_DEVICE float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }
// tanh GELU, as torch.nn.functional.gelu(approximate="tanh"); tanh.approx's 2^-11 error is
// below the 16-bit output's rounding.
CUTLASS_DEVICE float gelu_tanh(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.f + cutlass::fast_tanh(inner));
}
// __fdividef (approximate reciprocal and multiply, ~2 ulp), not IEEE division: its ~150-instruction
// sequence and slow-path call, unrolled per output element, made every activation of the run-time
// switch slower (H200, session 20: 128x128 c1x2 ping-pong 4096^3 silu 270 -> 225 us, gelu 264 -> 232).
// A denominator past 2^126 gives 0, silu's limit there.
CUTLASS_DEVICE float silu(float x) { return __fdividef(x, 1.f + __expf(-x)); }

template <class T>
struct RuntimeActivation {
  using Arguments = ActivationArguments;
  CUTLASS_HOST_DEVICE T operator()(T const& x, Arguments const&) const { return x; }  // only the Array form runs
};

template <int N>
struct RuntimeActivation<cutlass::Array<float, N>> {
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
      case Activation::kGelu: return apply(x, [](float v) { return gelu(v); });
      case Activation::kGeluTanh: return apply(x, [](float v) { return gelu_tanh(v); });
      case Activation::kSilu: return apply(x, [](float v) { return silu(v); });
      default: return x;
    }
  }
};

}  // namespace cutlass_gemm::epilogue
