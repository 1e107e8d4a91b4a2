// SASS comparison only: our 64x128 ping-pong bf16 kernel (the full EVT tail), as the table instantiates it.
#include "kernels/gemm16.cuh"
#include "kernels/sm90_schedules.cuh"
namespace ck = cutlass_gemm::kernels;
using K = ck::Gemm16<cutlass_gemm::DType::kBf16, cutlass_gemm::DType::kBf16, 64, 128, 64, 1, 1, ck::sm90::Pingpong<>>::Kernel;
void const* instantiate() { return (void const*)&cutlass::device_kernel<K>; }
