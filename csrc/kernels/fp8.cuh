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

// CUTLASS's promoted FP8 mainloop with the promotion taken off the tensor pipe's critical path.
// CUTLASS sums a promotion interval's MMAs into one FP32 partial, then waits for every MMA in flight
// (wgmma.wait_group 0) before adding it to the accumulator: each promotion leaves the tensor pipe idle
// until the next k-tile issues (ncu, session 18: tensor pipe 71% against cuBLAS's 85% on the same tile).
// Here two partials alternate per promotion group: a group's first k-tile is issued into one partial
// while the other partial's last MMAs finish (wait_group 1), and only then is that partial added. One
// batch of MMAs is always in flight, as in the non-promoted mainloop. Costs one more accumulator-sized
// fragment of registers (128x128 coop: 3 x 64 per thread). The shared-memory stage of k-tile t - 1 is
// released after k-tile t issues, as in CUTLASS (its mma_tail releases the last one).
// ptxas keeps wgmma asynchronous only where it can prove which partial is in flight at every read: each
// loop below is entered and left with exactly one known partial in flight (a loop whose head merges
// "part0 in flight" with "part1 in flight" made it serialize every wgmma: C7514).
template <class Base>
struct OverlappedPromotionMma : Base {
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
    // k-tiles per promotion group: the interval (MMAs) in k-tiles, at least one.
    const int group_tiles = cute::max(1, int(params.mma_promotion_interval) / kBlocks);

    Tensor part0 = make_fragment_like(accum);  // partial sums of the even promotion groups
    Tensor part1 = make_fragment_like(accum);  // and of the odd ones
    clear(accum);
    warpgroup_fence_operand(accum);
    PipelineState smem_pipe_release = smem_pipe_read;

    // Issues the next k-tile's MMAs into `part` (`fresh`: they start its partial) and waits until only
    // they are in flight.
    auto issue = [&](auto& part, bool fresh) {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int stage = smem_pipe_read.index();
      warpgroup_fence_operand(part);
      warpgroup_arrive();
      tiled_mma.accumulate_ = fresh ? GMMA::ScaleOut::Zero : GMMA::ScaleOut::One;
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < kBlocks; ++kb) {
        cute::gemm(tiled_mma, tCrA(_, _, kb, stage), tCrB(_, _, kb, stage), part);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      warpgroup_wait<1>();
      warpgroup_fence_operand(part);
      ++smem_pipe_read;
    };
    auto release = [&] {  // the k-tile before the one in flight is done: its stage goes back to the producer
      pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
    };
    auto promote = [&](auto& part) {
      warpgroup_fence_operand(part);
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < size(accum); ++j) accum(j) += part(j);
      warpgroup_fence_operand(accum);
    };
    // The rest of a group after its first k-tile: in flight, entering and leaving, this partial only.
    int t = 0;  // k-tiles issued
    auto finish_group = [&](auto& part) {
      for (int i = 1; i < group_tiles && t < k_tile_count; ++i, ++t) {
        issue(part, false);
        release();
      }
    };

    issue(part0, true);  // group 0: nothing before it to promote
    ++t;
    finish_group(part0);
    bool last_in_part0 = true;
    while (t < k_tile_count) {  // in flight here: part0's last k-tile
      issue(part1, true);       // a group of part1; part0's group is done
      ++t;
      promote(part0);
      release();
      finish_group(part1);
      last_in_part0 = false;
      if (t >= k_tile_count) break;
      issue(part0, true);
      ++t;
      promote(part1);
      release();
      finish_group(part0);
      last_in_part0 = true;
    }
    warpgroup_wait<0>();  // leaving: either partial may be in flight
    if (last_in_part0) promote(part0);
    else promote(part1);
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
