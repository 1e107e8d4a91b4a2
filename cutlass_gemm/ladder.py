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


def ladder(winners: Dict[int, str], m_extent: Optional[Callable[[str], int]] = None) -> List[Tuple[str, Range]]:
    """Winner per measured M -> merged (kernel, M range) steps.

    m_extent(kernel): the M rows one tile of that kernel covers. A winner measured at an M its tile
    covers keeps its range only up to that extent when the next measured M's winner has a taller
    tile: past it the winner would run a second, mostly empty row of tiles (a swap-AB 128x16 tile
    re-reads its weight slab at M = 17) that no measurement saw, where the next one runs one."""
    ms = sorted(winners)
    ranges: List[Range] = []
    for i, (m, (lo, hi)) in enumerate(zip(ms, m_ranges(ms))):
        lo = ranges[-1][1] + 1 if ranges else lo
        if m_extent is not None and hi is not None:
            e = m_extent(winners[m])
            if m <= e < hi and m_extent(winners[ms[i + 1]]) > e:
                hi = e
        ranges.append((lo, hi))
    steps: List[Tuple[str, Range]] = []
    for m, (lo, hi) in zip(ms, ranges):
        if steps and steps[-1][0] == winners[m]:
            steps[-1] = (winners[m], (steps[-1][1][0], hi))
        else:
            steps.append((winners[m], (lo, hi)))
    return steps
