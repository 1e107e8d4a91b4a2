"""Pure arithmetic of the report: FLOPs, bytes moved, the roofline bound, ratios, geomeans."""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional


def flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k


def bytes_moved(m: int, n: int, k: int, in_bytes: int, out_bytes: int, bias_bytes: int = 0,
                residual: bool = False, extra: int = 0) -> int:
    """A + B + output + bias + residual, each once (what a perfect kernel must move); extra: scales."""
    return (m * k + n * k) * in_bytes + m * n * out_bytes + n * bias_bytes + (m * n * out_bytes if residual else 0) + extra


def bound_us(flop: int, nbytes: int, peak_tflops: Optional[float], peak_gbps: Optional[float]) -> Optional[float]:
    """Roofline lower bound: max(flops / peak, bytes / bandwidth), microseconds (None without both ceilings)."""
    if not peak_tflops or not peak_gbps:
        return None
    return max(flop / (peak_tflops * 1e12), nbytes / (peak_gbps * 1e9)) * 1e6


def tflops(flop: int, us: Optional[float]) -> Optional[float]:
    return flop / (us * 1e-6) / 1e12 if us else None


def gbps(nbytes: int, us: Optional[float]) -> Optional[float]:
    return nbytes / (us * 1e-6) / 1e9 if us else None


def geomean(xs: Iterable[Optional[float]]) -> Optional[float]:
    """Geometric mean of the positive finite values (None if there are none)."""
    vals = [x for x in xs if x is not None and math.isfinite(x) and x > 0]
    return math.exp(sum(math.log(x) for x in vals) / len(vals)) if vals else None


def rounds_spread(ours: List[float], theirs: Optional[List[float]] = None) -> Optional[float]:
    """How far one run's per-round ratios disagree: max / min - 1 of theirs / ours per round (1 / ours against a
    fixed figure, theirs None); None without two paired rounds of positive times."""
    theirs = [1.0] * len(ours) if theirs is None else theirs
    if len(ours) < 2 or len(theirs) != len(ours) or min(ours + theirs) <= 0:
        return None
    rs = [t / o for o, t in zip(ours, theirs)]
    return max(rs) / min(rs) - 1


def rounds_stderr(ours: List[float], theirs: List[float]) -> Optional[float]:
    """Standard error of the mean of log(theirs / ours) over paired rounds (the log of a ratio's geometric
    mean over rounds); None without two paired rounds of positive times."""
    n = len(ours)
    if n < 2 or len(theirs) != n or min(ours + theirs) <= 0:
        return None
    logs = [math.log(t / o) for o, t in zip(ours, theirs)]
    mean = sum(logs) / n
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1) / n)


def rel_err(out, ref) -> float:
    """Relative Frobenius error of out vs ref (inf on a shape mismatch or a non-finite value)."""
    if tuple(out.shape) != tuple(ref.shape):
        return math.inf
    r = ref.float()
    err = ((out.float() - r).norm() / r.norm().clamp_min(1e-30)).item()
    return err if math.isfinite(err) else math.inf


def derive(row: dict, peak_tflops: Optional[float], peak_gbps: Optional[float]) -> dict:
    """Adds TFLOP/s, GB/s, % of bound and ratios (our speedup: their µs / our µs) to a measured row."""
    row = dict(row)
    row["bound_us"] = bound_us(row["flops"], row["bytes"], peak_tflops, peak_gbps)
    ours = dict(row["ours"])
    ours["tflops"] = tflops(row["flops"], ours.get("us"))
    ours["gbps"] = gbps(row["bytes"], ours.get("us"))
    ours["pct_bound"] = 100.0 * row["bound_us"] / ours["us"] if row["bound_us"] and ours.get("us") else None
    row["ours"] = ours
    comps = {}
    for name, r in row["competitors"].items():
        r = dict(r, tflops=tflops(row["flops"], r.get("us")), gbps=gbps(row["bytes"], r.get("us")))
        r["ratio"] = r["us"] / ours["us"] if r.get("us") and ours.get("us") else None
        comps[name] = r
    row["competitors"] = comps
    if row.get("published"):
        pub = dict(row["published"])
        pub["ratio"] = ours["tflops"] / pub["tflops"] if ours["tflops"] and pub.get("tflops") else None
        row["published"] = pub
    return row


def summarize(rows: List[dict]) -> Dict[str, dict]:
    """Per competitor (and the published floor): geomean and min ratio over the shapes both have."""
    names: List[str] = []
    for r in rows:
        names += [n for n in r["competitors"] if n not in names]
        if r.get("published") and r["published"]["name"] not in names:
            names.append(r["published"]["name"])
    out = {}
    for name in names:
        pairs = []
        for r in rows:
            c = r["competitors"].get(name) or (r["published"] if r.get("published") and r["published"]["name"] == name else None)
            if c is not None:
                pairs.append((c.get("ratio"), f"{r['m']}x{r['n']}x{r['k']}"))
        have = [(x, s) for x, s in pairs if x is not None]
        lo = min(have) if have else (None, None)
        out[name] = {"geomean": geomean(x for x, _ in have), "min": lo[0], "min_shape": lo[1],
                     "n": len(have), "missing": len(pairs) - len(have)}
    return out
