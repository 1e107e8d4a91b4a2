"""Timing the way shared/benchmarks.md fixes it: CUDA-graph replay of a batch of back-to-back
calls (no host overhead on either side), inputs rotated across sets larger than L2, median."""

from __future__ import annotations

import math
import statistics
from typing import Callable, List, Sequence, Union

import torch


MAX_ROTATION_SETS = 64


def rotation_sets(make: Callable[[], tuple], bytes_per_set: int, l2_bytes: int = 60 * 2**20) -> list:
    """Enough independent input sets that the calls between two uses of one set move 3x L2 (60 MiB,
    above the H200's 50 MB): its operands are never L2-resident. Up to MAX_ROTATION_SETS sets (at
    most 3x L2 + one set of memory); the cap of 8 before session 10 left the sets of 1024^3-class
    problems (4-6 MB each, 32-48 MB in all) inside L2."""
    n = max(2, min(MAX_ROTATION_SETS, -(-3 * l2_bytes // max(bytes_per_set, 1)) + 1))
    return [make() for _ in range(n)]


def recover() -> None:
    """After a failed capture, launch or allocation: drain and free, so the next contender (and the
    rest of the run) starts clean."""
    if torch.cuda.is_available():
        try:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            pass


def _capture(fn: Callable, arg_sets: Sequence[tuple], calls: int) -> "torch.cuda.CUDAGraph":
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for args in arg_sets:  # warm-up outside the graph (allocations, lazy init, autotuning)
            fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fn(*arg_sets[i % len(arg_sets)])
    return g


# A replay shorter than this is dominated by the clock's ramp and the launch of the graph itself:
# small shapes get more calls per graph (at most MAX_CALLS). Warm-up replays run for at least
# WARM_MS so the power-limited clock settles before the first timed replay (run-to-run spread of
# 10-20% at shapes of ~10 us with 3 short warm-up replays; notes/timing.md).
MIN_REPLAY_MS = 1.0
MAX_CALLS = 400
WARM_MS = 25.0
REPLAYS = 15  # timed replays per contender and shape, split across rounds (replays_per_round)
MIN_ROUND_REPLAYS = 5


def replays_per_round(rounds: int) -> int:
    """Timed replays per round when a shape is timed in `rounds` rounds: REPLAYS split between them
    (at least MIN_ROUND_REPLAYS each), so 3 rounds cost the same replays as one, plus warm-ups."""
    return max(MIN_ROUND_REPLAYS, math.ceil(REPLAYS / max(rounds, 1)))


def _warm(g: "torch.cuda.CUDAGraph", calls: int) -> float:
    """Replays g for at least WARM_MS (and 3 replays); returns the last replay's ms per call."""
    spent, n, last = 0.0, 0, 0.0
    while n < 3 or spent < WARM_MS:
        last = _replay_ms(g, calls)
        spent += last * calls
        n += 1
    return last


def _steady_graph(fn: Callable, arg_sets: Sequence[tuple], calls: int) -> tuple:
    """(graph, calls): captured with enough calls that one replay takes MIN_REPLAY_MS, warmed up."""
    g = _capture(fn, arg_sets, calls)
    per_call = _warm(g, calls)
    if per_call * calls < MIN_REPLAY_MS and calls < MAX_CALLS:
        more = min(MAX_CALLS, math.ceil(MIN_REPLAY_MS / max(per_call, 1e-4)))
        if more > calls:
            del g
            calls = more
            g = _capture(fn, arg_sets, calls)
            _warm(g, calls)
    return g, calls


def _replay_ms(g: "torch.cuda.CUDAGraph", calls: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    g.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def graph_times_ms(fns: Sequence[Callable], arg_sets: Sequence[tuple], calls: int = 20, replays: int = REPLAYS,
                   interleave: bool = False) -> List[Union[float, BaseException]]:
    """Median milliseconds per call of each fn: at least `calls` back-to-back calls captured in one
    CUDA graph (more for small problems, so a replay lasts MIN_REPLAY_MS), replayed `replays` times
    after WARM_MS of warm-up replays. By default one contender after the other, each in its own
    steady state (the usual method). interleave=True captures them all and replays them in rounds
    (one replay of each per round): on the H200 that moved mid-size ratios by up to 15% against us
    (the GPU's power-limited clock is then shared; notes/timing.md), so it is a diagnostic, not the
    default. A fn that fails to warm up or capture gets its exception in place of a time; the
    others are still timed."""
    def steady(fn):
        try:
            return _steady_graph(fn, arg_sets, calls)
        except Exception as e:  # noqa: BLE001 - reported per contender by the caller
            recover()  # before the next contender is captured
            return e

    if not interleave:
        out: List[Union[float, BaseException]] = []
        for fn in fns:
            gc = steady(fn)
            out.append(gc if isinstance(gc, BaseException) else statistics.median(_replay_ms(*gc) for _ in range(replays)))
            del gc
        return out
    graphs = [steady(fn) for fn in fns]
    times: List[List[float]] = [[] for _ in graphs]
    for _ in range(replays):
        for gc, t in zip(graphs, times):
            if not isinstance(gc, BaseException):
                t.append(_replay_ms(*gc))
    out = [gc if isinstance(gc, BaseException) else statistics.median(t) for gc, t in zip(graphs, times)]
    del graphs
    return out


def graph_time_ms(fn: Callable, arg_sets: Sequence[tuple], calls: int = 20, replays: int = REPLAYS) -> float:
    """Median milliseconds per call of one fn (graph_times_ms of one contender); raises its error."""
    (t,) = graph_times_ms([fn], arg_sets, calls, replays)
    if isinstance(t, BaseException):
        raise t
    return t


def eager_overhead_us(fn: Callable, args: tuple, iters: int = 200, loops: int = 1) -> float:
    """Host time per eager call (launch-bound problem), microseconds: the best of `loops` loops
    of `iters` back-to-back calls."""
    import time

    for _ in range(20):
        fn(*args)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) / iters * 1e6)
    torch.cuda.synchronize()
    return best


def tflops(m: int, n: int, k: int, ms: float) -> float:
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12
