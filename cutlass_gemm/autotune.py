"""Autotuning on request: time every compiled kernel of a problem family on given shapes, keep
the winners as rules of the registry, and persist them in a cache loaded at import.

    cutlass_gemm.tune([(m, 8192, 8192) for m in (1, 16, 128, 512, 2048)], torch.bfloat16)

Rules cover M ranges between the tuned M values (split at midpoints) for each tuned (N, K);
other shapes keep the shipped defaults. The cache (`$CUTLASS_GEMM_CACHE_DIR/tuned.json`, default
`~/.cache/cutlass_gemm/`) is keyed by GPU name, library version and kernel-table hash: a cache
written for another GPU, version or table, or a corrupt file, is ignored with a warning. Tuning
never runs during CUDA-graph capture or inside a compiled graph (it raises there).

The cache file never breaks user code:
- Writers (several processes tuning at once) merge: under an exclusive lock on `tuned.json.lock`
  (fcntl.flock; released by the OS if a writer dies) each reads the file, keeps the entries it
  does not replace (same family and N/K ranges: the newest writer wins) and writes the merged
  file to a temp file in the same directory, fsyncs it and `os.replace`s it over the old one.
  Readers take no lock: they see the old file or the new one, never a partial one. Where the
  lock is unavailable (no fcntl, or not acquired within LOCK_TIMEOUT_S) the last writer wins.
- A read-only or otherwise unwritable location: `tune()` keeps its rules for this process and
  warns that they were not saved.
- A missing, corrupt, truncated or foreign file (another GPU name, version or table; unknown
  kernels; malformed ranges): ignored with a warning, the shipped defaults stay in force.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import asdict
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch

from . import configs
from .ladder import ladder
from . import kernel_table as kt

CACHE_VERSION = 1
Timer = Callable[[Callable[[], object]], float]  # fn -> median ms per call (default: graph_timer)


def cache_path() -> str:
    base = os.environ.get("CUTLASS_GEMM_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "cutlass_gemm")
    return os.path.join(base, "tuned.json")


def _gpu_name() -> str:
    """The current device's name; "cpu" without CUDA, "unknown" when the query fails (the cache
    then only matches files written under the same failure, never another GPU's)."""
    try:
        return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    except Exception:  # a broken driver must not break import
        return "unknown"


def _cache_key() -> Dict[str, object]:
    from . import __version__
    from ._ops import _table_hash

    return {"version": CACHE_VERSION, "gpu": _gpu_name(), "library": __version__, "table": _table_hash(configs.kernels())}


# Candidates are timed by replaying a CUDA graph of back-to-back calls: eager per-call timing
# measures host launch overhead on small problems (~60 us for every kernel of a 16x1024x512 bf16
# GEMM on the H200, whose kernels take ~4 us), which ranks kernels at random. A replay shorter than
# GRAPH_MIN_REPLAY_MS gets more calls (at most GRAPH_MAX_CALLS); GRAPH_WARM_MS of warm-up replays
# let the clock settle first.
GRAPH_MIN_REPLAY_MS = 0.5
GRAPH_MAX_CALLS = 200
GRAPH_WARM_MS = 10.0


def graph_timer(fn: Callable[[], object], calls: int = 10, replays: int = 7) -> float:
    """Median milliseconds per call of `fn` over `replays` replays of a CUDA graph of at least
    `calls` back-to-back calls (operands stay resident: a relative ranking). Outputs allocated
    inside the graph come from its private pool, freed with the graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up (lazy init, allocations) on a side stream before capture
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)

    def capture(n: int) -> "torch.cuda.CUDAGraph":
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                fn()
        return g

    def replay_ms(g: "torch.cuda.CUDAGraph") -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def warm(g: "torch.cuda.CUDAGraph") -> float:  # >= GRAPH_WARM_MS (and 3 replays); last replay's ms
        spent, n, last = 0.0, 0, 0.0
        while n < 3 or spent < GRAPH_WARM_MS:
            last = replay_ms(g)
            spent, n = spent + last, n + 1
        return last

    g = capture(calls)
    ms = warm(g)
    if ms < GRAPH_MIN_REPLAY_MS and calls < GRAPH_MAX_CALLS:
        more = min(GRAPH_MAX_CALLS, math.ceil(GRAPH_MIN_REPLAY_MS * calls / max(ms, 1e-4)))
        if more > calls:
            del g  # free the short graph (and its pool) before capturing the longer one
            calls, g = more, capture(more)
            warm(g)
    t = statistics.median(replay_ms(g) / calls for _ in range(replays))
    del g  # free the graph and its private pool now, before the next candidate's capture
    return t


def _check_shape(s) -> Tuple[int, int, int]:
    if not (isinstance(s, (tuple, list)) and len(s) == 3
            and all(hasattr(v, "__index__") and not isinstance(v, bool) and v >= 1 for v in s)):
        raise ValueError(f"cutlass_gemm.tune: expected shapes of (M, N, K) positive integers, got {s!r}")
    return tuple(int(v) for v in s)


def _check_shapes(shapes) -> List[Tuple[int, int, int]]:
    one = isinstance(shapes, (tuple, list)) and len(shapes) == 3 and all(isinstance(v, int) for v in shapes)
    if one or isinstance(shapes, (str, bytes, torch.Tensor)) or not hasattr(shapes, "__iter__"):
        hint = f" (one shape: [{tuple(shapes)!r}])" if one else ""
        raise ValueError(f"cutlass_gemm.tune: expected shapes as a list of (M, N, K) tuples{hint}, got {shapes!r}")
    return [_check_shape(s) for s in shapes]


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


# A candidate whose output is this far from the float32 reference (relative Frobenius) is never
# timed or installed: a fast wrong kernel must not win. bf16/fp16 output rounding is ~4e-3; FP8
# fast accumulation on long K reaches a few 1e-2.
CHECK_TOL = {"16bit": 2e-2, "fp8": 1e-1}


# The epilogue a fused tune times: the longest one (bias, GELU, residual), as bench.sweep's fused sweeps.
FUSED_EPILOGUE = dict(activation="gelu_tanh")


def _inputs(m: int, n: int, k: int, dtype: torch.dtype, scale: str, fused: bool = False):
    """(call(cfg) -> output, float32 reference, tolerance) on fresh random inputs; fused: with bias,
    GELU and a residual in the epilogue."""
    from ._reference import gemm_reference, scaled_mm_reference

    dev = "cuda"
    out = dtype if dtype in (torch.bfloat16, torch.float16) else torch.bfloat16
    ep = dict(bias=torch.randn(n, device=dev, dtype=out), residual=torch.randn(m, n, device=dev, dtype=out),
              **FUSED_EPILOGUE) if fused else {}
    if dtype in (torch.bfloat16, torch.float16):
        a = torch.randn(m, k, device=dev, dtype=dtype)
        b = torch.randn(n, k, device=dev, dtype=dtype) * k ** -0.5
        ref = gemm_reference(a, b, **ep, cast_output=False)
        return (lambda cfg: configs_call_gemm(a, b, cfg, ep)), ref, CHECK_TOL["16bit"]
    from .quantize import quantize_fp8

    ga, gb = ("1x128", "128x128") if scale == "blockwise" else ("row", "row")
    a8, sa = quantize_fp8(torch.randn(m, k, device=dev), ga)
    b8, sb = quantize_fp8(torch.randn(n, k, device=dev) * k ** -0.5, gb)
    ref = scaled_mm_reference(a8, b8, sa, sb, **ep, cast_output=False)  # dequantized float32 matmul
    return (lambda cfg: configs_call_scaled(a8, b8, sa, sb, cfg, ep)), ref, CHECK_TOL["fp8"]


def _rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    err = ((out.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()
    return err if err == err else float("inf")  # NaN counts as wrong


def configs_call_gemm(a, b, cfg, ep=None):
    ep = ep or {}
    return torch.ops.cutlass_gemm.gemm.default(a, b, ep.get("bias"), ep.get("residual"),
                                               activation=ep.get("activation", "none"), config=cfg)


def configs_call_scaled(a8, b8, sa, sb, cfg, ep=None):
    ep = ep or {}
    # accumulate follows the forced kernel's family
    accumulate = "fast" if "_fast_" in cfg else "accurate"
    return torch.ops.cutlass_gemm.scaled_mm.default(a8, b8, sa, sb, ep.get("bias"), ep.get("residual"),
                                                    activation=ep.get("activation", "none"), accumulate=accumulate,
                                                    config=cfg)


def rules_from_winners(winners: Dict[Tuple[int, int], Dict[int, str]], epilogue: str = "any") -> List[configs.Rule]:
    """Per (N, K): the M ladder of the winners over the tuned span, smallest to largest tuned M
    (cutlass_gemm.ladder: split at geometric midpoints between tuned Ms, a winner stopped at its
    tile's M extent where the next one runs as it was timed, equal neighbours merged; outside the
    span the shipped rules serve), as tools/derive_rules.py builds the shipped per-(N, K) rules;
    every rule serves the calls of `epilogue` (configs.EPILOGUE_CLASSES)."""
    rules = []
    for (n, k), by_m in winners.items():
        for name, (lo, hi) in ladder(by_m, kt.m_rows, span_only=True):
            rules.append(configs.Rule(name, m=(lo, configs.INF if hi is None else hi), n=(n, n), k=(k, k),
                                      epilogue=epilogue))
    return rules


def tune(shapes: Iterable[Tuple[int, int, int]], dtype: torch.dtype = torch.bfloat16, *, scale: str = "tensor_row_col",
         accumulate: str = "accurate", epilogue: str = "plain", timer: Optional[Timer] = None, save: bool = True,
         path: Optional[str] = None, verbose: bool = False) -> List[configs.Rule]:
    """Time every compiled kernel of the family on each (M, N, K); install the winners as tuned
    rules (replacing earlier tuned rules for the same family, (N, K) and epilogue) and save the cache.

    epilogue "plain" (default): timed without an epilogue, the rules serve calls without an
    activation or residual; "fused": timed with bias + GELU + residual, the rules serve calls with
    an activation or a residual (the best tile differs: configs.EPILOGUE_CLASSES)."""
    if epilogue not in ("plain", "fused"):
        raise ValueError(f"cutlass_gemm.tune: expected epilogue 'plain' or 'fused', got {epilogue!r}")
    _, scale = configs.check_family_args("cutlass_gemm.tune", dtype, scale, accumulate)
    shapes = _check_shapes(shapes)
    if torch.compiler.is_compiling():
        raise RuntimeError("cutlass_gemm.tune: not inside a compiled graph; tune before compiling")
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("cutlass_gemm.tune: not during CUDA-graph capture; tune before capturing")
    if not torch.cuda.is_available() or not configs.current_arch():
        raise RuntimeError("cutlass_gemm.tune: needs an SM90/SM100 GPU")
    timer = timer or graph_timer
    cands = _family_kernels(dtype, scale, accumulate, configs.current_arch())
    if epilogue == "fused":  # timed with GELU and a residual: only kernels with both nodes run it
        cands = [c for c in cands if c.serves_fused]
    if not cands:
        raise RuntimeError(f"cutlass_gemm.tune: no compiled kernel for {dtype} ({scale}, {accumulate})")
    winners: Dict[Tuple[int, int], Dict[int, str]] = {}
    for m, n, k in shapes:
        call, ref, tol = _inputs(m, n, k, dtype, scale, fused=epilogue == "fused")
        ok = []
        for c in cands:
            err = _rel_err(call(c.name), ref)
            if err <= tol:
                ok.append(c)
            else:
                warnings.warn(f"cutlass_gemm.tune: {c.name} on {m}x{n}x{k}: relative error {err:.2e} > {tol}; "
                              "not timed, never installed", stacklevel=2)
        if not ok:
            raise RuntimeError(f"cutlass_gemm.tune: no kernel of the family is within {tol} of the reference on "
                               f"{m}x{n}x{k}; nothing was installed")
        times = {c.name: timer(lambda c=c: call(c.name)) for c in ok}
        best = min(times, key=times.get)
        winners.setdefault((n, k), {})[m] = best
        if verbose:
            print(f"{m}x{n}x{k}: {best} " + " ".join(f"{nm}={t * 1e3:.1f}us" for nm, t in sorted(times.items())))
    new = rules_from_winners(winners, epilogue)
    install_tuned(new, epilogue, save, path)
    return new


def install_tuned(new: List[configs.Rule], epilogue: str, save: bool = True, path: Optional[str] = None) -> None:
    """Put freshly tuned rules ahead of the tuned rules in force, replacing those of the same family,
    (N, K) and epilogue, and (save) merge them into the cache file. Only `new` is written: the file's
    other entries (maybe newer, from another process) stay, and rules loaded from
    CUTLASS_GEMM_CONFIG_FILE or configs.load() never enter it."""
    families = {r.spec.family for r in new}
    nks = {(r.n[0], r.k[0]) for r in new}
    with configs._lock:
        kept = [r for r in configs._tuned_rules if not (r.spec.family in families and (r.n[0], r.k[0]) in nks
                                                         and r.n[0] == r.n[1] and r.k[0] == r.k[1]
                                                         and r.epilogue == epilogue)]
        configs._tuned_rules[:] = new + kept
    configs.push()
    if save:
        write_cache(new, path)


LOCK_TIMEOUT_S = 30.0
_thread_lock = threading.Lock()  # flock excludes other processes; this, other threads of this one


@contextmanager
def _file_lock(path: str, timeout: float = LOCK_TIMEOUT_S):
    """Exclusive advisory lock on `path` (created if needed). Yields True if held; False where
    locking is unavailable or timed out (the caller then writes without it: last writer wins)."""
    with _thread_lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield False
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout
            held = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    held = True
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
            try:
                yield held
            finally:
                if held:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def atomic_write_json(path: str, data: object) -> None:
    """Write JSON to `path` atomically: a temp file in the same directory, fsynced, then
    os.replace (readers see the old or the new file, never a partial one). Raises OSError."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the cache is as readable as any other file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _rule_key(r: configs.Rule):
    return (r.spec.family, r.n, r.k, r.epilogue)


def _parse(data: object) -> List[configs.Rule]:
    """The rules of a cache file's JSON, or ValueError saying what is wrong with it."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    raw = data.get("rules")
    if not isinstance(raw, list):
        raise ValueError(f"expected a list under 'rules', got {type(raw).__name__}")
    rules = []
    for i, r in enumerate(raw):
        try:
            missing = [ax for ax in ("m", "n", "k") if isinstance(r, dict) and ax not in r]
            if missing:  # the cache always writes every axis: a missing one is a damaged file
                raise ValueError(f"expected the ranges m, n and k, missing {', '.join(missing)}")
            rules.append(configs.rule_from_dict(r))
        except ValueError as e:
            raise ValueError(f"rule {i}: {e}") from None
    return rules


def _stale_fields(data: dict, key: Dict[str, object]) -> List[str]:
    return [f for f in key if data.get(f) != key[f]]


def write_cache(rules: Sequence[configs.Rule], path: Optional[str] = None, *, merge: bool = True) -> Optional[str]:
    """Write the cache (key + rules) atomically and return its path; None (with a warning) when
    the location is not writable. merge: keep the file's entries (written by other processes
    for this GPU, version and table) that `rules` do not replace, under an exclusive file lock."""
    path = path or cache_path()
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        key = _cache_key()
        with _file_lock(path + ".lock"):
            out = list(rules)
            if merge:
                out += [r for r in _read_mergeable(path, key) if _rule_key(r) not in {_rule_key(x) for x in out}]
            atomic_write_json(path, dict(key, rules=[asdict(r) for r in out]))
    except OSError as e:
        warnings.warn(f"cutlass_gemm: could not save the tuned cache to {path} ({e}); the tuned rules stay in "
                      "force for this process only (set CUTLASS_GEMM_CACHE_DIR to a writable directory)", stacklevel=2)
        return None
    return path


def _read_mergeable(path: str, key: Dict[str, object]) -> List[configs.Rule]:
    """Rules of the current file when it is readable and has this key; else nothing (replaced)."""
    try:
        with open(path) as fh:
            data = json.load(fh)
        if not isinstance(data, dict) or _stale_fields(data, key):
            return []
        return _parse(data)
    except (OSError, ValueError):  # missing, unreadable or corrupt: the new file replaces it
        return []


def load_cache(path: Optional[str] = None) -> int:
    """Load the cache if it exists and matches this GPU, version and table; else warn and skip.
    Never raises: a bad cache must not break `import cutlass_gemm`."""
    try:
        path = path or cache_path()
        if not os.path.exists(path):
            return 0
        with open(path, "rb") as fh:
            data = json.loads(fh.read().decode("utf-8"))
        key = _cache_key()
        stale = _stale_fields(data, key) if isinstance(data, dict) else []
        if stale:
            warnings.warn(f"cutlass_gemm: ignoring tuned cache {path}: written for another {', '.join(stale)}",
                          stacklevel=2)
            return 0
        rules = _parse(data)
        configs.flatten(rules)  # the table C++ reads: fails here, not half-installed
    except Exception as e:  # OSError, ValueError (JSON, UTF-8, rules), anything else: ignore the file
        warnings.warn(f"cutlass_gemm: ignoring unreadable tuned cache {path}: {type(e).__name__}: {e}", stacklevel=2)
        return 0
    with configs._lock:
        configs._tuned_rules[:] = rules
    configs.push()
    return len(rules)
