// SASS comparison only: the same kernel without the run-time activation node (the table's _noact kernel).
#include "kernels/gemm16.cuh"
#include "kernels/sm90_schedules.cuh"
namespace ck = cutlass_gemm::kernels;
using K = ck::Gemm16<cutlass_gemm::DType::kBf16, cutlass_gemm::DType::kBf16, 64, 128, 64, 1, 1, ck::sm90::Pingpong<>,
                     cutlass::gemm::PersistentScheduler, ck::Normal, /*kAct=*/false>::Kernel;
void const* instantiate() { return (void const*)&cutlass::device_kernel<K>; }
