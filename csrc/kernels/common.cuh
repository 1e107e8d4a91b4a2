// What every kernel template shares on both archs: element types, tiles, the epilogue trees (the
// SM90 EVT nodes, which CUTLASS also runs inside the SM100 TMA epilogue), the CUTLASS argument
// tree, and the adapter calls every kernel exposes through KernelFns. Torch-free. The arch enters
// only through the schedule (sm90_schedules.cuh, sm100_schedules.cuh): its `Arch` tag, kernel
// schedules, CTAs per MMA and blockwise scale config.
#pragma once

#include "tma_l2_promotion.cuh"  // first: it redirects CUTLASS's tensor-map encode

#include <atomic>
#include <type_traits>
#include <utility>
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

namespace cutlass_gemm::kernels {

using namespace cute;
namespace fusion = cutlass::epilogue::fusion;

template <DType> struct Element;
template <> struct Element<DType::kBf16> { using type = cutlass::bfloat16_t; };
template <> struct Element<DType::kF16> { using type = cutlass::half_t; };
template <> struct Element<DType::kF32> { using type = float; };
template <> struct Element<DType::kE4m3> { using type = cutlass::float_e4m3_t; };
template <> struct Element<DType::kE5m2> { using type = cutlass::float_e5m2_t; };

constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;

// ---------------------------------------------------------------------------------------------
// Orientation. Normal: CUTLASS computes D = A B^T, [M,N] row-major. SwapAB: it computes
// D' = B A^T = D^T, an [N,M] column-major matrix in D's own memory (small M becomes the narrow
// tile side, so a decode-sized M wastes little of the MMA). In D' a per-N vector (bias, scale_b)
// is per row (column broadcast) and a per-M one (scale_a) per column: the epilogue nodes flip,
// the caller's tensors do not (no copies, same pointers and strides).
struct Normal {
  static constexpr bool kSwap = false;
  using LayoutD = cutlass::layout::RowMajor;
  template <class Tile, class E>
  using PerN = fusion::Sm90RowBroadcast<0, Tile, E, float>;
  // Dynamic-broadcast strides: `true` reads a vector, `false` broadcasts element 0 (per-tensor).
  using PerNStride = Stride<_0, bool, int64_t>;
  using PerMStride = Stride<bool, _0, int64_t>;
  template <class Tile>
  using PerNOrScalar = fusion::Sm90RowBroadcast<0, Tile, float, float, PerNStride>;
  template <class Tile>
  using PerMOrScalar = fusion::Sm90ColBroadcast<0, Tile, float, float, PerMStride>;
  static PerNStride per_n(bool vector) { return {_0{}, vector, int64_t(0)}; }
  static PerMStride per_m(bool vector) { return {vector, _0{}, int64_t(0)}; }
};
struct SwapAB {
  static constexpr bool kSwap = true;
  using LayoutD = cutlass::layout::ColumnMajor;
  template <class Tile, class E>
  using PerN = fusion::Sm90ColBroadcast<0, Tile, E, float>;
  using PerNStride = Stride<bool, _0, int64_t>;
  using PerMStride = Stride<_0, bool, int64_t>;
  template <class Tile>
  using PerNOrScalar = fusion::Sm90ColBroadcast<0, Tile, float, float, PerNStride>;
  template <class Tile>
  using PerMOrScalar = fusion::Sm90RowBroadcast<0, Tile, float, float, PerMStride>;
  static PerNStride per_n(bool vector) { return {vector, _0{}, int64_t(0)}; }
  static PerMStride per_m(bool vector) { return {_0{}, vector, int64_t(0)}; }
};

// ---------------------------------------------------------------------------------------------
// Epilogue trees. Every op ends in the same tail:
//   D = beta * C + act(X + bias_f32)          C = residual, X = the op's scaled product + bias_d
// Bias is one per-N node for either dtype inside X (RowBiasEither: the SM90 16-bit and FP8 scaled kernels of Normal
// orientation), else two per-N broadcast nodes with a null default (one in the output dtype inside X, one in fp32
// here) so one kernel serves no bias / bias in either dtype; a null node costs no load but still its per-element add.
// The residual is CUTLASS's source C: beta == 0 (set when there is no residual) skips its TMA
// load at run time.
// kAct = false drops the run-time activation node (D = beta * C + (X + bias_f32)); such a kernel
// serves activation "none" only. The five activations, unrolled per epilogue subtile, were 64% of
// the 64x128 ping-pong kernel's SASS, and cost the cooperative bf16 kernels 3-14% (H200, session 13).
// kRes = false as well (a `_plain` kernel) drops the residual: D = X + bias_f32 with CUTLASS's source C void. The
// beta * C node runs its per-element work (C's conversion, the multiply-add) even when beta == 0 skips C's load: a
// third of the blockwise 128x128 coop epilogue's SASS (session 38, experiments/s38_plain).
template <class TileShape, class X, class Orient = Normal, bool kOneBias = false>
using BiasY = cute::conditional_t<kOneBias, X,                                           // Y = X (X has the bias)
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, float, float, kRound>,              // or Y = X + bias_f32
        X,
        typename Orient::template PerN<TileShape, float>>>;

// The activation functor for an output type: 16-bit outputs take gelu16 for erf GELU (activation.cuh).
template <class ElementD>
struct ActivationFor {
  template <class T>
  using Fn = cute::conditional_t<cutlass::sizeof_bits<ElementD>::value <= 16, epilogue::RuntimeActivation16<T>,
                                 epilogue::RuntimeActivation<T>>;
};

template <class TileShape, class ElementD, class X, class Orient = Normal, bool kAct = true, bool kRes = true,
          bool kOneBias = false>
using EpilogueTail = cute::conditional_t<kRes,
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementD, float, kRound>,  // beta * C + Z
        fusion::Sm90ScalarBroadcast<float>,                                                           //   beta
        fusion::Sm90SrcFetch<ElementD>,                                                               //   C
        cute::conditional_t<kAct,
            fusion::Sm90EVT<fusion::Sm90Compute<ActivationFor<ElementD>::template Fn, float, float, kRound>,  //   Z = act(Y)
                BiasY<TileShape, X, Orient, kOneBias>>,
            BiasY<TileShape, X, Orient, kOneBias>>>,                                                         //   or Z = Y
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, ElementD, float, kRound>,                     // or D = X + bias_f32
        X,
        typename Orient::template PerN<TileShape, float>>>;

template <class ElementD>
struct BiasPtrs {
  const ElementD* d = nullptr;
  const float* f32 = nullptr;
};

template <class ElementD>
BiasPtrs<ElementD> split_bias(const GemmParams& p, DType out) {
  BiasPtrs<ElementD> b;
  if (p.bias != nullptr && p.bias_dtype == out) b.d = static_cast<const ElementD*>(p.bias);
  else if (p.bias != nullptr) b.f32 = static_cast<const float*>(p.bias);
  return b;
}

template <class TileShape, class ElementD, class Orient = Normal>
using BiasD = typename Orient::template PerN<TileShape, ElementD>;  // bias_d [N]

// One per-N bias node for either bias dtype, chosen per call: bias_d (the output dtype) or float32, loaded into one
// float32 shared-memory row. A `_plain` kernel (Normal orientation) adds its bias with it in X's multiply-add, where
// the pair bias_d (in X) + bias_f32 (the tail's add) ran two broadcasts and an add per element. The base node
// sees the bias as a float32 row at the same address: its per-thread element offsets index either dtype.
template <class TileShape, class ElementD>
struct RowBiasEither : fusion::Sm90RowBroadcast<0, TileShape, float, float> {
  using Base = fusion::Sm90RowBroadcast<0, TileShape, float, float>;
  using SharedStorage = typename Base::SharedStorage;
  struct Arguments {
    const ElementD* ptr_d = nullptr;  // at most one of the two is set
    const float* ptr_f32 = nullptr;
  };
  struct Params {
    typename Base::Params base;
    const ElementD* ptr_d;
  };

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& a, void*) {
    return {{a.ptr_d != nullptr ? reinterpret_cast<const float*>(a.ptr_d) : a.ptr_f32, 0.0f, {}}, a.ptr_d};
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& a) {
    return a.ptr_d == nullptr || a.ptr_f32 == nullptr;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) { return 0; }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }

  CUTLASS_HOST_DEVICE RowBiasEither() {}
  CUTLASS_HOST_DEVICE RowBiasEither(Params const& p, SharedStorage const& s) : Base(p.base, s), ptr_d(p.ptr_d) {}
  const ElementD* ptr_d = nullptr;

  // The base node's callbacks, with a converting gmem -> smem fill when the bias is in the output dtype.
  template <class Callbacks>
  struct EitherCallbacks : Callbacks {
    const ElementD* ptr_d;
    CUTLASS_DEVICE EitherCallbacks(Callbacks const& cb, const ElementD* d) : Callbacks(cb), ptr_d(d) {}
    CUTLASS_DEVICE void begin() {
      if (ptr_d == nullptr) {
        Callbacks::begin();
        return;
      }
      Tensor g = filter_zeros(this->tGS_gRow);
      Tensor sm = filter_zeros(this->tGS_sRow);
      Tensor c = filter_zeros(this->tGS_cRow, this->tGS_gRow.stride());
      const float* base = reinterpret_cast<const float*>(ptr_d);
      for (int i = 0; i < size(g); ++i) {
        if (get<1>(c(i)) >= size<1>(TileShape{})) continue;  // past the tile's smem row
        const bool in = elem_less(c(i), this->residue_cRow);
        sm(i) = in ? static_cast<float>(ptr_d[raw_pointer_cast(&g(i)) - base]) : 0.0f;
      }
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto cb = Base::template get_consumer_store_callbacks<ReferenceSrc>(args);
    return EitherCallbacks<decltype(cb)>(cb, ptr_d);
  }
};

// Whether a kernel adds its bias with one RowBiasEither node: SM90 in Normal orientation (swap-AB kernels' bias runs
// along their tile's M), and every `_plain` one; SM100's act kernels keep two (not verified on that hardware).
template <class Schedule, class Orient, bool kRes>
inline constexpr bool kOneBiasFor =
    !Orient::kSwap && (!kRes || std::is_same_v<typename Schedule::Arch, cutlass::arch::Sm90>);

// X's bias: bias_d alone, or (kOneBias: kOneBiasFor) RowBiasEither.
template <class TileShape, class ElementD, class Orient, bool kOneBias>
using XBias = cute::conditional_t<kOneBias, RowBiasEither<TileShape, ElementD>, BiasD<TileShape, ElementD, Orient>>;

template <class Node>
struct IsBiasEither : std::false_type {};
template <class TileShape, class ElementD>
struct IsBiasEither<RowBiasEither<TileShape, ElementD>> : std::true_type {};

template <class Node, class ElementD>
typename Node::Arguments x_bias_args(const BiasPtrs<ElementD>& b) {
  if constexpr (IsBiasEither<Node>::value)
    return {b.d, b.f32};
  else
    return {b.d, ElementD(0), {}};
}

// X = alpha * acc + bias_d (16-bit GEMM; blockwise FP8, whose scales act in the mainloop). kOneBias: the bias in
// either dtype (RowBiasEither); kRoot: X is the whole tree (a `_plain` kernel: the output dtype at its root).
template <class TileShape, class ElementD, class Orient = Normal, bool kOneBias = false, bool kRoot = kOneBias>
using AlphaX = fusion::Sm90EVT<
    fusion::Sm90Compute<cutlass::homogeneous_multiply_add, cute::conditional_t<kRoot, ElementD, float>, float,
                        kRound>,
    fusion::Sm90ScalarBroadcast<float>,  // alpha
    fusion::Sm90AccFetch,                // acc
    XBias<TileShape, ElementD, Orient, kOneBias>>;

// X = (scale_a * acc) * scale_b + bias_d (FP8): scale_a per row of a (or per-tensor), scale_b per
// column of b^T (or per-tensor). kOneBias, kRoot: as AlphaX's.
template <class TileShape, class ElementD, class Orient = Normal, bool kOneBias = false, bool kRoot = kOneBias>
using ScaledX = fusion::Sm90EVT<
    fusion::Sm90Compute<cutlass::homogeneous_multiply_add, cute::conditional_t<kRoot, ElementD, float>, float,
                        kRound>,
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::multiplies, float, float, kRound>,
        typename Orient::template PerMOrScalar<TileShape>,  // scale_a [M] or [1]
        fusion::Sm90AccFetch>,
    typename Orient::template PerNOrScalar<TileShape>,      // scale_b [N] or [1]
    XBias<TileShape, ElementD, Orient, kOneBias>>;

// Arguments of EpilogueTail<..., X, Orient, kAct, kRes, kOneBias> around X's arguments (the brace tree mirrors the
// type tree; with kOneBias, Y is X and bias_f32 is unused: X's RowBiasEither has the bias).
template <class Tree, class X, bool kAct = true, bool kRes = true, bool kOneBias = false>
typename Tree::Arguments tail_args(const GemmParams& p, const float* bias_f32, typename X::Arguments const& x) {
  const float beta = p.residual != nullptr ? p.beta : 0.0f;
  if constexpr (std::is_same_v<Tree, X>)
    return x;  // a `_plain` kernel with one bias node: X is the tree
  else if constexpr (!kRes)
    return {x, {bias_f32, 0.0f, {}}, {}};  // D = X + bias_f32
  else if constexpr (kOneBias && kAct)
    return {{{beta}}, {}, {x, {static_cast<int32_t>(p.act)}}, {}};  // beta, C, Z = act(X)
  else if constexpr (kOneBias)
    return {{{beta}}, {}, x, {}};  // beta, C, Z = X
  else if constexpr (kAct)
    return {{{beta}},                                       // beta
            {},                                             // C
            {{x, {bias_f32, 0.0f, {}}, {}},                 // Y = X + bias_f32
             {static_cast<int32_t>(p.act)}},                // act
            {}};
  else
    return {{{beta}}, {}, {x, {bias_f32, 0.0f, {}}, {}}, {}};  // beta, C, Y = X + bias_f32
}

// Whether a kernel launches one CTA per output tile (CUTLASS's non-persistent warp-specialized schedules).
template <class Kernel, class = void>
struct OneCtaPerTile : std::false_type {};
template <class Kernel>
struct OneCtaPerTile<Kernel, std::void_t<typename Kernel::DispatchPolicy::Schedule>>
    : std::is_base_of<cutlass::gemm::KernelTmaWarpSpecialized, typename Kernel::DispatchPolicy::Schedule> {};

// ---------------------------------------------------------------------------------------------
// The GemmUniversalAdapter calls, shared by every kernel. `Derived::make_args(p)` builds the
// CUTLASS arguments; `Derived::kAlignD` is the output's element alignment; `Derived::kRoundM` the
// M granularity CUTLASS's can_implement wants of M-contiguous operands (their strides are padded).
template <class Derived, class Adapter>
struct AdapterFns {
  static size_t workspace_size(const GemmParams& p) { return Adapter::get_workspace_size(Derived::make_args(p)); }

  static int can_implement(const GemmParams& p) {
    if (!Derived::kAct && p.act != Activation::kNone) return kCannotImplement;  // no activation node
    if (!Derived::kRes && p.residual != nullptr) return kCannotImplement;       // no residual node
    // CUTLASS asks for N % alignment == 0 on row-major C/D, but TMA needs only 16-byte row
    // strides (the caller pads ldd/ldr) and clips the last tile at N: check with N rounded up.
    constexpr int kAlignD = Derived::kAlignD;
    if (p.ldd % kAlignD != 0 || (p.residual != nullptr && p.ldr % kAlignD != 0)) return kCannotImplement;
    GemmParams q = p;
    q.n = (p.n + kAlignD - 1) / kAlignD * kAlignD;
    // Likewise for M where a kernel reads an M-contiguous operand by TMA (blockwise scale_a).
    q.m = (p.m + Derived::kRoundM - 1) / Derived::kRoundM * Derived::kRoundM;
    auto args = Derived::make_args(q);
    // A non-persistent kernel (schedule ws) launches one CTA per output tile, the tiles along the problem's
    // N (M when swapped) as grid.y, which CUDA caps at 65535 and CUTLASS does not check.
    if constexpr (OneCtaPerTile<typename Adapter::GemmKernel>::value) {
      const int64_t n = cute::get<1>(args.problem_shape), tn = cute::size<1>(typename Adapter::GemmKernel::TileShape{});
      if ((n + tn - 1) / tn > 65535) return kTooManyTiles;
    }
    auto st = Adapter::can_implement(args);
    return st == cutlass::Status::kSuccess ? kOk : kCutlassStatusBase + int(st);
  }

  // Adapter::initialize() without its per-call cudaFuncSetAttribute (a driver call on every launch):
  // the shared-memory opt-in is set once per device (an idempotent call, so a race only repeats it).
  static int run(const GemmParams& p, void* workspace, cudaStream_t stream) {
    using Kernel = typename Adapter::GemmKernel;
    auto args = Derived::make_args(p);
    // The stream goes to the workspace init too: any workspace memset must be stream-ordered.
    auto st = Kernel::initialize_workspace(args, workspace, stream);
    if (st != cutlass::Status::kSuccess) return kCutlassStatusBase + int(st);
    tma::ScopedL2Promotion promotion(p.tma_l2_promotion);  // the TMA descriptors are encoded on the next line
    auto params = Kernel::to_underlying_arguments(args, workspace);
    if (promotion.failed()) return kTmaEncodeFailed;
    constexpr int kMaxDevices = 64;
    static std::atomic<bool> smem_set[kMaxDevices] = {};
    if (p.device < 0 || p.device >= kMaxDevices || !smem_set[p.device].load(std::memory_order_relaxed)) {
      constexpr int smem = Kernel::SharedStorageSize;
      if (smem >= (48 << 10) &&
          cudaFuncSetAttribute(cutlass::device_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) !=
              cudaSuccess) {
        cudaGetLastError();  // clear the sticky-free error so later calls see their own status
        return kCutlassStatusBase + int(cutlass::Status::kErrorInternal);
      }
      // Two resident CTAs need the SM's whole carveout as shared memory (the driver may otherwise pick one
      // that fits a single CTA of this size).
      if (Kernel::MinBlocksPerMultiprocessor > 1 &&
          cudaFuncSetAttribute(cutlass::device_kernel<Kernel>, cudaFuncAttributePreferredSharedMemoryCarveout,
                               int(cudaSharedmemCarveoutMaxShared)) != cudaSuccess) {
        cudaGetLastError();
        return kCutlassStatusBase + int(cutlass::Status::kErrorInternal);
      }
      if (p.device >= 0 && p.device < kMaxDevices) smem_set[p.device].store(true, std::memory_order_relaxed);
    }
    st = Adapter::run(params, stream, /*cuda_adapter=*/nullptr, /*launch_with_pdl=*/p.pdl);
    return st == cutlass::Status::kSuccess ? kOk : kCutlassStatusBase + int(st);
  }

  static constexpr KernelFns fns{&workspace_size, &can_implement, &run};
};

// Tiles: a kernel is named by (and instantiated with) its MMA tile. On SM90 and for a 1-SM SM100
// kernel one CTA computes all of it; a 2-SM SM100 tile is shared by the CTA pair of a 2x1 cluster,
// each CTA computing (and storing) M/2 rows. The builders get the MMA tile; the EVT broadcast
// nodes work per CTA and get the CTA tile.
template <int TM, int TN, int TK, class Schedule>
struct Tiles {
  static_assert(TM % Schedule::kCtasPerMma == 0);
  using Mma = Shape<Int<TM>, Int<TN>, Int<TK>>;                             // MMA tile (builders)
  using Cta = Shape<Int<TM / Schedule::kCtasPerMma>, Int<TN>, Int<TK>>;     // per-CTA tile (EVT nodes)
};

// The epilogue collective for a tree (C and D in the output dtype, row-major; column-major swapped).
// kStoresD = 0: CUTLASS's builder. kStoresD > 0 (SM90 only): the builder's TMA epilogue with kStoresD
// subtile stores in flight instead of its min(subtiles, 2), so a tile's epilogue waits less on its own stores;
// D reuses C's buffers as before, of which there are at least kStoresD. kRes = false: C is void (no residual).
template <class MmaTile, class ClusterShape, class ElementD, class Schedule, class Tree, class Orient, int kStoresD,
          bool kRes = true, bool = (kStoresD > 0)>
struct EpilogueFor {
  using type = typename cutlass::epilogue::collective::CollectiveBuilder<
      typename Schedule::Arch, cutlass::arch::OpClassTensorOp,
      MmaTile, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float,                                                          // accumulator, compute
      cute::conditional_t<kRes, ElementD, void>, typename Orient::LayoutD, 16 / sizeof(ElementD),  // C = residual
      ElementD, typename Orient::LayoutD, 16 / sizeof(ElementD),             // D
      typename Schedule::Epilogue, Tree>::CollectiveOp;
};
template <class MmaTile, class ClusterShape, class ElementD, class Schedule, class Tree, class Orient, int kStoresD,
          bool kRes>
struct EpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient, kStoresD, kRes, true> {
  static_assert(std::is_same_v<typename Schedule::Arch, cutlass::arch::Sm90>, "kStoresD: the SM90 TMA epilogue only");
  static_assert(kRes, "kStoresD: D reuses the residual's (C's) buffers");
  using EpiSchedule = typename Schedule::Epilogue;
  using EpilogueTile = decltype(cutlass::epilogue::collective::detail::sm90_compute_tile_shape_or_override<
                                ElementD, cutlass::epilogue::collective::EpilogueTileAuto, EpiSchedule, MmaTile>());
  using Auto = decltype(cutlass::epilogue::collective::detail::sm90_get_tma_dispatch_policy<
                        MmaTile, EpilogueTile, ElementD, ElementD, EpiSchedule>());
  static_assert(Auto::ReuseSmemC, "kStoresD: built for epilogues whose D reuses C's buffers (16-bit outputs)");
  using Policy = cutlass::epilogue::Sm90TmaWarpSpecialized<(Auto::StagesC > kStoresD ? Auto::StagesC : kStoresD), kStoresD,
                                                           Auto::FragmentSize, Auto::ReuseSmemC, Auto::DelayTmaStore>;
  using type = typename cutlass::epilogue::collective::detail::Sm90TmaBuilderImpl<
      MmaTile, EpilogueTile, float, float,
      ElementD, typename Orient::LayoutD, 16 / sizeof(ElementD),             // C = residual
      ElementD, typename Orient::LayoutD, 16 / sizeof(ElementD),             // D
      Tree, Policy>::CollectiveOp;
};
template <class MmaTile, class ClusterShape, class ElementD, class Schedule, class Tree, class Orient = Normal,
          int kStoresD = 0, bool kRes = true>
using CollectiveEpilogueFor =
    typename EpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient, kStoresD, kRes>::type;

// CTAs a schedule keeps resident per SM: sm90::Ws<Fast, 2> sizes its stages so two fit; every other schedule 1.
template <class Schedule, class = void>
struct CtasPerSm : std::integral_constant<int, 1> {};
template <class Schedule>
struct CtasPerSm<Schedule, std::void_t<decltype(Schedule::kCtasPerSm)>> : std::integral_constant<int, Schedule::kCtasPerSm> {};

// Shared memory one of `n` co-resident CTAs may use on an SM90 SM (228 KB, 1 KB reserved per CTA).
constexpr int sm90_smem_per_cta(int n) { return (228 * 1024 - n * 1024) / n; }

// Mainloop stages a schedule fixes (sm90::Coop / Pingpong<Fast, N>); 0: as many as fit (the carveout below).
template <class Schedule, class = void>
struct StagesOf : std::integral_constant<int, 0> {};
template <class Schedule>
struct StagesOf<Schedule, std::void_t<decltype(Schedule::kStages)>> : std::integral_constant<int, Schedule::kStages> {};

// A fixed stage count is not sized by the carveout: true when it and the epilogue fit an SM90 SM's shared memory
// (CUTLASS 4.2's SM90 kernels do not check it; an overflow would fail only at the first launch).
template <class Schedule, class Kernel>
inline constexpr bool kFixedStagesFit =
    StagesOf<Schedule>::value == 0 || Kernel::SharedStorageSize <= cutlass::gemm::collective::detail::sm90_smem_capacity_bytes;

// The mainloop collective (FP32 accumulation) with the stages left after the epilogue's shared memory, in
// the whole of an SM's opt-in shared memory or, with CtasPerSm = 2, in half an SM's; Stages_ > 0: exactly that many.
template <class ElementA, class LayoutA, int AlignA, class ElementB, class LayoutB, int AlignB, class MmaTile,
          class ClusterShape, class CollectiveEpilogue, class Arch, class KernelSchedule, int CtasPerSm_ = 1,
          int Stages_ = 0>
using CollectiveMainloopFor = typename cutlass::gemm::collective::CollectiveBuilder<
    Arch, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, AlignA,
    ElementB, LayoutB, AlignB,
    float,
    MmaTile, ClusterShape,
    cute::conditional_t<(Stages_ > 0), cutlass::gemm::collective::StageCount<(Stages_ > 0 ? Stages_ : 1)>,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage)) +
            (CtasPerSm_ > 1 ? cutlass::gemm::collective::detail::sm90_smem_capacity_bytes - sm90_smem_per_cta(CtasPerSm_) : 0)>>,
    KernelSchedule>::CollectiveOp;

// Stream-K tile scheduler tag: CUTLASS's SM90 stream-K scheduler (default arguments: deterministic
// reduction, heuristic decomposition) with one method replaced. CUTLASS 4.2's is_last_tile does not
// compile with CUTLASS_ENABLE_GDC_FOR_SM90 (a const method binds a member to a non-const
// reference); its one caller is the early-launch hint of programmatic dependent launch, which
// changes timing, not results. Answering "not the last tile" lets dependents launch at grid end.
struct StreamK {};

template <class TileShape, class ClusterShape>
struct Sm90StreamKScheduler : cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamK<TileShape, ClusterShape> {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamK<TileShape, ClusterShape>;
  using Base::Base;
  CUTLASS_DEVICE bool is_last_tile(typename Base::WorkTileInfo, uint32_t = 1) const { return false; }
};

}  // namespace cutlass_gemm::kernels

namespace cutlass::gemm::kernel::detail {
template <class TileShape, class ClusterShape, uint32_t SchedulerPipelineStageCount>
struct TileSchedulerSelector<cutlass_gemm::kernels::StreamK, arch::Sm90, TileShape, ClusterShape,
                             SchedulerPipelineStageCount> {
  using Scheduler = cutlass_gemm::kernels::Sm90StreamKScheduler<TileShape, ClusterShape>;
};
}  // namespace cutlass::gemm::kernel::detail

namespace cutlass_gemm::kernels {

// CUTLASS's kernel with its launch bound asking for `N` resident CTAs per SM (registers capped to fit).
template <class Kernel, int N>
struct WithMinBlocks : Kernel {
  static constexpr uint32_t MinBlocksPerMultiprocessor = N;
  static_assert(Kernel::SharedStorageSize <= sm90_smem_per_cta(N), "stages leave too little shared memory for N CTAs per SM");
};

// A persistent kernel: data-parallel tiles (PersistentScheduler) or stream-K (StreamK); with CtasPerSm_ = 2
// (sm90::Ws<Fast, 2>), the non-persistent kernel launched for two resident CTAs per SM.
template <class CollectiveMainloop, class CollectiveEpilogue, class TileScheduler, int CtasPerSm_ = 1>
using PersistentKernel = cute::conditional_t<
    CtasPerSm_ == 1,
    cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue, TileScheduler>,
    WithMinBlocks<cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue,
                                                       TileScheduler>,
                  CtasPerSm_>>;

// A row-major [rows, ld] stride of C/D, or the same memory as CUTLASS's column-major D' (swap-AB).
template <class Stride_, class Orient>
Stride_ out_stride(int64_t ld) {
  if constexpr (Orient::kSwap) return Stride_{_1{}, ld, int64_t(0)};
  else return Stride_{ld, _1{}, int64_t(0)};
}

// C/D pointers and strides: without a residual, C aliases D and beta is 0 (never read); a void C is null.
template <class Kernel, class ElementD, class Orient>
auto epilogue_io(const GemmParams& p) {
  using StrideC = typename Kernel::StrideC;
  using StrideD = typename Kernel::StrideD;
  if constexpr (std::is_void_v<typename Kernel::ElementC>) {  // no residual node (`_plain`): no source at all
    return cute::make_tuple(static_cast<const void*>(nullptr), out_stride<StrideC, Orient>(p.ldd),
                            static_cast<ElementD*>(p.d), out_stride<StrideD, Orient>(p.ldd));
  } else {
    const bool has_residual = p.residual != nullptr;
    return cute::make_tuple(static_cast<const ElementD*>(has_residual ? p.residual : p.d),
                            out_stride<StrideC, Orient>(has_residual ? p.ldr : p.ldd), static_cast<ElementD*>(p.d),
                            out_stride<StrideD, Orient>(p.ldd));
  }
}

// The SM90 tile scheduler's max swizzle when the caller sets none: 8 for grids of at least 8 waves of
// output tiles (two H200 runs of bench/scheduler_knobs.py: 2-9% faster from 8192x8192 outputs up,
// L2 reuse across a tile strip), CUTLASS's 1 below (4096^3 gained nothing).
template <class TileShape>
int default_swizzle(const GemmParams& p, bool swapped) {
  const int64_t rows = swapped ? p.n : p.m, cols = swapped ? p.m : p.n;
  const int64_t tm = cute::size<0>(TileShape{}), tn = cute::size<1>(TileShape{});
  const int64_t tiles = ((rows + tm - 1) / tm) * ((cols + tn - 1) / tn);
  return tiles >= 8 * int64_t(p.sm_count) ? 8 : 1;
}

// Whether a tile scheduler's arguments take a decomposition (the stream-K scheduler's do).
template <class A, class = void>
struct HasDecomposition : std::false_type {};
template <class A>
struct HasDecomposition<A, std::void_t<decltype(std::declval<A&>().decomposition_mode)>> : std::true_type {};

// The arguments every kernel shares: the problem, a and b (row-major [M,K] and [N,K]) as the
// mainloop's A and B (B and A swapped) followed by its extra arguments (blockwise scales), C/D and
// the device; the epilogue tree's arguments are the caller's (`args.epilogue.thread`).
// ElementA / ElementB: the element types of a and b.
template <class Kernel, class ElementA, class ElementB, class ElementD, class Orient = Normal, class... MainloopExtra>
typename cutlass::gemm::device::GemmUniversalAdapter<Kernel>::Arguments gemm_args(const GemmParams& p,
                                                                                  MainloopExtra... extra) {
  using StrideA = typename Kernel::StrideA;
  using StrideB = typename Kernel::StrideB;
  auto [ptr_c, stride_c, ptr_d, stride_d] = epilogue_io<Kernel, ElementD, Orient>(p);
  typename cutlass::gemm::device::GemmUniversalAdapter<Kernel>::Arguments args;
  if constexpr (Orient::kSwap) {
    args = {cutlass::gemm::GemmUniversalMode::kGemm,
            {int(p.n), int(p.m), int(p.k), 1},
            {static_cast<const ElementB*>(p.b), StrideA{p.ldb, _1{}, int64_t(0)},
             static_cast<const ElementA*>(p.a), StrideB{p.lda, _1{}, int64_t(0)}, extra...},
            {{}, ptr_c, stride_c, ptr_d, stride_d}};
  } else {
    args = {cutlass::gemm::GemmUniversalMode::kGemm,
            {int(p.m), int(p.n), int(p.k), 1},
            {static_cast<const ElementA*>(p.a), StrideA{p.lda, _1{}, int64_t(0)},
             static_cast<const ElementB*>(p.b), StrideB{p.ldb, _1{}, int64_t(0)}, extra...},
            {{}, ptr_c, stride_c, ptr_d, stride_d}};
  }
  args.hw_info.device_id = p.device;
  args.hw_info.sm_count = p.sm_count;
  if (p.swizzle > 0) {
    args.scheduler.max_swizzle_size = p.swizzle;
  } else if constexpr (std::is_same_v<typename Kernel::ArchTag, cutlass::arch::Sm90>) {
    args.scheduler.max_swizzle_size = default_swizzle<typename Kernel::TileShape>(p, Orient::kSwap);
  }
  if (p.raster > 0) args.scheduler.raster_order = decltype(args.scheduler.raster_order)(p.raster);
  if constexpr (HasDecomposition<decltype(args.scheduler)>::value) {
    if (p.decomposition > 0) args.scheduler.decomposition_mode = decltype(args.scheduler.decomposition_mode)(p.decomposition);
    if (p.splits > 1) args.scheduler.splits = p.splits;
    if (p.reduction > 0) args.scheduler.reduction_mode = decltype(args.scheduler.reduction_mode)(p.reduction);
  }
  return args;
}

// Arguments of AlphaX: alpha * acc + bias_d (or the one bias of either dtype).
template <class X, class Bias, class ElementD>
typename X::Arguments alpha_x_args(const GemmParams& p, const BiasPtrs<ElementD>& bias) {
  return {{{p.alpha}}, {}, x_bias_args<Bias>(bias), {}};
}

}  // namespace cutlass_gemm::kernels
