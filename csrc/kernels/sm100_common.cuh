// Shared pieces of the SM100 (Blackwell, sm_100a) kernels: the 1-SM / 2-SM UMMA schedules and the
// epilogue collective. Torch-free. The epilogue trees, bias split, argument tree and adapter calls
// are the SM90 ones (CUTLASS runs the SM90 EVT nodes inside the SM100 TMA epilogue), so this
// header only adds what differs on Blackwell.
//
// Tiles: the tile a kernel is named by (and instantiated with) is the UMMA tile. A 1-SM kernel's
// CTA computes all of it; a 2-SM kernel's tile is shared by the CTA pair of a 2x1 cluster, each
// CTA computing (and storing) M/2 rows. The EVT broadcast nodes work per CTA, so they get the CTA
// tile (`CtaTile`), while the builders get the UMMA tile.
#pragma once

#include <cutlass/epilogue/fusion/sm100_callbacks_tma_warpspecialized.hpp>

#include "sm90_common.cuh"

namespace cutlass_gemm::sm100 {

using namespace cute;
using sm90::AdapterFns;
using sm90::AlphaX;
using sm90::Element;
using sm90::EpilogueTail;
using sm90::ScaledX;
using sm90::epilogue_io;
using sm90::split_bias;
using sm90::tail_args;

// One UMMA per CTA: tile M is 64 or 128, any cluster.
struct OneSm {
  static constexpr int kCtasPerMma = 1;
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecialized1SmSm100;
  using Blockwise = cutlass::gemm::KernelTmaWarpSpecializedBlockwise1SmSm100;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized1Sm;
};
// One UMMA across the two CTAs of a cluster pair (tile M 128 or 256; cluster M even): each CTA
// loads half of A and of B, halving the shared-memory traffic per output element.
struct TwoSm {
  static constexpr int kCtasPerMma = 2;
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecialized2SmSm100;
  using Blockwise = cutlass::gemm::KernelTmaWarpSpecializedBlockwise2SmSm100;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized2Sm;
};

template <int TM, int TN, int TK, class Schedule>
struct Tiles {
  static_assert(TM % Schedule::kCtasPerMma == 0);
  using Mma = Shape<Int<TM>, Int<TN>, Int<TK>>;                             // UMMA tile (builders)
  using Cta = Shape<Int<TM / Schedule::kCtasPerMma>, Int<TN>, Int<TK>>;     // per-CTA tile (EVT nodes)
};

// The epilogue collective for a tree (C and D row-major in the output dtype).
template <class MmaTile, class ClusterShape, class ElementD, class Schedule, class Tree>
using CollectiveEpilogueFor = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp,
    MmaTile, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
    float, float,                                                          // accumulator, compute
    ElementD, cutlass::layout::RowMajor, 16 / sizeof(ElementD),            // C = residual
    ElementD, cutlass::layout::RowMajor, 16 / sizeof(ElementD),            // D
    typename Schedule::Epilogue, Tree>::CollectiveOp;

}  // namespace cutlass_gemm::sm100
