// The only C++ file that includes torch (LibTorch stable ABI, target 2.10): schemas, argument
// checks (same messages as cutlass_gemm/_validate.py), the shape fallback, output/workspace
// allocation, device guard, current stream. Kernels are reached through gemm_api.h only.
#include <Python.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

#include "device_info.h"
#include "gemm_api.h"
#include "quantize_api.h"
#include "registry.h"

// `from cutlass_gemm import _C` loads this library; the ops register from static initializers.
extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef def = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&def);
}

namespace cutlass_gemm {
namespace {

using torch::stable::Tensor;
using ST = torch::headeronly::ScalarType;

// ---------------------------------------------------------------------------------------------
// Messages: formatted exactly like cutlass_gemm/_validate.py (a GPU test compares them).

std::string dtype_name(ST t) {
  switch (t) {
    case ST::BFloat16: return "bfloat16";
    case ST::Half: return "float16";
    case ST::Float: return "float32";
    case ST::Double: return "float64";
    case ST::Float8_e4m3fn: return "float8_e4m3fn";
    case ST::Float8_e5m2: return "float8_e5m2";
    case ST::Char: return "int8";
    case ST::Byte: return "uint8";
    case ST::Short: return "int16";
    case ST::Int: return "int32";
    case ST::Long: return "int64";
    case ST::Bool: return "bool";
    // The rest as Python prints them (str(torch.dtype)), so C++ and Python messages agree on any input.
    case ST::ComplexHalf: return "complex32";
    case ST::ComplexFloat: return "complex64";
    case ST::ComplexDouble: return "complex128";
    case ST::QInt8: return "qint8";
    case ST::QUInt8: return "quint8";
    case ST::QInt32: return "qint32";
    case ST::QUInt4x2: return "quint4x2";
    case ST::QUInt2x4: return "quint2x4";
    case ST::Bits1x8: return "bits1x8";
    case ST::Bits2x4: return "bits2x4";
    case ST::Bits4x2: return "bits4x2";
    case ST::Bits8: return "bits8";
    case ST::Bits16: return "bits16";
    case ST::Float8_e5m2fnuz: return "float8_e5m2fnuz";
    case ST::Float8_e4m3fnuz: return "float8_e4m3fnuz";
    case ST::UInt16: return "uint16";
    case ST::UInt32: return "uint32";
    case ST::UInt64: return "uint64";
    case ST::UInt1: return "uint1";
    case ST::UInt2: return "uint2";
    case ST::UInt3: return "uint3";
    case ST::UInt4: return "uint4";
    case ST::UInt5: return "uint5";
    case ST::UInt6: return "uint6";
    case ST::UInt7: return "uint7";
    case ST::Int1: return "int1";
    case ST::Int2: return "int2";
    case ST::Int3: return "int3";
    case ST::Int4: return "int4";
    case ST::Int5: return "int5";
    case ST::Int6: return "int6";
    case ST::Int7: return "int7";
    case ST::Float8_e8m0fnu: return "float8_e8m0fnu";
    case ST::Float4_e2m1fn_x2: return "float4_e2m1fn_x2";
    default: return torch::headeronly::toString(t);
  }
}

std::string shape_str(const Tensor& t) {
  std::ostringstream s;
  s << "[";
  for (int64_t i = 0; i < t.dim(); ++i) s << (i ? ", " : "") << t.size(i);
  s << "]";
  return s.str();
}

std::string device_str(const Tensor& t) {
  if (t.is_cpu()) return "cpu";
  if (t.is_cuda()) return "cuda:" + std::to_string(t.get_device_index());
  return "device(" + std::to_string(int(t.get_device_index())) + ")";
}

bool same_device(const Tensor& x, const Tensor& y) {
  return x.is_cuda() == y.is_cuda() && x.is_cpu() == y.is_cpu() && x.get_device_index() == y.get_device_index();
}

// A plain std::runtime_error: Python sees RuntimeError(msg) with nothing prepended, so the
// message matches the Python validator's exactly.
[[noreturn]] void fail(const char* op, const std::string& msg) { throw std::runtime_error(std::string(op) + ": " + msg); }

std::optional<DType> to_dtype(ST t) {
  switch (t) {
    case ST::BFloat16: return DType::kBf16;
    case ST::Half: return DType::kF16;
    case ST::Float: return DType::kF32;
    case ST::Float8_e4m3fn: return DType::kE4m3;
    case ST::Float8_e5m2: return DType::kE5m2;
    default: return std::nullopt;
  }
}

ST to_scalar_type(DType d) {
  switch (d) {
    case DType::kBf16: return ST::BFloat16;
    case DType::kF16: return ST::Half;
    case DType::kF32: return ST::Float;
    case DType::kE4m3: return ST::Float8_e4m3fn;
    default: return ST::Float8_e5m2;
  }
}

const char* kActivationNames[] = {"none", "relu", "gelu", "gelu_tanh", "silu"};  // kernel_table.ACTIVATIONS
constexpr int kNumActivations = 5;

// Output dtypes that some kernel of the table offers for this input dtype, in table order of
// DTYPES (the same list the Python validator derives from kernel_table.py).
std::vector<DType> out_dtypes_for(DType a, ScaleMode scale) {
  std::vector<bool> seen(8, false);
  for (int i = 0; i < kNumKernels; ++i)
    if (kKernels[i].a == a && kKernels[i].scale == scale) seen[int(kKernels[i].out)] = true;
  std::vector<DType> outs;
  for (int d = 0; d < 8; ++d)
    if (seen[d]) outs.push_back(DType(d));
  return outs;
}

std::string names_list(const std::vector<std::string>& items, const char* last_sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += (i + 1 == items.size()) ? last_sep : ", ";
    s += items[i];
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// The shape fallback (design: one rule for every op). TMA needs 16-byte aligned base pointers
// and row strides. An operand that is not a row-major view with such strides, or whose width
// must be padded (K for A/B, N for the output side), is copied into a scratch buffer,
// zero-padded to `width`; otherwise it is used in place.

struct Operand2D {
  Tensor t;
  int64_t ld;
};

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

bool tma_ok(const Tensor& t, int64_t align_elems) {
  return t.stride(1) == 1 && t.stride(0) % align_elems == 0 && t.stride(0) >= t.size(1) &&
         reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

Operand2D as_tma_operand(Tensor t, int64_t width, int64_t align_elems) {
  if (t.size(1) == width && tma_ok(t, align_elems)) return {t, t.stride(0)};
  const int64_t rows = t.size(0), cols = t.size(1);
  Tensor dst = width == cols ? torch::stable::new_empty(t, {rows, width}) : torch::stable::new_zeros(t, {rows, width});
  if (cols > 0) {
    Tensor view = torch::stable::narrow(dst, 1, 0, cols);
    torch::stable::copy_(view, t);
  }
  return {dst, width};
}

bool tma_free_aligned(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; }

Tensor as_aligned_vector(Tensor v, int64_t width) {
  if (v.size(0) == width && v.stride(0) == 1 && reinterpret_cast<uintptr_t>(v.data_ptr()) % 16 == 0) return v;
  Tensor dst = torch::stable::new_zeros(v, {width});
  Tensor view = torch::stable::narrow(dst, 0, 0, v.size(0));
  torch::stable::copy_(view, v);
  return dst;
}

Tensor flatten_rows(const Tensor& t, int64_t rows, int64_t cols) {
  if (t.dim() == 2) return t;
  return torch::stable::reshape(t, {rows, cols});
}

int arch_of(const Tensor& t, const char* op) {
  const DeviceInfo& info = device_info(t.get_device_index());
  if (info.arch == 0)
    fail(op, "unsupported GPU sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor) +
                 " on " + device_str(t) + "; cutlass_gemm supports sm_90 (H100/H200) and sm_100 (B200/GB200)");
  return info.arch;
}

// The kernel for this call: `config` if given (validated), else the selection table (`fused`: the
// call applies an activation or adds a residual). `pdl`: whether the selecting rule launches with
// programmatic dependent launch (a forced config launches without).
int choose_kernel(const char* op, const std::string& config, const Family& f, int64_t m, int64_t n, int64_t k,
                  bool fused, Activation act, bool* pdl) {
  *pdl = false;
  if (!config.empty()) {
    int id = find_kernel(config);  // existence and family were checked by validation
    const KernelInfo& ki = kKernels[id];
    if (act != Activation::kNone && !kKernelNodes[id].activation)
      fail(op, "config '" + config + "' has no activation in its epilogue; expected activation='none' with it");
    if (fused && !kKernelNodes[id].residual)  // fused without an activation: a residual
      fail(op, "config '" + config + "' has no residual in its epilogue; expected residual=None with it");
    if (ki.arch != f.arch)
      fail(op, "config '" + config + "' is an sm" + std::to_string(ki.arch) + " kernel; this GPU is sm_" +
                   std::to_string(f.arch));
    if (ki.fns == nullptr)
      fail(op, "config '" + config + "' is not compiled into this build (rebuild with CUTLASS_GEMM_ARCHS including " +
                   std::to_string(ki.arch) + "a)");
    return id;
  }
  int id = select_kernel(f, m, n, k, fused, act != Activation::kNone, pdl);
  if (id < 0)
    fail(op, "no kernel for sm_" + std::to_string(f.arch) + " " + dtype_name(to_scalar_type(f.a)) + " -> " +
                 dtype_name(to_scalar_type(f.out)) + " is compiled into this build (CUTLASS_GEMM_ARCHS)");
  return id;
}

// Measurement knobs, read once per process from the environment: 0 when unset, the value when
// `ok` accepts it, else -1 (launch() raises, naming what was expected).
//   CUTLASS_GEMM_FP8_PROMOTION_INTERVAL (bench/fp8_promotion.py): the promoted FP8 mainloop's MMAs
//     (k-blocks of 32) per FP32 promotion; default kFp8PromotionInterval; a positive multiple of 4
//     (a promotion must fall on a 128-wide k-tile boundary; a 256-deep tile rounds it up to 8's).
//   CUTLASS_GEMM_SWIZZLE / CUTLASS_GEMM_RASTER (bench/scheduler_knobs.py): the persistent tile
//     scheduler's max swizzle (1, 2, 4, 8) and raster order (1 = along M, 2 = along N); unset: SM90
//     swizzle 8 for grids of >= 8 waves of tiles, else 1 (kernels::default_swizzle), heuristic raster.
//   CUTLASS_GEMM_PDL: 1 launches every GEMM with programmatic dependent launch (its prologue
//     overlaps the previous kernel's tail; it reads nothing before that kernel completes), 0 none;
//     unset: the selecting rule's `pdl` flag (on only where the H200 A/B measured it faster at every
//     shape the rule serves: notes/pdl.md; 10-26% slower at others, e.g. 64x10240x8192).
//   CUTLASS_GEMM_DECOMPOSITION / CUTLASS_GEMM_SPLITS / CUTLASS_GEMM_REDUCTION (stream-K kernels
//     only): CUTLASS's decomposition (1 data-parallel, 2 split-K, 3 stream-K; unset: its heuristic,
//     except stream-K for 16-bit operands on grids under 2/3 of the SMs: default_decomposition),
//     the split-K factor (2-64; split-K only, and split-K needs it) and the reduction order
//     (1 non-deterministic; unset: deterministic).
//   CUTLASS_GEMM_TMA_L2_PROMOTION: bytes of L2 promotion (64, 128, 256) of every TMA descriptor the
//     kernels encode (kernels/tma_l2_promotion.cuh); unset: default_tma_l2_promotion (registry.h).
template <class Ok>
int env_knob(const char* name, Ok ok) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == '\0') return 0;
  char* end = nullptr;
  long x = std::strtol(e, &end, 10);
  return (*end == '\0' && ok(x)) ? int(x) : -1;
}

struct Knobs {
  int promotion, swizzle, raster, pdl, decomposition, splits, reduction, tma_l2_promotion;
  bool pdl_set;  // CUTLASS_GEMM_PDL is set (0 and unset both read as 0 above)
};

// Accurate FP8: promote into FP32 every 8 MMAs of K = 32 (256 K), not CUTLASS's 4. Session 8 on the
// H200 (bench/fp8_promotion.py, same run): 8192^3 128x128 coop 0.85x -> 0.92x of _scaled_mm's accurate
// mode, relative error 1.60e-3 -> 1.64e-3 at K = 8192 and 1.71e-3 -> 1.75e-3 at K = 28672 (cuBLAS:
// 1.60e-3, 1.71e-3; fast accumulation: 6.5e-2, 0.24). 4 (the knob) gives cuBLAS's error exactly.
constexpr int kFp8PromotionInterval = 8;

const Knobs& knobs() {
  static const Knobs k{env_knob("CUTLASS_GEMM_FP8_PROMOTION_INTERVAL", [](long x) { return x > 0 && x % 4 == 0 && x <= 4096; }),
                       env_knob("CUTLASS_GEMM_SWIZZLE", [](long x) { return x == 1 || x == 2 || x == 4 || x == 8; }),
                       env_knob("CUTLASS_GEMM_RASTER", [](long x) { return x == 1 || x == 2; }),
                       env_knob("CUTLASS_GEMM_PDL", [](long x) { return x == 0 || x == 1; }),
                       env_knob("CUTLASS_GEMM_DECOMPOSITION", [](long x) { return x >= 1 && x <= 3; }),
                       env_knob("CUTLASS_GEMM_SPLITS", [](long x) { return x >= 2 && x <= 64; }),
                       env_knob("CUTLASS_GEMM_REDUCTION", [](long x) { return x == 0 || x == 1; }),
                       env_knob("CUTLASS_GEMM_TMA_L2_PROMOTION", [](long x) { return x == 64 || x == 128 || x == 256; }),
                       std::getenv("CUTLASS_GEMM_PDL") != nullptr && *std::getenv("CUTLASS_GEMM_PDL") != '\0'};
  return k;
}

void check_knob(const char* op, int v, const char* name, const char* expected) {
  if (v < 0) fail(op, std::string("expected ") + name + " " + expected + ", got '" + std::getenv(name) + "'");
}

// The launch settings of kernel `id` on p's M x N (p.sm_count and the rule's p.pdl set): the knobs, else the defaults.
// A bad knob raises here, before anything runs. launch() and configs.explain (_launch_settings) both call it.
void resolve_launch(const char* op, int id, GemmParams& p) {
  const KernelInfo& ki = kKernels[id];
  const Knobs& kn = knobs();
  if (ki.scale == ScaleMode::kTensorRowCol && ki.accum == Accum::kPromoted) {
    check_knob(op, kn.promotion, "CUTLASS_GEMM_FP8_PROMOTION_INTERVAL",
               "a positive multiple of 4 up to 4096 (MMAs of K = 32 per FP32 promotion; 4 = every 128 K, 8 the default)");
    p.fp8_promotion_interval = kn.promotion > 0 ? kn.promotion : kFp8PromotionInterval;
  }
  check_knob(op, kn.swizzle, "CUTLASS_GEMM_SWIZZLE", "1, 2, 4 or 8 (the tile scheduler's max swizzle)");
  check_knob(op, kn.raster, "CUTLASS_GEMM_RASTER", "1 (along M) or 2 (along N)");
  p.swizzle = kn.swizzle;
  p.raster = kn.raster;
  check_knob(op, kn.tma_l2_promotion, "CUTLASS_GEMM_TMA_L2_PROMOTION", "64, 128 or 256 (bytes of L2 promotion of the TMA loads)");
  p.tma_l2_promotion = kn.tma_l2_promotion > 0 ? kn.tma_l2_promotion : default_tma_l2_promotion(id, p.m, p.n);
  check_knob(op, kn.pdl, "CUTLASS_GEMM_PDL", "0 or 1 (programmatic dependent launch of the GEMM)");
  if (kn.pdl_set) p.pdl = kn.pdl == 1;  // else the rule's flag, set by the caller
  check_knob(op, kn.decomposition, "CUTLASS_GEMM_DECOMPOSITION", "1 (data-parallel), 2 (split-K) or 3 (stream-K)");
  check_knob(op, kn.splits, "CUTLASS_GEMM_SPLITS", "a split-K factor from 2 to 64");
  check_knob(op, kn.reduction, "CUTLASS_GEMM_REDUCTION", "0 (deterministic) or 1 (non-deterministic)");
  // CUTLASS would silently ignore a split factor outside split-K, and run split-K with one split.
  if (kn.splits > 0 && kn.decomposition != 0 && kn.decomposition != 2)
    fail(op, "expected CUTLASS_GEMM_SPLITS only with CUTLASS_GEMM_DECOMPOSITION unset or 2 (split-K), got "
             "CUTLASS_GEMM_DECOMPOSITION=" + std::to_string(kn.decomposition));
  if (kn.decomposition == 2 && kn.splits == 0)
    fail(op, "expected CUTLASS_GEMM_SPLITS (a split-K factor from 2 to 64) with CUTLASS_GEMM_DECOMPOSITION=2 (split-K)");
  p.decomposition = kn.decomposition > 0 || kn.splits > 0 ? kn.decomposition : default_decomposition(id, p.m, p.n, p.sm_count);
  p.splits = kn.splits;
  p.reduction = kn.reduction;
}

void launch(const char* op, int id, GemmParams& p, const Tensor& like) {
  const KernelInfo& ki = kKernels[id];
  p.device = like.get_device_index();
  p.sm_count = device_info(p.device).sm_count;
  resolve_launch(op, id, p);
  int st = ki.fns->can_implement(p);
  if (st != kOk) fail(op, std::string("kernel ") + ki.name + " cannot run this problem: " + status_string(st));
  size_t ws_bytes = ki.fns->workspace_size(p);
  Tensor ws;
  if (ws_bytes > 0) ws = torch::stable::new_empty(like, {int64_t(ws_bytes)}, ST::Byte);
  void* stream = nullptr;
  STD_TORCH_CHECK(aoti_torch_get_current_cuda_stream(p.device, &stream) == AOTI_TORCH_SUCCESS,
                  "cutlass_gemm: cannot get the current CUDA stream");
  st = ki.fns->run(p, ws_bytes > 0 ? ws.data_ptr() : nullptr, static_cast<cudaStream_t>(stream));
  if (st != kOk) fail(op, std::string("kernel ") + ki.name + " failed: " + status_string(st));
}

// ---------------------------------------------------------------------------------------------
// Checks shared by every op. Each mirrors a helper of cutlass_gemm/_validate.py: same checks,
// same order, same messages.

constexpr const char* kGemm = "cutlass_gemm.gemm";
constexpr const char* kScaledMm = "cutlass_gemm.scaled_mm";

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

bool shape_is(const Tensor& t, std::initializer_list<int64_t> s) {
  if (t.dim() != int64_t(s.size())) return false;
  int64_t i = 0;
  for (int64_t v : s)
    if (t.size(i++) != v) return false;
  return true;
}

void check_device(const char* op, const char* name, const Tensor& t, const Tensor& a) {
  if (!same_device(a, t))
    fail(op, std::string("expected ") + name + " on " + device_str(a) + " (the device of a), got " + device_str(t));
}

// a [..., K] and b [N, K]: dims, K, dtypes (a in `dtypes`; b the same as a, or also in `dtypes`).
void check_a_b(const char* op, const Tensor& a, const Tensor& b, std::initializer_list<ST> dtypes,
               const char* dtypes_text, bool same_dtype) {
  auto in = [&](ST t) {
    for (ST d : dtypes)
      if (d == t) return true;
    return false;
  };
  if (a.dim() < 1) fail(op, "expected a of shape [..., K] (at least 1-D), got " + shape_str(a));
  if (!in(a.scalar_type())) fail(op, std::string("expected a of dtype ") + dtypes_text + ", got " + dtype_name(a.scalar_type()));
  if (b.dim() != 2) fail(op, "expected b of shape [N, K] (2-D), got " + shape_str(b));
  const int64_t k = a.size(a.dim() - 1);
  if (b.size(1) != k) fail(op, "expected b of shape [N, K] = [*, " + std::to_string(k) + "], got " + shape_str(b));
  if (same_dtype && b.scalar_type() != a.scalar_type())
    fail(op, "expected b of dtype " + dtype_name(a.scalar_type()) + " (the dtype of a), got " + dtype_name(b.scalar_type()));
  if (!same_dtype && !in(b.scalar_type()))
    fail(op, std::string("expected b of dtype ") + dtypes_text + ", got " + dtype_name(b.scalar_type()));
}

DType check_out_dtype(const char* op, std::optional<ST> out_dtype, DType dflt, const std::vector<DType>& outs,
                      const std::string& inputs_name) {
  if (!out_dtype) return dflt;
  auto od = to_dtype(*out_dtype);
  for (DType d : outs)
    if (od && *od == d) return d;
  std::vector<std::string> names{"None"};
  for (DType d : outs) names.push_back(dtype_name(to_scalar_type(d)));
  fail(op, "expected out_dtype " + names_list(names, " or ") + " for " + inputs_name + " inputs, got " +
               dtype_name(*out_dtype));
}

Activation check_epilogue(const char* op, const Tensor& a, int64_t n, const std::vector<int64_t>& out_shape, DType out,
                          const std::optional<Tensor>& bias, const std::optional<Tensor>& residual,
                          const std::string& activation) {
  const ST out_st = to_scalar_type(out);
  if (bias) {
    if (bias->dim() != 1 || bias->size(0) != n)
      fail(op, "expected bias of shape [N] = [" + std::to_string(n) + "], got " + shape_str(*bias));
    if (bias->scalar_type() != out_st && bias->scalar_type() != ST::Float)
      fail(op, "expected bias of dtype " + (out_st == ST::Float ? std::string("float32") : dtype_name(out_st) + " or float32") +
                   ", got " + dtype_name(bias->scalar_type()));
    check_device(op, "bias", *bias, a);
  }
  if (residual) {
    bool same = residual->dim() == int64_t(out_shape.size());
    for (int64_t i = 0; same && i < residual->dim(); ++i) same = residual->size(i) == out_shape[i];
    if (!same)
      fail(op, "expected residual of shape " + shape_str(out_shape) + " (the output's), got " + shape_str(*residual));
    if (residual->scalar_type() != out_st)
      fail(op, "expected residual of dtype " + dtype_name(out_st) + " (the output's), got " +
                   dtype_name(residual->scalar_type()));
    check_device(op, "residual", *residual, a);
  }
  for (int i = 0; i < kNumActivations; ++i)
    if (activation == kActivationNames[i]) return Activation(i);
  std::vector<std::string> names;
  for (int i = 0; i < kNumActivations; ++i) names.push_back(std::string("'") + kActivationNames[i] + "'");
  fail(op, "expected activation one of " + names_list(names, ", ") + ", got '" + activation + "'");
}

// `config` must name a kernel of the family (arch aside: checked at launch). A kernel accumulating
// in plain FP32 serves either FP8 mode (SM100); the message lists the requested mode's kernels.
void check_config(const char* op, const std::string& config, const Family& f, const std::string& what) {
  if (config.empty()) return;
  auto fits = [&](const KernelInfo& ki) {
    return ki.a == f.a && ki.b == f.b && ki.out == f.out && ki.scale == f.scale && ki.accum == f.accum;
  };
  const int id = find_kernel(config);
  if (id >= 0) {
    const KernelInfo& ki = kKernels[id];
    if (ki.a == f.a && ki.b == f.b && ki.out == f.out && ki.scale == f.scale && serves_accum(ki.accum, f.accum)) return;
  }
  std::vector<std::string> names;
  for (int i = 0; i < kNumKernels; ++i)
    if (fits(kKernels[i])) names.push_back(kKernels[i].name);
  fail(op, (id < 0 ? "unknown config " + unknown_kernel(config) : "config '" + config + "' does not serve these inputs") +
               "; configs for " + what + ": " + names_list(names, ", "));
}

std::vector<int64_t> output_shape(const Tensor& a, int64_t n) {
  std::vector<int64_t> s;
  for (int64_t i = 0; i + 1 < a.dim(); ++i) s.push_back(a.size(i));
  s.push_back(n);
  return s;
}

int64_t rows_of(const std::vector<int64_t>& out_shape) {
  int64_t m = 1;
  for (size_t i = 0; i + 1 < out_shape.size(); ++i) m *= out_shape[i];
  return m;
}

// ---------------------------------------------------------------------------------------------
// The shared launch path of every op: the shape fallback around one kernel call.
// Fast path: K a multiple of `k_align` (16 bytes of A/B) and N of 16 bytes of output, with
// aligned row-major views used in place. Otherwise K is zero-padded (K = 0 becomes a zero
// product) and/or the output goes through a [M, round_up(N)] scratch, copied out after.

struct Problem {
  int64_t m, n, k;
  DType out;
  Activation act;
  std::vector<int64_t> out_shape;
};

Tensor run_problem(const char* op, int id, const Problem& c, const Tensor& a, const Tensor& b,
                   const std::optional<Tensor>& bias, const std::optional<Tensor>& residual, int64_t k_align,
                   GemmParams p) {
  const ST out_st = to_scalar_type(c.out);
  const int64_t out_align = c.out == DType::kF32 ? 4 : 8;
  const int64_t kp = round_up(c.k > 0 ? c.k : 1, k_align);
  const int64_t np = round_up(c.n, out_align);
  constexpr int64_t kMaxDim = 2147483647;  // CUTLASS problem shapes are int (strides are int64)
  if (c.m > kMaxDim || np > kMaxDim || kp > kMaxDim)  // _validate.check_problem_size: same test, same message
    fail(op, "expected M, N and K each at most 2147483647, got M = " + std::to_string(c.m) + ", N = " +
                 std::to_string(c.n) + ", K = " + std::to_string(c.k));
  Tensor out = torch::stable::new_empty(a, c.out_shape, out_st);
  Operand2D A = as_tma_operand(flatten_rows(a, c.m, c.k), kp, k_align);
  Operand2D B = as_tma_operand(b, kp, k_align);
  std::optional<Operand2D> R;
  if (residual) R = as_tma_operand(flatten_rows(*residual, c.m, c.n), np, out_align);
  std::optional<Tensor> bias_v;
  if (bias) bias_v = as_aligned_vector(*bias, np);
  Tensor out2d = c.out_shape.size() == 2 ? out : torch::stable::reshape(out, {c.m, c.n});  // a view; skip the call when 2-D
  Tensor d = np == c.n ? out2d : torch::stable::new_empty(a, {c.m, np}, out_st);

  p.a = A.t.data_ptr();
  p.lda = A.ld;
  p.b = B.t.data_ptr();
  p.ldb = B.ld;
  p.d = d.data_ptr();
  p.ldd = d.stride(0);
  if (bias_v) {
    p.bias = bias_v->data_ptr();
    p.bias_dtype = *to_dtype(bias_v->scalar_type());
  }
  if (R) {
    p.residual = R->t.data_ptr();
    p.ldr = R->ld;
  }
  p.m = c.m;
  p.n = c.n;
  p.k = kp;
  p.act = c.act;
  launch(op, id, p, a);
  if (np != c.n) torch::stable::copy_(out2d, torch::stable::narrow(d, 1, 0, c.n));
  return out;
}

// ---------------------------------------------------------------------------------------------
// gemm: D = act(alpha * (a @ b^T) + bias) + beta * residual

Tensor gemm(Tensor a, Tensor b, std::optional<Tensor> bias, std::optional<Tensor> residual, std::string activation,
            double alpha, double beta, std::optional<ST> out_dtype, std::string config) {
  const char* op = kGemm;
  check_a_b(op, a, b, {ST::BFloat16, ST::Half}, "bfloat16 or float16", /*same_dtype=*/true);
  check_device(op, "b", b, a);
  const DType in = *to_dtype(a.scalar_type());
  const DType out = check_out_dtype(op, out_dtype, in, out_dtypes_for(in, ScaleMode::kNone), dtype_name(a.scalar_type()));
  Problem c{0, b.size(0), a.size(a.dim() - 1), out, Activation::kNone, output_shape(a, b.size(0))};
  c.m = rows_of(c.out_shape);
  c.act = check_epilogue(op, a, c.n, c.out_shape, out, bias, residual, activation);
  Family fam{0, in, in, out, ScaleMode::kNone, Accum::kF32};
  if (!config.empty()) check_config(op, config, fam, dtype_name(a.scalar_type()) + " -> " + dtype_name(to_scalar_type(out)));

  if (c.m == 0 || c.n == 0) return torch::stable::new_empty(a, c.out_shape, to_scalar_type(out));
  if (!a.is_cuda()) fail(op, "expected CUDA tensors, got a on " + device_str(a));
  torch::stable::accelerator::DeviceGuard guard(a.get_device_index());
  fam.arch = arch_of(a, op);
  bool pdl;
  const int id = choose_kernel(op, config, fam, c.m, c.n, c.k, c.act != Activation::kNone || residual.has_value(), c.act, &pdl);
  GemmParams p;
  p.pdl = pdl;
  p.alpha = float(alpha);
  p.beta = float(beta);
  return run_problem(op, id, c, a, b, bias, residual, /*k_align=*/8, p);
}

// ---------------------------------------------------------------------------------------------
// scaled_mm: D = act((a @ b^T) * scale_a * scale_b + bias) + beta * residual   (FP8 a, b)

enum class ScaleKind { kNone, kTensor, kVector, kBlock };

// scale_a: [1] per-tensor, [M] / [M, 1] per-row, [M, ceil(K/128)] blockwise 1x128.
ScaleKind classify_scale(const Tensor& s, int64_t rows, int64_t blocks_rows, int64_t kb) {
  if (s.numel() == 1) return ScaleKind::kTensor;
  if (shape_is(s, {rows}) || shape_is(s, {rows, 1})) return ScaleKind::kVector;
  if (shape_is(s, {blocks_rows, kb})) return ScaleKind::kBlock;
  return ScaleKind::kNone;
}

// The kernel reads blockwise scales "MN-major": [kb, ld] with ld % 4 == 0 for TMA (a), [kb, nb] (b).
constexpr int64_t kScaleALdAlign = 4;

// The scale extents (elements) the op hands the blockwise kernel, which derives its leading
// dimensions from them (fp8.cuh): a [kb, round_up(M, 4)], b [kb, nb]; K = 0 runs one block of ones.
void set_blockwise_scale_extents(GemmParams& p, int64_t m, int64_t n, int64_t k) {
  const int64_t kb = std::max<int64_t>((k + 127) / 128, 1);
  p.scale_a_numel = kb * round_up(m, kScaleALdAlign);
  p.scale_b_numel = kb * ((n + 127) / 128);
}

// Copies when the caller's [rows, kb] tensor is not laid out that way (or, for K = 0, makes ones).
Tensor mn_major_scales(const Tensor& s, int64_t rows, int64_t kb, int64_t ld_align) {
  const int64_t ld = round_up(rows, ld_align);
  if (s.dim() == 2 && s.size(0) == rows && s.size(1) == kb && kb > 0 && s.stride(0) == 1 && s.stride(1) == ld &&
      reinterpret_cast<uintptr_t>(s.data_ptr()) % 16 == 0)
    return s;
  Tensor dst = torch::stable::new_empty(s, {std::max<int64_t>(kb, 1), ld}, ST::Float);  // [kb, ld]
  if (kb == 0) {
    torch::stable::fill_(dst, 1.0);  // K = 0: any scale multiplies a zero product
    return dst;
  }
  Tensor view = torch::stable::narrow(dst, 1, 0, rows);                      // [kb, rows]
  Tensor src = s.dim() == 2 ? torch::stable::transpose(s, 0, 1) : torch::stable::reshape(s, {1, rows});
  torch::stable::copy_(view, src);
  return dst;
}

Tensor scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, std::optional<Tensor> bias,
                 std::optional<Tensor> residual, std::string activation, double beta, std::optional<ST> out_dtype,
                 std::string accumulate, std::string config) {
  const char* op = kScaledMm;
  check_a_b(op, a, b, {ST::Float8_e4m3fn, ST::Float8_e5m2}, "float8_e4m3fn or float8_e5m2", /*same_dtype=*/false);
  const DType da = *to_dtype(a.scalar_type()), db = *to_dtype(b.scalar_type());
  std::vector<std::pair<DType, DType>> pairs;  // FP8 pairs some kernel serves, in table order
  for (int i = 0; i < kNumKernels; ++i) {
    auto pr = std::make_pair(kKernels[i].a, kKernels[i].b);
    if (kKernels[i].scale != ScaleMode::kNone && std::find(pairs.begin(), pairs.end(), pr) == pairs.end())
      pairs.push_back(pr);
  }
  const std::string pair_name = dtype_name(a.scalar_type()) + " x " + dtype_name(b.scalar_type());
  if (std::find(pairs.begin(), pairs.end(), std::make_pair(da, db)) == pairs.end()) {
    std::vector<std::string> names;
    for (auto& pr : pairs) names.push_back(dtype_name(to_scalar_type(pr.first)) + " x " + dtype_name(to_scalar_type(pr.second)));
    fail(op, "expected a x b of " + names_list(names, " or ") + ", got " + pair_name);
  }
  check_device(op, "b", b, a);
  for (auto [name, s] : {std::make_pair("scale_a", &scale_a), std::make_pair("scale_b", &scale_b)}) {
    if (s->scalar_type() != ST::Float)
      fail(op, std::string("expected ") + name + " of dtype float32, got " + dtype_name(s->scalar_type()));
    check_device(op, name, *s, a);
  }
  const int64_t k = a.size(a.dim() - 1), n = b.size(0);
  std::vector<int64_t> out_shape = output_shape(a, n);
  const int64_t m = rows_of(out_shape);
  const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
  const ScaleKind ka = classify_scale(scale_a, m, m, kb);
  if (ka == ScaleKind::kNone)
    fail(op, "expected scale_a of shape [1] (per-tensor), [M, 1] = [" + std::to_string(m) +
                 ", 1] (per-row) or [M, ceil(K/128)] = [" + std::to_string(m) + ", " + std::to_string(kb) +
                 "] (blockwise 1x128), got " + shape_str(scale_a));
  const ScaleKind kbk = classify_scale(scale_b, n, nb, kb);
  if (kbk == ScaleKind::kNone)
    fail(op, "expected scale_b of shape [1] (per-tensor), [N, 1] = [" + std::to_string(n) +
                 ", 1] (per-column) or [ceil(N/128), ceil(K/128)] = [" + std::to_string(nb) + ", " +
                 std::to_string(kb) + "] (blockwise 128x128), got " + shape_str(scale_b));
  const bool a_block_ok = shape_is(scale_a, {m, kb}) || (m * kb == 1 && scale_a.numel() == 1);
  const bool b_block_ok = shape_is(scale_b, {nb, kb}) || (nb * kb == 1 && scale_b.numel() == 1);
  // A one-element scale is per-tensor, unless a forced blockwise kernel reads it as the only block.
  const int forced = config.empty() ? -1 : find_kernel(config);
  const bool forced_block = forced >= 0 && kKernels[forced].scale == ScaleMode::kBlockwise;
  const bool blockwise =
      ka == ScaleKind::kBlock || kbk == ScaleKind::kBlock || (forced_block && a_block_ok && b_block_ok);
  if (blockwise) {
    if (!a_block_ok)
      fail(op, "expected scale_a of shape [M, ceil(K/128)] = [" + std::to_string(m) + ", " + std::to_string(kb) +
                   "] (blockwise 1x128) to go with a blockwise scale_b, got " + shape_str(scale_a));
    if (!b_block_ok)
      fail(op, "expected scale_b of shape [ceil(N/128), ceil(K/128)] = [" + std::to_string(nb) + ", " +
                   std::to_string(kb) + "] (blockwise 128x128) to go with a blockwise scale_a, got " + shape_str(scale_b));
    if (da != DType::kE4m3 || db != DType::kE4m3)
      fail(op, "expected a x b of float8_e4m3fn x float8_e4m3fn for blockwise scales, got " + pair_name);
  }
  const ScaleMode mode = blockwise ? ScaleMode::kBlockwise : ScaleMode::kTensorRowCol;
  std::vector<DType> outs;  // output dtypes of the (pair, mode) family, in DTYPES order
  for (int d = 0; d < 8; ++d)
    for (int i = 0; i < kNumKernels; ++i)
      if (kKernels[i].a == da && kKernels[i].b == db && kKernels[i].scale == mode && int(kKernels[i].out) == d &&
          std::find(outs.begin(), outs.end(), DType(d)) == outs.end())
        outs.push_back(DType(d));
  const DType out = check_out_dtype(op, out_dtype, DType::kBf16, outs, pair_name);
  Problem c{m, n, k, out, Activation::kNone, out_shape};
  c.act = check_epilogue(op, a, n, out_shape, out, bias, residual, activation);
  if (accumulate != "accurate" && accumulate != "fast")
    fail(op, "expected accumulate 'accurate' or 'fast', got '" + accumulate + "'");
  // Blockwise always accumulates each 128-wide K block into FP32 (the accurate mode).
  const Accum accum = (blockwise || accumulate == "accurate") ? Accum::kPromoted : Accum::kFast;
  Family fam{0, da, db, out, mode, accum};
  if (!config.empty())
    check_config(op, config, fam,
               pair_name + " -> " + dtype_name(to_scalar_type(out)) + " (" + (blockwise ? "blockwise" : "tensor_row_col") +
                   ", " + (accum == Accum::kFast ? "fast" : "promoted") + ")");

  if (m == 0 || n == 0) return torch::stable::new_empty(a, out_shape, to_scalar_type(out));
  if (!a.is_cuda()) fail(op, "expected CUDA tensors, got a on " + device_str(a));
  torch::stable::accelerator::DeviceGuard guard(a.get_device_index());
  fam.arch = arch_of(a, op);
  fam.accum = resolve_accum(fam);  // SM100: FP8 accumulates in FP32 in either mode
  bool pdl;
  const int id = choose_kernel(op, config, fam, m, n, k, c.act != Activation::kNone || residual.has_value(), c.act, &pdl);

  GemmParams p;
  p.pdl = pdl;
  p.beta = float(beta);
  Tensor sa, sb;
  if (blockwise) {
    sa = mn_major_scales(scale_a, m, kb, kScaleALdAlign);
    sb = mn_major_scales(scale_b, nb, kb, /*ld_align=*/1);
  } else {
    // Per-tensor scales broadcast element 0; vectors need 16-byte aligned [M] / [round_up(N)].
    sa = ka == ScaleKind::kTensor ? torch::stable::reshape(scale_a, {1}) : as_aligned_vector(torch::stable::reshape(scale_a, {m}), m);
    sb = kbk == ScaleKind::kTensor ? torch::stable::reshape(scale_b, {1})
                                   : as_aligned_vector(torch::stable::reshape(scale_b, {n}), round_up(n, 4));
    if (ka == ScaleKind::kTensor && !tma_free_aligned(sa)) sa = as_aligned_vector(sa, 1);
    if (kbk == ScaleKind::kTensor && !tma_free_aligned(sb)) sb = as_aligned_vector(sb, 1);
  }
  p.scale_a = static_cast<const float*>(sa.data_ptr());
  p.scale_b = static_cast<const float*>(sb.data_ptr());
  if (blockwise) {  // not sa.numel(): a zero-copy [M, kb] view's numel leaves out its padding rows
    set_blockwise_scale_extents(p, m, n, k);
  } else {
    p.scale_a_numel = ka == ScaleKind::kTensor ? 1 : sa.numel();
    p.scale_b_numel = kbk == ScaleKind::kTensor ? 1 : sb.numel();
  }
  return run_problem(op, id, c, a, b, bias, residual, /*k_align=*/16, p);
}

// ---------------------------------------------------------------------------------------------
// Registry plumbing (private ops used by cutlass_gemm/configs.py and _ops.py).

// Replaces the selection table: an int64 CPU tensor [R, kRuleFields] (configs.py RULE_FIELDS).
void set_selection_table(Tensor rules) {
  STD_TORCH_CHECK(rules.is_cpu() && rules.scalar_type() == ST::Long && rules.dim() == 2 &&
                      rules.size(1) == kRuleFields && rules.is_contiguous(),
                  "cutlass_gemm._set_selection_table: expected a contiguous int64 CPU tensor [R, ", kRuleFields, "]");
  const int64_t* data = static_cast<const int64_t*>(rules.data_ptr());
  std::vector<Rule> out(rules.size(0));
  for (int64_t i = 0; i < rules.size(0); ++i) {
    const int64_t* r = data + i * kRuleFields;
    out[i] = Rule{r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15], r[16]};
    STD_TORCH_CHECK(r[16] == 0 || r[16] == 1, "cutlass_gemm._set_selection_table: pdl flag ", r[16], " is not 0 or 1");
    STD_TORCH_CHECK(r[15] >= 0 && r[15] < kNumKernels, "cutlass_gemm._set_selection_table: kernel id ", r[15],
                    " out of range");
    STD_TORCH_CHECK(r[6] >= 0 && r[6] <= int64_t(EpilogueClass::kFused),
                    "cutlass_gemm._set_selection_table: epilogue class ", r[6], " out of range");
  }
  set_rules(std::move(out));
}

// Which kernels of kernel_table.py this build compiled (1) or left out (0): int32 CPU [n].
Tensor compiled_kernels() {
  Tensor t = torch::stable::empty({kNumKernels}, ST::Int, std::nullopt, torch::stable::Device(torch::headeronly::DeviceType::CPU));
  int32_t* p = static_cast<int32_t*>(t.data_ptr());
  for (int i = 0; i < kNumKernels; ++i) p[i] = kKernels[i].fns != nullptr;
  return t;
}

int64_t kernel_table_hash() { return int64_t(kKernelTableHash); }

// [none, 64 B, 128 B, 256 B]: the TMA descriptors encoded so far in this process, by L2 promotion.
Tensor tma_encode_counts() {
  Tensor t = torch::stable::empty({4}, ST::Long, std::nullopt, torch::stable::Device(torch::headeronly::DeviceType::CPU));
  int64_t* p = static_cast<int64_t*>(t.data_ptr());
  for (int i = 0; i < 4; ++i) p[i] = tma_encode_count(i);
  return t;
}

// Host-only probe of one kernel (no GPU needed): [can_implement status, workspace bytes] for a
// dense row-major M x N x K problem with null pointers. Lets CPU tests exercise every kernel's
// host path; status kNotCompiledForArch for kernels this build left out.
Tensor probe_kernel(int64_t kernel, int64_t m, int64_t n, int64_t k, int64_t sm_count) {
  STD_TORCH_CHECK(kernel >= 0 && kernel < kNumKernels, "cutlass_gemm._probe_kernel: kernel id out of range");
  Tensor t = torch::stable::empty({2}, ST::Long, std::nullopt, torch::stable::Device(torch::headeronly::DeviceType::CPU));
  int64_t* out = static_cast<int64_t*>(t.data_ptr());
  const KernelInfo& ki = kKernels[kernel];
  if (ki.fns == nullptr) {
    out[0] = kNotCompiledForArch;
    out[1] = 0;
    return t;
  }
  GemmParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = k;
  p.ldb = k;
  p.ldd = n;
  p.sm_count = int(sm_count);
  p.decomposition = default_decomposition(int(kernel), m, n, p.sm_count);
  if (ki.scale == ScaleMode::kBlockwise) set_blockwise_scale_extents(p, m, n, k);  // as scaled_mm passes them
  out[0] = ki.fns->can_implement(p);
  out[1] = out[0] == kOk ? int64_t(ki.fns->workspace_size(p)) : 0;
  return t;
}

// What launch() would set for `kernel` on an M x N output (configs.explain's `launch`; no GPU needed): [FP8 promotion
// interval (0: not a promoted per-tensor/row kernel), swizzle, raster, TMA L2 promotion bytes (0: CUTLASS's 128),
// PDL, decomposition, splits, reduction]. A bad knob raises as it would in the op.
Tensor launch_settings(int64_t kernel, int64_t m, int64_t n, int64_t sm_count, bool pdl) {
  STD_TORCH_CHECK(kernel >= 0 && kernel < kNumKernels, "cutlass_gemm._launch_settings: expected a kernel id in [0, ",
                  kNumKernels, "), got ", kernel);
  STD_TORCH_CHECK(m >= 0 && n >= 0 && sm_count > 0 && sm_count <= INT32_MAX, "cutlass_gemm._launch_settings: expected m, n "
                  "non-negative and sm_count a positive int32, got m=", m, ", n=", n, ", sm_count=", sm_count);
  GemmParams p;
  p.m = m;
  p.n = n;
  p.sm_count = int(sm_count);
  p.pdl = pdl;
  resolve_launch("cutlass_gemm.configs.explain", int(kernel), p);
  Tensor t = torch::stable::empty({8}, ST::Long, std::nullopt, torch::stable::Device(torch::headeronly::DeviceType::CPU));
  int64_t* out = static_cast<int64_t*>(t.data_ptr());
  const int64_t v[8] = {p.fp8_promotion_interval, p.swizzle, p.raster, p.tma_l2_promotion, p.pdl, p.decomposition,
                        p.splits, p.reduction};
  for (int i = 0; i < 8; ++i) out[i] = v[i];
  return t;
}

// The arch whose kernels this library would run on `device` (0: unsupported GPU).
int64_t device_arch(int64_t device) { return device_info(int(device)).arch; }

// cutlass_gemm.quantize_fp8's CUDA kernel for "row" (group 0) and "1x128" (group 128) into
// preallocated outputs; the Python wrapper allocates them in the layouts it documents and
// checks its arguments (the op is private).
void quantize_fp8_rows(Tensor x, Tensor q, Tensor scale, int64_t group) {
  const char* op = "cutlass_gemm._quantize_fp8_rows_";
  auto in = to_dtype(x.scalar_type());
  auto out = to_dtype(q.scalar_type());
  if (x.dim() != 2 || x.stride(1) != 1 || !in || *in == DType::kE4m3 || *in == DType::kE5m2)
    fail(op, "expected x 2-D bfloat16/float16/float32 with unit column stride");
  if (!out || (*out != DType::kE4m3 && *out != DType::kE5m2) || !q.is_contiguous() || q.size(0) != x.size(0) ||
      q.size(1) != x.size(1))
    fail(op, "expected q a contiguous float8 tensor of x's shape");
  const int64_t groups = group == 0 ? 1 : (x.size(1) + 127) / 128;
  if ((group != 0 && group != 128) || scale.scalar_type() != ST::Float || scale.dim() != 2 ||
      scale.size(0) != x.size(0) || scale.size(1) != groups)
    fail(op, "expected group 0 or 128 and scale float32 [rows, groups]");
  if (x.get_device_index() != q.get_device_index() || x.get_device_index() != scale.get_device_index())
    fail(op, "expected x, q and scale on one device");
  torch::stable::accelerator::DeviceGuard guard(x.get_device_index());
  const int arch = device_info(x.get_device_index()).arch;
  auto fn = arch == 90 ? &quantize_fp8_sm90 : arch == 100 ? &quantize_fp8_sm100 : nullptr;
  if (fn == nullptr || *fn == nullptr) fail(op, "no quantization kernel for this GPU in this build");
  QuantizeParams p;
  p.x = x.data_ptr();
  p.in = *in;
  p.q = q.data_ptr();
  p.out = *out;
  p.scale = static_cast<float*>(scale.data_ptr());
  p.rows = x.size(0);
  p.cols = x.size(1);
  p.ldx = x.stride(0);
  p.scale_rs = scale.stride(0);
  p.scale_gs = scale.stride(1);
  p.group = int(group);
  void* stream = nullptr;
  STD_TORCH_CHECK(aoti_torch_get_current_cuda_stream(x.get_device_index(), &stream) == AOTI_TORCH_SUCCESS,
                  "cutlass_gemm: cannot get the current CUDA stream");
  int st = (*fn)(p, static_cast<cudaStream_t>(stream));
  if (st != 0) fail(op, std::string("kernel launch failed: ") + cudaGetErrorString(cudaError_t(st)));
}

// The op's selection for a family on an arch, without a GPU (tests compare it with
// configs.explain): resolve_accum, then select_kernel. Enum arguments are kernel_table indices.
// want_pdl: the selecting rule's PDL flag (0 or 1) instead of the kernel id.
int64_t select_for(int64_t arch, int64_t a, int64_t b, int64_t out, int64_t scale, int64_t accum, int64_t m, int64_t n,
                   int64_t k, bool fused, bool activation, bool want_pdl) {
  Family f{int(arch), DType(a), DType(b), DType(out), ScaleMode(scale), Accum(accum)};
  f.accum = resolve_accum(f);
  bool pdl = false;
  const int id = select_kernel(f, m, n, k, fused || activation, activation, &pdl);
  return want_pdl ? int64_t(pdl) : id;
}

}  // namespace
}  // namespace cutlass_gemm

// Tensors are positional (register_autograd takes no keyword-only Tensor); the Python wrappers
// make everything after b (scale_b) keyword-only.
STABLE_TORCH_LIBRARY(cutlass_gemm, m) {
  m.def(
      "gemm(Tensor a, Tensor b, Tensor? bias=None, Tensor? residual=None, *, str activation=\"none\", "
      "float alpha=1.0, float beta=1.0, ScalarType? out_dtype=None, str config=\"\") -> Tensor");
  m.def(
      "scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor? bias=None, Tensor? residual=None, *, "
      "str activation=\"none\", float beta=1.0, ScalarType? out_dtype=None, str accumulate=\"accurate\", "
      "str config=\"\") -> Tensor");
  m.def("_set_selection_table(Tensor rules) -> ()");
  m.def("_compiled_kernels() -> Tensor");
  m.def("_kernel_table_hash() -> int");
  m.def("_tma_encode_counts() -> Tensor");
  m.def("_device_arch(int device) -> int");
  m.def("_probe_kernel(int kernel, int m, int n, int k, int sm_count) -> Tensor");
  m.def("_launch_settings(int kernel, int m, int n, int sm_count, bool pdl) -> Tensor");
  m.def("_select_kernel(int arch, int a, int b, int out, int scale, int accum, int m, int n, int k, bool fused=False, bool activation=False, bool want_pdl=False) -> int");
  m.def("_quantize_fp8_rows_(Tensor x, Tensor(a!) q, Tensor(b!) scale, int group) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(cutlass_gemm, CUDA, m) {
  m.impl("gemm", TORCH_BOX(&cutlass_gemm::gemm));
  m.impl("scaled_mm", TORCH_BOX(&cutlass_gemm::scaled_mm));
  m.impl("_quantize_fp8_rows_", TORCH_BOX(&cutlass_gemm::quantize_fp8_rows));
}

STABLE_TORCH_LIBRARY_IMPL(cutlass_gemm, CompositeExplicitAutograd, m) {
  m.impl("_set_selection_table", TORCH_BOX(&cutlass_gemm::set_selection_table));
  m.impl("_compiled_kernels", TORCH_BOX(&cutlass_gemm::compiled_kernels));
  m.impl("_kernel_table_hash", TORCH_BOX(&cutlass_gemm::kernel_table_hash));
  m.impl("_tma_encode_counts", TORCH_BOX(&cutlass_gemm::tma_encode_counts));
  m.impl("_device_arch", TORCH_BOX(&cutlass_gemm::device_arch));
  m.impl("_probe_kernel", TORCH_BOX(&cutlass_gemm::probe_kernel));
  m.impl("_launch_settings", TORCH_BOX(&cutlass_gemm::launch_settings));
  m.impl("_select_kernel", TORCH_BOX(&cutlass_gemm::select_for));
}
