"""Writing results: one document per (suite, case) as markdown, JSON and a PNG plot. The
document is built from measured rows by pure code (tests build it from synthetic rows)."""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import shlex
import subprocess
from typing import Dict, List, Optional

import torch

import cutlass_gemm

from . import metrics
from .cases import OURS as OURS_LABEL

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASH = "—"


def _run(cmd: List[str]) -> Optional[str]:
    try:
        # GIT_OPTIONAL_LOCKS=0: `git status` must not rewrite the index of a tree others are editing.
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=20,
                           env=dict(os.environ, GIT_OPTIONAL_LOCKS="0"))
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def _nvml_driver() -> Optional[str]:
    # Without nvidia-smi: NVML through pynvml (what torch.cuda uses for its own queries), if installed.
    try:
        import pynvml

        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else v
    except Exception:  # noqa: BLE001 - no NVML, no driver: unknown
        return None


def environment(argv: List[str]) -> dict:
    """What produced the numbers: GPU, driver, versions, date, commit, the command line."""
    cuda = torch.cuda.is_available()
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"])
    smi = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return {
        "gpu": torch.cuda.get_device_name() if cuda else None,
        "driver_version": smi.splitlines()[0] if smi else _nvml_driver(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cutlass_gemm": getattr(cutlass_gemm, "__version__", None),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        # A machine that got a copied tree (no .git, or a stale one) is told the commit: CUTLASS_GEMM_COMMIT wins.
        "git_commit": os.environ.get("CUTLASS_GEMM_COMMIT") or _run(["git", "rev-parse", "HEAD"]),
        "git_dirty": None if os.environ.get("CUTLASS_GEMM_COMMIT") or status is None else bool(status),
        "command": "python -m bench " + shlex.join(argv),
    }


def document(config: dict, suite: str, rows: List[dict], env: dict, ceilings: dict, peak: str,
             overhead: Dict[str, Optional[float]], overhead_shape=(16, 1024, 1024)) -> dict:
    """Everything one results file holds: rows with derived figures and the per-competitor summary."""
    peak_tflops, peak_gbps = ceilings.get(f"{peak}_tflops"), ceilings.get("hbm_gbps")
    derived = [metrics.derive(r, peak_tflops, peak_gbps) for r in rows]
    return {"title": f"{config['title']} — suite {suite}", "suite": suite, "config": config, "environment": env,
            "ceilings": ceilings, "peak": {"tflops": peak_tflops, "gbps": peak_gbps, "key": f"{peak}_tflops"},
            "eager_overhead_us": {"shape": list(overhead_shape), "us": overhead},
            "rows": derived, "summary": metrics.summarize(derived)}


def _f(x, spec: str) -> str:
    return DASH if x is None else format(x, spec)


def _ratio(x) -> str:
    return DASH if x is None else f"{x:.2f}x"


def _cell(r: dict) -> str:
    """A contender's cell: TFLOP/s (our speedup over it), or why there is no number."""
    mark = "*" if r.get("note") else ""
    if r["status"] != "ok":
        return r["status"] + mark
    return f"{_f(r.get('tflops'), '.0f')} ({_ratio(r.get('ratio'))}){mark}"


def _ours_cells(o: dict) -> List[str]:
    if o["status"] == "FAIL":
        return [f"FAIL (err {o['err']:.1e})", DASH, DASH, DASH]
    if o["status"] != "ok":
        return ["error*", DASH, DASH, DASH]
    return [_f(o["us"], ".1f"), _f(o["tflops"], ".0f"), _f(o["gbps"], ".0f"), _f(o["pct_bound"], ".0f")]


def _names(rows: List[dict]) -> List[str]:
    names: List[str] = []
    for r in rows:
        names += [n for n in r["competitors"] if n not in names]
    return names


def markdown(doc: dict) -> str:
    rows, env, pk = doc["rows"], doc["environment"], doc["peak"]
    names = _names(rows)
    pub = next((r["published"]["name"] for r in rows if r.get("published")), None)
    head = ["M x N x K", "kernel", "µs", "TFLOP/s", "GB/s", "% bound"] + names + ([pub] if pub else [])
    out = [f"# {doc['title']}", "",
           f"{env.get('gpu')}, driver {env.get('driver_version')}, torch {env.get('torch')}, CUDA {env.get('cuda')}, "
           f"commit {(env.get('git_commit') or '?')[:12]}{' (dirty)' if env.get('git_dirty') else ''}, {env.get('date')}",
           f"`{env.get('command')}`", "",
           f"Ceilings, same run: {_f(pk['tflops'], '.0f')} TFLOP/s ({doc['ceilings'].get('method', {}).get(pk['key'], pk['key'])}), "
           f"{_f(pk['gbps'], '.0f')} GB/s ({doc['ceilings'].get('method', {}).get('hbm_gbps', 'copy')}). "
           "% bound = max(2MNK / peak, bytes / bandwidth) / our time. "
           "Competitor cells: their TFLOP/s (our speedup = their µs / our µs).", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for r in rows:
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        cells = [shape, (f"`{r['kernel']}`" + (" (PDL)" if r.get("pdl") else "")) if r.get("kernel") else DASH]
        cells += _ours_cells(r["ours"])
        cells += [_cell(r["competitors"][n]) if n in r["competitors"] else DASH for n in names]
        if pub:
            p = r.get("published")
            cells.append(f"{p['tflops']:.0f} ({_ratio(p.get('ratio'))})" if p else DASH)
        out.append("| " + " | ".join(cells) + " |")
        notes += [f"- {shape} {name}: {c['note']}" for name, c in [(OURS_LABEL, r["ours"])] + list(r["competitors"].items())
                  if c.get("note")]
    out += ["", "Ratios (ours vs each, over the shapes both have a number for):"]
    for name, s in doc["summary"].items():
        out.append(f"- vs {name}: geomean {_ratio(s['geomean'])}, min {_ratio(s['min'])}"
                   f"{' at ' + s['min_shape'] if s['min_shape'] else ''} (n={s['n']}{', missing ' + str(s['missing']) if s['missing'] else ''})")
    fails = [f"{r['m']}x{r['n']}x{r['k']}" for r in rows if r["ours"]["status"] != "ok"]
    if fails:
        out.append(f"- ours without a number (FAIL/error): {', '.join(fails)}")
    if pub:
        src = next(r["published"].get("source") for r in rows if r.get("published"))
        out.append(f"- {pub}: {src}; a floor from another machine, not a same-run ratio")
    ov = doc["eager_overhead_us"]
    out += ["", f"Eager host time per call ({'x'.join(map(str, ov['shape']))}, µs): "
            + ", ".join(f"{n} {_f(v, '.1f')}" for n, v in ov["us"].items())]
    if notes:
        out += ["", "Notes (*):"] + notes
    return "\n".join(out) + "\n"


def _clean(x):
    # JSON without NaN/inf: a missing number is null.
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_json(path: str, doc: dict) -> None:
    with open(path, "w") as fh:
        json.dump(_clean(doc), fh, indent=1, allow_nan=False)
        fh.write("\n")


def write_plot(path: str, doc: dict) -> bool:
    """TFLOP/s against M, one panel per (N, K); shapes alone in their (N, K) share one panel. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = doc["rows"]
    if not rows:
        return False
    groups: Dict[tuple, List[dict]] = {}
    for r in rows:
        groups.setdefault((r["n"], r["k"]), []).append(r)
    panels = [(f"N={n}, K={k}", rs) for (n, k), rs in groups.items() if len(rs) > 1]
    singles = [r for rs in groups.values() if len(rs) == 1 for r in rs]
    if singles:
        panels.append(("one shape per (N, K)", singles))
    cols = min(3, len(panels))
    nrows = -(-len(panels) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.5 * cols, 4 * nrows), squeeze=False)
    series = [(OURS_LABEL, lambda r: r["ours"])] + [(n, lambda r, n=n: r["competitors"].get(n)) for n in _names(rows)]
    for ax, (title, rs) in zip(axes.flat, panels):
        rs = sorted(rs, key=lambda r: r["m"])
        xs = [r["m"] for r in rs]
        lone = title.startswith("one shape")  # unrelated shapes: points, no connecting line
        for label, get in series:
            ys = [(get(r) or {}).get("tflops") for r in rs]
            ax.plot(xs, [math.nan if y is None else y for y in ys], marker="o", linestyle="none" if lone else "-", label=label)
        pub = [(r["m"], r["published"]["tflops"]) for r in rs if r.get("published")]
        if pub:
            ax.scatter(*zip(*pub), marker="*", s=120, color="k", label="published floor (not same-run)", zorder=3)
        if lone:  # x = M alone doesn't name the shape
            for r in rs:
                ax.annotate(f"{r['m']}x{r['n']}x{r['k']}", (r["m"], r["ours"].get("tflops") or 0), fontsize=7)
        ax.set_xscale("log", base=2)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("M")
        ax.set_ylabel("TFLOP/s")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    legend: Dict[str, object] = {}  # every series once, whichever panel has it
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(lab, h)
    axes.flat[0].legend(list(legend.values()), list(legend), fontsize=7)
    fig.suptitle(doc["title"], fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_all(out_dir: str, stem: str, doc: dict) -> List[str]:
    """<stem>.md, <stem>.json and (with matplotlib) <stem>.png under out_dir; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, stem)
    with open(base + ".md", "w") as fh:
        fh.write(markdown(doc))
    write_json(base + ".json", doc)
    paths = [base + ".md", base + ".json"]
    if write_plot(base + ".png", doc):
        paths.append(base + ".png")
    return paths
