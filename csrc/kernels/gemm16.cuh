// 16-bit GEMM with the fused epilogue, one template for SM90 and SM100 (the schedule picks the arch).
//   D = act(alpha * (A @ B^T) + bias) + beta * residual
// A [M,K] row-major, B [N,K] row-major (= K x N column-major, nn.Linear's weight), D [M,N].
#pragma once

#include "common.cuh"

namespace cutlass_gemm::kernels {

// EpilogueTail without the activation node (D = beta * C + (X + bias_f32)): the run-time
// activation's five variants, unrolled per epilogue subtile, are 64% of the 64x128 ping-pong
// kernel's code (5760 SASS instructions against 2080 without it; session 12).
template <class TileShape, class ElementD, class X, class Orient = Normal>
using EpilogueTailNoAct =
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementD, float, kRound>,  // beta * C + Y
        fusion::Sm90ScalarBroadcast<float>,                                                           //   beta
        fusion::Sm90SrcFetch<ElementD>,                                                               //   C
        fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, float, float, kRound>,                      //   Y = X + bias_f32
            X,
            typename Orient::template PerN<TileShape, float>>>;

// Arguments of EpilogueTailNoAct<..., X> (tail_args without the activation's).
template <class Tree, class X>
typename Tree::Arguments tail_args_no_act(const GemmParams& p, const float* bias_f32, typename X::Arguments const& x) {
  const float beta = p.residual != nullptr ? p.beta : 0.0f;
  return {{{beta}},                       // beta
          {},                             // C
          {x, {bias_f32, 0.0f, {}}, {}},  // Y = X + bias_f32
          {}};
}

// Orient: Normal, or SwapAB (CUTLASS computes D^T = B A^T; the tile's first extent runs over N).
// kAct = false: no activation node in the epilogue (serves calls whose activation is "none";
// can_implement refuses the others).
template <DType kIn, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal, bool kAct = true>
struct Gemm16 {
  using ElementA = typename Element<kIn>::type;                      // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignAB = 16 / sizeof(ElementA);             // TMA: 16-byte rows
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using X = AlphaX<CtaTile, ElementD, Orient>;                       // alpha * acc + bias_d
  using Tree = cute::conditional_t<kAct, EpilogueTail<CtaTile, ElementD, X, Orient>,
                                   EpilogueTailNoAct<CtaTile, ElementD, X, Orient>>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient>;
  using CollectiveMainloop =
      CollectiveMainloopFor<ElementA, cutlass::layout::RowMajor, kAlignAB,     // A [M,K] (b if swapped), K contiguous
                            ElementA, cutlass::layout::ColumnMajor, kAlignAB,  // B^T [K,N] col-major = B [N,K] (a)
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Mainloop>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto args = gemm_args<Kernel, ElementA, ElementA, ElementD, Orient>(p);
    auto bias = split_bias<ElementD>(p, kOut);
    if constexpr (kAct) args.epilogue.thread = tail_args<Tree, X>(p, bias.f32, alpha_x_args<X>(p, bias));
    else args.epilogue.thread = tail_args_no_act<Tree, X>(p, bias.f32, alpha_x_args<X>(p, bias));
    return args;
  }

  using Fns = AdapterFns<Gemm16, Adapter>;
  static int can_implement(const GemmParams& p) {
    if (!kAct && p.act != Activation::kNone) return kCannotImplement;
    return Fns::can_implement(p);
  }
  static constexpr KernelFns fns{&Fns::workspace_size, &can_implement, &Fns::run};
};

}  // namespace cutlass_gemm::kernels
