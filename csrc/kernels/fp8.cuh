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

// CUTLASS's promoted FP8 mainloop with the promotions taken off the tensor pipe's critical path.
// CUTLASS sums a promotion interval's MMAs into one FP32 partial, then waits for every MMA in flight
// (wgmma.wait_group 0) and adds the partial to the accumulator while the tensor pipe idles (ncu,
// session 18: 71% busy against cuBLAS's 85% on the same tile). Here each k-tile (128 K) is its own
// promotion group, in two partials that alternate: k-tile u + 1 is issued into one partial, then k-tile
// u's (the other) is waited for (wait_group 1) and added while u + 1's MMAs run. ptxas keeps wgmma
// asynchronous only if no accumulator is read while a wgmma group issued across a loop back-edge is in
// flight (else it serializes every wgmma: C7514), so the loop runs kUnroll k-tiles in straight-line code
// and drains (wait_group 0) once at its end: one tensor-pipe bubble per kUnroll k-tiles, with no FP32
// adds in it. Promotion every 128 K is cuBLAS's interval (CUTLASS_GEMM_FP8_PROMOTION_INTERVAL is
// CUTLASS's mainloop's knob; these kernels promote at least that often). Costs a third accumulator-
// sized fragment of registers (128x128 coop: 3 x 64 per thread).
template <class Base, int kUnroll = 4>
struct OverlappedPromotionMma : Base {
  static_assert(kUnroll >= 2 && kUnroll % 2 == 0, "the partials alternate: an even number of k-tiles per loop trip");
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum, int k_tile_count,
                          int thread_idx, TensorStorage& shared_tensors, Params const&) {
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

    Tensor part0 = make_fragment_like(accum);  // the partials of even and odd k-tiles of a loop trip
    Tensor part1 = make_fragment_like(accum);
    clear(accum);
    clear(part1);  // "the previous trip's last partial" before the first trip
    PipelineState smem_pipe_release = smem_pipe_read;

    auto issue = [&](auto& part) {  // the next k-tile's MMAs into `part`, starting it afresh
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int stage = smem_pipe_read.index();
      warpgroup_fence_operand(part);
      warpgroup_arrive();
      tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < kBlocks; ++kb) {
        cute::gemm(tiled_mma, tCrA(_, _, kb, stage), tCrB(_, _, kb, stage), part);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      ++smem_pipe_read;
    };
    auto promote = [&](auto& part) {
      warpgroup_fence_operand(part);
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < size(accum); ++j) accum(j) += part(j);
      warpgroup_fence_operand(accum);
    };
    auto release = [&] {  // the k-tile before the newest is done: its stage goes back to the producer
      pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
    };

    int t = 0;  // k-tiles issued
    for (; t + kUnroll <= k_tile_count; t += kUnroll) {  // nothing in flight at the top
      issue(part0);
      promote(part1);  // the previous trip's last k-tile, finished by its drain
      if (t > 0) release();
      CUTLASS_PRAGMA_UNROLL
      for (int u = 1; u < kUnroll; ++u) {
        if (u % 2) issue(part1);
        else issue(part0);
        warpgroup_wait<1>();  // k-tile u - 1 is done, u runs
        if (u % 2) promote(part0);
        else promote(part1);
        release();
      }
      warpgroup_wait<0>();
    }
    promote(part1);  // the last trip's last k-tile (zeros if there was no trip)
    for (; t < k_tile_count; ++t) {  // fewer than kUnroll k-tiles left: one at a time, drained
      issue(part0);
      if (t > 0) release();
      warpgroup_wait<0>();
      promote(part0);
    }
  }
};

// Orient: Normal, or SwapAB (CUTLASS computes D^T = B A^T; the tile's first extent runs over N).
// kAct = false: no activation node in the epilogue (common.cuh EpilogueTail).
// kOverlap: the promoted mainloop with overlapped promotion (OverlappedPromotionMma).
template <DType kA, DType kB, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule,
          class TileScheduler = cutlass::gemm::PersistentScheduler, class Orient = Normal, bool kAct_ = true,
          bool kOverlap = false>
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
                            typename Schedule::Mainloop>;
  static_assert(!kOverlap || IsPromotedFp8<typename BuilderMainloop::DispatchPolicy>::value,
                "overlapped promotion is a variant of the promoted SM90 FP8 mainloop");
  using CollectiveMainloop =
      cute::conditional_t<kOverlap, OverlappedPromotionMma<BuilderMainloop>, BuilderMainloop>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileScheduler>;
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
      if (p.fp8_promotion_interval > 0) args.mainloop.mma_promotion_interval = uint32_t(p.fp8_promotion_interval);
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
