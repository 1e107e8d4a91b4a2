// Two-CTAs-per-SM probe (session 28): the FP8 decode ws tiles with their stage count cut so two CTAs
// share an SM, against the table's (auto stages: one CTA per SM). At N = 10240 the 64-row weight tile makes
// 160 CTAs, 1.2 waves at one CTA per SM (the second wave is 28 CTAs streaming alone); two per SM put all 160
// on the GPU at once, every CTA streaming its 64 weight rows concurrently. Same for the 64x64 tile at M = 64.
// Results: bench/results/experiments/s28_ws_occupancy_*.txt (two CTAs per SM: 16x10240x8192 24.7 -> 23.1-23.4 us;
// the 64x64 tile and N = 8192 lose) and s28_ws_prefetch_*.txt (the weight's L2 prefetch before the PDL wait: no
// gain; with the early launch_dependents up to 30% slower at N = 10240, so neither went into the kernels).
// Timed under CUDA-graph replay over 4 rotated weights (> L2), row scales + bf16 bias (the tables' row
// family). A cut-stage kernel's output is compared bitwise with its auto-stage twin (same tile, same K
// order) on random bytes first. Torch-free; build and run as bench/probes/decode_latency.cu says:
//   nvcc ... -gencode arch=compute_90a,code=sm_90a bench/probes/ws_occupancy.cu -o ws_occupancy
//   ./ws_occupancy occupancy   # per variant: stages, registers, shared memory, CTAs per SM, us per call and TB/s
//   ./ws_occupancy prefetch    # the prefetch / early-trigger variants (session 28: none helped)
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include <cuda_runtime.h>
#include "graph_timer.cuh"
#include "kernels/fp8.cuh"
#include "kernels/sm90_schedules.cuh"

using namespace cutlass_gemm;
using namespace cutlass_gemm::kernels;

// The ws kernel's producer waits for the previous grid (griddepcontrol.wait) before its first load; the weight
// does not depend on that grid. `Pf` > 0: before the wait, thread 0 issues TMA L2 prefetches of the CTA's first
// `Pf` weight k-tiles (only a hint: L2 is coherent, the loads after the wait still read current data).
// `Early`: the producer signals launch_dependents once it has issued its last load, not after the consumer's
// last MMA, so a PDL-launched successor's CTAs (where they fit beside ours) start prefetching under our tail.
template <class Base, int Pf, bool WeightIsA, bool Early>
struct PrefetchMainloop : Base {
  template <class ProblemShape_MNKL>
  CUTLASS_DEVICE auto load_init(ProblemShape_MNKL const& shape, typename Base::Params const& params) const {
    auto inputs = Base::load_init(shape, params);
    if constexpr (Pf > 0) {
      if (threadIdx.x == 0) {
        auto const& tma = [&]() -> auto const& { if constexpr (WeightIsA) return params.tma_load_a; else return params.tma_load_b; }();
        Tensor g = get<WeightIsA ? 0 : 1>(inputs)(_, _, WeightIsA ? int(blockIdx.x) : int(blockIdx.y), _, 0);  // (BLK,BLK_K,k)
        Tensor t = tma.get_slice(0).partition_S(g);                                                             // (TMA,TMA_X,TMA_K,k)
        const int n = cute::min(Pf, int(size<3>(t)));
        for (int k = 0; k < n; ++k) cute::prefetch(tma, t(_, _, _, k));
      }
    }
    return inputs;
  }
  template <class... Args>
  CUTLASS_DEVICE void load(Args&&... args) {
    Base::load(static_cast<Args&&>(args)...);
    if constexpr (Early) cutlass::arch::launch_dependent_grids();
  }
};

// ScaledGemm's ws kernel with an explicit stage count (0: auto carveout, as the table builds it) and
// CUTLASS's launch bound MinBlocksPerMultiprocessor raised to `MinBlocks` (caps registers at 65536 / (256 x it)).
template <int TM, int TN, int TK, int Stages, bool Fast, int MinBlocks, class Orient, int Pf = 0, bool Early = false>
struct StagedWs {
  using ElementA = cutlass::float_e4m3_t;
  using ElementD = cutlass::bfloat16_t;
  static constexpr int kAlignD = 8;
  static constexpr int kRoundM = 1;
  static constexpr bool kAct = true;
  using Schedule = sm90::Ws<Fast>;
  using MmaTile = Shape<Int<TM>, Int<TN>, Int<TK>>;
  using ClusterShape = Shape<_1, _1, _1>;
  using X = ScaledX<MmaTile, ElementD, Orient>;
  using Tree = EpilogueTail<MmaTile, ElementD, X, Orient, true>;
  using CollectiveEpilogue = CollectiveEpilogueFor<MmaTile, ClusterShape, ElementD, Schedule, Tree, Orient>;
  using StageSpec = cute::conditional_t<
      Stages == 0,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::collective::StageCount<(Stages > 0 ? Stages : 1)>>;
  using BuiltMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, cutlass::layout::RowMajor, 16, ElementA,
      cutlass::layout::ColumnMajor, 16, float, MmaTile, ClusterShape, StageSpec, typename Schedule::Mainloop>::CollectiveOp;
  using CollectiveMainloop = cute::conditional_t<Pf == 0 && !Early, BuiltMainloop,
                                                 PrefetchMainloop<BuiltMainloop, Pf, Orient::kSwap, Early>>;
  using Base = PersistentKernel<CollectiveMainloop, CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
  struct Kernel : Base {
    static constexpr uint32_t MinBlocksPerMultiprocessor = MinBlocks;
  };
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static constexpr int kStages = CollectiveMainloop::DispatchPolicy::Stages;

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto args = gemm_args<Kernel, ElementA, ElementA, ElementD, Orient>(p);
    auto bias = split_bias<ElementD>(p, DType::kBf16);
    const bool row_a = p.scale_a_numel > 1, col_b = p.scale_b_numel > 1;
    typename X::Arguments x{{{p.scale_a, 0.0f, Orient::per_m(row_a)}, {}, {}},
                            {p.scale_b, 0.0f, Orient::per_n(col_b)},
                            {bias.d, ElementD(0), {}},
                            {}};
    args.epilogue.thread = tail_args<Tree, X, true>(p, bias.f32, x);
    if constexpr (!Fast) args.mainloop.mma_promotion_interval = uint32_t(TK / 32);  // once per k-tile, as the table
    return args;
  }
  static constexpr KernelFns fns = AdapterFns<StagedWs, Adapter>::fns;

  static void describe(int* regs, int* ctas_per_sm, int* smem_kb) {
    auto fn = cutlass::device_kernel<Kernel>;
    constexpr int smem = Kernel::SharedStorageSize;
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, int(cudaSharedmemCarveoutMaxShared)));
    cudaFuncAttributes at; CK(cudaFuncGetAttributes(&at, fn));
    *regs = at.numRegs;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, fn, Kernel::MaxThreadsPerBlock, smem));
    *smem_kb = smem / 1024;
  }
};

using Sw = SwapAB;
using Nm = Normal;
struct Variant {
  const char* name; const KernelFns* fns; void (*describe)(int*, int*, int*); int twin; bool pdl; int stages;
};
#define V(name, T, twin, pdl) Variant{name, &T::fns, &T::describe, twin, pdl, T::kStages}
// Promoted (the default accurate family) and fast; auto-stage twins first (their index is `twin`).
using P128x16 = StagedWs<128, 16, 256, 0, false, 1, Sw>;
using P128x16pe = StagedWs<128, 16, 256, 0, false, 1, Sw, 6, true>;
using P64x16 = StagedWs<64, 16, 256, 0, false, 1, Sw>;
using P64x16pe = StagedWs<64, 16, 256, 0, false, 1, Sw, 6, true>;
using P64x16s5 = StagedWs<64, 16, 256, 5, false, 2, Sw>;
using P64x16s5p = StagedWs<64, 16, 256, 5, false, 2, Sw, 6, false>;
using P64x16s5e = StagedWs<64, 16, 256, 5, false, 2, Sw, 0, true>;
using P64x16s5pe = StagedWs<64, 16, 256, 5, false, 2, Sw, 6, true>;
using P64x16s5pe12 = StagedWs<64, 16, 256, 5, false, 2, Sw, 12, true>;
using P64x16s5pe3 = StagedWs<64, 16, 256, 5, false, 2, Sw, 3, true>;
using P64x32s4 = StagedWs<64, 32, 256, 4, false, 2, Sw>;
using P64x32s4pe = StagedWs<64, 32, 256, 4, false, 2, Sw, 6, true>;
using P64x64 = StagedWs<64, 64, 256, 0, false, 1, Sw>;
using P64x64pe = StagedWs<64, 64, 256, 0, false, 1, Sw, 6, true>;
using P64x64s3pe = StagedWs<64, 64, 256, 3, false, 2, Sw, 6, true>;
using P64x80n = StagedWs<64, 80, 256, 0, false, 1, Nm>;
using P64x80npe = StagedWs<64, 80, 256, 0, false, 1, Nm, 6, true>;
using F64x16s5pe = StagedWs<64, 16, 256, 5, true, 2, Sw, 6, true>;
using F128x16 = StagedWs<128, 16, 256, 0, true, 1, Sw>;
using P64x64s3 = StagedWs<64, 64, 256, 3, false, 2, Sw>;
using F64x16 = StagedWs<64, 16, 256, 0, true, 1, Sw>;
using F64x16s5 = StagedWs<64, 16, 256, 5, true, 2, Sw>;
using F64x64s3 = StagedWs<64, 64, 256, 3, true, 2, Sw>;

int main(int argc, char** argv) {
  int dev = 0; CK(cudaSetDevice(dev));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, dev));
  const std::string set = argc > 1 ? argv[1] : "occupancy";
  // "occupancy": stage counts for two CTAs per SM against the table's tiles (results/experiments/s28_ws_occupancy_*);
  // "prefetch": weight L2 prefetch before the PDL wait and an early launch_dependents (s28_ws_prefetch_*).
  std::vector<Variant> occupancy = {
      V("prom 128x16x256 auto (rule M<=16 @10240)", P128x16, -1, false),
      V("prom 64x16x256 auto", P64x16, -1, false),
      V("prom 64x16x256 s5 x2", P64x16s5, 1, false),
      V("prom 64x16x256 s4 x2", P64x16s4, 1, false),
      V("prom 64x16x256 s5 x2 +pdl", P64x16s5, 1, true),
      V("prom 64x32x256 s4 x2", P64x32s4, -1, false),
      V("prom 64x64x256 auto (rule M=64 @8192)", P64x64, -1, false),
      V("prom 64x64x256 auto +pdl", P64x64, -1, true),
      V("prom 64x64x256 s3 x2", P64x64s3, 6, false),
      V("prom 64x64x256 s3 x2 +pdl", P64x64s3, 6, true),
      V("prom 64x80x256 auto nonswap (M=64 @10240)", P64x80n, -1, false),
      V("prom 64x80x256 auto nonswap +pdl", P64x80n, -1, true),
      V("fast 128x16x256 auto", F128x16, -1, false),
      V("fast 64x16x256 auto", F64x16, -1, false),
      V("fast 64x16x256 s5 x2", F64x16s5, 13, false),
      V("fast 64x64x256 s3 x2", F64x64s3, -1, false),
  };
  std::vector<Variant> prefetch = {
      V("prom 128x16x256 auto +pdl", P128x16, -1, true),
      V("prom 128x16x256 auto pf6 early +pdl", P128x16pe, 0, true),
      V("prom 64x16x256 auto +pdl", P64x16, -1, true),
      V("prom 64x16x256 auto pf6 early +pdl", P64x16pe, 2, true),
      V("prom 64x16x256 s5 x2 +pdl", P64x16s5, 2, true),
      V("prom 64x16x256 s5 x2 pf6 +pdl", P64x16s5p, 2, true),
      V("prom 64x16x256 s5 x2 early +pdl", P64x16s5e, 2, true),
      V("prom 64x16x256 s5 x2 pf6 early +pdl", P64x16s5pe, 2, true),
      V("prom 64x16x256 s5 x2 pf12 early +pdl", P64x16s5pe12, 2, true),
      V("prom 64x16x256 s5 x2 pf3 early +pdl", P64x16s5pe3, 2, true),
      V("prom 64x16x256 s5 x2 pf6 early (no pdl)", P64x16s5pe, 2, false),
      V("prom 64x32x256 s4 x2 +pdl", P64x32s4, -1, true),
      V("prom 64x32x256 s4 x2 pf6 early +pdl", P64x32s4pe, 11, true),
      V("prom 64x64x256 auto +pdl", P64x64, -1, true),
      V("prom 64x64x256 auto pf6 early +pdl", P64x64pe, 13, true),
      V("prom 64x64x256 s3 x2 pf6 early +pdl", P64x64s3pe, 13, true),
      V("prom 64x80x256 nonswap +pdl", P64x80n, -1, true),
      V("prom 64x80x256 nonswap pf6 early +pdl", P64x80npe, 16, true),
      V("fast 128x16x256 auto +pdl", F128x16, -1, true),
      V("fast 64x16x256 s5 x2 pf6 early +pdl", F64x16s5pe, -1, true),
  };
  if (set != "occupancy" && set != "prefetch") { printf("usage: ws_occupancy [occupancy|prefetch]\n"); return 2; }
  const std::vector<Variant>& vs = set == "occupancy" ? occupancy : prefetch;
  struct Prob { int64_t m, n, k; };
  std::vector<Prob> probs = {{1, 10240, 8192}, {16, 10240, 8192}, {32, 10240, 8192}, {64, 10240, 8192},
                             {1, 8192, 8192},  {16, 8192, 8192},  {64, 8192, 8192},  {16, 57344, 8192},
                             {16, 8192, 28672}};
  const int R = 4;
  const int kLaunches = 40, kReplays = 15;
  const int64_t maxN = 57344, maxK = 28672, wbytes = 57344ll * 8192;
  std::vector<void*> wb(R);
  std::mt19937 rng(1234);
  {
    std::vector<uint8_t> h(wbytes);
    for (auto& x : h) { uint8_t v = uint8_t(rng()); x = (v & 0x7f) == 0x7f ? 0x3c : v; }  // no e4m3 NaN
    for (auto& w : wb) { CK(cudaMalloc(&w, wbytes)); CK(cudaMemcpy(w, h.data(), wbytes, cudaMemcpyHostToDevice)); }
  }
  void *a, *d, *d2, *bias; float *sa, *sb;
  {
    std::vector<uint8_t> h(64 * maxK);
    for (auto& x : h) { uint8_t v = uint8_t(rng()); x = (v & 0x7f) == 0x7f ? 0x3c : v; }
    CK(cudaMalloc(&a, h.size())); CK(cudaMemcpy(a, h.data(), h.size(), cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&d, 64 * maxN * 2)); CK(cudaMalloc(&d2, 64 * maxN * 2)); CK(cudaMalloc(&bias, maxN * 2));
  CK(cudaMemset(bias, 0x3c, maxN * 2));
  CK(cudaMalloc(&sa, 4 * 64)); CK(cudaMalloc(&sb, 4 * maxN));
  std::vector<float> sc(maxN);
  for (auto& x : sc) x = 1e-3f * float(1 + rng() % 7);
  CK(cudaMemcpy(sa, sc.data(), 4 * 64, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sb, sc.data(), 4 * maxN, cudaMemcpyHostToDevice));
  void* ws; CK(cudaMalloc(&ws, 64 << 20));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  auto params = [&](const Prob& q, bool pdl) {
    GemmParams p;
    p.m = q.m; p.n = q.n; p.k = q.k; p.lda = q.k; p.ldb = q.k; p.ldd = q.n;
    p.a = a; p.b = wb[0]; p.d = d; p.bias = bias; p.bias_dtype = DType::kBf16;
    p.scale_a = sa; p.scale_b = sb; p.scale_a_numel = q.m; p.scale_b_numel = q.n;
    p.device = dev; p.sm_count = prop.multiProcessorCount; p.pdl = pdl;
    return p;
  };

  printf("%-44s %4s %4s %5s %4s", "variant", "stg", "regs", "smemK", "/SM");
  for (auto& q : probs) { char b[32]; snprintf(b, 32, "%lldx%lldx%lld", (long long)q.m, (long long)q.n / 1024, (long long)q.k / 1024); printf("%12s", b); }
  printf("   (us per call; TB/s of A+B+D bytes below)\n");
  int mismatches = 0;
  for (auto& v : vs) {
    int regs, occ, smem_kb; v.describe(&regs, &occ, &smem_kb);
    printf("%-44s %4d %4d %5d %4d", v.name, v.stages, regs, smem_kb, occ);
    std::vector<double> tbs;
    for (auto& q : probs) {
      GemmParams p = params(q, v.pdl);
      if (v.fns->can_implement(p) != 0) { printf("%12s", "refused"); tbs.push_back(0); continue; }
      if (v.twin >= 0) {  // bitwise against the auto-stage twin on the same inputs
        const Variant& t = vs[v.twin];
        GemmParams pt = params(q, false); pt.d = d2;
        CK(cudaMemset(d, 0xff, q.m * q.n * 2)); CK(cudaMemset(d2, 0x7f, q.m * q.n * 2));
        if (v.fns->run(p, ws, s) != 0 || t.fns->run(pt, ws, s) != 0) { printf("run failed\n"); return 1; }
        CK(cudaStreamSynchronize(s));
        std::vector<uint8_t> h1(q.m * q.n * 2), h2(q.m * q.n * 2);
        CK(cudaMemcpy(h1.data(), d, h1.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h2.data(), d2, h2.size(), cudaMemcpyDeviceToHost));
        if (memcmp(h1.data(), h2.data(), h1.size()) != 0) { ++mismatches; printf("%12s", "MISMATCH"); tbs.push_back(0); continue; }
      }
      float us = graph_time_us(s, kLaunches, kReplays, [&](int i) {
        GemmParams r = p; r.b = wb[i % R];
        if (v.fns->run(r, ws, s) != 0) { printf("run failed\n"); exit(1); }
      });
      printf("%12.2f", us);
      tbs.push_back(double(q.m * q.k + q.n * q.k + q.m * q.n * 2) / (us * 1e-6) / 1e12);
    }
    printf("\n%-66s", "");
    for (double t : tbs) printf("%12.2f", t);
    printf("\n");
  }
  printf("bitwise mismatches against auto-stage twins: %d\n", mismatches);
  return mismatches != 0;
}
