"""Autotuning on request: time every compiled kernel of a problem family on given shapes, keep
the winners as rules of the registry, and persist them in a cache loaded at import.

    cutlass_gemm.tune([(m, 8192, 8192) for m in (1, 16, 128, 512, 2048)], torch.bfloat16)

Rules cover M ranges between the tuned M values (split at midpoints) for each tuned (N, K);
other shapes keep the shipped defaults. The cache (`$CUTLASS_GEMM_CACHE_DIR/tuned.json`, default
`~/.cache/cutlass_gemm/`) is keyed by GPU name, library version and kernel-table hash: a cache
written for another GPU, version or table, or a corrupt file, is ignored with a warning. Tuning
never runs during CUDA-graph capture or inside a compiled graph (it raises there).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import warnings
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch

from . import configs
from . import kernel_table as kt

CACHE_VERSION = 1
Timer = Callable[[Callable[[], object]], float]  # fn -> median ms


def cache_path() -> str:
    base = os.environ.get("CUTLASS_GEMM_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "cutlass_gemm")
    return os.path.join(base, "tuned.json")


def _cache_key() -> Dict[str, object]:
    from . import __version__
    from ._ops import _table_hash

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    return {"version": CACHE_VERSION, "gpu": gpu, "library": __version__, "table": _table_hash(configs.kernels())}


def event_timer(fn: Callable[[], object], warmup: int = 3, reps: int = 10) -> float:
    """Median milliseconds of `fn` with CUDA events (operands stay resident: a relative ranking)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _family_kernels(dtype: torch.dtype, scale: str, accumulate: str, arch: int) -> List[kt.Kernel]:
    from ._validate import dtype_key

    a = dtype_key(dtype)
    fp8 = a in ("e4m3", "e5m2")
    scale = scale if fp8 else "none"
    accum = "f32" if not fp8 else ("promoted" if scale == "blockwise" or accumulate == "accurate" else "fast")
    out = "bf16" if fp8 else a
    accum = kt.resolve_accum(arch, a, a, out, scale, accum)  # SM100 FP8: one FP32-accumulating kernel set
    mask = dict(zip(configs.kernels(), configs._compiled_mask()))
    return [k for k in kt.KERNELS if k.family == (arch, a, a, out, scale, accum) and mask[k.name]]


def _inputs(m: int, n: int, k: int, dtype: torch.dtype, scale: str):
    dev = "cuda"
    if dtype in (torch.bfloat16, torch.float16):
        a = torch.randn(m, k, device=dev, dtype=dtype)
        b = torch.randn(n, k, device=dev, dtype=dtype)
        return lambda cfg: configs_call_gemm(a, b, cfg)
    from .quantize import quantize_fp8

    ga, gb = ("1x128", "128x128") if scale == "blockwise" else ("row", "row")
    a8, sa = quantize_fp8(torch.randn(m, k, device=dev), ga)
    b8, sb = quantize_fp8(torch.randn(n, k, device=dev), gb)
    return lambda cfg: configs_call_scaled(a8, b8, sa, sb, cfg)


def configs_call_gemm(a, b, cfg):
    return torch.ops.cutlass_gemm.gemm.default(a, b, config=cfg)


def configs_call_scaled(a8, b8, sa, sb, cfg):
    # accumulate follows the forced kernel's family
    accumulate = "fast" if "_fast_" in cfg else "accurate"
    return torch.ops.cutlass_gemm.scaled_mm.default(a8, b8, sa, sb, accumulate=accumulate, config=cfg)


def rules_from_winners(winners: Dict[Tuple[int, int], Dict[int, str]]) -> List[configs.Rule]:
    """Per (N, K): M ranges split at midpoints between tuned M values, each to its winner."""
    rules = []
    for (n, k), by_m in winners.items():
        ms = sorted(by_m)
        for i, m in enumerate(ms):
            lo = 1 if i == 0 else (ms[i - 1] + m) // 2 + 1
            hi = configs.INF if i == len(ms) - 1 else (m + ms[i + 1]) // 2
            rules.append(configs.Rule(by_m[m], m=(lo, hi), n=(n, n), k=(k, k)))
    return rules


def tune(shapes: Iterable[Tuple[int, int, int]], dtype: torch.dtype = torch.bfloat16, *, scale: str = "tensor_row_col",
         accumulate: str = "accurate", timer: Optional[Timer] = None, save: bool = True,
         path: Optional[str] = None, verbose: bool = False) -> List[configs.Rule]:
    """Time every compiled kernel of the family on each (M, N, K); install the winners as tuned
    rules (replacing earlier tuned rules for the same family and (N, K)) and save the cache."""
    if torch.compiler.is_compiling():
        raise RuntimeError("cutlass_gemm.tune: not inside a compiled graph; tune before compiling")
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("cutlass_gemm.tune: not during CUDA-graph capture; tune before capturing")
    if not torch.cuda.is_available() or not configs.current_arch():
        raise RuntimeError("cutlass_gemm.tune: needs an SM90/SM100 GPU")
    timer = timer or event_timer
    cands = _family_kernels(dtype, scale, accumulate, configs.current_arch())
    if not cands:
        raise RuntimeError(f"cutlass_gemm.tune: no compiled kernel for {dtype} ({scale}, {accumulate})")
    winners: Dict[Tuple[int, int], Dict[int, str]] = {}
    for m, n, k in shapes:
        call = _inputs(m, n, k, dtype, scale)
        times = {c.name: timer(lambda c=c: call(c.name)) for c in cands}
        best = min(times, key=times.get)
        winners.setdefault((n, k), {})[m] = best
        if verbose:
            print(f"{m}x{n}x{k}: {best} " + " ".join(f"{nm}={t * 1e3:.1f}us" for nm, t in sorted(times.items())))
    new = rules_from_winners(winners)
    families = {r.spec.family for r in new}
    nks = set(winners)
    with configs._lock:
        kept = [r for r in configs._tuned_rules if not (r.spec.family in families and (r.n[0], r.k[0]) in nks
                                                         and r.n[0] == r.n[1] and r.k[0] == r.k[1])]
        configs._tuned_rules[:] = new + kept
        tuned = list(configs._tuned_rules)
    configs.push()
    if save:
        write_cache(tuned, path)
    return new


def write_cache(rules: Sequence[configs.Rule], path: Optional[str] = None) -> str:
    """Atomically write the cache (key + rules)."""
    from dataclasses import asdict

    path = path or cache_path()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    data = dict(_cache_key(), rules=[asdict(r) for r in rules])
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
    os.replace(tmp, path)
    return path


def load_cache(path: Optional[str] = None) -> int:
    """Load the cache if it exists and matches this GPU, version and table; else warn and skip."""
    path = path or cache_path()
    if not os.path.exists(path):
        return 0
    try:
        with open(path) as fh:
            data = json.load(fh)
        key = _cache_key()
        stale = [f for f in key if data.get(f) != key[f]]
        if stale:
            warnings.warn(f"cutlass_gemm: ignoring tuned cache {path}: written for another {', '.join(stale)}")
            return 0
        rules = [configs.Rule(r["kernel"], tuple(r["m"]), tuple(r["n"]), tuple(r["k"])) for r in data["rules"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        warnings.warn(f"cutlass_gemm: ignoring unreadable tuned cache {path}: {e}")
        return 0
    with configs._lock:
        configs._tuned_rules[:] = rules
    configs.push()
    return len(rules)
