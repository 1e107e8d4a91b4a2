"""M ladders: the winner per measured M turned into inclusive M ranges. Pure Python, no torch
import: `cutlass_gemm.tune()` and `tools/derive_rules.py` (which loads this file as a plain module)
build their rules with it, so tuned and shipped rules split M the same way."""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

Range = Tuple[int, Optional[int]]  # inclusive; None = no upper bound


def m_ranges(ms: Sequence[int]) -> List[Range]:
    """Inclusive M ranges around sorted measured Ms, split at geometric midpoints (M ladders are
    multiplicative); 1 .. no bound."""
    out: List[Range] = []
    for i, m in enumerate(ms):
        lo = 1 if i == 0 else out[-1][1] + 1
        hi = None if i == len(ms) - 1 else max(m, int(math.floor(math.sqrt(m * ms[i + 1]))))
        out.append((lo, hi))
    return out


def ladder(winners: Dict[int, str], m_rows: Optional[Callable[[str], Tuple[int, int]]] = None,
           span_only: bool = False) -> List[Tuple[str, Range]]:
    """Winner per measured M -> merged (kernel, M range) steps.

    span_only: the steps cover only the measured span, smallest to largest measured M (a per-(N, K)
    ladder: outside its measurements the global ladder, measured there on other shapes, knows more
    than one (N, K)'s M = 80-112 winner stretched to M = 1 or 8192); else 1 .. no bound.

    m_rows(kernel): (the M rows one of that kernel's tiles covers, the rows one cluster row of its
    tiles covers: the extent, as the grid rounds M's tiles up to whole clusters). A winner measured
    at an M one cluster row covers keeps its range only up to that extent when the next measured M's
    winner runs, just past it, the cluster rows it was measured with (or is a taller tile): past its extent the winner
    would run a second, mostly empty row of tiles (a swap-AB 128x16 tile re-reads its weight slab at
    M = 17; a one-wave 64-row tile doubles its grid at M = 65) that no measurement saw, where the
    next one runs as timed. Only from one row: a 64-row tile timed in two rows at M = 128 keeps M =
    129-181 (A/Bs at unseen (N, K): 1.15-1.6x faster there than the 128-row tile timed at M = 192)."""
    ms = sorted(winners)
    ranges: List[Range] = []
    for i, (m, (lo, hi)) in enumerate(zip(ms, m_ranges(ms))):
        lo = ranges[-1][1] + 1 if ranges else lo
        if m_rows is not None and hi is not None:
            nxt = ms[i + 1]
            (t, e), (tn, en) = m_rows(winners[m]), m_rows(winners[nxt])
            if m <= e < hi and (tn > t or -(-(e + 1) // en) == -(-nxt // en)):
                hi = e
        ranges.append((lo, hi))
    steps: List[Tuple[str, Range]] = []
    for m, (lo, hi) in zip(ms, ranges):
        if steps and steps[-1][0] == winners[m]:
            steps[-1] = (winners[m], (steps[-1][1][0], hi))
        else:
            steps.append((winners[m], (lo, hi)))
    if span_only:
        steps[0] = (steps[0][0], (ms[0], steps[0][1][1]))
        steps[-1] = (steps[-1][0], (steps[-1][1][0], ms[-1]))
    return steps
