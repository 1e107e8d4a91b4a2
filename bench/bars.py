"""The bars of shared/benchmarks.md (issue #4) against the committed tables: one row per bar with the figure
reached, computed from bench/results/*.json, so the README's bar table cannot drift from the tables.

    python -m bench.bars                              # print the table
    python -m bench.bars --readme README.md           # rewrite the block between its markers
    python -m bench.bars --readme README.md --check   # exit 1 if that block is stale

No torch import: it reads the JSON the harness wrote (bench.summary's loader) and host_overhead.json.
A bar whose tables are missing says so in its row instead of a figure.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
from typing import Callable, Dict, List, Optional, Sequence, Tuple

if __package__:  # python -m bench.bars
    from . import summary
else:  # pragma: no cover - python bench/bars.py
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench import summary

BEGIN, END = "<!-- bars:begin (python -m bench.bars --readme README.md) -->", "<!-- bars:end -->"
SMALL_M = 64  # the small-M bar's rows: M <= 64
BOUND_PCT = 85.0
ODD_SLOWDOWN = 1.2  # odd: no slower than 1.2x the torch path, i.e. ratio >= 1 / 1.2

Ratio = Tuple[float, str, str]  # (our speedup over the competitor, shape "MxNxK", suite)


def load(results_dir: str) -> Dict[str, dict]:
    """Every suite table under results_dir, by file stem (e.g. 'square_gemm_bf16_none')."""
    out = {}
    for name in sorted(os.listdir(results_dir)) if os.path.isdir(results_dir) else []:
        if name.endswith(".json"):
            doc = summary.load_result(os.path.join(results_dir, name))
            if doc is not None and not doc["config"].get("quick") and not doc["config"].get("interleave"):
                out[name[: -len(".json")]] = doc
    return out


def ratios(docs: Dict[str, dict], stems: Sequence[str], competitor: Callable[[str], bool]) -> List[Ratio]:
    """Each row's ratio against the competitor the predicate picks (by name), over the named tables."""
    out = []
    for stem in stems:
        for r in docs[stem]["rows"]:
            for name, c in (r.get("competitors") or {}).items():
                if competitor(name) and c.get("ratio"):
                    out.append((c["ratio"], f"{r['m']}x{r['n']}x{r['k']}", docs[stem]["suite"]))
    return out


def geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _worst(rs: List[Ratio], n: int = 1) -> str:
    """The n lowest ratios, 'r at shape (suite)'."""
    return ", ".join(f"{r:.3f}x at {shape} ({suite})" for r, shape, suite in sorted(rs)[:n])


def _commits(docs: Dict[str, dict], stems: Sequence[str]) -> str:
    return ", ".join(sorted({str(docs[s].get("environment", {}).get("git_commit", "?"))[:7] for s in stems}))


def _need(docs: Dict[str, dict], stems: Sequence[str]) -> Optional[str]:
    missing = [s for s in stems if s not in docs]
    return f"no table {', '.join(s + '.json' for s in missing)}" if missing else None


SUITES = ("square", "llama3_70b")
FP8_PLAIN = [(f"{scale} {acc}", [f"{s}_scaled_mm_{scale}_{acc}_bias" for s in SUITES])
             for scale in ("row", "tensor") for acc in ("accurate", "fast")]


def bar_rows(docs: Dict[str, dict], host: Optional[dict]) -> List[Tuple[str, str, str, str, str]]:
    """(bar, target, reached, verdict, commits) per bar."""
    rows = []

    def add(bar, target, stems, compute):
        miss = _need(docs, stems)
        if miss:
            rows.append((bar, target, miss, "no data", ""))
        else:
            reached, met = compute()
            rows.append((bar, target, reached, "met" if met else "not met", _commits(docs, stems)))

    def geo_and_floor(stems, comp, floor):
        rs = ratios(docs, stems, comp)
        g, low = geomean([r for r, _, _ in rs]), min(rs)
        below = [x for x in rs if x[0] < floor]
        return (f"geomean {g:.3f}x over {len(rs)} shapes; worst {_worst(rs, 2)}; {len(below)} below {floor:.2f}x",
                g >= 1.0 and low[0] >= floor)

    stems = [f"{s}_gemm_bf16_none" for s in SUITES]
    add("bf16 GEMM vs cuBLAS (square + llama3_70b)", "geomean >= 1.00x, no shape < 0.95x", stems,
        lambda: geo_and_floor(stems, lambda c: c == "cuBLAS mm", 0.95))

    fused = [f"{s}_gemm_bf16_bias_gelu_residual" for s in SUITES]

    def bf16_fused():
        rs = ratios(docs, fused, lambda c: c == "cuBLAS mm (no epilogue)")
        per = "; ".join(f"{s} geomean {geomean([r for r, _, t in rs if t == s]):.3f}x" for s in SUITES)
        below = [x for x in rs if x[0] < 0.95]
        return f"{per}; {len(below)} of {len(rs)} shapes below 0.95x (worst {_worst(rs, 3)})", not below
    add("bf16 bias+GELU+residual vs the plain cuBLAS GEMM, same shape", "every shape >= 0.95x", fused, bf16_fused)

    for mode, stems_ in FP8_PLAIN:
        add(f"FP8 {mode} + bias vs `_scaled_mm`, same mode (square + llama3_70b)", "geomean >= 1.00x, no shape < 0.95x",
            stems_, lambda s=stems_: geo_and_floor(s, lambda c: c.startswith("torch._scaled_mm"), 0.95))

    ffused = [f"{s}_scaled_mm_row_accurate_bias_gelu_residual" for s in SUITES]

    def fp8_fused():
        rs = ratios(docs, ffused, lambda c: c.endswith("+gelu+add"))
        per = "; ".join(f"{s} {geomean([r for r, _, t in rs if t == s]):.3f}x" for s in SUITES)
        g = geomean([r for r, _, _ in rs])
        return f"geomean {g:.3f}x over {len(rs)} shapes ({per}); worst {_worst(rs)}", g >= 1.5
    add("FP8 row bias+GELU+residual vs the eager pipeline", "geomean >= 1.5x", ffused, fp8_fused)

    block = ["deepseek_v3_scaled_mm_blockwise_accurate_none"]

    def blockwise():
        rs = ratios(docs, block, lambda c: c == "torch._scaled_mm blockwise")
        pub = [(r["published"]["ratio"], f"{r['m']}x{r['n']}x{r['k']}", "deepseek_v3")
               for r in docs[block[0]]["rows"] if r.get("published") and r["published"].get("ratio")]
        rb, pb = [x for x in rs if x[0] < 1.0], [x for x in pub if x[0] < 1.0]
        text = (f"`_scaled_mm`: geomean {geomean([r for r, _, _ in rs]):.3f}x, {len(rb)} of {len(rs)} shapes below 1.0x "
                f"(worst {_worst(rs, 2)}); DeepGEMM's published figure: geomean {geomean([r for r, _, _ in pub]):.3f}x, "
                f"{len(pb)} of {len(pub)} shapes below (worst {_worst(pub)})")
        return text, not rb and not pb
    add("FP8 blockwise, deepseek_v3", "every shape >= 1.0x `_scaled_mm` blockwise and >= DeepGEMM's published figure",
        block, blockwise)

    acc = [f"square_scaled_mm_{s}_accurate_bias" for s in ("row", "tensor")]

    def accurate_8192():
        rs = [(scale, x[0]) for scale, stem in zip(("row", "tensor"), acc)
              for x in ratios(docs, [stem], lambda c: c.startswith("torch._scaled_mm")) if x[1] == "8192x8192x8192"]
        if not rs:
            return "8192^3 not in the tables", False
        return ", ".join(f"{scale} {r:.3f}x" for scale, r in rs), min(r for _, r in rs) >= 0.9
    add("FP8 accurate (promoted) at 8192^3 vs `_scaled_mm`'s default", ">= 0.9x", acc, accurate_8192)

    def small_m():
        parts, low, n, below = [], [], 0, 0
        for stem, doc in docs.items():
            if doc["suite"] == "odd":
                continue
            pct = [(r["ours"]["pct_bound"], f"{r['m']}x{r['n']}x{r['k']}") for r in doc["rows"]
                   if r["m"] <= SMALL_M and (r.get("ours") or {}).get("pct_bound")]
            if not pct:
                continue
            b = [p for p in pct if p[0] < BOUND_PCT]
            n, below = n + len(pct), below + len(b)
            low.append((min(pct)[0], min(pct)[1], stem))
            parts.append(f"{stem} median {statistics.median(p for p, _ in pct):.1f}%" + (f", {len(b)} below" if b else ""))
        if not n:
            return "no row with M <= 64", False
        w = min(low)
        return (f"{below} of {n} rows below {BOUND_PCT:.0f}% (lowest {w[0]:.1f}% at {w[1]}, {w[2]}); " + "; ".join(parts),
                below == 0)
    smalls = [s for s, d in docs.items() if d["suite"] != "odd" and any(r["m"] <= SMALL_M for r in d["rows"])]
    add(f"M <= {SMALL_M}: % of the bandwidth bound (every table)", f">= {BOUND_PCT:.0f}% on every row", smalls, small_m)

    odd = ["odd_gemm_bf16_bias_gelu_residual", "odd_scaled_mm_row_accurate_bias"]

    def odd_bar():
        rs = ratios(docs, odd[:1], lambda c: c.startswith("eager")) + ratios(docs, odd[1:], lambda c: c.startswith("torch."))
        floor = 1 / ODD_SLOWDOWN
        return (f"{sum(r < floor for r, _, _ in rs)} of {len(rs)} shapes slower than 1.2x the torch path "
                f"(lowest ratio {_worst(rs)})", min(rs)[0] >= floor)
    add("odd shapes vs the torch path (eager bf16 epilogue; `_scaled_mm` or dequantize + matmul)",
        "no shape slower than 1.2x", odd, odd_bar)

    if host is None:
        rows.append(("eager host time per call", "<= 10 us", "no host_overhead.json", "no data", ""))
    else:
        us = host["us"]
        ours, mm = us.get("cutlass_gemm.gemm"), us.get("torch.mm (cuBLAS)")
        rows.append(("eager host time per call (`python bench/host_overhead.py`)", "<= 10 us",
                     f"`cutlass_gemm.gemm` {ours:.1f} us against `torch.mm`'s {mm:.1f} us in the same process",
                     "met" if ours <= 10 else "not met", str(host.get("meta", {}).get("commit", "?"))[:7]))
    return rows


def table(results_dir: str) -> str:
    host = None
    path = os.path.join(results_dir, "host_overhead.json")
    if os.path.exists(path):
        with open(path) as f:
            host = json.load(f)
    lines = ["| bar | target | reached | | tables at |", "|---|---|---|---|---|"]
    for row in bar_rows(load(results_dir), host):
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    return summary.readme_cli(argv, __doc__.splitlines()[0], table, BEGIN, END, "python -m bench.bars")

if __name__ == "__main__":
    sys.exit(main())
