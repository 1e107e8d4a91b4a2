// SM90 (Hopper) FP8 GEMMs with dequant scaling fused, TMA warp-specialized persistent kernels.
//   D = act((A @ B^T) * scale_a * scale_b + bias) + beta * residual
// ScaledGemm: per-tensor / per-row (a) / per-column (b) scales applied in the epilogue, one
//   kernel for every mix (dynamic-broadcast nodes). Fast accumulation or CUTLASS's promoted
//   mainloop (FP32 promotion every 4 k-blocks).
// BlockwiseGemm: DeepSeek 1x128 (a) x 128x128 (b) scales applied per 128-wide K block in the
//   mainloop (CUTLASS's blockwise-scaled mainloop, example 67), FP32 accumulation across blocks.
//   Scales are read M-major (a: [ceil(K/128), ld >= M, ld % 4 == 0]) and N-major
//   (b: [ceil(K/128), ceil(N/128)]): the layouts CUTLASS's SM90 mainloop supports.
#pragma once

#include <cutlass/detail/blockwise_scale_layout.hpp>

#include "sm90_common.cuh"

namespace cutlass_gemm::sm90 {

template <class ElementA, class LayoutA, class ElementB, class LayoutB, class TileShape, class ClusterShape,
          class CollectiveEpilogue, class Schedule>
using Fp8Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, 16,                                           // A [M,K] (FP8: 16 elements = 16 bytes)
    ElementB, LayoutB, 16,                                           // B [N,K]
    float,                                                           // FP32 accumulation
    TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    Schedule>::CollectiveOp;

// CUTLASS's promoted (accurate) FP8 mainloop, as opposed to fast accumulation.
template <class DispatchPolicy>
struct IsPromotedFp8 : std::false_type {};
template <int Stages, class ClusterShape, class KernelSchedule>
struct IsPromotedFp8<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, ClusterShape, KernelSchedule>>
    : std::true_type {};

template <DType kA, DType kB, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule>
struct ScaledGemm {
  using ElementA = typename Element<kA>::type;                       // A element (e4m3 / e5m2)
  using ElementB = typename Element<kB>::type;                       // B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using TileShape = Shape<Int<TM>, Int<TN>, Int<TK>>;                // CTA tile
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using X = ScaledX<TileShape, ElementD>;                            // scale_a * acc * scale_b + bias_d
  using Tree = EpilogueTail<TileShape, ElementD, X>;
  using CollectiveEpilogue = CollectiveEpilogueFor<TileShape, ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop = Fp8Mainloop<ElementA, cutlass::layout::RowMajor, ElementB, cutlass::layout::ColumnMajor,
                                         TileShape, ClusterShape, CollectiveEpilogue, typename Schedule::Mainloop>;
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
         static_cast<const ElementB*>(p.b), StrideB{p.ldb, _1{}, int64_t(0)}},
        {{}, ptr_c, stride_c, ptr_d, stride_d}};
    auto bias = split_bias<ElementD>(p, kOut);
    const bool row_a = p.scale_a_numel > 1, col_b = p.scale_b_numel > 1;  // else per-tensor
    typename X::Arguments x{
        {{p.scale_a, 0.0f, {row_a, _0{}, int64_t(0)}}, {}, {}},      // scale_a * acc
        {p.scale_b, 0.0f, {_0{}, col_b, int64_t(0)}},                // scale_b
        {bias.d, ElementD(0), {}},                                   // bias_d
        {}};
    args.epilogue.thread = tail_args<Tree, X>(p, bias.f32, x);
    args.hw_info.device_id = p.device;
    args.hw_info.sm_count = p.sm_count;
    if constexpr (IsPromotedFp8<typename CollectiveMainloop::DispatchPolicy>::value) {
      if (p.fp8_promotion_interval > 0) args.mainloop.mma_promotion_interval = uint32_t(p.fp8_promotion_interval);
    }
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<ScaledGemm, Adapter>::fns;
};

template <DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule>
struct BlockwiseGemm {
  using ElementA = cutlass::float_e4m3_t;                            // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 4;  // scale_a is read by TMA, M-contiguous: its ld is padded to 4
  using TileShape = Shape<Int<TM>, Int<TN>, Int<TK>>;                // CTA tile
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using ScaleConfig = cutlass::detail::Sm90BlockwiseScaleConfig<1, 128, 128>;  // 1x128 (a), 128x128 (b)
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  using X = AlphaX<TileShape, ElementD>;                             // acc + bias_d (alpha = 1)
  using Tree = EpilogueTail<TileShape, ElementD, X>;
  using CollectiveEpilogue = CollectiveEpilogueFor<TileShape, ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop =
      Fp8Mainloop<ElementA, cute::tuple<cutlass::layout::RowMajor, LayoutSFA>, ElementA,
                  cute::tuple<cutlass::layout::ColumnMajor, LayoutSFB>, TileShape, ClusterShape, CollectiveEpilogue,
                  typename Schedule::Blockwise>;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  // p.scale_a: [kb, lda_s] M-major with lda_s = p.scale_a_numel / kb (a multiple of 4 for TMA);
  // p.scale_b: [kb, nb] N-major.
  static typename Adapter::Arguments make_args(const GemmParams& p) {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    const int32_t m = int32_t(p.m), n = int32_t(p.n), k = int32_t(p.k);
    const int32_t kb = (k + 127) / 128, nb = (n + 127) / 128;
    const int32_t lda_s = kb > 0 ? int32_t(p.scale_a_numel / kb) : m;
    LayoutSFA layout_sfa = make_layout(make_shape(make_shape(_1{}, m), make_shape(_128{}, kb), int32_t(1)),
                                       make_stride(make_stride(_0{}, _1{}), make_stride(_0{}, lda_s), lda_s * kb));
    LayoutSFB layout_sfb = make_layout(make_shape(make_shape(_128{}, nb), make_shape(_128{}, kb), int32_t(1)),
                                       make_stride(make_stride(_0{}, _1{}), make_stride(_0{}, nb), nb * kb));
    auto [ptr_c, stride_c, ptr_d, stride_d] = epilogue_io<Kernel, ElementD>(p);
    typename Adapter::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {m, n, k, 1},
        {static_cast<const ElementA*>(p.a), StrideA{p.lda, _1{}, int64_t(0)},
         static_cast<const ElementA*>(p.b), StrideB{p.ldb, _1{}, int64_t(0)},
         p.scale_a, layout_sfa, p.scale_b, layout_sfb},
        {{}, ptr_c, stride_c, ptr_d, stride_d}};
    auto bias = split_bias<ElementD>(p, kOut);
    args.epilogue.thread = tail_args<Tree, X>(p, bias.f32, {{{p.alpha}}, {}, {bias.d, ElementD(0), {}}, {}});
    args.hw_info.device_id = p.device;
    args.hw_info.sm_count = p.sm_count;
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<BlockwiseGemm, Adapter>::fns;
};

}  // namespace cutlass_gemm::sm90
