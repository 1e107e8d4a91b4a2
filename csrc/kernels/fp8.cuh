// FP8 GEMMs with dequant scaling fused, one template each for SM90 and SM100 (the schedule picks
// the arch; sm100_schedules.cuh says what differs there).
//   D = act((A @ B^T) * scale_a * scale_b + bias) + beta * residual
// ScaledGemm: per-tensor / per-row (a) / per-column (b) scales applied in the epilogue, one
//   kernel for every mix (dynamic-broadcast nodes). On SM90, fast accumulation or CUTLASS's
//   promoted mainloop (FP32 promotion every 4 k-blocks, or the interval the caller sets).
// BlockwiseGemm: DeepSeek 1x128 (a) x 128x128 (b) scales applied per 128-wide K block in the
//   mainloop (CUTLASS's blockwise-scaled mainloops, examples 67 and 81), FP32 accumulation across
//   blocks. Scales are read M-major (a: [ceil(K/128), ld >= M, ld % 4 == 0]) and N-major
//   (b: [ceil(K/128), ceil(N/128)]): the layouts CUTLASS's mainloops support on both archs.
//   SM90 swap-AB (D^T = B A^T) for small M: the same scale memory, with the scale blocks' roles swapped.
#pragma once

#include "common.cuh"

namespace cutlass_gemm::kernels {

// CUTLASS's promoted (accurate) SM90 FP8 mainloop, as opposed to fast accumulation. Two rewrites of its loop
// were measured and dropped: promotion overlapped under the next k-tile's MMAs (session 19, no gain) and the two
// coop warpgroups promoting out of phase (session 32, 1.05x slower on 128x128 tiles: experiments/s32_stagger).
template <class DispatchPolicy>
struct IsPromotedFp8 : std::false_type {};
template <int Stages, class ClusterShape, class KernelSchedule>
struct IsPromotedFp8<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, ClusterShape, KernelSchedule>>
    : std::true_type {};

// Orient: Normal, or SwapAB (CUTLASS computes D^T = B A^T; the tile's first extent runs over N).
// kAct = false: no activation node in the epilogue; kRes = false as well: no residual either (common.cuh
// EpilogueTail).
template <DType kA, DType kB, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal, bool kAct_ = true,
          int kStoresD = 0, bool kRes_ = true>
struct ScaledGemm {
  using ElementA = typename Element<kA>::type;                       // A element (e4m3 / e5m2)
  using ElementB = typename Element<kB>::type;                       // B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  static constexpr bool kAct = kAct_, kRes = kRes_;
  static constexpr bool kOneBias = kOneBiasFor<Schedule, Orient, kRes>;  // one bias node (RowBiasEither)
  static constexpr bool kXRoot = kOneBias && !kRes;                     // `_plain`: X is the tree
  using X = ScaledX<CtaTile, ElementD, Orient, kOneBias, kXRoot>;    // scale_a * acc * scale_b + bias
  using XB = XBias<CtaTile, ElementD, Orient, kOneBias>;             // X's bias node
  using Tree = cute::conditional_t<kXRoot, X, EpilogueTail<CtaTile, ElementD, X, Orient, kAct, kRes, kOneBias>>;
  using CollectiveEpilogue =
      CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient, kStoresD, kRes>;
  using MmaA = cute::conditional_t<Orient::kSwap, ElementB, ElementA>;  // the mainloop's A: b if swapped
  using MmaB = cute::conditional_t<Orient::kSwap, ElementA, ElementB>;
  using CollectiveMainloop =
      CollectiveMainloopFor<MmaA, cutlass::layout::RowMajor, 16,     // A [M,K] (FP8: 16 elements = 16 bytes)
                            MmaB, cutlass::layout::ColumnMajor, 16,  // B [N,K]
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Mainloop, CtasPerSm<Schedule>::value,
                            StagesOf<Schedule>::value>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileScheduler, CtasPerSm<Schedule>::value>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static_assert(kFixedStagesFit<Schedule, Kernel>, "Kernel.stages (the _stN suffix): the fixed mainloop stages and the epilogue "
                "need more shared memory than an SM90 SM has (227 KB); use fewer stages");

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto args = gemm_args<Kernel, ElementA, ElementB, ElementD, Orient>(p);
    auto bias = split_bias<ElementD>(p, kOut);
    const bool row_a = p.scale_a_numel > 1, col_b = p.scale_b_numel > 1;  // else per-tensor
    typename X::Arguments x{
        {{p.scale_a, 0.0f, Orient::per_m(row_a)}, {}, {}},           // scale_a * acc
        {p.scale_b, 0.0f, Orient::per_n(col_b)},                     // scale_b
        x_bias_args<XB>(bias),                                       // bias_d (or either dtype)
        {}};
    args.epilogue.thread = tail_args<Tree, X, kAct, kRes, kOneBias>(p, bias.f32, x);
    if constexpr (IsPromotedFp8<typename CollectiveMainloop::DispatchPolicy>::value) {
      // CUTLASS promotes on k-tile boundaries only: the interval (the caller's, else CUTLASS's 4) rounds
      // up to whole k-tiles of TK / 32 MMAs (a 256-deep tile promotes every 8 MMAs when asked for 4).
      constexpr int kMmasPerKTile = TK / 32;
      const int asked = p.fp8_promotion_interval > 0 ? p.fp8_promotion_interval : int(args.mainloop.mma_promotion_interval);
      args.mainloop.mma_promotion_interval = uint32_t((asked + kMmasPerKTile - 1) / kMmasPerKTile * kMmasPerKTile);
    }
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<ScaledGemm, Adapter>::fns;
};

// Blockwise scale configuration. Swapped (D^T = B A^T, SM90 only): b's 128x128 blocks run along the
// tile's M and a's 1x128 rows along its N, so the tile's N may be narrower than 128 (CUTLASS asks for
// tile extents that are multiples of the scale blocks).
template <class Schedule, class Orient>
struct BlockScalesFor {
  using type = typename Schedule::BlockScales;
};
template <class Schedule>
struct BlockScalesFor<Schedule, SwapAB> {
  static_assert(std::is_same_v<typename Schedule::Arch, cutlass::arch::Sm90>, "swap-AB blockwise: SM90 only");
  using type = cutlass::detail::Sm90BlockwiseScaleConfig<128, 1, 128>;
};


// Swapped with a 64-row tile, b's 128-row blocks reach the mainloop at a 64-row granularity (CUTLASS's must divide
// the tile), both halves of a block reading its one scale (stride 0 across the pair): scale_b is read in place, not
// copied. CUTLASS's builder takes only depth-2 scale layouts, so it builds the mainloop at granularity 64 and
// WithLayoutSFA swaps in this layout; the mainloop itself indexes any CuTe layout.
using HalfBlocksLayoutSFA = Layout<Shape<Shape<_64, Shape<_2, int32_t>>, Shape<_128, int32_t>, int32_t>,
                                   Stride<Stride<_0, Stride<_0, _1>>, Stride<_0, int32_t>, int32_t>>;
template <class Mainloop, class LayoutSFA>
struct WithLayoutSFA;
template <class Policy, class Tile, class EA, class SA, class LA, class EB, class SB, class... Rest, class LayoutSFA>
struct WithLayoutSFA<cutlass::gemm::collective::CollectiveMma<Policy, Tile, EA, cute::tuple<SA, LA>, EB, SB, Rest...>,
                     LayoutSFA> {
  using type = cutlass::gemm::collective::CollectiveMma<Policy, Tile, EA, cute::tuple<SA, LayoutSFA>, EB, SB, Rest...>;
};

template <DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal, bool kAct_ = true,
          int kStoresD = 0, bool kRes_ = true>
struct BlockwiseGemm {
  using ElementA = cutlass::float_e4m3_t;                            // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 4;  // scale_a is M-contiguous (read by TMA on SM90): its ld is padded to 4
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  static constexpr bool kHalfBlocks = Orient::kSwap && TM == 64;     // b's blocks as 64-row halves
  using ScaleConfig = cute::conditional_t<kHalfBlocks, cutlass::detail::Sm90BlockwiseScaleConfig<64, 1, 128>,
                                          typename BlockScalesFor<Schedule, Orient>::type>;
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());       // the mainloop's A scales (b's if swapped)
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  static constexpr bool kAct = kAct_, kRes = kRes_;
  // Two bias nodes here: one (s40, H200) sped K = 512 up 3-8% but slowed 4096x7168x16384 1.5-3% (its mainloop
  // scheduled otherwise), a wash in time over deepseek_v3 (bench/results/experiments/s39_one_bias/results_s40).
  static constexpr bool kOneBias = false;
  using X = AlphaX<CtaTile, ElementD, Orient, kOneBias>;             // acc + bias_d (alpha = 1)
  using XB = XBias<CtaTile, ElementD, Orient, kOneBias>;             // X's bias node
  using Tree = cute::conditional_t<kOneBias, X, EpilogueTail<CtaTile, ElementD, X, Orient, kAct, kRes>>;
  using CollectiveEpilogue =
      CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient, kStoresD, kRes>;
  using BuiltMainloop =
      CollectiveMainloopFor<ElementA, cute::tuple<cutlass::layout::RowMajor, LayoutSFA>, 16,
                            ElementA, cute::tuple<cutlass::layout::ColumnMajor, LayoutSFB>, 16,
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Blockwise>;
  using CollectiveMainloop = cute::conditional_t<kHalfBlocks, typename WithLayoutSFA<BuiltMainloop, HalfBlocksLayoutSFA>::type,
                                                 BuiltMainloop>;
  static_assert(StagesOf<Schedule>::value == 0,
                "blockwise: CUTLASS 4.2's blockwise mainloop builder sizes its stages from a carveout only");
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  // p.scale_a: [kb, lda_s] M-major with lda_s = p.scale_a_numel / kb (a multiple of 4);
  // p.scale_b: [kb, nb] N-major. Swapped, the same memory serves as the mainloop's B and A scales.
  static typename Adapter::Arguments make_args(const GemmParams& p) {
    const int32_t m = int32_t(p.m), n = int32_t(p.n), k = int32_t(p.k);
    const int32_t kb = (k + 127) / 128, nb = (n + 127) / 128;
    const int32_t lda_s = kb > 0 ? int32_t(p.scale_a_numel / kb) : m;
    auto rows_a = make_layout(make_shape(make_shape(_1{}, m), make_shape(_128{}, kb), int32_t(1)),
                              make_stride(make_stride(_0{}, _1{}), make_stride(_0{}, lda_s), lda_s * kb));
    auto blocks_b = make_layout(make_shape(make_shape(_128{}, nb), make_shape(_128{}, kb), int32_t(1)),
                                make_stride(make_stride(_0{}, _1{}), make_stride(_0{}, nb), nb * kb));
    typename Adapter::Arguments args;
    if constexpr (kHalfBlocks) {
      auto halves_b = make_layout(make_shape(make_shape(_64{}, make_shape(_2{}, nb)), make_shape(_128{}, kb), int32_t(1)),
                                  make_stride(make_stride(_0{}, make_stride(_0{}, _1{})), make_stride(_0{}, nb), nb * kb));
      args = gemm_args<Kernel, ElementA, ElementA, ElementD, Orient>(p, p.scale_b, HalfBlocksLayoutSFA(halves_b),
                                                                    p.scale_a, LayoutSFB(rows_a));
    } else if constexpr (Orient::kSwap)
      args = gemm_args<Kernel, ElementA, ElementA, ElementD, Orient>(p, p.scale_b, LayoutSFA(blocks_b), p.scale_a,
                                                                    LayoutSFB(rows_a));
    else
      args = gemm_args<Kernel, ElementA, ElementA, ElementD>(p, p.scale_a, LayoutSFA(rows_a), p.scale_b,
                                                             LayoutSFB(blocks_b));
    auto bias = split_bias<ElementD>(p, kOut);
    args.epilogue.thread = tail_args<Tree, X, kAct, kRes>(p, bias.f32, alpha_x_args<X, XB>(p, bias));
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<BlockwiseGemm, Adapter>::fns;
};

}  // namespace cutlass_gemm::kernels
