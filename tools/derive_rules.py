"""Derive the shipped default selection rules from bench/sweep.py measurements.

    python tools/derive_rules.py SWEEP.json [SWEEP.json ...] [--out cutlass_gemm/default_rules.json]
                                 [--tolerance 0.03] [--m-ladder] [--keep-tables DIR] [--check]

Each sweep file holds one kernel family timed on the shape suites (every compiled kernel of the
family forced by name, same run). Per family this writes, in priority order:

1. per (N, K) ladders, only for the (N, K) where the global ladder would lose more than the
   tolerance to the best kernel at some measured M of that (N, K);
2. a global ladder: up to SMALL_M, at each measured M, the kernel with the best geometric mean of
   (its time / the best time) over that M's shapes; past it the same per M x N bin (below).

M ranges split at the geometric midpoint between measured Ms (M ladders are multiplicative), except
that a winner whose tile covers its measured M in one row stops at that tile's M extent when the
next measured M's winner, just past that extent, runs the rows of tiles it was timed with (ladder.py).
A sweep timed with an activation or a residual (`bench.sweep --epilogue bias_gelu_residual`) gives
the family's "fused" rules, which only calls with such an epilogue read (configs.EPILOGUE_CLASSES);
they are written as their own entry just before the family's other rules, and every other sweep
gives rules for any epilogue. A family with kernels that lack the activation node
(kernel_table.Kernel.activation, and those without the residual node too) and no such sweep gets its "fused" rules
from its other sweeps, over the kernels that have both nodes (Kernel.serves_fused).
A sweep's "per_nk_only_m" [M, ...] keeps its rows at those Ms out of the global ladder: they inform
their own (N, K)'s ladder only (session 30: M = 192 measured at llama3_70b's four wide-N (N, K) put the
128x160 c2x1 tile in the global ladder at M = 157-313, 1.2-1.6x slower at N = 5120-18944 than the rules it replaced).
A shape that another sweep also measured without the mark counts globally (a later sweep of that M over
many (N, K) makes it a global step again).
A shape measured several times (two suites, or the same family swept twice: pass both files)
counts once, with each kernel's median time, so one noisy run moves the rules less. A sweep's
"superseded" {kernel: why} drops its timings of kernels whose code changed after it ran.
Families the inputs cover are replaced in the output file; the others are kept as they are. Each
derived family lists the (N, K) its sweeps timed ("measured_nk"): `configs.explain` tells a call at one
of them from one whose rule is an M ladder timed at other (N, K).
Then every rule's `pdl` flag (launch with programmatic dependent launch) is set from the PDL A/B in
--pdl (default bench/results/pdl_ab): folders off_<run>/ and on_<run>/ of `python -m bench` results
at CUTLASS_GEMM_PDL=0 and =1. A shape counts for the rule that selects it, when the run timed that
rule's kernel there; a rule launches with PDL only if PDL took at most 97% of the time at every
such shape in every run, and those shapes stand for the rule: it has N and K bounds (a per-(N, K)
ladder), or they span at least PDL_MIN_NK distinct (N, K). A global ladder rule that does not qualify
gets a copy with PDL for each (N, K) whose shapes in its M range (at least PDL_MIN_M distinct M) all
qualify, placed just before it (same kernel and M range: only the launch differs). Fused rules get it
only from fused tables.
Before any of that, the head-to-head A/B files in --ab (default bench/results/ab; `python -m bench.ab`)
overrule the sweeps at their shapes (a row naming a kernel of the file's "superseded" {kernel: why}
is left out): the A/B's winner (lowest median over its rounds) counts as the best of its contenders
(its time set just under the fastest contender's) and each other contender at least its A/B ratio
behind the winner. A kernel the A/B did not time keeps its sweep time, so one added after the A/B
can still take the row (the next `bench.ab --against` decides it); a retired contender drops out of
the verdict. A sweep's single round ranks kernels within a few percent by chance; the A/B's
alternating rounds of a few contenders do not (session 22: 6 of 16 sweep picks lost theirs).
A kernel succeeded by a leaner build of its tile (kernel_table.SUCCEEDED_BY) counts as its successor in every input
that did not time the successor itself.
Last, per GPU other than the sweeps' (the rules are tuned on one GPU; another Hopper part can rank the same
kernels otherwise: sessions 46-47, the H100 runs these GEMMs at its 700 W power cap, which turns the H200's
near-ties between 128x128 and 128x256 tiles into 9-25% wins for the wider one, which moves fewer bytes per flop), the A/B files in --gpu-ab (default bench/results/ab_gpu)
give that GPU's "gpu_overlays" entry: at each A/B shape where the winner beats the launch the rules above make
there (which must be one of the contenders) by more than GPU_AB_GAIN, a rule for that (N, K) over the M range of
the rule that makes the launch, cut at the geometric midpoint before any M where an A/B at that (N, K) under the same
rule timed the winner more than GPU_AB_GAIN behind the launch it says to make there (session 59). configs reads the
entry of the GPU it runs on, ahead of the defaults.
The global ladder steps over M only up to SMALL_M and over M x N (powers-of-2 bins, rules with an "mn" range) past
it, where the grid's fill rather than a tile's rows decides; and a per-(N, K) step reaches at most NK_REACH x past its
measured Ms (session 58, experiments/s58_unseen: at 20 (N, K) no sweep timed, an H100 ran the M-only ladder's picks
at 1.18-1.23x the best kernel's time). --m-ladder gives the M-only global ladder of sessions 1-58.
Then the launches of the committed tables (--keep-tables, default bench/results: `python -m bench` results on the
sweeps' GPU) stay where the rules above would launch otherwise: an exact-shape rule for each such shape, first in its
family (epilogue "plain" or "fused", as its table ran), unless a sweep timed another kernel there more than the
tolerance faster (the report names those: re-run that table). A re-derivation never makes a published table name a
launch the package no longer makes; to drop the pins, derive with --keep-tables '' and re-run the tables.
The report gives per family how far its picks are behind the best kernel at the measured shapes, and at shapes
no sweep measured as far as the sweeps can tell: each measured (N, K) left out in turn (held_out).
`--check` rewrites nothing and exits 1 when the file differs from what the sweeps give.
No torch import: the rules are data (cutlass_gemm/kernel_table.py is loaded as a plain module).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
from typing import Callable, Collection, Dict, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "cutlass_gemm", "default_rules.json")
DEFAULT_PDL = os.path.join(ROOT, "bench", "results", "pdl_ab")
DEFAULT_AB = os.path.join(ROOT, "bench", "results", "ab")
DEFAULT_GPU_AB = os.path.join(ROOT, "bench", "results", "ab_gpu")
DEFAULT_KEEP = os.path.join(ROOT, "bench", "results")
GPU_AB_GAIN = 1.03  # how much faster than the rules' launch an A/B winner on another GPU must be to take that shape
AB_UNDER = 0.999  # an A/B winner's time as a fraction of its fastest contender's
PDL_GAIN = 0.97  # PDL's time / no-PDL time a rule's every measured shape must reach
SMALL_M = 256  # the global ladder steps over M up to here, over M x N past it (session 58, experiments/s58_unseen)
AREA_BASE = 2  # its M x N bins: powers of 2
NK_REACH = 2  # a per-(N, K) step's M range reaches this factor past its measured Ms at most
PDL_MIN_NK = 3  # distinct (N, K) an unbounded (global ladder) rule needs measured before it takes PDL
PDL_MIN_M = 2  # distinct M one (N, K) needs measured in a global rule's M range for its own PDL copy


def _load(name: str):
    """A torch-free module of the package, loaded as a plain file (no cutlass_gemm import)."""
    spec = importlib.util.spec_from_file_location(f"_{name}", os.path.join(ROOT, "cutlass_gemm", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


kt = _load("kernel_table")
_ladder = _load("ladder")
Range, m_ranges, ladder = _ladder.Range, _ladder.m_ranges, _ladder.ladder


def _geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def check_sweep(sw: object, where: str) -> None:
    """A bench/sweep.py document, or SystemExit saying what is wrong with it."""
    rows = sw.get("rows") if isinstance(sw, dict) else None
    if not isinstance(rows, list) or not rows:
        raise SystemExit(f"derive_rules: {where}: expected a bench/sweep.py JSON object with a non-empty 'rows' list")
    for key, what in (("not_kept", "why it was not merged"), ("superseded", "why its timing no longer holds")):
        v = sw.get(key, {})
        if not (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())):
            raise SystemExit(f"derive_rules: {where}: expected '{key}' as {{kernel: {what}}}, got {v!r}"[:400])
    not_kept = sw.get("not_kept", {})
    only = sw.get("per_nk_only_m", [])
    if not (isinstance(only, list) and all(type(m) is int and m > 0 for m in only)):
        raise SystemExit(f"derive_rules: {where}: expected 'per_nk_only_m' as a list of positive int M, got {only!r}"[:400])
    if not isinstance(sw.get("complete", True), bool):
        raise SystemExit(f"derive_rules: {where}: expected 'complete' as true or false (bench.sweep), got {sw['complete']!r}")
    kept = sorted(set(not_kept) & set(kt.KERNEL_IDS))
    if kept:  # its measurements would be dropped silently
        raise SystemExit(f"derive_rules: {where}: 'not_kept' names kernels kernel_table.py has: {', '.join(kept)}")
    for i, row in enumerate(rows):
        ok = isinstance(row, dict) and all(type(row.get(a)) is int and row[a] > 0 for a in ("m", "n", "k")) \
            and isinstance(row.get("us"), dict) \
            and all(t is None or (isinstance(t, (int, float)) and t >= 0) for t in row["us"].values())
        if not ok:
            raise SystemExit(f"derive_rules: {where}: row {i}: expected positive int m, n, k and 'us' "
                             f"{{kernel: microseconds or null}}, got {row!r}"[:400])


FUSED_PARTS = ("gelu", "relu", "silu", "residual")  # bench/cases.py epilogue names: bias_gelu_residual, ...


def epilogue_class(sw: dict) -> str:
    """"fused" for a sweep timed with an activation or a residual in the epilogue, else "any"."""
    return epilogue_name_class((sw.get("case") or {}).get("epilogue", "none"))


def epilogue_name_class(epilogue: object) -> str:
    """"fused" for a bench epilogue name with an activation or a residual (bias_gelu_residual), else "any"."""
    return "fused" if any(p in str(epilogue).split("_") for p in FUSED_PARTS) else "any"


def _rows_by_family(sweeps: Sequence[dict], abs_: Sequence[dict] = (), notes: Optional[List[str]] = None
                    ) -> Dict[Tuple[str, str], dict]:
    """(label, epilogue class) -> {"rows": [(m, n, k, {kernel: us})], "sources": [...], "per_nk_only": {(m, n, k)}}
    (kernels without a time dropped; per_nk_only: the shapes only sweeps marking their M per_nk_only_m measured).
    A shape measured more than once (in two suites of one sweep, or in repeated sweeps) becomes one
    row: each kernel's median time over the measurements that timed it; then the A/B verdicts apply
    (what they left out goes to notes)."""
    fams = _measurements_by_family(sweeps)
    for f in fams.values():
        f["rows"] = [(m, n, k, {name: statistics.median(ts[name]) for name in sorted(ts)})
                     for (m, n, k), ts in f.pop("measured").items()]
        f["per_nk_only"] = f.pop("marked") - f.pop("unmarked")  # shapes no unmarked sweep measured
    for ab in abs_:
        left = apply_ab(fams, ab)
        if notes is not None:
            notes += left
    for f in fams.values():
        del f["gpu"]
    return fams


def check_ab(ab: object, where: str) -> None:
    """A bench/ab.py document, or SystemExit saying what is wrong with it."""
    rows = ab.get("rows") if isinstance(ab, dict) else None
    if not isinstance(rows, list) or not rows:
        raise SystemExit(f"derive_rules: {where}: expected a bench/ab.py JSON object with a non-empty 'rows' list")
    for i, row in enumerate(rows):
        rounds = row.get("us_rounds") if isinstance(row, dict) else None
        ok = isinstance(row, dict) and all(type(row.get(a)) is int and row[a] > 0 for a in ("m", "n", "k")) \
            and isinstance(rounds, dict) and len(rounds) >= 2 and all(
                isinstance(ts, list) and len(ts) >= 2 and all(isinstance(t, (int, float)) and t > 0 for t in ts)
                for ts in rounds.values())
        if not ok:
            raise SystemExit(f"derive_rules: {where}: row {i}: expected positive int m, n, k and 'us_rounds' "
                             f"{{launch: [microseconds, ...] (2 or more)}} for 2 or more launches, got {row!r}"[:400])
        for launch in rounds:
            if launch.partition("+")[0] not in kt.KERNEL_IDS and launch.partition("+")[0] not in kt.RETIRED:
                raise SystemExit(f"derive_rules: {where}: row {i}: kernel {launch!r} is not in kernel_table.py")
    sup = ab.get("superseded", {})
    if not (isinstance(sup, dict) and all(isinstance(x, str) for x in sup.values())):
        raise SystemExit(f"derive_rules: {where}: expected 'superseded' as {{kernel: why its timing no longer holds}}, "
                         f"got {sup!r}"[:400])


def apply_ab(fams: Dict[Tuple[str, str], dict], ab: dict) -> List[str]:
    """Each A/B row's verdict into its family's row of the same shape (see the module docstring); what it
    left out and why. Rows of families the sweeps do not cover are not this run's (their rules stay)."""
    ep, where, notes = epilogue_class(ab), ab.get("path", "an A/B file"), []
    for row in ab["rows"]:
        med: Dict[str, float] = {}
        timed = {launch.partition("+")[0] for launch in row["us_rounds"]}
        for launch, ts in row["us_rounds"].items():  # "+pdl": how it was launched; PDL itself is --pdl's to decide
            name = launch.partition("+")[0]
            if kt.current_name(name) in timed and name in kt.SUCCEEDED_BY:  # the successor's own time stands
                continue
            name = kt.current_name(name)
            med[name] = min(med.get(name, math.inf), statistics.median(ts))
        shape = (row["m"], row["n"], row["k"])
        retired = sorted(name for name in med if name in kt.RETIRED)
        for name in retired:  # measured, no longer compiled: the verdict among the others still holds
            del med[name]
        if len(med) < 2:
            if retired:
                notes.append(f"  {os.path.basename(where)}: {'x'.join(map(str, shape))} left out: retired {', '.join(retired)}")
            continue
        labels = {kt.KERNELS[kt.KERNEL_IDS[name]].family_label for name in med}
        stale = sorted(set(med) & set(ab.get("superseded", {})))
        if stale:  # a contender's code changed after the A/B: no verdict
            notes.append(f"  {os.path.basename(where)}: {'x'.join(map(str, shape))} left out: superseded {', '.join(stale)}")
            continue
        if len(labels) != 1:
            raise SystemExit(f"derive_rules: {where}: {shape}: expected kernels of one family, got {sorted(med)}")
        f = fams.get((labels.pop(), ep))
        if f is None:
            continue
        if ab.get("gpu") != f["gpu"]:  # a verdict from another GPU says nothing about this one
            raise SystemExit(f"derive_rules: {where}: measured on {ab.get('gpu')!r}, the sweeps on {f['gpu']!r}")
        i = next((i for i, r in enumerate(f["rows"]) if r[:3] == shape), None)
        if i is None or not set(med) <= set(f["rows"][i][3]):  # a row of two kernels would skew the M ladder
            notes.append(f"  {os.path.basename(where)}: {'x'.join(map(str, shape))} left out: no sweep row times "
                         f"{', '.join(sorted(med))} there")
            continue
        t = dict(f["rows"][i][3])
        win = min(med, key=lambda name: (med[name], name))
        t[win] = AB_UNDER * min(t[name] for name in med)
        for name in med:
            if name != win:
                t[name] = max(t[name], t[win] * med[name] / med[win])
        f["rows"][i] = (*shape, t)
        src = os.path.basename(where)
        if src not in f["sources"]:
            f["sources"].append(src)
    return notes


def _measurements_by_family(sweeps: Sequence[dict]) -> Dict[Tuple[str, str], dict]:
    """(label, epilogue class) -> {"measured": {(m, n, k): {kernel: [us, ...]}}, "sources": [...]}, in first-seen order."""
    fams: Dict[Tuple[str, str], dict] = {}
    for sw in sweeps:
        ep = epilogue_class(sw)
        not_kept = sw.get("not_kept", {})  # candidates the sweep timed that were not merged, and why
        # kernels whose code changed after the sweep timed them (e.g. a build flag): their old times are skipped
        not_kept = {**not_kept, **sw.get("superseded", {})}
        for row in sw["rows"]:
            us = {name: t for name, t in row["us"].items() if t is not None and t > 0 and name not in not_kept}
            # a succeeded kernel's time counts for its successor where the row did not time the successor
            us = {kt.current_name(name): t for name, t in us.items()
                  if not (name in kt.SUCCEEDED_BY and kt.current_name(name) in us)}
            by_label: Dict[str, Dict[str, float]] = {}
            for name, t in us.items():
                if name in kt.RETIRED or name in not_kept:  # measured, not compiled (RETIRED / not_kept say why)
                    continue
                if name not in kt.KERNEL_IDS:
                    raise SystemExit(f"derive_rules: {sw.get('path', 'a sweep')}: kernel {name!r} is not in kernel_table.py")
                by_label.setdefault(kt.KERNELS[kt.KERNEL_IDS[name]].family_label, {})[name] = t
            for label, times in by_label.items():
                f = fams.setdefault((label, ep), {"measured": {}, "sources": [], "gpu": sw.get("gpu"), "marked": set(),
                                                  "unmarked": set()})
                if sw.get("gpu") != f["gpu"]:  # medians across GPUs would tune for neither
                    raise SystemExit(f"derive_rules: {label}: expected every sweep of a family from one GPU, got "
                                     f"{f['gpu']!r} and {sw.get('gpu')!r} ({sw.get('path', 'a sweep')})")
                key = (row["m"], row["n"], row["k"])
                f["marked" if row["m"] in sw.get("per_nk_only_m", ()) else "unmarked"].add(key)
                shape = f["measured"].setdefault(key, {})
                for name, t in times.items():
                    shape.setdefault(name, []).append(t)
                src = sw.get("source", "")
                if src not in f["sources"]:
                    f["sources"].append(src)
    return fams


def derive_family(rows: Sequence[Tuple[int, int, int, Dict[str, float]]], tolerance: float,
                  per_nk_only: Collection[Tuple[int, int, int]] = (), hybrid: bool = True) -> List[dict]:
    """The rules of one family from its measured rows (see the module docstring); rows whose (m, n, k) is in
    per_nk_only count for their own (N, K)'s ladder only. hybrid (the default; False: --m-ladder): the global ladder over M only up to SMALL_M and
    over M x N past it, and per-(N, K) steps reaching NK_REACH x past their measured Ms (see the module docstring)."""
    small_m = SMALL_M if hybrid else math.inf
    kernels = sorted({n for *_, t in rows for n in t})

    def best_of(ts: List[Dict[str, float]], where: str) -> str:
        """The kernel with the best geomean of time / best over these shapes (among those timed on all of them)."""
        cands = [k for k in kernels if all(k in t for t in ts)]
        if not cands:
            raise SystemExit(f"derive_rules: no kernel was timed on every shape with {where}")
        return min(cands, key=lambda k: (_geomean([t[k] / min(t.values()) for t in ts]), k))

    glob_rows = [(m, n, k, t) for m, n, k, t in rows if (m, n, k) not in per_nk_only]
    by_m: Dict[int, List[Dict[str, float]]] = {}
    by_area: Dict[int, List[Dict[str, float]]] = {}
    for m, n, k, t in glob_rows:
        if m <= small_m:
            by_m.setdefault(m, []).append(t)
        else:
            by_area.setdefault(area_bin(m * n), []).append(t)
    # Global ladder, up to small_m over M (a tile's rows decide: swap-AB, one-row extents), past it over M x N (the
    # grid's fill decides: 2048x1024 has the tiles of 256x8192, not of 2048x8192).
    m_steps = ladder({m: best_of(ts, f"M = {m}") for m, ts in by_m.items()}, kt.m_rows) if by_m else []
    if by_area:
        m_steps = [(name, (lo, small_m if hi is None or hi > small_m else hi)) for name, (lo, hi) in m_steps
                   if lo <= small_m]
    area_steps: List[Tuple[str, Range]] = []
    bins = sorted(by_area)
    for i, b in enumerate(bins):
        lo = 0 if i == 0 else AREA_BASE ** b
        hi = None if i == len(bins) - 1 else AREA_BASE ** bins[i + 1] - 1
        name = best_of(by_area[b], f"M x N in [{AREA_BASE ** b}, {AREA_BASE ** (b + 1)})")
        if area_steps and area_steps[-1][0] == name:
            area_steps[-1] = (name, (area_steps[-1][1][0], hi))
        else:
            area_steps.append((name, (lo, hi)))
    m_from = small_m + 1 if m_steps else 1

    def global_choice(m: int, n: int) -> str:
        if m_steps and m <= small_m or not area_steps:
            return next(k for k, (lo, hi) in m_steps if lo <= m and (hi is None or m <= hi))
        return next(k for k, (lo, hi) in area_steps if lo <= m * n and (hi is None or m * n <= hi))

    rules = per_nk_rules(rows, tolerance, lambda m, n, k: global_choice(m, n), NK_REACH if hybrid else None)
    rules += [{"kernel": name, "m": [lo, hi]} for name, (lo, hi) in m_steps]
    rules += [{"kernel": name, "m": [m_from, None], **({"mn": [lo, hi]} if (lo, hi) != (0, None) else {})}
              for name, (lo, hi) in area_steps]
    return rules


def per_nk_rules(rows: Sequence[Tuple[int, int, int, Dict[str, float]]], tolerance: float,
                 global_choice: Callable[[int, int, int], str], reach: Optional[int]) -> List[dict]:
    """The per-(N, K) ladders of the (N, K) where global_choice(m, n, k) loses more than the tolerance at some
    measured M, each step over its measured Ms' span; reach: a step reaches at most that factor past its measured
    Ms (None: the whole span)."""
    rules: List[dict] = []
    by_nk: Dict[Tuple[int, int], Dict[int, Dict[str, float]]] = {}
    for m, n, k, t in rows:
        by_nk.setdefault((n, k), {})[m] = t
    for (n, k), ms in sorted(by_nk.items()):
        if not any(t.get(global_choice(m, n, k), math.inf) > (1 + tolerance) * min(t.values()) for m, t in ms.items()):
            continue
        best = {m: min(t, key=lambda name, t=t: (t[name], name)) for m, t in ms.items()}
        for name, (lo, hi) in ladder(best, kt.m_rows, span_only=True):
            if reach is None:
                rules.append({"kernel": name, "m": [lo, hi], "n": [n, n], "k": [k, k]})
                continue
            # across a wider gap (4096x4096 measured at M = 112 and 4096) the global ladder serves, not the nearer
            # M's winner stretched to the midpoint
            inside = sorted(m for m in ms if lo <= m <= hi)
            runs = [[inside[0]]]
            for m in inside[1:]:
                if m <= runs[-1][-1] * reach * reach:
                    runs[-1].append(m)
                else:
                    runs.append([m])
            rules += [{"kernel": name, "m": [max(lo, run[0] // reach), min(hi, run[-1] * reach)], "n": [n, n],
                       "k": [k, k]} for run in runs]
    return rules


def area_bin(mn: int) -> int:
    """The global ladder's M x N bin: floor(log_AREA_BASE(mn))."""
    b = 0
    while AREA_BASE ** (b + 1) <= mn:
        b += 1
    return b


def held_out(rows: Sequence[Tuple[int, int, int, Dict[str, float]]], tolerance: float,
             per_nk_only: Collection[Tuple[int, int, int]] = (), derive=None) -> List[Tuple[int, int, int, float]]:
    """How the rules do at (N, K) no sweep measured, from the measurements alone: each measured (N, K) left out in
    turn, the family's rules derived from the rest, and its shapes' pick timed against their best kernel ((m, n, k,
    pick / best); inf where the sweeps did not time the pick there). A held-out (N, K) takes with it the Ms only it
    measured, so this reads high where one (N, K) carries an M (session 58: 1.09-1.10 for every sm90 family).
    derive: another derivation of the same signature as derive_family, to compare (experiments/s58_unseen)."""
    derive = derive or derive_family
    out = []
    for nk in sorted({(n, k) for _m, n, k, _t in rows}):
        rest = [r for r in rows if (r[1], r[2]) != nk]
        if not rest:
            continue
        rules = derive(rest, tolerance, per_nk_only)
        for m, n, k, t in rows:
            if (n, k) == nk:
                got = choose(rules, m, n, k)
                out.append((m, n, k, t[got] / min(t.values()) if got in t else math.inf))
    return out


def _holds(r: dict, m: int, n: int, k: int) -> bool:
    """Whether a rule's (JSON form) ranges hold (m, n, k): a missing axis is every value, hi null no bound."""
    def within(axis: str, v: int, lo_default: int) -> bool:
        lo, hi = r.get(axis, (lo_default, None))
        return lo <= v and (hi is None or v <= hi)

    return within("m", m, 1) and within("n", n, 1) and within("k", k, 0) and within("mn", m * n, 0)


def choose(rules: Sequence[dict], m: int, n: int, k: int) -> Optional[str]:
    """The first rule holding (m, n, k), as the op's table reads them (None: the family fallback)."""
    return next((r["kernel"] for r in rules if _holds(r, m, n, k)), None)


def _bench_doc(path: str) -> dict:
    """A `python -m bench` JSON with its epilogue and per-shape rows, or SystemExit saying what is wrong."""
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        raise SystemExit(f"derive_rules: {path}: cannot read it ({e})")
    rows = doc.get("rows") if isinstance(doc, dict) else None
    ok = isinstance(doc, dict) and isinstance(doc.get("config"), dict) and "epilogue" in doc["config"] \
        and isinstance(rows, list) and all(
            isinstance(r, dict) and all(type(r.get(a)) is int for a in ("m", "n", "k")) and isinstance(r.get("kernel"), str)
            and isinstance(r.get("ours"), dict) and (r["ours"].get("status") != "ok" or isinstance(r["ours"].get("us"), (int, float)))
            for r in rows)
    if not ok:
        raise SystemExit(f"derive_rules: {path}: expected a `python -m bench` JSON (config.epilogue; rows with int m, n, k, "
                         "a kernel name and ours.us where ours.status is ok)")
    return doc


def pdl_samples(folder: str) -> List[Tuple[str, str, int, int, int, str, float]]:
    """(run, epilogue class, m, n, k, kernel, PDL time / no-PDL time) of every shape that a pair of
    `python -m bench` folders (off_<run>, on_<run>) timed with the same kernel in both."""
    if not os.path.isdir(folder):
        raise SystemExit(f"derive_rules: --pdl {folder}: expected a folder of off_<run>/ and on_<run>/ bench results")
    out = []
    for off in sorted(d for d in os.listdir(folder) if d.startswith("off_")):
        on = os.path.join(folder, "on_" + off[4:])
        if not os.path.isdir(on):
            raise SystemExit(f"derive_rules: {folder}: {off} has no on_{off[4:]} to compare with")
        for name in sorted(f for f in os.listdir(os.path.join(folder, off)) if f.endswith(".json")):
            docs = [_bench_doc(os.path.join(d, name)) for d in (os.path.join(folder, off), on)]
            ep = epilogue_name_class(docs[0]["config"]["epilogue"])
            on_rows = {(r["m"], r["n"], r["k"]): r for r in docs[1]["rows"]}
            for r in docs[0]["rows"]:
                o = on_rows.get((r["m"], r["n"], r["k"]))
                if o is None or o["kernel"] != r["kernel"] or r["ours"].get("status") != "ok" or o["ours"].get("status") != "ok":
                    continue
                out.append((off[4:], ep, r["m"], r["n"], r["k"], kt.current_name(r["kernel"]),
                            o["ours"]["us"] / r["ours"]["us"]))
    return out


def assign_pdl(doc: dict, samples: Sequence[tuple], report: List[str]) -> None:
    """Sets (or clears) every rule's "pdl" flag from the A/B samples (see the module docstring)."""
    for fam in doc["families"]:
        ep = fam.get("epilogue", "any")
        got: Dict[int, List[float]] = {}
        nks: Dict[int, Dict[Tuple[int, int], List[Tuple[int, float]]]] = {}
        for _run, s_ep, m, n, k, kernel, ratio in samples:
            if s_ep != ep or kernel not in kt.KERNEL_IDS or kt.KERNELS[kt.KERNEL_IDS[kernel]].family_label != fam["family"]:
                continue
            i = next((i for i, r in enumerate(fam["rules"]) if _holds(r, m, n, k)), None)
            if i is not None and fam["rules"][i]["kernel"] == kernel:
                got.setdefault(i, []).append(ratio)
                nks.setdefault(i, {}).setdefault((n, k), []).append((m, ratio))
        rules = []
        for i, r in enumerate(fam["rules"]):
            r.pop("pdl", None)
            bounded = "n" in r and "k" in r
            stands = bounded or len(nks.get(i, ())) >= PDL_MIN_NK  # one square shape is not every N, K
            if got.get(i) and max(got[i]) <= PDL_GAIN and stands:
                r["pdl"] = True
            elif not bounded:  # this (N, K) measured across the rule's M range: its own copy with PDL
                for (n, k), ms in sorted(nks.get(i, {}).items()):
                    if len({m for m, _ in ms}) >= PDL_MIN_M and max(x for _, x in ms) <= PDL_GAIN:
                        rules.append({**r, "n": [n, n], "k": [k, k], "pdl": True})
            rules.append(r)
        fam["rules"] = rules
        on = [i for i, r in enumerate(fam["rules"]) if r.get("pdl")]
        if got:
            report.append(f"{fam['family']}{'' if ep == 'any' else f' ({ep} epilogue)'}: PDL on {len(on)} of "
                          f"{len(got)} measured rules (PDL / no-PDL time: "
                          + ", ".join(f"rule {i} {min(got[i]):.2f}-{max(got[i]):.2f}" for i in sorted(got)) + ")")


def family_rows(sweeps: Sequence[dict], abs_: Sequence[dict] = (), notes: Optional[List[str]] = None
                ) -> Dict[Tuple[str, str], dict]:
    """_rows_by_family, plus the "fused" rows of each family swept without an activation whose kernels lack the node:
    the rows derive() derives every family's rules from (and keep_launches checks a kept launch against)."""
    fams = _rows_by_family(sweeps, abs_, notes)
    for (label, ep), f in list(fams.items()):
        # A family swept without an activation only: calls with one (or a residual) cannot run its kernels that lack
        # the activation (or residual) node, so they get a ladder of its other kernels (else they would fall past
        # those rules).
        if ep == "any" and (label, "fused") not in fams:
            rows = [(m, n, k, {name: us for name, us in t.items() if kt.KERNELS[kt.KERNEL_IDS[name]].serves_fused})
                    for m, n, k, t in f["rows"]]
            if any(len(r[3]) < len(t) for r, (*_, t) in zip(rows, f["rows"])):
                fams[(label, "fused")] = {"rows": [r for r in rows if r[3]], "per_nk_only": f["per_nk_only"],
                                          "sources": [f"{s}, its kernels with an activation" for s in f["sources"]]}
    return fams


def derive(sweeps: Sequence[dict], current: dict, tolerance: float, abs_: Sequence[dict] = (),
           hybrid: bool = True) -> Tuple[dict, List[str]]:
    """The new rules document (families of the sweeps replaced in place, new ones appended) and a report."""
    ab_notes: List[str] = []
    fams = family_rows(sweeps, abs_, ab_notes)
    doc = json.loads(json.dumps(current))
    report = []
    for (label, ep), f in fams.items():
        rules = derive_family(f["rows"], tolerance, f.get("per_nk_only", set()), hybrid)
        if ep != "any":
            rules = [dict(r, epilogue=ep) for r in rules]
        entry = {"family": label, **({"epilogue": ep} if ep != "any" else {}),
                 "source": f"tools/derive_rules.py --tolerance {tolerance}{'' if hybrid else ' --m-ladder'} from bench/sweep.py: "
                           + "; ".join(f["sources"]),
                 "measured_nk": [list(nk) for nk in sorted({(n, k) for _m, n, k, _t in f["rows"]})],
                 "rules": rules}
        key = lambda e: (e["family"], e.get("epilogue", "any"))  # noqa: E731
        idx = next((i for i, e in enumerate(doc["families"]) if key(e) == (label, ep)), None)
        if idx is not None:
            doc["families"][idx] = entry
        elif ep != "any":  # before the family's rules for any epilogue, which would otherwise win first
            at = next((i for i, e in enumerate(doc["families"]) if key(e) == (label, "any")), len(doc["families"]))
            doc["families"].insert(at, entry)
        else:
            doc["families"].append(entry)
        name = label if ep == "any" else f"{label} ({ep} epilogue)"
        losses = []
        for m, n, k, t in f["rows"]:
            got = choose(rules, m, n, k)
            losses.append(t[got] / min(t.values()) if got in t else math.inf)
            if losses[-1] > 1 + tolerance:
                report.append(f"  {name} {m}x{n}x{k}: {got} is {100 * (losses[-1] - 1):.1f}% behind the best")
        unseen = [x for *_, x in held_out(f["rows"], tolerance, f.get("per_nk_only", set()),
                                          lambda r, t, p: derive_family(r, t, p, hybrid))]
        seen = [x for x in unseen if math.isfinite(x)]
        report.insert(0, f"{name}: {len(rules)} rules from {len(f['rows'])} shapes; chosen / best geomean "
                         f"{_geomean(losses):.3f}, worst {max(losses):.3f}; each (N, K) left out: "
                         + (f"geomean {_geomean(seen):.3f} over {len(seen)} shapes, worst {max(seen):.3f}"
                            if seen else "no shape") + (f", {len(unseen) - len(seen)} picks untimed" if len(seen) < len(unseen) else ""))
    return doc, report + ab_notes


def _first_rule(doc: dict, label: str, ep: str, m: int, n: int, k: int) -> Optional[dict]:
    """The rule the op takes for an (m, n, k) call of this family with this epilogue class ("any": no activation
    or residual), as configs.explain walks them: entries in file order, a fused call skipping kernels without
    both nodes and a plain call rules tagged "fused"."""
    for fam in doc["families"]:
        if fam["family"] != label:
            continue
        for r in fam["rules"]:
            tag = r.get("epilogue", "any")
            spec = kt.KERNELS[kt.KERNEL_IDS[r["kernel"]]]
            if _holds(r, m, n, k) and (tag in ("any", "fused") if ep == "fused" else tag in ("any", "plain")) \
                    and (ep != "fused" or spec.serves_fused):
                return r
    return None


def gpu_overlays(doc: dict, abs_: Sequence[dict], sweeps_gpu: Collection[str]) -> Tuple[List[dict], List[str]]:
    """The "gpu_overlays" entries from A/B files measured on GPUs other than the sweeps' (see the module
    docstring), and what was left out and why."""
    by_gpu: Dict[str, dict] = {}
    notes: List[str] = []
    verdicts: List[tuple] = []  # (gpu, file, epilogue class, the rule launching there, shape, its launch, winner, gain,
    #                              {launch: median us})
    for ab in abs_:
        gpu, where, ep = ab.get("gpu"), os.path.basename(ab.get("path", "an A/B file")), epilogue_class(ab)
        if not isinstance(gpu, str) or not gpu or gpu in sweeps_gpu:
            raise SystemExit(f"derive_rules: --gpu-ab {where}: expected an A/B measured on a GPU other than the "
                             f"sweeps' ({', '.join(sorted(map(str, sweeps_gpu)))}), got {gpu!r}")
        entry = by_gpu.setdefault(gpu, {"gpu": gpu, "sources": [], "rules": []})
        for row in ab["rows"]:
            shape = (row["m"], row["n"], row["k"])
            med = {launch: statistics.median(ts) for launch, ts in row["us_rounds"].items()
                   if launch.partition("+")[0] not in kt.RETIRED}  # measured, no longer compiled
            if len(med) < len(row["us_rounds"]):
                notes.append(f"  {where}: {'x'.join(map(str, shape))}: retired contenders left out")
            if len(med) < 2:
                continue
            labels = {kt.KERNELS[kt.KERNEL_IDS[x.partition("+")[0]]].family_label for x in med}
            if len(labels) != 1:
                raise SystemExit(f"derive_rules: --gpu-ab {where}: {shape}: expected kernels of one family, got {sorted(med)}")
            rule = _first_rule(doc, labels.pop(), ep, *shape)
            shipped = None if rule is None else rule["kernel"] + ("+pdl" if rule.get("pdl") else "")
            if shipped not in med:
                notes.append(f"  {where}: {'x'.join(map(str, shape))} left out: the rules launch {shipped}, not timed there")
                continue
            win = min(med, key=lambda x: (med[x], x))
            verdicts.append((gpu, where, ep, rule, shape, shipped, win, med[shipped] / med[win], med))
            if where not in entry["sources"]:
                entry["sources"].append(where)
    # The launch each A/B says to make: its winner where that beats the rules' launch by GPU_AB_GAIN, else theirs.
    made = lambda v: v[6] if v[7] > GPU_AB_GAIN else v[5]  # noqa: E731
    for v in verdicts:
        gpu, where, ep, rule, (m, n, k), shipped, win, gain, _ = v
        if gain <= GPU_AB_GAIN:
            continue
        # the rule's M range at this (N, K), cut at the geometric midpoint before any other M where an A/B there (under
        # the same rule) timed this winner more than GPU_AB_GAIN behind the launch it says to make: 4096x1024x2048 won
        # by the 128x256 tile does not take 2048x1024x2048, where that tile took 1.6x the 128x128 one's time
        lo, hi = rule["m"]
        for u in verdicts:
            if u[0] != gpu or u[2] != ep or u[3] is not rule or u[4][1:] != (n, k) or made(u) == win:
                continue
            mu = u[4][0]
            if mu == m:
                if u[7] > GPU_AB_GAIN:
                    raise SystemExit(f"derive_rules: --gpu-ab {where}: {(m, n, k)}: {win} wins where {u[1]} picked {u[6]}")
                continue
            if not u[8].get(win, 0) > GPU_AB_GAIN * u[8][made(u)]:
                continue
            if mu < m:
                lo = max(lo, math.isqrt(mu * m) + 1)
            else:
                hi = math.isqrt(mu * m) if hi is None else min(hi, math.isqrt(mu * m))
        name, _, pdl = win.partition("+")
        r = {"kernel": name, "m": [lo, hi], "n": [n, n], "k": [k, k],
             **({"mn": list(rule["mn"])} if "mn" in rule else {}),  # an M x N step: no further than it
             **({"epilogue": ep} if ep != "any" else {}), **({"pdl": True} if pdl else {})}
        entry = by_gpu[gpu]
        if r not in entry["rules"]:
            entry["rules"].append(r)
            notes.append(f"  {gpu}: {m}x{n}x{k} {name} ({gain:.3f}x faster than {shipped}, {where}; M {lo}-{hi})")
    out = []
    for gpu in sorted(by_gpu):
        e = by_gpu[gpu]
        if e["rules"]:
            out.append({"gpu": gpu, "source": "tools/derive_rules.py from bench/ab.py on this GPU: " + "; ".join(e["sources"]),
                        "rules": e["rules"]})
    return out, notes


def table_launches(folder: str, gpus: Collection[str]) -> List[Tuple[str, str, int, int, int, str, bool]]:
    """(table, epilogue class, m, n, k, kernel, pdl) of every timed row of the `python -m bench` tables in folder
    (its *_gemm_*.json and *_scaled_mm_*.json) measured on one of these GPUs."""
    if not os.path.isdir(folder):
        raise SystemExit(f"derive_rules: --keep-tables {folder}: expected a folder of `python -m bench` JSON tables")
    out = []
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".json") and ("_gemm_" in f or "_scaled_mm_" in f)):
        doc = _bench_doc(os.path.join(folder, name))
        if (doc.get("environment") or {}).get("gpu") not in gpus:
            continue
        ep = epilogue_name_class(doc["config"]["epilogue"])
        out += [(name, ep, r["m"], r["n"], r["k"], kt.current_name(r["kernel"]), bool(r.get("pdl", False)))
                for r in doc["rows"] if r["ours"].get("status") == "ok"]
    return out


def keep_launches(doc: dict, launches: Sequence[tuple], fams: Dict[Tuple[str, str], dict], tolerance: float,
                  report: List[str]) -> None:
    """Pins each table launch (table_launches) the rules in doc would no longer make, unless the family's sweeps
    timed another kernel more than the tolerance faster at that shape (see the module docstring)."""
    pins: Dict[Tuple[str, str, int, int, int], Tuple[str, bool, str]] = {}
    for table, ep, m, n, k, kernel, pdl in launches:
        if kernel not in kt.KERNEL_IDS:
            raise SystemExit(f"derive_rules: --keep-tables {table}: {m}x{n}x{k} ran {kernel}, which is not compiled; "
                             "re-run that table")
        label = kt.KERNELS[kt.KERNEL_IDS[kernel]].family_label
        key = (label, ep, m, n, k)
        if key in pins and pins[key][:2] != (kernel, pdl):
            raise SystemExit(f"derive_rules: --keep-tables: {m}x{n}x{k} ({label}, {ep}) ran {kernel} (pdl {pdl}) in "
                             f"{table} but {pins[key][0]} (pdl {pins[key][1]}) in {pins[key][2]}; re-run one of them")
        pins[key] = (kernel, pdl, table)
    kept = []
    for (label, ep, m, n, k), (kernel, pdl, table) in pins.items():
        r = _first_rule(doc, label, ep, m, n, k)
        if r is not None and (r["kernel"], bool(r.get("pdl"))) == (kernel, pdl):
            continue
        t = next((t for mm, nn, kk, t in fams.get((label, ep), {}).get("rows", ()) if (mm, nn, kk) == (m, n, k)), {})
        if kernel in t and t[kernel] > (1 + tolerance) * min(t.values()):
            report.append(f"  {table} {m}x{n}x{k}: not kept, its {kernel} is {100 * (t[kernel] / min(t.values()) - 1):.1f}% "
                          "behind the sweeps' best there: re-run the table")
            continue
        entry = next((f for f in doc["families"] if f["family"] == label and f.get("epilogue", "any") == ep), None)
        if entry is None:
            raise SystemExit(f"derive_rules: --keep-tables {table}: no {label} ({ep}) rules to keep {m}x{n}x{k} in")
        entry["rules"].insert(0, {"kernel": kernel, "m": [m, m], "n": [n, n], "k": [k, k],
                                  **({"epilogue": "plain"} if ep == "any" else {"epilogue": ep}), **({"pdl": True} if pdl else {})})
        kept.append(f"{m}x{n}x{k} {kernel}{'+pdl' if pdl else ''} ({table}; the rules above: "
                    f"{r['kernel'] + ('+pdl' if r.get('pdl') else '') if r else 'none'})")
    if kept:
        report.append(f"kept {len(kept)} launches of the committed tables:\n  " + "\n  ".join(kept))


def _read(p: str, check) -> dict:
    """A JSON input file, checked (check(doc, p) raises SystemExit saying what is wrong), with its path."""
    try:
        with open(p) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        raise SystemExit(f"derive_rules: {p}: cannot read it as JSON ({e})")
    check(doc, p)
    doc["path"] = p
    return doc


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweeps", nargs="+", help="bench/sweep.py --json outputs")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--tolerance", type=float, default=0.03, help="per-(N, K) rules only where the global ladder loses more")
    ap.add_argument("--check", action="store_true", help="exit 1 if --out differs from what the sweeps give")
    ap.add_argument("--m-ladder", action="store_true", help="the global ladder over M at every M (sessions 1-58), "
                    "not over M x N past SMALL_M, and per-(N, K) steps over their whole M span")
    ap.add_argument("--keep-tables", default=DEFAULT_KEEP, help="folder of `python -m bench` tables whose launches "
                    "stay (on the sweeps' GPU); '' = none")
    ap.add_argument("--pdl", default=DEFAULT_PDL, help="folder of the PDL A/B (off_<run>/, on_<run>/); '' = no rule "
                    "launches with PDL")
    ap.add_argument("--ab", default=DEFAULT_AB, help="folder of bench/ab.py results that overrule the sweeps at their "
                    "shapes; '' = none")
    ap.add_argument("--gpu-ab", default=DEFAULT_GPU_AB, help="folder of bench/ab.py results from GPUs other than the "
                    "sweeps', which give those GPUs' overlay rules; '' = none")
    args = ap.parse_args(argv)
    if not 0 <= args.tolerance < 1:
        ap.error(f"--tolerance: expected a fraction in [0, 1), got {args.tolerance}")
    sweeps = []
    for p in args.sweeps:
        sw = _read(p, check_sweep)
        partial = f", cut short after {len(sw['rows'])} shapes" if sw.get("complete") is False else ""
        sw.setdefault("source", f"{os.path.basename(p)} ({sw.get('gpu', '?')}, torch {sw.get('torch', '?')}, "
                                f"commit {sw.get('commit', '?')}{partial})")
        if partial:  # its shapes count like any other sweep's; the rules' source says it was partial
            print(f"derive_rules: {p}: a partial sweep (bench.sweep was stopped){partial}")
        sweeps.append(sw)
    abs_ = []
    if args.ab:
        if not os.path.isdir(args.ab):
            raise SystemExit(f"derive_rules: --ab {args.ab}: expected a folder of bench/ab.py JSON files")
        abs_ = [_read(os.path.join(args.ab, f), check_ab) for f in sorted(os.listdir(args.ab)) if f.endswith(".json")]
    with open(args.out) as fh:
        current = json.load(fh)
    doc, report = derive(sweeps, current, args.tolerance, abs_, not args.m_ladder)
    assign_pdl(doc, pdl_samples(args.pdl) if args.pdl else [], report)
    if args.keep_tables:
        keep_launches(doc, table_launches(args.keep_tables, {sw.get("gpu") for sw in sweeps}),
                      family_rows(sweeps, abs_), args.tolerance, report)
    gpu_abs = []
    if args.gpu_ab:
        if not os.path.isdir(args.gpu_ab):
            raise SystemExit(f"derive_rules: --gpu-ab {args.gpu_ab}: expected a folder of bench/ab.py JSON files")
        gpu_abs = [_read(os.path.join(args.gpu_ab, f), check_ab) for f in sorted(os.listdir(args.gpu_ab))
                   if f.endswith(".json")]
    doc.pop("gpu_overlays", None)
    overlays, notes = gpu_overlays(doc, gpu_abs, {sw.get("gpu") for sw in sweeps})
    if overlays:
        doc["gpu_overlays"] = overlays
    report += notes
    print("\n".join(report))
    text = json.dumps(doc, indent=1) + "\n"
    if args.check:
        with open(args.out) as fh:
            same = fh.read() == text
        print("up to date" if same else f"{args.out} differs from what the sweeps give")
        return 0 if same else 1
    with open(args.out, "w") as fh:
        fh.write(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
