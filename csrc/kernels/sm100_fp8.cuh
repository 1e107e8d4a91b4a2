// SM100 (Blackwell) FP8 GEMMs with dequant scaling fused: tcgen05 UMMA (kind::f8f6f4) into
// tensor memory, TMA warp-specialized persistent kernels.
//   D = act((A @ B^T) * scale_a * scale_b + bias) + beta * residual
// ScaledGemm: per-tensor / per-row (a) / per-column (b) scales in the epilogue, one kernel for
//   every mix (the SM90 dynamic-broadcast nodes). CUTLASS 4.2 has a single FP8 mainloop on SM100:
//   the UMMA accumulates into FP32 tensor memory, with no fast-accumulation variant and no
//   periodic promotion to choose, so one kernel serves both of the op's accumulation modes
//   (kernel_table.py: accum "f32"). Unverified on SM100 hardware here.
// BlockwiseGemm: DeepSeek 1x128 (a) x 128x128 (b) scales applied per 128-wide K block by
//   CUTLASS's SM100 blockwise mainloop (example 81): each K block's UMMA result is read from
//   tensor memory, scaled and added into FP32 registers. Scales are read MN-major, the same
//   layouts the SM90 kernel reads (a: [ceil(K/128), ld >= M, ld % 4 == 0]; b: [ceil(K/128),
//   ceil(N/128)]), so the glue prepares them identically for both archs.
#pragma once

#include <cutlass/detail/blockwise_scale_layout.hpp>

#include "sm100_common.cuh"

namespace cutlass_gemm::sm100 {

template <class ElementA, class LayoutA, class ElementB, class LayoutB, class MmaTile, class ClusterShape,
          class CollectiveEpilogue, class Schedule>
using Fp8Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, 16,                                           // A [M,K] (FP8: 16 elements = 16 bytes)
    ElementB, LayoutB, 16,                                           // B [N,K]
    float,                                                           // FP32 accumulation (tensor memory)
    MmaTile, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    Schedule>::CollectiveOp;

template <DType kA, DType kB, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule>
struct ScaledGemm {
  using ElementA = typename Element<kA>::type;                       // A element (e4m3 / e5m2)
  using ElementB = typename Element<kB>::type;                       // B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;         // UMMA tile
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;         // one CTA's share
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using X = ScaledX<CtaTile, ElementD>;                              // scale_a * acc * scale_b + bias_d
  using Tree = EpilogueTail<CtaTile, ElementD, X>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop = Fp8Mainloop<ElementA, cutlass::layout::RowMajor, ElementB, cutlass::layout::ColumnMajor,
                                         MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Mainloop>;
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
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<ScaledGemm, Adapter>::fns;
};

template <DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule>
struct BlockwiseGemm {
  using ElementA = cutlass::float_e4m3_t;                            // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 4;  // scale_a is M-contiguous with ld % 4 == 0 (vectorized loads)
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;         // UMMA tile
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;         // one CTA's share
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using ScaleConfig = cutlass::detail::Sm100BlockwiseScaleConfig<1, 128, 128>;  // 1x128 (a), 128x128 (b), MN-major
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  using X = AlphaX<CtaTile, ElementD>;                               // acc + bias_d (alpha = 1)
  using Tree = EpilogueTail<CtaTile, ElementD, X>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop =
      Fp8Mainloop<ElementA, cute::tuple<cutlass::layout::RowMajor, LayoutSFA>, ElementA,
                  cute::tuple<cutlass::layout::ColumnMajor, LayoutSFB>, MmaTile, ClusterShape, CollectiveEpilogue,
                  typename Schedule::Blockwise>;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  // p.scale_a: [kb, lda_s] M-major with lda_s = p.scale_a_numel / kb (a multiple of 4);
  // p.scale_b: [kb, nb] N-major. The same layout objects as the SM90 kernel's.
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

}  // namespace cutlass_gemm::sm100
