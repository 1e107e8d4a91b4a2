// SM90 (Hopper) 16-bit GEMM with the fused epilogue, TMA warp-specialized persistent kernels.
//   D = act(alpha * (A @ B^T) + bias) + beta * residual
// A [M,K] row-major, B [N,K] row-major (= K x N column-major, nn.Linear's weight), D [M,N].
// Torch-free: sees only gemm_api.h.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "../gemm_api.h"
#include "activation.cuh"

namespace cutlass_gemm::sm90 {

using namespace cute;
namespace fusion = cutlass::epilogue::fusion;

struct Coop {  // two consumer warpgroups share one tile: large tiles, best on big M x N
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
};
struct Pingpong {  // consumer warpgroups alternate tiles: one's epilogue hides under the other's MMA
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
};

template <DType> struct Element;
template <> struct Element<DType::kBf16> { using type = cutlass::bfloat16_t; };
template <> struct Element<DType::kF16> { using type = cutlass::half_t; };
template <> struct Element<DType::kF32> { using type = float; };

constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;

// The epilogue tree. Bias is two row-broadcast nodes with a null default (one in the output
// dtype, one in fp32) so one kernel serves no bias / bias in either dtype; a null node costs
// no load. The residual is CUTLASS's source C: beta == 0 (set when there is no residual)
// skips its TMA load at run time.
template <class TileShape, class ElementD>
using FusedEpilogue =
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementD, float, kRound>,  // D = beta * C + Z
        fusion::Sm90ScalarBroadcast<float>,                                                           //   beta
        fusion::Sm90SrcFetch<ElementD>,                                                               //   C = residual
        fusion::Sm90EVT<fusion::Sm90Compute<epilogue::RuntimeActivation, float, float, kRound>,        //   Z = act(Y)
            fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, float, float, kRound>,                  //   Y = X + bias_f32
                fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, float, float, kRound>,  // X = alpha * acc + bias_d
                    fusion::Sm90ScalarBroadcast<float>,                                                //     alpha
                    fusion::Sm90AccFetch,                                                              //     acc
                    fusion::Sm90RowBroadcast<0, TileShape, ElementD, float>>,                          //     bias_d [N]
                fusion::Sm90RowBroadcast<0, TileShape, float, float>>>>;                               //   bias_f32 [N]

template <DType kIn, DType kOut, int TM, int TN, int TK, int CM, int CN, class Schedule>
struct Gemm16 {
  using ElementA = typename Element<kIn>::type;                      // A element
  using ElementB = typename Element<kIn>::type;                      // B element
  using ElementD = typename Element<kOut>::type;                     // D (and residual) element
  using LayoutA = cutlass::layout::RowMajor;                         // A [M,K], K contiguous
  using LayoutB = cutlass::layout::ColumnMajor;                      // B^T [K,N] col-major = B [N,K] row-major
  using LayoutD = cutlass::layout::RowMajor;                         // D [M,N], N contiguous
  static constexpr int kAlignAB = 16 / sizeof(ElementA);             // TMA: 16-byte rows
  static constexpr int kAlignD = 16 / sizeof(ElementD);
  using TileShape = Shape<Int<TM>, Int<TN>, Int<TK>>;                // CTA tile
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;                  // thread block cluster
  using Epilogue = FusedEpilogue<TileShape, ElementD>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float,                                                  // accumulator, compute
      ElementD, LayoutD, kAlignD,                                    // C = residual
      ElementD, LayoutD, kAlignD,                                    // D
      typename Schedule::Epilogue, Epilogue>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      ElementA, LayoutA, kAlignAB,
      ElementB, LayoutB, kAlignAB,
      float,                                                         // FP32 accumulation
      TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Schedule::Mainloop>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    using StrideC = typename Kernel::StrideC;
    using StrideD = typename Kernel::StrideD;
    const bool has_residual = p.residual != nullptr;
    typename Adapter::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {int(p.m), int(p.n), int(p.k), 1},
        {static_cast<const ElementA*>(p.a), StrideA{p.lda, _1{}, int64_t(0)},
         static_cast<const ElementB*>(p.b), StrideB{p.ldb, _1{}, int64_t(0)}},
        {{},
         // Without a residual, C aliases D and beta is 0: the load is skipped, never read.
         static_cast<const ElementD*>(has_residual ? p.residual : p.d),
         StrideC{has_residual ? p.ldr : p.ldd, _1{}, int64_t(0)},
         static_cast<ElementD*>(p.d), StrideD{p.ldd, _1{}, int64_t(0)}}};
    const bool bias_d = p.bias != nullptr && p.bias_dtype == kOut;
    const bool bias_f = p.bias != nullptr && !bias_d;
    args.epilogue.thread = {
        {{has_residual ? p.beta : 0.0f}},                            // beta
        {},                                                          // C
        {                                                            // act(Y)
            {                                                        //   Y = X + bias_f32
                {                                                    //     X = alpha * acc + bias_d
                    {{p.alpha}},                                     //       alpha
                    {},                                              //       acc
                    {bias_d ? static_cast<const ElementD*>(p.bias) : nullptr, ElementD(0), {}},
                    {}},
                {bias_f ? static_cast<const float*>(p.bias) : nullptr, 0.0f, {}},
                {}},
            {static_cast<int32_t>(p.act)}},
        {}};
    args.hw_info.device_id = p.device;
    args.hw_info.sm_count = p.sm_count;
    return args;
  }

  static size_t workspace_size(const GemmParams& p) { return Adapter::get_workspace_size(make_args(p)); }

  static int can_implement(const GemmParams& p) {
    // CUTLASS asks for N % alignment == 0 on row-major C/D, but TMA needs only 16-byte row
    // strides (the caller pads ldd/ldr) and clips the last tile at N: check with N rounded up.
    if (p.ldd % kAlignD != 0 || (p.residual != nullptr && p.ldr % kAlignD != 0)) return kCannotImplement;
    GemmParams q = p;
    q.n = (p.n + kAlignD - 1) / kAlignD * kAlignD;
    auto st = Adapter::can_implement(make_args(q));
    return st == cutlass::Status::kSuccess ? kOk : kCutlassStatusBase + int(st);
  }

  static int run(const GemmParams& p, void* workspace, cudaStream_t stream) {
    Adapter op;
    auto args = make_args(p);
    // The stream goes to initialize() too: any workspace memset must be stream-ordered.
    auto st = op.initialize(args, workspace, stream);
    if (st != cutlass::Status::kSuccess) return kCutlassStatusBase + int(st);
    st = op.run(stream);
    return st == cutlass::Status::kSuccess ? kOk : kCutlassStatusBase + int(st);
  }

  static constexpr KernelFns fns{&workspace_size, &can_implement, &run};
};

}  // namespace cutlass_gemm::sm90
