// SM100 (Blackwell, sm_100a) schedules for the kernel templates: tcgen05 UMMA into tensor
// memory, TMA warp-specialized persistent kernels (CLC tile scheduler). Torch-free.
// FP8: CUTLASS 4.2 has a single FP8 mainloop on SM100: the UMMA accumulates into FP32 tensor
// memory, with no fast-accumulation variant and no periodic promotion to choose, so one kernel
// serves both of the op's accumulation modes (kernel_table.py: accum "f32"). Blockwise scales are
// applied per 128-wide K block by CUTLASS's SM100 blockwise mainloop (example 81): each K block's
// UMMA result is read from tensor memory, scaled and added into FP32 registers; the scales are
// read MN-major, the layouts the SM90 kernel reads, so the glue prepares them identically.
// Unverified on SM100 hardware here.
#pragma once

#include "tma_l2_promotion.cuh"  // before any CUTLASS header

#include <cutlass/detail/blockwise_scale_layout.hpp>
#include <cutlass/epilogue/fusion/sm100_callbacks_tma_warpspecialized.hpp>

#include "common.cuh"

namespace cutlass_gemm::kernels::sm100 {

// One UMMA per CTA: tile M is 64 or 128, any cluster.
struct OneSm {
  using Arch = cutlass::arch::Sm100;
  static constexpr int kCtasPerMma = 1;
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecialized1SmSm100;
  using Blockwise = cutlass::gemm::KernelTmaWarpSpecializedBlockwise1SmSm100;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized1Sm;
  using BlockScales = cutlass::detail::Sm100BlockwiseScaleConfig<1, 128, 128>;  // 1x128 (a), 128x128 (b), MN-major
};
// One UMMA across the two CTAs of a cluster pair (tile M 128 or 256; cluster M even): each CTA
// loads half of A and of B, halving the shared-memory traffic per output element.
struct TwoSm {
  using Arch = cutlass::arch::Sm100;
  static constexpr int kCtasPerMma = 2;
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecialized2SmSm100;
  using Blockwise = cutlass::gemm::KernelTmaWarpSpecializedBlockwise2SmSm100;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized2Sm;
  using BlockScales = cutlass::detail::Sm100BlockwiseScaleConfig<1, 128, 128>;
};

}  // namespace cutlass_gemm::kernels::sm100
