// FP8 activation quantization compiled for sm_100a (see quantize_fp8.cuh).
#include "quantize_fp8.cuh"

namespace cutlass_gemm {
int quantize_fp8_sm100(const QuantizeParams& p, cudaStream_t stream) { return quantize_fp8_run(p, stream); }
}  // namespace cutlass_gemm
