// Kernel lookup and the selection table: torch-free. The Python registry
// (cutlass_gemm/configs.py) owns the rules and pushes them here; the op reads them per call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm_api.h"

namespace cutlass_gemm {

// The calls a rule serves (configs.py EPILOGUE_CLASSES): a call is fused when it applies an
// activation or adds a residual, else plain.
enum class EpilogueClass : int64_t { kAny = 0, kPlain = 1, kFused = 2 };

// One selection rule: for a problem family (arch, dtypes, scale, accum), the first rule whose
// M/N/K and M x N ranges (inclusive) hold the problem and whose epilogue class takes the call names the
// kernel, and whether it launches with programmatic dependent launch (pdl: 0 or 1). Mirrors
// configs.py's RULE_FIELDS.
struct Rule {
  int64_t arch, a, b, out, scale, accum, epilogue;
  int64_t m_lo, m_hi, n_lo, n_hi, k_lo, k_hi;
  int64_t mn_lo, mn_hi;  // the output's M x N, capped at 2^62 (configs.INF)
  int64_t kernel, pdl;
};
constexpr int kRuleFields = 17;

struct Family {
  int arch;
  DType a, b, out;
  ScaleMode scale;
  Accum accum;
};

// Replaces the rule table (called by the Python registry at import and on every change).
void set_rules(std::vector<Rule> rules);

// The kernel for a problem (`fused`: its epilogue applies an activation or adds a residual;
// `activation`: it applies an activation): the first matching rule whose kernel is compiled (and
// has the activation node when the call needs it, the residual node when a fused call does), else the first such
// kernel of the family in table order; -1 when the build has none for the family. `pdl` (if given): the matching rule's
// launch flag (false for the family fallback).
int select_kernel(const Family& f, int64_t m, int64_t n, int64_t k, bool fused, bool activation, bool* pdl = nullptr);

// The accumulation mode of the kernels that serve a request (kernel_table.resolve_accum): the
// family's own when `f.arch` has kernels of it, else kF32 when the arch accumulates that family in
// plain FP32 (SM100 FP8: one kernel serves both the accurate and the fast mode).
Accum resolve_accum(const Family& f);

// Whether a kernel of accumulation `kernel` serves a request for `requested`
// (kernel_table.serves_accum): the same mode, or plain FP32 accumulation.
inline bool serves_accum(Accum kernel, Accum requested) { return kernel == requested || kernel == Accum::kF32; }

// Kernel id by name, -1 if unknown.
int find_kernel(const std::string& name);

// A kernel taken out of the table (kernel_table.RETIRED, generated): its name and why.
struct RetiredKernel {
  const char* name;
  const char* reason;
};
extern const RetiredKernel kRetired[];
extern const int kNumRetired;

// How an error names a kernel the table lacks: quoted, plus why when it was retired
// (kernel_table.unknown_kernel).
std::string unknown_kernel(const std::string& name);

bool family_matches(const KernelInfo& k, const Family& f);

// A kernel's output tiling, in kKernels' order (generated): the tile's extents along the rows and
// columns of the output it computes (swap-AB kernels compute D^T) and its tile scheduler.
struct KernelGrid {
  int64_t tile_rows, tile_cols;
  bool swap_ab, stream_k;
};
extern const KernelGrid kKernelGrids[];

// The nodes of a kernel's epilogue, in kKernels' order (generated from kernel_table.Kernel.activation and
// .residual). Without the run-time activation node a kernel serves activation "none" only. Without the residual node
// (CUTLASS's source C; built only without the activation node, tools/generate.py) it serves plain calls only.
struct KernelNodes {
  bool activation, residual;
};
extern const KernelNodes kKernelNodes[];

// The stream-K kernels' decomposition when CUTLASS_GEMM_DECOMPOSITION is unset (0: CUTLASS's
// heuristic; 3: stream-K): stream-K for 16-bit operands on outputs of fewer tiles than 2/3 of the
// SMs, where the heuristic's data-parallel grid ran 47-59 us from one capture to the next at bf16
// 16x10240x8192 and stream-K 49.9 us within 1% (H200, notes/timing.md); FP8 kept data-parallel,
// which won there by 4-19%.
int default_decomposition(int kernel, int64_t m, int64_t n, int sm_count);

// The TMA loads' L2 promotion in bytes when CUTLASS_GEMM_TMA_L2_PROMOTION is unset (0: CUTLASS's 128 B): 256 B for the
// SM90 kernels but blockwise on problems with at most 256 rows or columns (weight streaming). Session 55, H100, 3 rounds
// (bench/results/experiments/s55_l2_promotion): 256 B took FP8 row fast 128x57344x8192 to 0.968x the time and kept
// every bf16 / FP8 per-row cell at M <= 256 within 1.004x; on square problems it moved both ways (bf16 fused 2048^3
// 1.02x, FP8 row accurate 4096^3 1.017x, bf16 fused 8192^3 0.955x); blockwise lost up to 1.06x at short K. SM100 is
// unmeasured, so it keeps CUTLASS's choice.
int default_tma_l2_promotion(int kernel, int64_t m, int64_t n);

}  // namespace cutlass_gemm
