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

// CUTLASS's promoted (accurate) SM90 FP8 mainloop, as opposed to fast accumulation.
template <class DispatchPolicy>
struct IsPromotedFp8 : std::false_type {};
template <int Stages, class ClusterShape, class KernelSchedule>
struct IsPromotedFp8<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, ClusterShape, KernelSchedule>>
    : std::true_type {};

// CUTLASS's promoted FP8 mainloop with the two consumer warpgroups of a cooperative tile promoting out of
// phase. CUTLASS's loop sums a promotion interval's k-tiles into an FP32 partial, then drains every MMA in
// flight (wgmma.wait_group 0) and adds the partial while that warpgroup issues nothing; both warpgroups
// consume the same smem stages, so they drain on the same k-tile and the tensor pipe idles through both
// (ncu, session 18: 71% busy against cuBLAS's 85% on the same 128x128 tile). Here warpgroup 1's first
// promotion group is half an interval short, so afterwards each warpgroup's drain and adds fall under the
// other's MMAs. Same interval, partial and registers as CUTLASS's loop; a ping-pong tile (one warpgroup per
// tile) and an interval of one k-tile run it unchanged.
template <class Base>
struct StaggeredPromotionMma : Base {
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum, int k_tile_count,
                          int thread_idx, TensorStorage& shared_tensors, Params const& params) {
    constexpr int kThreadsPerWarpGroup = cutlass::NumThreadsPerWarpGroup;
    constexpr int kWarpGroups = size(TiledMma{}) / kThreadsPerWarpGroup;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), typename Base::SmemLayoutA{});  // (M,K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), typename Base::SmemLayoutB{});  // (N,K,PIPE)
    const int warp_group = __shfl_sync(0xffffffff, thread_idx / kThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_slice(make_layout(Int<kWarpGroups>{}, Int<kThreadsPerWarpGroup>{})(warp_group));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,MMA_M,MMA_K,PIPE) descriptors
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,MMA_N,MMA_K,PIPE)
    constexpr int kBlocks = size<2>(decltype(tCrA){});                     // MMAs (k-blocks of 32) per k-tile

    // k-tiles per promotion (the interval is a whole number of k-tiles: ScaledGemm::make_args rounds it up).
    const int group = cute::max(1, int(params.mma_promotion_interval) / kBlocks);
    int count = (warp_group & 1) ? group / 2 : 0;  // k-tiles already "in" the first group: warpgroup 1 starts half-way
    Tensor part = make_fragment_like(accum);       // the current group's FP32 partial (the MMAs' accumulator)
    clear(accum);
    PipelineState smem_pipe_release = smem_pipe_read;
    bool fresh = true;  // the next k-tile's MMAs start `part` from zero
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < k_tile_count; ++t) {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int stage = smem_pipe_read.index();
      tiled_mma.accumulate_ = fresh ? GMMA::ScaleOut::Zero : GMMA::ScaleOut::One;
      warpgroup_fence_operand(part);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < kBlocks; ++kb) {
        cute::gemm(tiled_mma, tCrA(_, _, kb, stage), tCrB(_, _, kb, stage), part);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      ++smem_pipe_read;
      fresh = __shfl_sync(0xffffffff, ++count == group || t + 1 == k_tile_count, 0);
      if (fresh) {  // the group is complete: drain it and add it in
        warpgroup_wait<0>();
        warpgroup_fence_operand(part);
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < size(accum); ++j) accum(j) += part(j);
        count = 0;
      } else {
        warpgroup_wait<1>();  // the previous k-tile's MMAs are done (its stage may go back), this one's run on
      }
      warpgroup_fence_operand(part);
      if (t > 0) {  // the previous k-tile's stage; the last one is mma_tail's
        pipeline.consumer_release(smem_pipe_release);
        ++smem_pipe_release;
      }
    }
    warpgroup_fence_operand(accum);
  }
};

// Orient: Normal, or SwapAB (CUTLASS computes D^T = B A^T; the tile's first extent runs over N).
// kAct = false: no activation node in the epilogue (common.cuh EpilogueTail).
// kStagger: the promoted mainloop with the warpgroups' promotions out of phase (StaggeredPromotionMma).
template <DType kA, DType kB, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal, bool kAct_ = true,
          bool kStagger = false>
struct ScaledGemm {
  using ElementA = typename Element<kA>::type;                       // A element (e4m3 / e5m2)
  using ElementB = typename Element<kB>::type;                       // B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 1;
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using X = ScaledX<CtaTile, ElementD, Orient>;                      // scale_a * acc * scale_b + bias_d
  static constexpr bool kAct = kAct_;
  using Tree = EpilogueTail<CtaTile, ElementD, X, Orient, kAct>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient>;
  using MmaA = cute::conditional_t<Orient::kSwap, ElementB, ElementA>;  // the mainloop's A: b if swapped
  using MmaB = cute::conditional_t<Orient::kSwap, ElementA, ElementB>;
  using BuilderMainloop =
      CollectiveMainloopFor<MmaA, cutlass::layout::RowMajor, 16,     // A [M,K] (FP8: 16 elements = 16 bytes)
                            MmaB, cutlass::layout::ColumnMajor, 16,  // B [N,K]
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Mainloop, CtasPerSm<Schedule>::value>;
  static_assert(!kStagger || IsPromotedFp8<typename BuilderMainloop::DispatchPolicy>::value,
                "staggered promotion is a variant of the promoted SM90 FP8 mainloop");
  using CollectiveMainloop = cute::conditional_t<kStagger, StaggeredPromotionMma<BuilderMainloop>, BuilderMainloop>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileScheduler, CtasPerSm<Schedule>::value>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto args = gemm_args<Kernel, ElementA, ElementB, ElementD, Orient>(p);
    auto bias = split_bias<ElementD>(p, kOut);
    const bool row_a = p.scale_a_numel > 1, col_b = p.scale_b_numel > 1;  // else per-tensor
    typename X::Arguments x{
        {{p.scale_a, 0.0f, Orient::per_m(row_a)}, {}, {}},           // scale_a * acc
        {p.scale_b, 0.0f, Orient::per_n(col_b)},                     // scale_b
        {bias.d, ElementD(0), {}},                                   // bias_d
        {}};
    args.epilogue.thread = tail_args<Tree, X, kAct>(p, bias.f32, x);
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

template <DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal>
struct BlockwiseGemm {
  using ElementA = cutlass::float_e4m3_t;                            // A and B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  static constexpr int kRoundM = 4;  // scale_a is M-contiguous (read by TMA on SM90): its ld is padded to 4
  using MmaTile = typename Tiles<TM, TN, TK, Schedule>::Mma;
  using CtaTile = typename Tiles<TM, TN, TK, Schedule>::Cta;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using ScaleConfig = typename BlockScalesFor<Schedule, Orient>::type;
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());       // the mainloop's A scales (b's if swapped)
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  using X = AlphaX<CtaTile, ElementD, Orient>;                       // acc + bias_d (alpha = 1)
  static constexpr bool kAct = true;
  using Tree = EpilogueTail<CtaTile, ElementD, X, Orient>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient>;
  using CollectiveMainloop =
      CollectiveMainloopFor<ElementA, cute::tuple<cutlass::layout::RowMajor, LayoutSFA>, 16,
                            ElementA, cute::tuple<cutlass::layout::ColumnMajor, LayoutSFB>, 16,
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Blockwise>;
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
    if constexpr (Orient::kSwap)
      args = gemm_args<Kernel, ElementA, ElementA, ElementD, Orient>(p, p.scale_b, LayoutSFA(blocks_b), p.scale_a,
                                                                    LayoutSFB(rows_a));
    else
      args = gemm_args<Kernel, ElementA, ElementA, ElementD>(p, p.scale_a, LayoutSFA(rows_a), p.scale_b,
                                                             LayoutSFB(blocks_b));
    auto bias = split_bias<ElementD>(p, kOut);
    args.epilogue.thread = tail_args<Tree, X>(p, bias.f32, alpha_x_args<X>(p, bias));
    return args;
  }

  static constexpr KernelFns fns = AdapterFns<BlockwiseGemm, Adapter>::fns;
};

}  // namespace cutlass_gemm::kernels
