// SM90 non-persistent warp-specialized kernel with two consumer warpgroups that split the tile's N:
// a 64-row tile (swap-AB: 64 weight rows) by N columns, each warpgroup one 64 x N/2 wgmma per k-step on
// the shared A rows. CUTLASS 4.2's cooperative kernel splits M only (it static_asserts tile M >= 128) and
// its ws kernel runs one consumer warpgroup; cuBLAS runs such tiles (nvjet "coopB") for per-tensor FP8 at
// M = 128-256 (session 32, experiments/s32_cublas_kernels). CUTLASS's collectives do the work; this file
// only assigns the roles. Torch-free.
#pragma once

#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized.hpp>

#include "sm90_schedules.cuh"

namespace cutlass_gemm::kernels::sm90 {

// The TiledMma: two 64 x TN/2 wgmma atoms along N, one per consumer warpgroup, with their columns
// interleaved in groups of 8 (warpgroup w owns tile columns 16j + 8w .. 16j + 8w + 7). The
// interleave keeps each epilogue subtile (32 columns) spread over both warpgroups, as the
// epilogue's register-to-shared copy wants of a tiled MMA whose threads all take part.
template <class ElementA, class ElementB, int TM, int TN, int TK>
struct SplitNMma {
  static_assert(TM == 64 && TN % 16 == 0, "split-N tiles are 64 rows by a multiple of 16 columns");
  using Op = decltype(cute::GMMA::ss_op_selector<ElementA, ElementB, float, Shape<Int<TM>, Int<TN / 2>, Int<TK>>,
                                                  cute::GMMA::Major::K, cute::GMMA::Major::K>());
  using PermN = Layout<Shape<_8, Int<TN / 16>, _2>, Stride<_1, _16, _8>>;
  using type = decltype(make_tiled_mma(Op{}, Layout<Shape<_1, _2, _1>>{}, Tile<Underscore, PermN, Underscore>{}));
};

// CUTLASS's collective mainloop (as its builder makes it for the one-warpgroup ws schedule) with
// another TiledMma: the stages, shared-memory layouts and copies stay the builder's.
template <class Collective, class TiledMma>
struct WithTiledMma;
template <class DP, class TS, class EA, class SA, class EB, class SB, class TM_, class GA, class LA, class CA, class TA,
          class GB, class LB, class CB, class TB, class TiledMma>
struct WithTiledMma<cutlass::gemm::collective::CollectiveMma<DP, TS, EA, SA, EB, SB, TM_, GA, LA, CA, TA, GB, LB, CB, TB>,
                    TiledMma> {
  using type = cutlass::gemm::collective::CollectiveMma<DP, TS, EA, SA, EB, SB, TiledMma, GA, LA, CA, TA, GB, LB, CB, TB>;
};

// The kernel: CUTLASS's ws kernel for the arguments, grid (one CTA per tile) and shared storage, with
// its device body replaced: warpgroup 0's first warp loads (mainloop, then the epilogue's C), warpgroups
// 1 and 2 are the 256 threads of the TiledMma through the mainloop and the epilogue.
template <class Base>
struct WsCoopKernel : Base {
  using typename Base::CollectiveMainloop;
  using typename Base::CollectiveEpilogue;
  using typename Base::Params;
  using typename Base::SharedStorage;
  using typename Base::TileShape;
  using typename Base::TiledMma;
  using typename Base::ClusterShape;
  static constexpr uint32_t kMmaThreads = size(TiledMma{});
  static_assert(kMmaThreads == 2 * cutlass::NumThreadsPerWarpGroup, "two consumer warpgroups");
  static constexpr uint32_t MaxThreadsPerBlock = kMmaThreads + cutlass::NumThreadsPerWarpGroup;
  static_assert(MaxThreadsPerBlock == Base::MaxThreadsPerBlock);
  // Registers moved from the load warpgroup to the consumers (as CUTLASS's cooperative kernel does).
  static constexpr uint32_t kLoadRegisters = 40;
  static constexpr uint32_t kMmaRegisters = 232;

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_buf);
    const int thread_idx = int(threadIdx.x);
    const int warp_group = thread_idx / cutlass::NumThreadsPerWarpGroup;
    const bool is_consumer = warp_group > 0;
    const bool is_load_warp = cutlass::canonical_warp_idx_sync() == 0;  // warp 0 of warpgroup 0
    const int lane_idx = cutlass::canonical_lane_idx();
    const int mma_thread_idx = thread_idx - cutlass::NumThreadsPerWarpGroup;  // 0..255 in the consumers
    const uint32_t block_rank_in_cluster = cute::block_rank_in_cluster();

    if (is_load_warp && cute::elect_one_sync()) {
      CollectiveMainloop::prefetch_tma_descriptors(params.mainloop);
      CollectiveEpilogue::prefetch_tma_descriptors(params.epilogue);
    }

    using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
    typename MainloopPipeline::Params ml_params;
    if (is_load_warp) ml_params.role = MainloopPipeline::ThreadCategory::Producer;
    if (is_consumer) ml_params.role = MainloopPipeline::ThreadCategory::Consumer;
    ml_params.is_leader = thread_idx % cutlass::NumThreadsPerWarpGroup == 0;
    ml_params.num_consumers = kMmaThreads;
    ml_params.transaction_bytes = params.mainloop.tma_transaction_bytes;
    MainloopPipeline mainloop_pipeline(smem.pipelines.mainloop, ml_params, ClusterShape{});

    using EpiLoadPipeline = typename CollectiveEpilogue::LoadPipeline;
    typename EpiLoadPipeline::Params el_params;
    if (is_load_warp) el_params.role = EpiLoadPipeline::ThreadCategory::Producer;
    if (is_consumer) el_params.role = EpiLoadPipeline::ThreadCategory::Consumer;
    el_params.dst_blockid = block_rank_in_cluster;
    el_params.producer_arv_count = cutlass::NumThreadsPerWarp;
    el_params.consumer_arv_count = kMmaThreads;
    if constexpr (CollectiveEpilogue::RequiresTransactionBytes)
      el_params.transaction_bytes = params.epilogue.tma_transaction_bytes;
    EpiLoadPipeline epi_load_pipeline(smem.pipelines.epi_load, el_params);

    using EpiStorePipeline = typename CollectiveEpilogue::StorePipeline;
    typename EpiStorePipeline::Params es_params;
    es_params.always_wait = true;
    EpiStorePipeline epi_store_pipeline(es_params);

    // Barrier inits visible to every CTA of the cluster before any arrive.
    if constexpr (size(ClusterShape{}) > 1) {
      cute::cluster_arrive_relaxed();
    } else {
      __syncthreads();
    }

    auto problem_shape_MNKL = append<4>(params.problem_shape, Int<1>{});
    auto blk_shape = TileShape{};
    TiledMma tiled_mma;
    CollectiveMainloop collective_mainloop;
    CollectiveEpilogue collective_epilogue(params.epilogue, smem.tensors.epilogue);
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
    Tensor gA_mkl = get<0>(load_inputs);
    Tensor gB_nkl = get<1>(load_inputs);
    // One CTA per tile, the grid laid out as CUTLASS's ws kernel lays it out (Base::get_grid_shape).
    auto blk_coord = make_coord(idx2crd(int(blockIdx.x), shape<2>(gA_mkl)), idx2crd(int(blockIdx.y), shape<2>(gB_nkl)),
                                _, idx2crd(int(blockIdx.z), shape<4>(gB_nkl)));
    auto k_tile_iter = cute::make_coord_iterator(shape<3>(gA_mkl));
    const int k_tile_count = size<3>(gA_mkl);

    if constexpr (size(ClusterShape{}) > 1) cute::cluster_wait();

    if (!is_consumer) {
      cutlass::arch::warpgroup_reg_dealloc<kLoadRegisters>();
      if (!is_load_warp) return;
      auto ml_state = cutlass::make_producer_start_state<MainloopPipeline>();
      auto el_state = cutlass::make_producer_start_state<EpiLoadPipeline>();
      cutlass::arch::wait_on_dependent_grids();  // the previous grid's writes are visible from here on
      collective_mainloop.load(params.mainloop, mainloop_pipeline, ml_state, load_inputs, blk_coord, k_tile_iter,
                               k_tile_count, lane_idx, block_rank_in_cluster, smem.tensors.mainloop);
      ml_state.advance(k_tile_count);
      collective_mainloop.load_tail(mainloop_pipeline, ml_state);  // consumers done with every stage
      if (collective_epilogue.is_producer_load_needed()) {
        __syncwarp();
        el_state = collective_epilogue.load(epi_load_pipeline, el_state, problem_shape_MNKL, blk_shape, blk_coord,
                                            tiled_mma, lane_idx, smem.tensors.epilogue);
        collective_epilogue.load_tail(epi_load_pipeline, el_state);
      }
    } else {
      cutlass::arch::warpgroup_reg_alloc<kMmaRegisters>();
      typename CollectiveMainloop::PipelineState ml_state;
      typename CollectiveEpilogue::LoadPipelineState el_state;
      auto es_state = cutlass::make_producer_start_state<EpiStorePipeline>();
      Tensor accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      collective_mainloop.mma(mainloop_pipeline, ml_state, accumulators, k_tile_count, mma_thread_idx,
                              smem.tensors.mainloop, params.mainloop);
      collective_mainloop.mma_tail(mainloop_pipeline, ml_state, k_tile_count);
      cutlass::arch::launch_dependent_grids();  // only an early-launch hint: dependents still wait for this grid
      auto [el_next, es_next] =
          collective_epilogue.store(epi_load_pipeline, el_state, epi_store_pipeline, es_state, problem_shape_MNKL,
                                    blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx, smem.tensors.epilogue);
      collective_epilogue.store_tail(epi_load_pipeline, el_next, epi_store_pipeline, es_next);
    }
#endif
  }
};

// The schedule: sm90::Ws's mainloop schedule (the builder's stages, one tile per CTA) with the split-N TiledMma
// and WsCoopKernel. The epilogue is built for 256 threads (the cooperative epilogue schedule): 64 x 32 subtiles,
// 8 accumulators per thread each, which are 8 consecutive values of each thread's 64 x TN/2 fragment.
template <bool Fast = false>
struct WsCoop : Ws<Fast> {
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  template <class Built, class ElementA, class ElementB, int TM, int TN, int TK>
  using MainloopFrom = typename WithTiledMma<Built, typename SplitNMma<ElementA, ElementB, TM, TN, TK>::type>::type;
  template <class Built>
  using KernelFrom = WsCoopKernel<Built>;
};

}  // namespace cutlass_gemm::kernels::sm90
