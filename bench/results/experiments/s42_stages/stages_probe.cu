#include <cstdio>
#include "kernels/gemm16.cuh"
#include "kernels/fp8.cuh"
#include "kernels/sm90_schedules.cuh"
using namespace cutlass_gemm; using namespace cutlass_gemm::kernels;
using PS = cutlass::gemm::PersistentScheduler;
#define P(name, ...) printf("%-60s %d stages, epilogue smem %zu\n", name, (int)__VA_ARGS__::CollectiveMainloop::DispatchPolicy::Stages, sizeof(typename __VA_ARGS__::CollectiveEpilogue::SharedStorage));
int main() {
  P("bf16 64x128 pingpong act", Gemm16<DType::kBf16, DType::kBf16, 64, 128, 64, 1, 1, sm90::Pingpong<false>>)
  P("bf16 64x128 pingpong noact", Gemm16<DType::kBf16, DType::kBf16, 64, 128, 64, 1, 1, sm90::Pingpong<false>, PS, Normal, false>)
  P("bf16 64x128 pingpong plain", Gemm16<DType::kBf16, DType::kBf16, 64, 128, 64, 1, 1, sm90::Pingpong<false>, PS, Normal, false, 0, false>)
  P("bf16 128x128 c1x2 pingpong act", Gemm16<DType::kBf16, DType::kBf16, 128, 128, 64, 1, 2, sm90::Pingpong<false>>)
  P("bf16 64x256 c2x1 pingpong noact", Gemm16<DType::kBf16, DType::kBf16, 64, 256, 64, 2, 1, sm90::Pingpong<false>, PS, Normal, false>)
  P("bf16 128x256 coop noact", Gemm16<DType::kBf16, DType::kBf16, 128, 256, 64, 2, 1, sm90::Coop<false>, PS, Normal, false>)
  P("bf16 128x256 coop act", Gemm16<DType::kBf16, DType::kBf16, 128, 256, 64, 2, 1, sm90::Coop<false>>)
  P("bf16 128x128 coop act", Gemm16<DType::kBf16, DType::kBf16, 128, 128, 64, 1, 1, sm90::Coop<false>>)
  P("bf16 128x160 c2x1 coop act", Gemm16<DType::kBf16, DType::kBf16, 128, 160, 64, 2, 1, sm90::Coop<false>>)
  P("bf16 128x80 c1x2 coop act", Gemm16<DType::kBf16, DType::kBf16, 128, 80, 64, 1, 2, sm90::Coop<false>>)
  P("bf16 256x128 coop noact", Gemm16<DType::kBf16, DType::kBf16, 256, 128, 64, 2, 1, sm90::Coop<false>, PS, Normal, false>)
  P("e4m3 fast 64x128 pingpong act", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 128, 128, 1, 1, sm90::Pingpong<true>>)
  P("e4m3 prom 64x128 pingpong act", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 128, 128, 1, 1, sm90::Pingpong<false>>)
  P("e4m3 fast 128x128 c1x2 pingpong act", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 128, 128, 1, 2, sm90::Pingpong<true>>)
  P("e4m3 fast 128x128 c2x1 pingpong plain", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 128, 128, 2, 1, sm90::Pingpong<true>, PS, Normal, false, 0, false>)
  P("e4m3 prom 128x128 c2x1 coop plain", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 128, 128, 2, 1, sm90::Coop<false>, PS, Normal, false, 0, false>)
  P("e4m3 prom 128x128 c2x1 coop act", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 128, 128, 2, 1, sm90::Coop<false>>)
  P("e4m3 fast 64x160 c2x1 pingpong act", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 160, 128, 2, 1, sm90::Pingpong<true>>)
  P("e4m3 prom 64x160 c2x1 pingpong act", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 160, 128, 2, 1, sm90::Pingpong<false>>)
  P("e4m3 fast 128x256 coop plain", ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 256, 128, 2, 1, sm90::Coop<true>, PS, Normal, false, 0, false>)
  return 0;
}
