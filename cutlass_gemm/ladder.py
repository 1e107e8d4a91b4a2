"""M ladders: the winner per measured M turned into inclusive M ranges. Pure Python, no torch
import: `cutlass_gemm.tune()` and `tools/derive_rules.py` (which loads this file as a plain module)
build their rules with it, so tuned and shipped rules split M the same way."""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

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


def ladder(winners: Dict[int, str]) -> List[Tuple[str, Range]]:
    """Winner per measured M -> merged (kernel, M range) steps."""
    ms = sorted(winners)
    steps: List[Tuple[str, Range]] = []
    for m, (lo, hi) in zip(ms, m_ranges(ms)):
        if steps and steps[-1][0] == winners[m]:
            steps[-1] = (winners[m], (steps[-1][1][0], hi))
        else:
            steps.append((winners[m], (lo, hi)))
    return steps
