// SASS comparison only: our tree without the run-time activation node (beta*C + (alpha*acc + bias_d) + bias_f32).
#include "kernels/common.cuh"
#include "kernels/sm90_schedules.cuh"
namespace ck = cutlass_gemm::kernels;
using namespace cute;
namespace fusion = cutlass::epilogue::fusion;
using Elt = cutlass::bfloat16_t;
using Sched = ck::sm90::Pingpong<>;
using MmaT = Shape<_64, _128, _64>;
using Cl = Shape<_1, _1, _1>;
using AX = ck::AlphaX<MmaT, Elt, ck::Normal>;
using Tree = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, Elt, float, ck::kRound>,
    fusion::Sm90ScalarBroadcast<float>, fusion::Sm90SrcFetch<Elt>,
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, float, float, ck::kRound>, AX,
                    typename ck::Normal::template PerN<MmaT, float>>>;
using Epi = ck::CollectiveEpilogueFor<MmaT, Cl, Elt, Sched, Tree, ck::Normal>;
using Main = ck::CollectiveMainloopFor<Elt, cutlass::layout::RowMajor, 8, Elt, cutlass::layout::ColumnMajor, 8, MmaT, Cl, Epi,
                                       cutlass::arch::Sm90, typename Sched::Mainloop>;
using K = ck::PersistentKernel<Main, Epi, cutlass::gemm::PersistentScheduler>;
void const* instantiate() { return (void const*)&cutlass::device_kernel<K>; }
