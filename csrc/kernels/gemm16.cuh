// 16-bit GEMM with the fused epilogue, one template for SM90 and SM100 (the schedule picks the arch).
//   D = act(alpha * (A @ B^T) + bias) + beta * residual
// A [M,K] row-major, B [N,K] row-major (= K x N column-major, nn.Linear's weight), D [M,N].
#pragma once

#include "common.cuh"

namespace cutlass_gemm::kernels {

// Orient: Normal, or SwapAB (CUTLASS computes D^T = B A^T; the tile's first extent runs over N).
// kAct = false: no activation node in the epilogue; kRes = false as well: no residual either (common.cuh
// EpilogueTail).
template <DType kIn, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal, bool kAct_ = true,
          int kStoresD = 0, bool kRes_ = true>
struct Gemm16 {
  using ElementA = typename Element<kIn>::type;                      // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignAB = 16 / sizeof(ElementA);             // TMA: 16-byte rows
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  static constexpr bool kAct = kAct_, kRes = kRes_;
  static constexpr bool kOneBias = kOneBiasFor<Schedule, Orient, kRes>;  // one bias node (RowBiasEither)
  static constexpr bool kXRoot = kOneBias && !kRes;                     // `_plain`: X is the tree
  using X = AlphaX<CtaTile, ElementD, Orient, kOneBias, kXRoot>;     // alpha * acc + bias (either dtype with kOneBias)
  using XB = XBias<CtaTile, ElementD, Orient, kOneBias>;             // X's bias node
  using Tree = cute::conditional_t<kXRoot, X, EpilogueTail<CtaTile, ElementD, X, Orient, kAct, kRes, kOneBias>>;
  using CollectiveEpilogue =
      CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient, kStoresD, kRes>;
  using CollectiveMainloop =
      CollectiveMainloopFor<ElementA, cutlass::layout::RowMajor, kAlignAB,     // A [M,K] (b if swapped), K contiguous
                            ElementA, cutlass::layout::ColumnMajor, kAlignAB,  // B^T [K,N] col-major = B [N,K] (a)
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Mainloop, CtasPerSm<Schedule>::value,
                            StagesOf<Schedule>::value>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileScheduler, CtasPerSm<Schedule>::value>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static_assert(kFixedStagesFit<Schedule, Kernel>, "Kernel.stages (the _stN suffix): the fixed mainloop stages and the epilogue "
                "need more shared memory than an SM90 SM has (227 KB); use fewer stages");

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto args = gemm_args<Kernel, ElementA, ElementA, ElementD, Orient>(p);
    auto bias = split_bias<ElementD>(p, kOut);
    args.epilogue.thread = tail_args<Tree, X, kAct, kRes, kOneBias>(p, bias.f32, alpha_x_args<X, XB>(p, bias));
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<Gemm16, Adapter>::fns;
};

}  // namespace cutlass_gemm::kernels
