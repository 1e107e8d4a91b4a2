// Experiment (session 38): the SASS of the per-tile epilogue under leaner trees (epi_count.py counts it), for the
// blockwise 128x128 c2x1 coop tile and the FP8 scaled promoted 128x128 c1x2 coop tile.
#include "kernels/fp8.cuh"
#include "kernels/sm90_schedules.cuh"

namespace cutlass_gemm::kernels {

template <int kVariant, class CtaTile, class ElementD>
struct LeanTree;
// 1: no C node (void C): D = X + bias_f32, X = alpha * acc + bias_d
template <class CtaTile, class ElementD>
struct LeanTree<1, CtaTile, ElementD> {
  using X = AlphaX<CtaTile, ElementD, Normal>;
  using type = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, ElementD, float, kRound>, X,
                               typename Normal::template PerN<CtaTile, float>>;
};
// 2: no C, one bias node (f32): D = alpha * acc + bias_f32
template <class CtaTile, class ElementD>
struct LeanTree<2, CtaTile, ElementD> {
  using type = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementD, float, kRound>,
                               fusion::Sm90ScalarBroadcast<float>, fusion::Sm90AccFetch,
                               typename Normal::template PerN<CtaTile, float>>;
};
// 3: no C, no bias: D = alpha * acc
template <class CtaTile, class ElementD>
struct LeanTree<3, CtaTile, ElementD> {
  using type = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::multiplies, ElementD, float, kRound>,
                               fusion::Sm90ScalarBroadcast<float>, fusion::Sm90AccFetch>;
};

template <class MmaTile, class ClusterShape, class ElementD, class Schedule, class Tree>
using VoidCEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    typename Schedule::Arch, cutlass::arch::OpClassTensorOp, MmaTile, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    void, cutlass::layout::RowMajor, 16 / sizeof(ElementD),
    ElementD, cutlass::layout::RowMajor, 16 / sizeof(ElementD),
    typename Schedule::Epilogue, Tree>::CollectiveOp;

template <int kVariant>
struct LeanBlockwise {
  using Schedule = sm90::Coop<false>;
  using ElementA = cutlass::float_e4m3_t;
  using ElementD = cutlass::bfloat16_t;
  using MmaTile = typename Tiles<128, 128, 128, Schedule>::Mma;
  using CtaTile = typename Tiles<128, 128, 128, Schedule>::Cta;
  using ClusterShape = Shape<_2, _1, _1>;
  using ScaleConfig = typename BlockScalesFor<Schedule, Normal>::type;
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  using Tree = typename LeanTree<kVariant, CtaTile, ElementD>::type;
  using CollectiveEpilogue = VoidCEpilogue<MmaTile, ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop =
      CollectiveMainloopFor<ElementA, cute::tuple<cutlass::layout::RowMajor, LayoutSFA>, 16,
                            ElementA, cute::tuple<cutlass::layout::ColumnMajor, LayoutSFB>, 16,
                            MmaTile, ClusterShape, CollectiveEpilogue, typename Schedule::Arch,
                            typename Schedule::Blockwise>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
};

template <int kVariant>
struct LeanScaled {
  using Base = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 128, 128, 1, 2, sm90::Coop<false>,
                          cutlass::gemm::PersistentScheduler, Normal, false>;
  using ElementD = cutlass::bfloat16_t;
  using Schedule = sm90::Coop<false>;
  using CtaTile = typename Base::CtaTile;
  using X = typename Base::X;
  // 1: no C: D = X + bias_f32; 2: no C, no bias_f32 node: D = X (scale_a * acc * scale_b + bias_d)
  using Tree = cute::conditional_t<kVariant == 1,
      fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, ElementD, float, kRound>, X,
                      typename Normal::template PerN<CtaTile, float>>,
      fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementD, float, kRound>,
          fusion::Sm90EVT<fusion::Sm90Compute<cutlass::multiplies, float, float, kRound>,
              typename Normal::template PerMOrScalar<CtaTile>, fusion::Sm90AccFetch>,
          typename Normal::template PerNOrScalar<CtaTile>,
          typename Normal::template PerN<CtaTile, ElementD>>>;
  using CollectiveEpilogue = VoidCEpilogue<typename Base::MmaTile, typename Base::ClusterShape, ElementD, Schedule, Tree>;
  using CollectiveMainloop =
      CollectiveMainloopFor<cutlass::float_e4m3_t, cutlass::layout::RowMajor, 16,
                            cutlass::float_e4m3_t, cutlass::layout::ColumnMajor, 16,
                            typename Base::MmaTile, typename Base::ClusterShape, CollectiveEpilogue,
                            typename Schedule::Arch, typename Schedule::Mainloop>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
};
}  // namespace cutlass_gemm::kernels

using namespace cutlass_gemm::kernels;
using cutlass_gemm::DType;
// Instantiate the device kernels (no host adapter needed for SASS).

void* kernel_ptrs[] = {(void*)&cutlass::device_kernel<BlockwiseGemm<DType::kBf16, 128, 128, 128, 2, 1, sm90::Coop<false>, cutlass::gemm::PersistentScheduler, Normal, false>::Kernel>, (void*)&cutlass::device_kernel<LeanBlockwise<1>::Kernel>, (void*)&cutlass::device_kernel<LeanBlockwise<2>::Kernel>, (void*)&cutlass::device_kernel<LeanBlockwise<3>::Kernel>, (void*)&cutlass::device_kernel<LeanScaled<1>::Base::Kernel>, (void*)&cutlass::device_kernel<LeanScaled<1>::Kernel>, (void*)&cutlass::device_kernel<LeanScaled<2>::Kernel>};
