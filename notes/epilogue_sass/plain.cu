// SASS size probe (notes/epilogue_sass/run.sh): the 64x128 ping-pong bf16 tile with CUTLASS's plain epilogue (D = alpha*acc, no C).
#include "kernels/common.cuh"
#include "kernels/sm90_schedules.cuh"
using namespace cute;
namespace ck = cutlass_gemm::kernels;
using Elt = cutlass::bfloat16_t;
using TileT = Shape<_64, _128, _64>;
using Cl = Shape<_1, _1, _1>;
using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileT, Cl, cutlass::epilogue::collective::EpilogueTileAuto,
    float, float, void, cutlass::layout::RowMajor, 8, Elt, cutlass::layout::RowMajor, 8,
    cutlass::epilogue::TmaWarpSpecialized,
    cutlass::epilogue::fusion::LinearCombination<Elt, float, void, float>>::CollectiveOp;
using Main = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Elt, cutlass::layout::RowMajor, 8, Elt, cutlass::layout::ColumnMajor, 8,
    float, TileT, Cl, cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epi::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;
using K = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Main, Epi, cutlass::gemm::PersistentScheduler>;
void const* instantiate() { return (void const*)&cutlass::device_kernel<K>; }
