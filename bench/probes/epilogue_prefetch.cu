// Epilogue-input prefetch probe (written in session 25; run in session 26: slower, output in bench/results/experiments/s26_epilogue_prefetch_probe.txt): does warming the L2 with
// a tile's scale and bias slices before the mainloop take back part of the ~0.65 us per call that
// decode_latency.cu puts in our epilogue tree? CUTLASS's broadcast nodes load those vectors only after
// the last k-tile, a dependent DRAM round trip (the streamed weights have evicted them from L2).
// EpiloguePrefetch wraps a mainloop collective: its producer issues prefetch.global.L2 for each vector's
// slice of the tile (the 128-byte lines it covers), then runs the collective's own loads. Results must be
// bitwise those of the unwrapped kernel (checked first); then both are timed under CUDA-graph replay over
// 4 rotated weights, as decode_latency.cu does. Torch-free; build and run as decode_latency.cu says
// (this file's name instead, no cuBLAS needed).
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#include "graph_timer.cuh"
#include "kernels/fp8.cuh"
#include "kernels/sm90_schedules.cuh"

using namespace cutlass_gemm;
using namespace cutlass_gemm::kernels;


// A vector the epilogue reads per tile: `axis` 0 runs along the tile's rows (CUTLASS's M; N when
// swapped), 1 along its columns; `len` 1 is a scalar (every tile reads element 0).
struct EpiVector {
  const char* ptr = nullptr;
  int64_t len = 0;
  int32_t elem_bytes = 4;
  int32_t axis = 0;
};

template <class Base, int kVecs = 3>
struct EpiloguePrefetch : Base {
  struct Arguments : Base::Arguments { EpiVector vec[kVecs] = {}; };
  struct Params : Base::Params { EpiVector vec[kVecs] = {}; };

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const& shape, Arguments const& args, void* workspace) {
    Params p{Base::to_underlying_arguments(shape, args, workspace)};
    for (int i = 0; i < kVecs; ++i) p.vec[i] = args.vec[i];
    return p;
  }

  template <class Pipeline, class State, class LoadInputs, class BlockCoord, class KTileIterator, class Storage>
  CUTLASS_DEVICE void load(Params const& params, Pipeline pipeline, State state, LoadInputs const& inputs,
                           BlockCoord const& blk, KTileIterator k_tile_iter, int k_tile_count, int thread_idx,
                           uint32_t block_rank_in_cluster, Storage& storage) {
    if (cute::elect_one_sync()) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kVecs; ++i) {
        EpiVector const& v = params.vec[i];
        if (v.ptr == nullptr) continue;
        const int64_t extent = v.axis == 0 ? cute::size<0>(typename Base::TileShape{}) : cute::size<1>(typename Base::TileShape{});
        const int64_t first = v.len == 1 ? 0 : int64_t(v.axis == 0 ? get<0>(blk) : get<1>(blk)) * extent;
        const int64_t count = v.len == 1 ? 1 : cute::min(extent, v.len - first);
        if (count <= 0) continue;
        const char* lo = v.ptr + first * v.elem_bytes;
        const char* hi = lo + count * v.elem_bytes;
        for (const char* line = reinterpret_cast<const char*>(uintptr_t(lo) & ~uintptr_t(127)); line < hi; line += 128)
          asm volatile("prefetch.global.L2 [%0];" ::"l"(line));
      }
    }
    Base::load(params, pipeline, state, inputs, blk, k_tile_iter, k_tile_count, thread_idx, block_rank_in_cluster, storage);
  }
};

// ScaledGemm's kernel with the prefetching mainloop: scale_a (per M: the tile's columns when swapped),
// scale_b and bias (per N: its rows).
template <class Plain>
struct Prefetching {
  using Mainloop = EpiloguePrefetch<typename Plain::CollectiveMainloop>;
  using Kernel = PersistentKernel<Mainloop, typename Plain::CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static constexpr int kAlignD = Plain::kAlignD;
  static constexpr int kRoundM = Plain::kRoundM;
  static constexpr bool kAct = Plain::kAct;

  static typename Adapter::Arguments make_args(const GemmParams& p) {
    auto b = Plain::make_args(p);
    typename Adapter::Arguments a;
    a.mode = b.mode;
    a.problem_shape = b.problem_shape;
    static_cast<typename Plain::CollectiveMainloop::Arguments&>(a.mainloop) = b.mainloop;
    a.epilogue = b.epilogue;
    a.hw_info = b.hw_info;
    a.scheduler = b.scheduler;
    // swap-AB only (the decode tiles): per-M vectors run along the tile's columns (axis 1), per-N ones its rows (0)
    a.mainloop.vec[0] = {reinterpret_cast<const char*>(p.scale_a), p.scale_a_numel, 4, 1};
    a.mainloop.vec[1] = {reinterpret_cast<const char*>(p.scale_b), p.scale_b_numel, 4, 0};
    if (p.bias != nullptr)
      a.mainloop.vec[2] = {reinterpret_cast<const char*>(p.bias), p.n, p.bias_dtype == DType::kF32 ? 4 : 2, 0};
    return a;
  }
  static constexpr KernelFns fns = AdapterFns<Prefetching, Adapter>::fns;
};

using PS = cutlass::gemm::PersistentScheduler;
using Fast64 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, sm90::Ws<true>, PS, SwapAB>;
using Prom64 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 64, 16, 256, 1, 1, sm90::Ws<false>, PS, SwapAB>;
using Prom128 = ScaledGemm<DType::kE4m3, DType::kE4m3, DType::kBf16, 128, 16, 256, 1, 1, sm90::Ws<false>, PS, SwapAB>;

struct Variant { const char* name; const KernelFns* plain; const KernelFns* prefetching; };

int main() {
  CK(cudaSetDevice(0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  struct Prob { int64_t m, n, k; };
  const std::vector<Prob> probs = {{1, 8192, 256}, {1, 8192, 8192}, {16, 8192, 8192}, {1, 10240, 8192}, {1, 8192, 28672}};
  const int R = 4, kLaunches = 40, kReplays = 15;
  const int64_t wbytes = 8192ll * 28672, maxN = 10240, maxK = 28672;
  std::vector<void*> wb(R);
  for (auto& w : wb) { CK(cudaMalloc(&w, wbytes)); CK(cudaMemset(w, 0x31, wbytes)); }
  void *a, *d, *d2, *bias; float *sa, *sb;
  CK(cudaMalloc(&a, 16 * maxK)); CK(cudaMemset(a, 0x32, 16 * maxK));
  CK(cudaMalloc(&d, 16 * maxN * 2)); CK(cudaMalloc(&d2, 16 * maxN * 2));
  CK(cudaMalloc(&bias, maxN * 2)); CK(cudaMemset(bias, 0x3c, maxN * 2));
  CK(cudaMalloc(&sa, 4 * 16)); CK(cudaMalloc(&sb, 4 * maxN));
  std::vector<float> sc(maxN);
  for (int64_t i = 0; i < maxN; ++i) sc[i] = 0.5f + float(i % 7) / 8.0f;
  CK(cudaMemcpy(sa, sc.data(), 4 * 16, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sb, sc.data(), 4 * maxN, cudaMemcpyHostToDevice));
  void* ws; CK(cudaMalloc(&ws, 64 << 20));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  auto time_graph = [&](auto&& launch_one) { return graph_time_us(s, kLaunches, kReplays, launch_one); };

  const std::vector<Variant> vs = {
      {"ws e4m3 fast 64x16x256", &Fast64::fns, &Prefetching<Fast64>::fns},
      {"ws e4m3 promoted 64x16x256", &Prom64::fns, &Prefetching<Prom64>::fns},
      {"ws e4m3 promoted 128x16x256", &Prom128::fns, &Prefetching<Prom128>::fns},
  };
  printf("%-30s %-18s %-12s", "kernel", "scales", "bias");
  for (auto& q : probs) { char b[40]; snprintf(b, 40, "%lldx%lldx%lld", (long long)q.m, (long long)q.n, (long long)q.k); printf("%26s", b); }
  printf("\n%62s", "");
  for (size_t i = 0; i < probs.size(); ++i) printf("%26s", "plain / prefetch (us)");
  printf("\n");
  for (auto& v : vs) {
    for (int mode = 0; mode < 3; ++mode) {  // 0 per-tensor, 1 per-row/col, 2 per-row/col + bf16 bias
      printf("%-30s %-18s %-12s", v.name, mode == 0 ? "tensor" : "row x col", mode == 2 ? "bf16" : "none");
      for (auto& q : probs) {
        GemmParams p;
        p.m = q.m; p.n = q.n; p.k = q.k; p.lda = q.k; p.ldb = q.k; p.ldd = q.n;
        p.a = a; p.b = wb[0]; p.d = d; p.scale_a = sa; p.scale_b = sb;
        p.scale_a_numel = mode == 0 ? 1 : q.m; p.scale_b_numel = mode == 0 ? 1 : q.n;
        p.bias = mode == 2 ? bias : nullptr; p.bias_dtype = DType::kBf16;
        p.device = 0; p.sm_count = prop.multiProcessorCount;
        if (v.plain->can_implement(p) != 0 || v.prefetching->can_implement(p) != 0) { printf("%26s", "refused"); continue; }
        // the prefetch must not change a bit of the result
        CK(cudaMemset(d, 0xff, q.m * q.n * 2)); CK(cudaMemset(d2, 0xee, q.m * q.n * 2));
        GemmParams p2 = p; p2.d = d2;
        if (v.plain->run(p, ws, s) != 0 || v.prefetching->run(p2, ws, s) != 0) { printf("run failed\n"); return 1; }
        CK(cudaStreamSynchronize(s));
        std::vector<char> h1(q.m * q.n * 2), h2(q.m * q.n * 2);
        CK(cudaMemcpy(h1.data(), d, h1.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h2.data(), d2, h2.size(), cudaMemcpyDeviceToHost));
        if (memcmp(h1.data(), h2.data(), h1.size()) != 0) { printf("%26s", "MISMATCH"); continue; }
        float t[2];
        for (int pf = 0; pf < 2; ++pf) {
          const KernelFns* f = pf ? v.prefetching : v.plain;
          t[pf] = time_graph([&](int i) {
            GemmParams r = p; r.b = wb[i % R];
            if (f->run(r, ws, s) != 0) { printf("run failed\n"); exit(1); }
          });
        }
        char b[40]; snprintf(b, 40, "%.2f / %.2f", t[0], t[1]); printf("%26s", b);
      }
      printf("\n");
    }
  }
  return 0;
}
