"""The config registry: which kernel serves which problem.

The choice itself runs inside the op, in C++, per call (so `torch.compile` with dynamic M
neither breaks the graph nor recompiles at bucket boundaries, and CUDA-graph capture works).
This module owns the table it reads: user rules first, then tuned rules from a cache file,
then the shipped defaults. It flattens them and pushes them to C++ at import and on every
change. `explain()` reproduces the C++ decision from the same table.

A rule names a kernel, inclusive M/N/K ranges and the epilogues it serves; the kernel fixes the
problem family (arch, dtypes, scale mode, accumulation). The first rule of the family whose
ranges hold the problem, whose epilogue class takes the call and whose kernel is compiled (and,
for a call with an activation, has the activation node: `_noact` and `_plain` kernels do not; for a
call with a residual, the residual node: `_plain` kernels do not) wins; if none
does, the first such kernel of the family (in kernel_table.py order) runs.

Epilogue classes: a call is "fused" when it applies an activation or adds a residual (a longer
epilogue, which favours ping-pong tiles that hide one tile's epilogue under the next tile's
mainloop), else "plain" (bias alone included). A rule serves "any" call (the default), only
"plain" or only "fused" ones.
"""

from __future__ import annotations

import json
import operator
import os
import threading
from dataclasses import asdict, dataclass, replace
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union

import torch

from . import kernel_table as kt

INF = 2**62
RULE_FIELDS = ("arch", "a", "b", "out", "scale", "accum", "epilogue", "m_lo", "m_hi", "n_lo", "n_hi", "k_lo", "k_hi",
               "mn_lo", "mn_hi", "kernel", "pdl")
# A rule's epilogue class, in the order of the C++ enum `cutlass_gemm::EpilogueClass` (registry.h).
EPILOGUE_CLASSES = ("any", "plain", "fused")
CONFIG_FILE_ENV = "CUTLASS_GEMM_CONFIG_FILE"
GPU_OVERLAY_ENV = "CUTLASS_GEMM_GPU_OVERLAY"  # "0": the shipped defaults alone, whatever the GPU
RULE_KEYS = ("kernel", "m", "n", "k", "epilogue", "pdl", "mn")  # a rule's JSON form (rule_from_dict)


@dataclass(frozen=True)
class Rule:
    kernel: str
    m: Tuple[int, int] = (1, INF)
    n: Tuple[int, int] = (1, INF)
    k: Tuple[int, int] = (0, INF)
    epilogue: str = "any"
    pdl: bool = False  # launch with programmatic dependent launch (CUTLASS_GEMM_PDL overrides)
    mn: Tuple[int, int] = (0, INF)  # the output's M x N (capped at INF): how many tiles the grid has to fill

    def __post_init__(self):
        if self.kernel not in kt.KERNEL_IDS:
            raise ValueError(f"cutlass_gemm.configs: unknown kernel {kt.unknown_kernel(self.kernel)}; "
                             "see cutlass_gemm.configs.kernels()")
        if self.epilogue not in EPILOGUE_CLASSES:
            raise ValueError(f"cutlass_gemm.configs: rule for {self.kernel}: expected epilogue one of "
                             f"{', '.join(EPILOGUE_CLASSES)}, got {self.epilogue!r}")
        if self.epilogue == "fused" and not kt.KERNELS[kt.KERNEL_IDS[self.kernel]].serves_fused:
            raise ValueError(f"cutlass_gemm.configs: rule for {self.kernel}: it has no activation or no residual node, "
                             "so it never runs a fused call; expected epilogue 'plain' or 'any' with it")
        if not isinstance(self.pdl, bool):
            raise ValueError(f"cutlass_gemm.configs: rule for {self.kernel}: expected pdl True or False, got {self.pdl!r}")
        for axis in ("m", "n", "k", "mn"):
            bounds = getattr(self, axis)
            if not (len(bounds) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in bounds)
                    and 0 <= bounds[0] <= bounds[1] <= INF):
                raise ValueError(f"cutlass_gemm.configs: rule for {self.kernel}: expected {axis} = (lo, hi) integers with "
                                 f"0 <= lo <= hi <= 2**62 (the C++ table is int64), got {tuple(bounds)!r}")

    def holds(self, m: int, n: int, k: int, fused: bool = False) -> bool:
        """Whether the rule takes an (m, n, k) call with a fused (activation/residual) epilogue or not."""
        mn = min(m * n, INF) if m > 0 and n > 0 else 0  # as the C++ table reads it: capped, never negative
        return (self.m[0] <= m <= self.m[1] and self.n[0] <= n <= self.n[1] and self.k[0] <= k <= self.k[1]
                and self.mn[0] <= mn <= self.mn[1] and self.epilogue in ("any", "fused" if fused else "plain"))

    @property
    def spec(self) -> kt.Kernel:
        return kt.KERNELS[kt.KERNEL_IDS[self.kernel]]


DEFAULT_RULES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "default_rules.json")


def rule_from_dict(d: object) -> Rule:
    """A rule from its JSON form {"kernel": name, "m": [lo, hi], "n": ..., "k": ..., "mn": ..., "epilogue": ..., "pdl": ...}
    (hi null = no bound; a missing axis = every value; a missing epilogue = "any", a missing pdl =
    false), or ValueError saying what is wrong with it."""
    if not isinstance(d, dict) or not isinstance(d.get("kernel"), str):
        raise ValueError(f"expected an object with a 'kernel' name, got {d!r}")
    unknown = sorted(set(d) - set(RULE_KEYS))
    if unknown:  # a misspelt axis ("M", "epilog") would otherwise widen the rule to every problem
        raise ValueError(f"{d['kernel']}: unknown key(s) {', '.join(map(repr, unknown))}; a rule has "
                         f"{', '.join(RULE_KEYS)}")

    def rng(axis: str, lo_default: int) -> Tuple[int, int]:
        v = d.get(axis, [lo_default, None])
        if not (isinstance(v, (list, tuple)) and len(v) == 2 and type(v[0]) is int
                and (v[1] is None or type(v[1]) is int) and (v[1] is None or v[1] <= INF)):
            raise ValueError(f"{d['kernel']}: expected {axis} as [lo, hi] integers (hi <= 2**62, or null for no "
                             f"bound), got {v!r}")
        return v[0], INF if v[1] is None else v[1]

    return Rule(d["kernel"], rng("m", 1), rng("n", 1), rng("k", 0), d.get("epilogue", "any"), d.get("pdl", False),
                rng("mn", 0))


def _load_defaults(path: str = DEFAULT_RULES_FILE) -> Tuple[Tuple[Rule, ...], Tuple[Optional[FrozenSet[Tuple[int, int]]], ...],
                                                          Dict[str, Tuple[Rule, ...]]]:
    """The shipped defaults (data: default_rules.json, written by tools/derive_rules.py from
    bench/sweep.py measurements), families in file order, each family's rules in priority order;
    per rule, the (N, K) its family's sweeps measured (None: a family not derived from sweeps); and per
    GPU name, the overlay rules its own A/Bs gave (ahead of the defaults on that GPU).
    Rules match only their own arch's families, so SM100 rules never touch an SM90 decision."""
    with open(path) as fh:
        data = json.load(fh)
    rules, measured = [], []
    for fam in data["families"]:
        nk = fam.get("measured_nk")
        got = None if nk is None else frozenset((int(n), int(k)) for n, k in nk)
        for r in fam["rules"]:
            rules.append(rule_from_dict(r))
            measured.append(got)
    overlays = {}
    for o in data.get("gpu_overlays", []):
        if not (isinstance(o, dict) and isinstance(o.get("gpu"), str) and isinstance(o.get("rules"), list)):
            raise ValueError(f"cutlass_gemm.configs: {path}: expected each gpu_overlays entry as "
                             f"{{\"gpu\": name, \"rules\": [...]}}, got {o!r}"[:300])
        overlays[o["gpu"]] = tuple(rule_from_dict(r) for r in o["rules"])
    return tuple(rules), tuple(measured), overlays


def _load_default_rules(path: str = DEFAULT_RULES_FILE) -> Tuple[Rule, ...]:
    return _load_defaults(path)[0]


DEFAULT_RULES, _DEFAULT_MEASURED_NK, GPU_OVERLAYS = _load_defaults()


def _visible_gpu_names() -> List[str]:
    if not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(d) for d in range(torch.cuda.device_count())]


def _overlay_gpu(names: Sequence[str]) -> Optional[str]:
    """The GPU whose overlay applies: every visible GPU is that model (the table is one per process)."""
    return names[0] if names and len(set(names)) == 1 and names[0] in GPU_OVERLAYS else None


_gpu_name_in_use: Optional[str] = None  # set at import (_init): the overlay's GPU, if any

_lock = threading.Lock()
_user_rules: List[Rule] = []
_tuned_rules: List[Rule] = []


def gpu_rules() -> Tuple[Rule, ...]:
    """The shipped overlay of the GPU this process runs on (default_rules.json "gpu_overlays": rules that GPU's own
    A/Bs gave where it ranks kernels otherwise than the GPU the defaults were tuned on); empty elsewhere."""
    return GPU_OVERLAYS.get(_gpu_name_in_use, ()) if _gpu_name_in_use else ()


def rules() -> List[Rule]:
    """The table in priority order: user rules, tuned rules, this GPU's shipped overlay, shipped defaults."""
    with _lock:
        return list(_user_rules) + list(_tuned_rules) + list(gpu_rules()) + list(DEFAULT_RULES)


def kernels() -> List[str]:
    """Every kernel name in the table (compiled or not)."""
    return [k.name for k in kt.KERNELS]


def compiled_kernels() -> List[str]:
    """The kernels this build compiled."""
    mask = _compiled_mask()
    return [k.name for k, on in zip(kt.KERNELS, mask) if on]


def add_rule(kernel: str, m: Tuple[int, int] = (1, INF), n: Tuple[int, int] = (1, INF), k: Tuple[int, int] = (0, INF),
             epilogue: str = "any", pdl: bool = False, mn: Tuple[int, int] = (0, INF)) -> None:
    """Route problems in these inclusive ranges of the kernel's family to `kernel` (highest priority);
    epilogue "plain" or "fused" limits the rule to calls without / with an activation or residual.
    An upper bound of None or math.inf means no bound. pdl=True launches the kernel with programmatic
    dependent launch (its prologue overlaps the previous kernel's tail; README, Choosing kernels). mn bounds the
    output's M x N."""
    rule = Rule(kernel, _bounds(m), _bounds(n), _bounds(k), epilogue, pdl, _bounds(mn))  # raises before anything changes
    with _lock:
        _user_rules.insert(0, rule)
    push()


def _bounds(r: Sequence) -> Tuple:
    """(lo, hi) with hi None or math.inf meaning no bound (INF); Rule checks the rest."""
    r = tuple(operator.index(v) if hasattr(v, "__index__") and not isinstance(v, bool) else v for v in r)  # numpy ints
    if len(r) == 2 and (r[1] is None or (isinstance(r[1], float) and r[1] == float("inf"))):
        return r[0], INF
    return r


def clear_rules() -> None:
    """Drop user rules and tuned rules: back to the shipped defaults."""
    with _lock:
        _user_rules.clear()
        _tuned_rules.clear()
    push()


def load(path: str) -> int:
    """Load tuned rules from a JSON file ({"rules": [{"kernel":..., "m": [lo, hi], ...}]})."""
    with open(path) as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        got = f"keys {sorted(data)}" if isinstance(data, dict) else f"a JSON {type(data).__name__}"
        raise ValueError(f"cutlass_gemm.configs.load: expected {path} to be an object with a 'rules' list (what "
                         f"configs.save writes), got {got}")
    loaded = [rule_from_dict(r) for r in data["rules"]]
    flatten(loaded)  # out-of-range values fail here, before anything is installed
    with _lock:
        _tuned_rules[:] = loaded
    push()
    return len(loaded)


def save(path: str, rules_: Optional[Iterable[Rule]] = None) -> None:
    """Write rules (default: the user and tuned rules) in the format `load` reads."""
    with _lock:
        out = list(rules_) if rules_ is not None else list(_user_rules) + list(_tuned_rules)
    from .autotune import atomic_write_json  # temp file + os.replace: never a partial file

    atomic_write_json(path, {"rules": [asdict(r) for r in out]})


def flatten(rule_list: Sequence[Rule]) -> torch.Tensor:
    """The int64 [R, 17] table the C++ op reads (RULE_FIELDS, enums as indices into kernel_table)."""
    rows = []
    for r in rule_list:
        s = r.spec
        rows.append([
            s.arch, kt.DTYPES.index(s.a), kt.DTYPES.index(s.b), kt.DTYPES.index(s.out),
            kt.SCALE_MODES.index(s.scale), kt.ACCUMS.index(s.accum), EPILOGUE_CLASSES.index(r.epilogue),
            r.m[0], r.m[1], r.n[0], r.n[1], r.k[0], r.k[1], r.mn[0], r.mn[1], kt.KERNEL_IDS[r.kernel], int(r.pdl),
        ])
    return torch.tensor(rows, dtype=torch.int64).reshape(-1, len(RULE_FIELDS))


_push_lock = threading.Lock()


def push() -> None:
    """Send the current table to the C++ op (snapshot and send under one lock: concurrent
    pushes from several threads leave C++ with the latest table, never an older snapshot)."""
    with _push_lock:
        torch.ops.cutlass_gemm._set_selection_table(flatten(rules()))


def _compiled_mask() -> Tuple[bool, ...]:
    from ._ops import COMPILED_MASK  # read once at import

    return COMPILED_MASK


# SMs of the GPUs the stream-K default is judged on when explain() has no such GPU to ask (H100/H200 SXM, B200).
TYPICAL_SM_COUNT = {90: 132, 100: 148}
_DECOMPOSITIONS = {0: "CUTLASS's decomposition heuristic", 1: "data-parallel", 2: "split-K", 3: "stream-K"}


@dataclass(frozen=True)
class Launch:
    """How the op launches the chosen kernel (C++ `resolve_launch`: the CUTLASS_GEMM_* knobs, else the defaults)."""
    tma_l2_promotion: int  # bytes of L2 promotion of the TMA loads (128 is CUTLASS's own choice)
    decomposition: str  # "data-parallel" for the persistent kernels; stream-K kernels: see _DECOMPOSITIONS, "split-K xS"
    fp8_promotion_interval: Optional[int] = None  # promoted per-tensor/row FP8: MMAs of K = 32 per FP32 promotion
    swizzle: int = 0  # the tile scheduler's max swizzle; 0: the library's
    raster: str = "heuristic"  # "along M", "along N" or CUTLASS's "heuristic"
    pdl: bool = False  # launched with programmatic dependent launch (the rule's flag unless CUTLASS_GEMM_PDL says)
    deterministic: bool = True  # stream-K / split-K partial sums reduced in a fixed order

    def __str__(self) -> str:
        parts = [f"TMA L2 promotion {self.tma_l2_promotion} B", self.decomposition]
        if not self.deterministic:
            parts.append("non-deterministic reduction")
        if self.fp8_promotion_interval:
            parts.append(f"FP32 promotion every {self.fp8_promotion_interval} MMAs")
        if self.swizzle:
            parts.append(f"swizzle {self.swizzle}")
        if self.raster != "heuristic":
            parts.append(f"raster {self.raster}")
        return ", ".join(parts)


def launch_settings(kernel: str, m: int, n: int, sm_count: int, pdl: bool) -> Launch:
    """What the op would launch `kernel` with on an M x N output on a GPU of `sm_count` SMs (from C++; no GPU used).
    A bad CUTLASS_GEMM_* knob raises as the op would."""
    interval, swizzle, raster, l2, pdl_on, dec, splits, reduction = torch.ops.cutlass_gemm._launch_settings(
        kt.KERNEL_IDS[kernel], m, n, sm_count, pdl).tolist()
    if kt.KERNELS[kt.KERNEL_IDS[kernel]].scheduler != "streamk":
        dec_name = "data-parallel"  # the persistent scheduler has no other decomposition
    else:
        dec_name = f"split-K x{splits}" if dec == 2 or (dec == 0 and splits) else _DECOMPOSITIONS[dec]
    return Launch(l2 or 128, dec_name, interval or None, swizzle, {0: "heuristic", 1: "along M", 2: "along N"}[raster],
                  bool(pdl_on), reduction == 0)


@dataclass(frozen=True)
class Decision:
    kernel: str
    reason: str  # "rule N (user|tuned|default|default, <GPU>)" or "family fallback"
    pdl: bool = False  # the rule launches it with programmatic dependent launch (unless CUTLASS_GEMM_PDL says)
    measured: Optional[bool] = None  # a default rule: whether its sweeps timed this (N, K) (None: not a default rule)
    source: str = "fallback"  # what chose it: "user", "tuned", "overlay" (this GPU's shipped rules), "default", "fallback"
    launch: Optional[Launch] = None  # how the op launches it (explain() sets it; None: an empty output, no launch)

    @property
    def launches_with_pdl(self) -> bool:
        """Whether the op launches the kernel with PDL: CUTLASS_GEMM_PDL over the rule's flag (the flag alone if no launch)."""
        return self.launch.pdl if self.launch is not None else self.pdl

    def __str__(self) -> str:
        seen = {None: "", True: ", measured at this N, K",
                False: ", N, K not measured: the rule's M ladder was timed at other (N, K); cutlass_gemm.tune() times "
                       "the candidates at this shape"}[self.measured]
        launch = f"; {self.launch}" if self.launch is not None else ""
        return f"{self.kernel} ({self.reason}{', PDL' if self.launches_with_pdl else ''}{seen}){launch}"


def explain(m: int, n: int, k: int, dtype: torch.dtype = torch.bfloat16, out_dtype: Optional[torch.dtype] = None,
            arch: Optional[int] = None, b_dtype: Optional[torch.dtype] = None, scale: str = "none",
            accumulate: str = "accurate", fused: bool = False, activation: Union[bool, str] = False,
            sm_count: Optional[int] = None) -> Decision:
    """The kernel the op picks for an (M, N, K) problem, and why, from the same table as C++.

    16-bit gemm: explain(m, n, k, torch.bfloat16). FP8 scaled_mm: explain(m, n, k,
    torch.float8_e4m3fn, scale="tensor_row_col" | "blockwise", accumulate="accurate" | "fast").
    `arch` (90 or 100) defaults to the current GPU's, else the first built arch (90 in the default
    build): explain(..., arch=100) shows the Blackwell choice on any machine. fused=True: the call
    applies an activation or adds a residual (rules can differ for such epilogues). activation: the
    call's activation, as the op takes it ("none", "gelu", ...) or True/False; one other than "none"
    implies fused, and kernels without the activation node (`_noact`, `_plain`) are passed over; for fused=True
    those without the residual node (`_plain`) are too. `.launch` says how the op launches the kernel (TMA L2
    promotion, decomposition, ...: the CUTLASS_GEMM_* knobs, else the defaults), on a GPU of `sm_count` SMs: by
    default the current GPU's when it is of `arch`, else TYPICAL_SM_COUNT's.
    """
    if isinstance(activation, str):
        if activation not in kt.ACTIVATIONS:
            raise ValueError(f"cutlass_gemm.configs.explain: expected activation one of "
                             f"{', '.join(repr(x) for x in kt.ACTIVATIONS)}, True or False, got {activation!r}")
        activation = activation != "none"
    elif not isinstance(activation, bool):
        raise ValueError(f"cutlass_gemm.configs.explain: expected activation an activation name or a bool, got {activation!r}")

    for name, v in (("m", m), ("n", n), ("k", k)):
        if not (hasattr(v, "__index__") and not isinstance(v, bool) and 0 <= v < 2**63):  # a tensor extent: int64
            raise ValueError(f"cutlass_gemm.configs.explain: expected {name} a non-negative integer below 2**63, got {v!r}")
    if arch is None:
        arch = current_arch() or _first_built_arch()
    if arch not in kt.ARCHS:  # as the C++ choice: nothing runs there
        raise RuntimeError(f"cutlass_gemm.configs: no compiled kernel for sm_{arch}: cutlass_gemm has kernels for "
                           f"{', '.join(f'sm_{x}' for x in kt.ARCHS)} only")
    if sm_count is None:
        on_gpu = torch.cuda.is_available() and current_arch() == arch
        sm_count = torch.cuda.get_device_properties().multi_processor_count if on_gpu \
            else TYPICAL_SM_COUNT[arch]
    elif not (hasattr(sm_count, "__index__") and not isinstance(sm_count, bool) and 0 < sm_count < 2**31):
        raise ValueError(f"cutlass_gemm.configs.explain: expected sm_count a positive integer, got {sm_count!r}")
    d = _decide(m, n, k, arch, dtype, b_dtype, out_dtype, scale, accumulate, fused, activation)
    if m == 0 or n == 0:  # the op returns the empty output without launching anything
        return d
    return replace(d, launch=launch_settings(d.kernel, m, n, sm_count, d.pdl))


def _decide(m: int, n: int, k: int, arch: int, dtype: torch.dtype, b_dtype: Optional[torch.dtype],
            out_dtype: Optional[torch.dtype], scale: str, accumulate: str, fused: bool, activation: bool) -> Decision:
    """explain()'s kernel choice, its arguments checked."""
    from ._validate import dtype_key

    a, scale = check_family_args("cutlass_gemm.configs.explain", dtype, scale, accumulate)
    b = dtype_key(b_dtype) if b_dtype is not None else a
    fp8 = a in ("e4m3", "e5m2")
    out = dtype_key(out_dtype) if out_dtype is not None else ("bf16" if fp8 else a)
    accum = "f32" if not fp8 else ("promoted" if scale == "blockwise" or accumulate == "accurate" else "fast")
    accum = kt.resolve_accum(arch, a, b, out, scale, accum)  # SM100 FP8: FP32 accumulation in either mode
    family = (arch, a, b, out, scale, accum)
    mask = _compiled_mask()
    # as C++ select_kernel: an activation needs the node, a fused call without one (a residual) the residual node
    runs = [on and (kk.activation or not activation) and (kk.residual or not (fused or activation))
            for kk, on in zip(kt.KERNELS, mask)]
    with _lock:
        tagged = [(r, "user") for r in _user_rules] + [(r, "tuned") for r in _tuned_rules] + \
            [(r, "overlay") for r in gpu_rules()] + [(r, "default") for r in DEFAULT_RULES]
    first_default = len(tagged) - len(DEFAULT_RULES)
    for i, (r, src) in enumerate(tagged):
        if r.spec.family == family and r.holds(m, n, k, fused or activation) and runs[kt.KERNEL_IDS[r.kernel]]:
            nk = _DEFAULT_MEASURED_NK[i - first_default] if src == "default" else None
            measured = True if src == "overlay" else None if nk is None else (n, k) in nk  # overlay: its A/B shape
            text = f"default, {_gpu_name_in_use}" if src == "overlay" else src
            return Decision(r.kernel, f"rule {i} ({text})", r.pdl, measured, src)
    for kk, ok in zip(kt.KERNELS, runs):
        if ok and kk.family == family:
            return Decision(kk.name, "family fallback")
    if not any(on and kk.arch == arch for kk, on in zip(kt.KERNELS, mask)):
        raise RuntimeError(f"cutlass_gemm.configs: this build compiled no sm_{arch} kernels (its archs: "
                           f"{sorted({kk.arch for kk, on in zip(kt.KERNELS, mask) if on})}; set CUTLASS_GEMM_ARCHS "
                           "at build time, see README, Building)")
    raise RuntimeError(f"cutlass_gemm.configs: no compiled kernel for family {family}")


# The granularity names bench and the README use for one scale mode.
_SCALE_ALIASES = {"tensor": "tensor_row_col", "row": "tensor_row_col", "col": "tensor_row_col"}


def check_family_args(who: str, dtype: torch.dtype, scale: str, accumulate: str) -> Tuple[str, str]:
    """(a's dtype key, scale mode) of explain/tune's family arguments, or ValueError naming what is
    expected: a 16-bit or FP8 dtype; for FP8 scale "tensor_row_col" (also "tensor", "row", "col"; "none"
    means it too) or "blockwise", for 16-bit "none"; accumulate "accurate" or "fast"."""
    from ._validate import dtype_key, dtype_name

    a = dtype_key(dtype)
    fp8 = a in ("e4m3", "e5m2")
    if a not in ("bf16", "f16") and not fp8:
        raise ValueError(f"{who}: expected dtype bfloat16, float16, float8_e4m3fn or float8_e5m2 (a's), got {dtype_name(dtype)}")
    scale = _SCALE_ALIASES.get(scale, scale)
    if fp8 and scale == "none":
        scale = "tensor_row_col"
    if not fp8 and scale == "tensor_row_col":  # tune's default scale: meaningless for 16-bit inputs
        scale = "none"
    if scale not in (("tensor_row_col", "blockwise") if fp8 else ("none",)):
        want = "'tensor_row_col' (or 'tensor', 'row', 'col') or 'blockwise'" if fp8 else "'none' (16-bit gemm)"
        raise ValueError(f"{who}: expected scale {want} for {dtype_name(dtype)} inputs, got {scale!r}")
    if accumulate not in ("accurate", "fast"):
        raise ValueError(f"{who}: expected accumulate 'accurate' or 'fast', got {accumulate!r}")
    return a, scale


def _first_built_arch() -> int:
    """Without a supported GPU: the first arch this build compiled (90 unless built SM100-only)."""
    return next((k.arch for k, on in zip(kt.KERNELS, _compiled_mask()) if on), 90)


def current_arch() -> int:
    """The arch this library would run on the current CUDA device (0: none or unsupported)."""
    if not torch.cuda.is_available():
        return 0
    return int(torch.ops.cutlass_gemm._device_arch(torch.cuda.current_device()))


def _init() -> None:
    """At import: rules from $CUTLASS_GEMM_CONFIG_FILE if set (a bad file warns and is ignored),
    else the tuned cache if it matches this GPU, version and table (cutlass_gemm.tune writes it),
    ahead of the shipped defaults, led by the overlay of this GPU model if it has one (unless
    $CUTLASS_GEMM_GPU_OVERLAY is 0)."""
    global _gpu_name_in_use
    overlay = os.environ.get(GPU_OVERLAY_ENV, "1")
    if overlay not in ("0", "1"):
        import warnings

        warnings.warn(f"cutlass_gemm: expected {GPU_OVERLAY_ENV} 0 or 1, got {overlay!r}; using 1", stacklevel=3)
    _gpu_name_in_use = _overlay_gpu(_visible_gpu_names()) if overlay != "0" else None
    path = os.environ.get(CONFIG_FILE_ENV)
    if path:
        try:
            load(path)
            return
        except Exception as e:  # a bad file must not break import: warn, go on as if unset
            import warnings

            warnings.warn(f"cutlass_gemm: ignoring {CONFIG_FILE_ENV}={path}: {type(e).__name__}: {e}", stacklevel=3)
    from .autotune import load_cache

    if not load_cache():
        push()
