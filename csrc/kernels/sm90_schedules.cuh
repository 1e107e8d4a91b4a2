// SM90 (Hopper, sm_90a) schedules for the kernel templates: TMA warp-specialized persistent
// kernels with warpgroup MMA (one CTA per MMA tile). Torch-free.
#pragma once

#include "tma_l2_promotion.cuh"  // before any CUTLASS header

#include <cutlass/detail/blockwise_scale_layout.hpp>

#include "common.cuh"

namespace cutlass_gemm::kernels::sm90 {

// Mainloop x epilogue schedules. `Fast` selects FP8 fast accumulation; without it FP8 inputs
// get CUTLASS's promoted mainloop (partial sums moved into FP32 registers every 4 k-blocks).
// Stages = 0: the mainloop gets the stages that fit beside the epilogue's shared memory (CUTLASS's carveout); N > 0:
// exactly N, so a `_plain` epilogue's freed shared memory need not change the mainloop (kernel_table.Kernel.stages;
// not the blockwise mainloop, whose CUTLASS 4.2 builder takes a carveout only).
template <bool Fast = false, int Stages = 0>
struct Coop {  // two consumer warpgroups share one tile: large tiles, best on big M x N
  using Arch = cutlass::arch::Sm90;
  static constexpr int kCtasPerMma = 1;
  static constexpr int kStages = Stages;
  using Mainloop = cute::conditional_t<Fast, cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                                       cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
  using Blockwise = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8Blockwise;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  using BlockScales = cutlass::detail::Sm90BlockwiseScaleConfig<1, 128, 128>;  // 1x128 (a), 128x128 (b)
};
template <bool Fast = false, int Stages = 0>
struct Pingpong {  // consumer warpgroups alternate tiles: one's epilogue hides under the other's MMA
  using Arch = cutlass::arch::Sm90;
  static constexpr int kCtasPerMma = 1;
  static constexpr int kStages = Stages;
  using Mainloop = cute::conditional_t<Fast, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                                       cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
  using Blockwise = cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8Blockwise;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  using BlockScales = cutlass::detail::Sm90BlockwiseScaleConfig<1, 128, 128>;
};

template <bool Fast = false, int CtasPerSm = 1>
struct Ws {  // non-persistent: one producer and one consumer warpgroup, one tile per CTA (grid = tiles):
             // less fixed cost per call than the persistent kernels, for decode tiles. CtasPerSm = 2: the stages
             // fit half an SM's shared memory, so a grid of up to 2 x 132 tiles is resident at once
  using Arch = cutlass::arch::Sm90;
  static constexpr int kCtasPerMma = 1;
  static constexpr int kCtasPerSm = CtasPerSm;
  using Mainloop = cute::conditional_t<Fast, cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum,
                                       cutlass::gemm::KernelTmaWarpSpecialized>;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
};

}  // namespace cutlass_gemm::kernels::sm90
