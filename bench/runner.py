"""Measuring one case on one shape: fresh inputs, the correctness check, then the same CUDA-graph
timing for ours and every competitor; plus the ceilings and eager overheads of the same run.
The timer is a parameter (tests pass a fake one and run on CPU)."""

from __future__ import annotations

import math
import sys
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Union

import torch

from . import metrics
from .cases import DTYPES, FP8, OURS, Case
from .timing import eager_overhead_us, graph_times_ms, recover, rotation_sets, tflops

# (fns, arg sets) -> ms per call of each fn, or the exception that fn raised (timing.graph_times_ms)
Timer = Callable[[Sequence[Callable], Sequence[tuple]], List[Union[float, BaseException]]]
OVERHEAD_SHAPE = (16, 1024, 1024)  # launch-bound: host time dominates
CEILING_N = 8192
COPY_BYTES = 2 * 10**9


def short_error(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:200]}" if msg else type(e).__name__


def first_output(fns: Iterable[Callable], args: tuple):
    """The first reference expression that runs (fp8: _scaled_mm, else the dequantized torch path)."""
    for fn in fns:
        try:
            return fn(*args)
        except Exception:
            recover()
    return None


def check_output(fn: Callable, sets: Sequence[tuple], ref, tol: float, check: bool) -> dict:
    """Check against ref before any timing: outside tol gets no number (FAIL), an exception neither (error)."""
    res = {"status": "ok", "us": None, "err": None, "note": ""}
    if not check:
        return res
    if ref is None:
        return dict(res, status="error", note="no reference result to check against")
    try:
        res["err"] = metrics.rel_err(fn(*sets[0]), ref)
    except Exception as e:  # noqa: BLE001 - any failure of one contender is reported, never fatal
        recover()
        return dict(res, status="error", note=short_error(e))
    return res if res["err"] <= tol else dict(res, status="FAIL")


def time_checked(fns: Dict[str, Callable], results: Dict[str, dict], sets: Sequence[tuple], timer: Timer) -> None:
    """Time, in one timer call, every contender whose check passed; fills results[name]["us"]."""
    names = [name for name in fns if results[name]["status"] == "ok"]
    try:
        times = timer([fns[name] for name in names], sets)
    except Exception as e:  # noqa: BLE001 - a replay that fails takes no number, and no run down
        recover()
        times = [e] * len(names)
    for name, t in zip(names, times):
        if isinstance(t, BaseException):  # the timer recovered right after it failed
            results[name].update(status="error", note=short_error(t))
        else:
            results[name]["us"] = t * 1e3


def time_one(timer: Timer, fn: Callable, sets: Sequence[tuple]) -> float:
    (t,) = timer([fn], sets)
    if isinstance(t, BaseException):
        raise t
    return t


# --max-rounds: a shape gets another round while the standard error of some competitor's mean log ratio over the
# rounds is above this; two runs' ratios then differ by less than 5% (issue #5's tolerance) about 95% of the time
# (1.96 x sqrt(2) x 0.018 = 0.050; notes/timing.md, session 35).
ROUND_STDERR = 0.018


def _ratio_uncertain(per_round: Dict[str, List[float]]) -> bool:
    ours = per_round[OURS]
    if len(ours) < 2:  # one round cannot say (none: ours failed, nothing to pair)
        return bool(ours)
    return any((metrics.rounds_stderr(ours, ts) or 0.0) > ROUND_STDERR
               for name, ts in per_round.items() if name != OURS)


def run_shape(case: Case, suite: str, m: int, n: int, k: int, compile: bool = True, timer: Timer = graph_times_ms,
              rounds: int = 1, max_rounds: Optional[int] = None) -> dict:
    """One row: ours and each competitor on the same fresh, rotated inputs, checked, then timed.
    rounds > 1: timed again on newly allocated random inputs, the contender order reversed every
    other round; each time is the geometric mean over rounds (the per-round times are kept in
    "us_rounds"), so a ratio of two times is the geometric mean of the per-round ratios: each round
    times the contenders back to back, which pairs them against the card's slow clock drift.
    max_rounds > rounds: after `rounds`, one more round at a time while the standard error of some competitor's
    mean log ratio against ours is above ROUND_STDERR, up to max_rounds in all."""
    max_rounds = max(rounds, max_rounds or rounds)
    make_sets = lambda: rotation_sets(lambda: case.make(m, n, k), case.nbytes(m, n, k))  # noqa: E731
    sets = make_sets()
    ref = first_output(case.reference_fns(m, n, k), sets[0])
    entries = case.entries(m, n, k, compile)
    results = {e.name: check_output(e.fn, sets, ref, case.tol, e.check) for e in entries}
    del ref
    per_round: Dict[str, List[float]] = {e.name: [] for e in entries}
    r = 0
    while r < rounds or (r < max_rounds and _ratio_uncertain(per_round)):
        if r:  # made before the old sets are freed, so the caching allocator cannot hand back the same blocks
            new_sets = make_sets()
            del sets
            sets, new_sets = new_sets, None
        order = entries if r % 2 == 0 else entries[::-1]
        this = {e.name: dict(results[e.name]) for e in entries}
        time_checked({e.name: e.fn for e in order}, this, sets, timer)
        for name, res in this.items():
            if res["us"] is not None:
                per_round[name].append(res["us"])
            elif res["status"] != results[name]["status"]:  # failed in this round: no number at all
                results[name] = res
        r += 1
    for e in entries:
        res = results[e.name]
        if res["status"] == "ok" and per_round[e.name]:
            ts = per_round[e.name]
            res["us"] = ts[0] if len(ts) == 1 else geomean(ts)
            if r > 1:
                res["us_rounds"] = per_round[e.name]
        res["note"] = "; ".join(x for x in (e.note, res["note"]) if x)
    del sets
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return {"suite": suite, "m": m, "n": n, "k": k, **case.selection(m, n, k),
            "flops": metrics.flops(m, n, k), "bytes": case.nbytes(m, n, k),
            "ours": results.pop(OURS), "competitors": results, "published": case.published(m, n, k)}


def geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def eager_overheads(case: Case, compile: bool = True, shape=OVERHEAD_SHAPE) -> Dict[str, Optional[float]]:
    """Host µs per eager call of each contender on a launch-bound shape (wrapper, dispatch, selection)."""
    args = case.make(*shape)
    out = {}
    for e in case.entries(*shape, compile):
        try:
            out[e.name] = eager_overhead_us(e.fn, args)
        except Exception:  # noqa: BLE001
            recover()
            out[e.name] = None
    return out


def peak_tflops(kind: str, timer: Timer = graph_times_ms) -> float:
    """bf16/f16: cuBLAS 8192^3 matmul; fp8: _scaled_mm tensorwise fast-accum 8192^3."""
    n = CEILING_N
    if kind == "fp8":
        one = torch.ones((), device="cuda")
        make = lambda: tuple(torch.randn(n, n, device="cuda").to(FP8) for _ in range(2))  # noqa: E731
        fn = lambda a, b: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True)  # noqa: E731
        nbytes = 4 * n * n
    else:
        make = lambda: tuple(torch.randn(n, n, device="cuda", dtype=DTYPES[kind]) for _ in range(2))  # noqa: E731
        fn = lambda a, b: torch.matmul(a, b.t())  # noqa: E731
        nbytes = 6 * n * n
    return tflops(n, n, n, time_one(timer, fn, rotation_sets(make, nbytes)))


def hbm_gbps(timer: Timer = graph_times_ms) -> float:
    """Bytes per second of the better of two ~2 GB streams: a device-to-device copy (read + write
    counted) and a read-only float32 sum. A GEMM at small M only reads its weight, and a byte copy
    reached 2.77 TB/s on the H200 where reads stream faster, which put small-M rows over 100%."""
    src = torch.ones(COPY_BYTES, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = time_one(timer, lambda s, d: d.copy_(s), [(src, dst)])
    del dst
    acc = torch.empty((), dtype=torch.float32, device="cuda")
    read_ms = time_one(timer, lambda s, o: torch.sum(s, dim=0, out=o), [(src.view(torch.float32), acc)])
    return max(2 * COPY_BYTES / (copy_ms * 1e-3), COPY_BYTES / (read_ms * 1e-3)) / 1e9


CEILING_METHODS = {
    "bf16_tflops": "cuBLAS torch.matmul bf16 8192^3",
    "f16_tflops": "cuBLAS torch.matmul f16 8192^3",
    "fp8_tflops": "torch._scaled_mm e4m3 tensorwise use_fast_accum=True 8192^3",
    "hbm_gbps": "max of a 2e9-byte device-to-device copy (read + write) and a read-only float32 sum of 2e9 bytes",
}


def measure_ceilings(peaks: Iterable[str]) -> dict:
    """The roofline's ceilings, re-measured in this run; a ceiling that can't be measured is None."""
    out = {}
    for key, fn in [(f"{p}_tflops", lambda p=p: peak_tflops(p)) for p in sorted(set(peaks))] + [("hbm_gbps", hbm_gbps)]:
        try:
            out[key] = fn()
        except Exception as e:  # noqa: BLE001
            recover()
            print(f"ceiling {key}: not measured ({short_error(e)})", file=sys.stderr)
            out[key] = None
        torch.cuda.empty_cache()
    out["method"] = {k: CEILING_METHODS[k] for k in out}
    return out


class _Counter:
    """tqdm's small subset used here, on stderr."""

    def __init__(self, total: int, desc: str):
        self.total, self.desc, self.i = total, desc, 0

    def set_postfix_str(self, s: str) -> None:
        end = "" if sys.stderr.isatty() else "\n"  # redraw one line on a terminal, else one line per step
        print(f"\r[{self.desc}] {self.i}/{self.total} {s}   ", end=end, file=sys.stderr, flush=True)

    def update(self, n: int = 1) -> None:
        self.i += n

    def close(self) -> None:
        self.set_postfix_str("done")
        if sys.stderr.isatty():
            print(file=sys.stderr, flush=True)


def progress(total: int, desc: str):
    try:
        from tqdm import tqdm
    except ImportError:
        return _Counter(total, desc)
    return tqdm(total=total, desc=desc, file=sys.stderr)


def run_suite(case: Case, suite: str, shapes: List[tuple], compile: bool = True, timer: Timer = graph_times_ms,
              rounds: int = 1, max_rounds: Optional[int] = None) -> List[dict]:
    bar = progress(len(shapes), f"{suite} {case.tag}")
    rows = []
    for m, n, k in shapes:
        bar.set_postfix_str(f"{m}x{n}x{k}")
        try:
            rows.append(run_shape(case, suite, m, n, k, compile, timer, rounds, max_rounds))
        except Exception as e:  # noqa: BLE001 - e.g. out of memory making inputs: this shape has no numbers
            recover()
            rows.append({"suite": suite, "m": m, "n": n, "k": k, **case.selection(m, n, k),
                         "flops": metrics.flops(m, n, k), "bytes": case.nbytes(m, n, k), "competitors": {},
                         "ours": {"status": "error", "us": None, "err": None, "note": short_error(e)}, "published": None})
        bar.update(1)
    bar.close()
    return rows
