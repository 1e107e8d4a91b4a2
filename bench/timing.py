"""Timing the way shared/benchmarks.md fixes it: CUDA-graph replay of a batch of back-to-back
calls (no host overhead on either side), inputs rotated across sets larger than L2, median."""

from __future__ import annotations

import statistics
from typing import Callable, Sequence

import torch


def rotation_sets(make: Callable[[], tuple], bytes_per_set: int, l2_bytes: int = 60 * 2**20) -> list:
    """Enough independent input sets that consecutive calls never hit the previous call's L2."""
    n = max(2, min(8, -(-3 * l2_bytes // max(bytes_per_set, 1))))
    return [make() for _ in range(n)]


def graph_time_ms(fn: Callable, arg_sets: Sequence[tuple], calls: int = 20, replays: int = 15) -> float:
    """Median milliseconds per call over `replays` graph replays of `calls` calls each."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for args in arg_sets:
            fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fn(*arg_sets[i % len(arg_sets)])
    for _ in range(3):
        g.replay()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    del g
    return statistics.median(times)


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
