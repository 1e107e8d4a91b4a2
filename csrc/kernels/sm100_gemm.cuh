// SM100 (Blackwell) 16-bit GEMM with the fused epilogue: tcgen05 UMMA into tensor memory,
// TMA warp-specialized persistent kernels (CLC tile scheduler).
//   D = act(alpha * (A @ B^T) + bias) + beta * residual
// A [M,K] row-major, B [N,K] row-major (= K x N column-major, nn.Linear's weight), D [M,N].
#pragma once

#include "sm100_common.cuh"

namespace cutlass_gemm::sm100 {

template <DType kIn, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule>
struct Gemm16 {
  using ElementA = typename Element<kIn>::type;                      // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignAB = 16 / sizeof(ElementA);             // TMA: 16-byte rows
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;         // UMMA tile (a CTA pair's for 2-SM)
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;         // one CTA's share
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using X = AlphaX<CtaTile, ElementD>;                               // alpha * acc + bias_d
  using Tree = EpilogueTail<CtaTile, ElementD, X>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp,
      ElementA, cutlass::layout::RowMajor, kAlignAB,                 // A [M,K], K contiguous
      ElementA, cutlass::layout::ColumnMajor, kAlignAB,              // B^T [K,N] col-major = B [N,K] row-major
      float,                                                         // FP32 accumulation (tensor memory)
      MmaTile, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Schedule::Mainloop>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    auto [ptr_c, stride_c, ptr_d, stride_d] = epilogue_io<Kernel, ElementD>(p);
    typename Adapter::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {int(p.m), int(p.n), int(p.k), 1},
        {static_cast<const ElementA*>(p.a), StrideA{p.lda, _1{}, int64_t(0)},
         static_cast<const ElementA*>(p.b), StrideB{p.ldb, _1{}, int64_t(0)}},
        {{}, ptr_c, stride_c, ptr_d, stride_d}};
    auto bias = split_bias<ElementD>(p, kOut);
    args.epilogue.thread = tail_args<Tree, X>(p, bias.f32, {{{p.alpha}}, {}, {bias.d, ElementD(0), {}}, {}});
    args.hw_info.device_id = p.device;
    args.hw_info.sm_count = p.sm_count;
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<Gemm16, Adapter>::fns;
};

}  // namespace cutlass_gemm::sm100
