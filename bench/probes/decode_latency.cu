// Decode latency probe (session 25): where the FP8 decode kernels' fixed cost per call goes.
// Variants of the 64x16x256 swap-AB kernel (persistent ping-pong or non-persistent warp-specialized;
// our epilogue tree, its parts, or CUTLASS's plain alpha * acc; TMA-store or no-smem epilogue; cluster),
// bf16 decode kernels and cuBLAS, timed under CUDA-graph replay over 4 rotated weights (> L2) at M = 1,
// 16, 64 and the llama3_70b (N, K); plus two floor kernels (empty; one 16-byte load per CTA). Timing only:
// the inputs are constant bytes, the results are not checked (the package's tests check every kernel).
// Torch-free; build here, run on an H200 (libcublas from the torch wheel's nvidia/cu13/lib):
//   NV=$(python -c "import nvidia, os; print(os.path.join(nvidia.__path__[0], 'cu13'))")
//   CU=$(python -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source'))")
//   nvcc -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -DCUTLASS_ENABLE_GDC_FOR_SM90 \
//     -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -I$CU/include -I$CU/tools/util/include -Icsrc -I$NV/include \
//     -gencode arch=compute_90a,code=sm_90a bench/probes/decode_latency.cu -o decode_latency -L$NV/lib -l:libcublas.so.13
//   LD_LIBRARY_PATH=$NV/lib ./decode_latency      # prints us per call, one row per variant
#include <cstdio>
#include <vector>
#include <algorithm>
#include <string>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "graph_timer.cuh"
#include "kernels/fp8.cuh"
#include "kernels/gemm16.cuh"
#include "kernels/sm90_schedules.cuh"

using namespace cutlass_gemm;
using namespace cutlass_gemm::kernels;


// Minimal epilogue: D = alpha * acc (LinearCombination), TMA-store or no-smem epilogue schedule.
template <int TM, int TN, int TK, int CM, int CN, class MainSched, class EpiSched, class Fusion = fusion::LinearCombination<cutlass::bfloat16_t, float, cutlass::bfloat16_t, float>, class TileSched = cutlass::gemm::PersistentScheduler>
struct PlainFp8 {
  using ElementA = cutlass::float_e4m3_t;
  using ElementD = cutlass::bfloat16_t;
  static constexpr int kAlignD = 8;
  static constexpr int kRoundM = 1;
  static constexpr bool kAct = true;
  using MmaTile = Shape<Int<TM>, Int<TN>, Int<TK>>;
  using ClusterShape = Shape<Int<CM>, Int<CN>, _1>;
  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, MmaTile, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float,
      ElementD, cutlass::layout::ColumnMajor, 8, ElementD, cutlass::layout::ColumnMajor, 8,
      EpiSched, Fusion>::CollectiveOp;
  using CollectiveMainloop = CollectiveMainloopFor<ElementA, cutlass::layout::RowMajor, 16, ElementA,
      cutlass::layout::ColumnMajor, 16, MmaTile, ClusterShape, CollectiveEpilogue, cutlass::arch::Sm90, MainSched>;
  using Kernel = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, TileSched>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto args = gemm_args<Kernel, ElementA, ElementA, ElementD, SwapAB>(p);
    if constexpr (std::is_same_v<Fusion, fusion::LinearCombination<ElementD, float, ElementD, float>>) {
      args.epilogue.thread.alpha = 1.0f;
      args.epilogue.thread.beta = 0.0f;
    } else {  // ScaledX only: scale_a * acc * scale_b + bias_d
      args.epilogue.thread = {{{p.scale_a, 0.0f, SwapAB::per_m(false)}, {}, {}}, {p.scale_b, 0.0f, SwapAB::per_n(false)}, {nullptr, ElementD(0), {}}, {}};
    }
    return args;
  }
  static constexpr KernelFns fns = AdapterFns<PlainFp8, Adapter>::fns;
};

__global__ void empty_kernel() {}
__global__ void touch_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t stride) {
  if (threadIdx.x == 0) dst[blockIdx.x] = src[blockIdx.x * stride];
}

using Sw = SwapAB;
template <bool Fast>
struct Basic {  // non-persistent warp-specialized kernel: one producer + one consumer warpgroup, one tile per CTA
  using Arch = cutlass::arch::Sm90;
  static constexpr int kCtasPerMma = 1;
  using Mainloop = cute::conditional_t<Fast, cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum, cutlass::gemm::KernelTmaWarpSpecialized>;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
};
using PS = cutlass::gemm::PersistentScheduler;
using KBfast = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, Basic<true>, PS, Sw, true>;
using KBprom = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, Basic<false>, PS, Sw, true>;
using KBpromNoact = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, Basic<false>, PS, Sw, false>;
using KBprom128 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 16, 256, 1, 1, Basic<false>, PS, Sw, true>;
using KBprom64x32 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 32, 256, 1, 1, Basic<false>, PS, Sw, true>;
using KBbf16 = Gemm16<DType::kBf16, DType::kBf16, 64, 16, 128, 1, 1, Basic<false>, PS, Sw, true>;
using KBbf16k256 = Gemm16<DType::kBf16, DType::kBf16, 64, 16, 256, 1, 1, Basic<false>, PS, Sw, true>;
using KBScaledOnly = PlainFp8<64, 16, 256, 1, 1, cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum, cutlass::epilogue::TmaWarpSpecialized, ScaledX<Shape<_64, _16, _256>, cutlass::bfloat16_t, SwapAB>>;
using KE4128 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 16, 256, 1, 1, sm90::Pingpong<false>, PS, Sw, true>;
using PP = sm90::Pingpong<false>;
using PPf = sm90::Pingpong<true>;
using KE4 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, PP, cutlass::gemm::PersistentScheduler, Sw, true>;
using KE4noact = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, PP, cutlass::gemm::PersistentScheduler, Sw, false>;
using KE4fast = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, PPf, cutlass::gemm::PersistentScheduler, Sw, true>;
using KE4c2 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 2, 1, PPf, cutlass::gemm::PersistentScheduler, Sw, true>;
using KLinTma = PlainFp8<64, 16, 256, 1, 1, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum, cutlass::epilogue::TmaWarpSpecialized>;
using KLinNoSmem = PlainFp8<64, 16, 256, 1, 1, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum, cutlass::epilogue::NoSmemWarpSpecialized>;
using KLinBasic = PlainFp8<64, 16, 256, 1, 1, cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum, cutlass::epilogue::NoSmemWarpSpecialized>;
using KBf16 = Gemm16<DType::kBf16, DType::kBf16, 64, 16, 128, 1, 1, sm90::Pingpong<>, cutlass::gemm::PersistentScheduler, Sw, true>;

struct Variant { const char* name; const KernelFns* fns; bool bf16; bool pdl = false; };

int main(int argc, char** argv) {
  int dev = 0; CK(cudaSetDevice(dev));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, dev));
  struct Prob { int64_t m, n, k; };
  std::vector<Prob> probs = {{1, 8192, 256}, {1, 8192, 1024}, {1, 8192, 4096}, {1, 8192, 8192}, {1, 10240, 8192},
                             {1, 57344, 8192}, {1, 8192, 28672}, {16, 8192, 8192}, {64, 8192, 8192}};
  const int R = 4;  // rotated weights (4 x 64 MB at K = 8192 > 50 MB L2)
  const int kLaunches = 40, kReplays = 15;
  const int64_t wbytes = 57344ll * 8192 * 2, maxK = 28672, maxN = 57344;
  std::vector<void*> wb(R);
  for (auto& w : wb) { CK(cudaMalloc(&w, wbytes)); CK(cudaMemset(w, 0x11, wbytes)); }
  void *a, *d; float *sa, *sb;
  CK(cudaMalloc(&a, 64 * maxK * 2)); CK(cudaMemset(a, 0x11, 64 * maxK * 2));
  CK(cudaMalloc(&d, 64 * maxN * 2));
  CK(cudaMalloc(&sa, 4 * 64)); CK(cudaMalloc(&sb, 4 * maxN));
  std::vector<float> ones(maxN, 1.0f);
  CK(cudaMemcpy(sa, ones.data(), 4 * 64, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sb, ones.data(), 4 * maxN, cudaMemcpyHostToDevice));
  void* ws; CK(cudaMalloc(&ws, 64 << 20));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  std::vector<Variant> vs = {
      {"e4m3_64x16x256_promoted_act (rule)", &KE4::fns, false},
      {"e4m3_64x16x256_promoted_noact", &KE4noact::fns, false},
      {"e4m3_64x16x256_fast_act", &KE4fast::fns, false},
      {"e4m3_64x16x256_fast_act_c2x1", &KE4c2::fns, false},
      {"e4m3_64x16x256_fast_lincomb_tma", &KLinTma::fns, false},
      {"e4m3_64x16x256_fast_lincomb_nosmem", &KLinNoSmem::fns, false},
      {"e4m3_64x16x256_fast_lincomb_basic_ws", &KLinBasic::fns, false},
      {"e4m3_64x16x256_promoted_act +pdl", &KE4::fns, false, true},
      {"basic e4m3 64x16x256 fast act", &KBfast::fns, false},
      {"basic e4m3 64x16x256 fast scaledX-only", &KBScaledOnly::fns, false},
      {"basic e4m3 64x16x256 promoted act", &KBprom::fns, false},
      {"basic e4m3 64x16x256 promoted act +pdl", &KBprom::fns, false, true},
      {"basic e4m3 64x16x256 promoted noact", &KBpromNoact::fns, false},
      {"basic e4m3 64x32x256 promoted act", &KBprom64x32::fns, false},
      {"e4m3 128x16x256 promoted act (pingpong)", &KE4128::fns, false},
      {"basic e4m3 128x16x256 promoted act", &KBprom128::fns, false},
      {"bf16_64x16x128_act", &KBf16::fns, true},
      {"basic bf16 64x16x128 act", &KBbf16::fns, true},
      {"basic bf16 64x16x256 act", &KBbf16k256::fns, true},
  };
  auto time_graph = [&](auto&& launch_one) { return graph_time_us(s, kLaunches, kReplays, launch_one); };
  printf("%-42s", "variant \\ MxNxK (us per call)");
  for (auto& q : probs) { char b[32]; snprintf(b, 32, "%lldx%lldx%lld", (long long)q.m, (long long)q.n / 1024, (long long)q.k / 1024); printf("%11s", b); }
  printf("\n");
  {
    printf("%-42s", "empty kernel 128x384");
    float us = time_graph([&](int) { empty_kernel<<<128, 384, 0, s>>>(); });
    for (size_t i = 0; i < probs.size(); ++i) printf("%11.2f", us);
    printf("\n%-42s", "one 16B load per CTA (128 CTAs)");
    us = time_graph([&](int i) { touch_kernel<<<128, 384, 0, s>>>((const int4*)wb[i % R], (int4*)d, 4096); });
    for (size_t i = 0; i < probs.size(); ++i) printf("%11.2f", us);
    printf("\n");
  }
  for (auto& v : vs) {
    printf("%-42s", v.name);
    for (auto& q : probs) {
      const int64_t M = q.m, N = q.n, k = q.k;
      GemmParams p;
      p.m = M; p.n = N; p.k = k; p.lda = k; p.ldb = k; p.ldd = N;
      p.a = a; p.d = d; p.scale_a = sa; p.scale_b = sb; p.scale_a_numel = 1; p.scale_b_numel = 1;
      p.device = dev; p.sm_count = prop.multiProcessorCount;
      p.bias_dtype = DType::kBf16; p.pdl = v.pdl;

      int st = v.fns->can_implement(p);
      if (st != 0) { printf("%11s", "refused"); continue; }
      if (v.fns->workspace_size(p) > (64u << 20)) { printf("%11s", "ws"); continue; }
      float us = time_graph([&](int i) {
        GemmParams q = p; q.b = wb[i % R];
        int r = v.fns->run(q, ws, s);
        if (r != 0) { printf("run status %d\n", r); exit(1); }
      });
      printf("%11.2f", us);
    }
    printf("\n");
  }
  {
    cublasHandle_t h; cublasCreate(&h); cublasSetStream(h, s);
    void* cws; CK(cudaMalloc(&cws, 32 << 20)); cublasSetWorkspace(h, cws, 32 << 20);
    printf("%-42s", "cuBLAS bf16 (cublasGemmEx)");
    for (auto& q : probs) {
      const int64_t M = q.m, N = q.n, k = q.k;
      float one = 1.0f, zero = 0.0f;
      float us = time_graph([&](int i) {
        cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(k), &one, wb[i % R], CUDA_R_16BF, int(k),
                                         a, CUDA_R_16BF, int(k), &zero, d, CUDA_R_16BF, int(N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS) { printf("cublas %d\n", int(st)); exit(1); }
      });
      printf("%11.2f", us);
    }
    printf("\n");
  }
  return 0;
}
