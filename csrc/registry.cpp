#include "registry.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace cutlass_gemm {

namespace {

// The rules grouped by family, each family's in table order (its priority): a call scans its own family's only.
struct RuleTable {
  struct Group {
    int64_t arch, a, b, out, scale, accum;
    size_t begin, end;
  };
  std::vector<Rule> rules;
  std::vector<Group> groups;
};

std::mutex g_mutex;
std::shared_ptr<const RuleTable> g_rules = std::make_shared<const RuleTable>();

bool in(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

std::atomic<int64_t> g_tma_encodes[4] = {};

}  // namespace

void count_tma_encode(int l2_promotion) {
  if (l2_promotion >= 0 && l2_promotion < 4) g_tma_encodes[l2_promotion].fetch_add(1, std::memory_order_relaxed);
}

int64_t tma_encode_count(int l2_promotion) {
  return l2_promotion >= 0 && l2_promotion < 4 ? g_tma_encodes[l2_promotion].load(std::memory_order_relaxed) : 0;
}

bool family_matches(const KernelInfo& k, const Family& f) {
  return k.arch == f.arch && k.a == f.a && k.b == f.b && k.out == f.out && k.scale == f.scale && k.accum == f.accum;
}

void set_rules(std::vector<Rule> rules) {
  auto table = std::make_shared<RuleTable>();
  auto same = [](const RuleTable::Group& g, const Rule& r) {
    return g.arch == r.arch && g.a == r.a && g.b == r.b && g.out == r.out && g.scale == r.scale && g.accum == r.accum;
  };
  for (const Rule& r : rules)
    if (std::none_of(table->groups.begin(), table->groups.end(), [&](const RuleTable::Group& g) { return same(g, r); }))
      table->groups.push_back({r.arch, r.a, r.b, r.out, r.scale, r.accum, 0, 0});
  table->rules.reserve(rules.size());
  for (RuleTable::Group& g : table->groups) {
    g.begin = table->rules.size();
    for (const Rule& r : rules)
      if (same(g, r)) table->rules.push_back(r);
    g.end = table->rules.size();
  }
  std::shared_ptr<const RuleTable> next = std::move(table);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_rules = std::move(next);
}

int select_kernel(const Family& f, int64_t m, int64_t n, int64_t k, bool fused, bool activation, bool* pdl) {
  if (pdl != nullptr) *pdl = false;
  // A fused call needs the residual node unless it has an activation, which kernels without that node lack too.
  auto runs = [activation, fused](int64_t id) {
    return kKernels[id].fns != nullptr && (kKernelNodes[id].activation || !activation) &&
           (kKernelNodes[id].residual || !fused);
  };
  const int64_t call = int64_t(fused ? EpilogueClass::kFused : EpilogueClass::kPlain);
  constexpr int64_t kMnCap = int64_t(1) << 62;  // configs.INF: M x N capped, never overflowed
  int64_t mn = 0;
  if (m > 0 && n > 0 && (__builtin_mul_overflow(m, n, &mn) || mn > kMnCap)) mn = kMnCap;
  std::shared_ptr<const RuleTable> table;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    table = g_rules;
  }
  const auto group = std::find_if(table->groups.begin(), table->groups.end(), [&f](const RuleTable::Group& g) {
    return g.arch == f.arch && g.a == int64_t(f.a) && g.b == int64_t(f.b) && g.out == int64_t(f.out) &&
           g.scale == int64_t(f.scale) && g.accum == int64_t(f.accum);
  });
  const size_t begin = group == table->groups.end() ? 0 : group->begin;
  const size_t end = group == table->groups.end() ? 0 : group->end;
  for (size_t i = begin; i < end; ++i) {
    const Rule& r = table->rules[i];
    if (!in(m, r.m_lo, r.m_hi) || !in(n, r.n_lo, r.n_hi) || !in(k, r.k_lo, r.k_hi) || !in(mn, r.mn_lo, r.mn_hi)) continue;
    if (r.epilogue != int64_t(EpilogueClass::kAny) && r.epilogue != call) continue;
    if (r.kernel >= 0 && r.kernel < kNumKernels && runs(r.kernel)) {
      if (pdl != nullptr) *pdl = r.pdl != 0;
      return int(r.kernel);
    }
  }
  for (int i = 0; i < kNumKernels; ++i)
    if (runs(i) && family_matches(kKernels[i], f)) return i;
  return -1;
}

Accum resolve_accum(const Family& f) {
  bool have_requested = false, have_f32 = false;
  for (int i = 0; i < kNumKernels; ++i) {
    const KernelInfo& k = kKernels[i];
    if (k.arch != f.arch || k.a != f.a || k.b != f.b || k.out != f.out || k.scale != f.scale) continue;
    have_requested |= k.accum == f.accum;
    have_f32 |= k.accum == Accum::kF32;
  }
  return (have_requested || !have_f32) ? f.accum : Accum::kF32;
}

int find_kernel(const std::string& name) {
  static const std::unordered_map<std::string, int> index = [] {
    std::unordered_map<std::string, int> m;
    for (int i = 0; i < kNumKernels; ++i) m.emplace(kKernels[i].name, i);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}

std::string unknown_kernel(const std::string& name) {
  for (int i = 0; i < kNumRetired; ++i)
    if (name == kRetired[i].name) return "'" + name + "' (retired: " + kRetired[i].reason + ")";
  return "'" + name + "'";
}

const char* status_string(int status) {
  switch (status) {
    case kOk: return "success";
    case kCannotImplement: return "the kernel cannot implement this problem";
    case kNotCompiledForArch: return "the kernel is not compiled for this GPU";
    case kTooManyTiles:
      return "the kernel launches one CTA per output tile (schedule ws) and the problem has more than 65535 tiles "
             "along the tile's second extent (M when swap-AB); a persistent kernel takes it";
    case kTmaEncodeFailed:
      return "the CUDA driver refused one of the kernel's TMA descriptors (cuTensorMapEncodeTiled; its error is on "
             "stderr) and nothing was launched: expected a driver with CUDA 12.0+ tensor maps and 16-byte aligned "
             "operands and strides";
    default: break;
  }
  switch (status - kCutlassStatusBase) {  // cutlass::Status values
    case 1: return "cutlass: misaligned operand";
    case 2: return "cutlass: invalid data type";
    case 3: return "cutlass: invalid layout";
    case 4: return "cutlass: invalid problem";
    case 5: return "cutlass: not supported";
    case 6: return "cutlass: workspace null";
    case 7: return "cutlass: internal error";
    case 8: return "cutlass: error arch mismatch";
    case 9: return "cutlass: insufficient driver";
    case 10: return "cutlass: memory allocation failed";
    case 11: return "cutlass: can_implement rejected the problem (alignment or shape)";
    default: return "cutlass: unknown status";
  }
}

int default_decomposition(int kernel, int64_t m, int64_t n, int sm_count) {
  const KernelInfo& ki = kKernels[kernel];
  const KernelGrid& g = kKernelGrids[kernel];
  if (!g.stream_k || !(ki.a == DType::kBf16 || ki.a == DType::kF16)) return 0;
  const int64_t rows = g.swap_ab ? n : m, cols = g.swap_ab ? m : n;
  const int64_t tiles = ((rows + g.tile_rows - 1) / g.tile_rows) * ((cols + g.tile_cols - 1) / g.tile_cols);
  return 3 * tiles < 2 * int64_t(sm_count) ? 3 : 0;
}

int default_tma_l2_promotion(int kernel, int64_t m, int64_t n) {
  const KernelInfo& ki = kKernels[kernel];
  return ki.arch == 90 && ki.scale != ScaleMode::kBlockwise && std::min(m, n) <= 256 ? 256 : 0;
}

}  // namespace cutlass_gemm
