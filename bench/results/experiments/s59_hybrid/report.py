"""Session 59: call.sh's results as two tables: the M x N ladder's launch against the M-only ladder's where they
differ (bench.ab --against: each launch's median over the rounds), and ours (shipped rules) against torch.

    python bench/results/experiments/s59_hybrid/report.py OUT_FOLDER
    python bench/results/experiments/s59_hybrid/report.py --offline     (no GPU: from ../s58_unseen's H100 sweeps)

--offline: at the s58 probe's 20 shapes, where the H100 timed every kernel of three families and the torch
competitor in one run (runs a and b), the launch the shipped rules make now (configs.explain: the defaults alone,
then with that GPU's overlay first, as the op on it makes them) against the one the sweep's op made then (its
`selected`: the M-only ladder), both times from the same run. The overlay's session 59 rules come from call.sh's
A/B at these very shapes, so that half is in-sample.
"""
import glob
import json
import math
import os
import statistics
import sys


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def _explain_by_name():
    import torch

    from cutlass_gemm import configs

    return configs, {
        "bf16": lambda m, n, k: configs.explain(m, n, k, arch=90),
        "bf16_fused": lambda m, n, k: configs.explain(m, n, k, fused=True, activation=True, arch=90),
        "row_fast": lambda m, n, k: configs.explain(m, n, k, torch.float8_e4m3fn, scale="row", accumulate="fast", arch=90)}


def main(folder: str) -> None:
    configs, explain = _explain_by_name()
    print("| family | shapes whose launch differs | M-only launch / M x N launch (geomean) | min | max | "
          "M-only / the launch with this GPU's overlay (in-sample) | min |")
    print("|---|---|---|---|---|---|---|")
    lines = []
    for path in sorted(glob.glob(os.path.join(folder, "ab_*.json"))):
        doc = json.load(open(path))
        name = os.path.basename(path)[3:-5]
        configs._gpu_name_in_use = doc["gpu"] if doc["gpu"] in configs.GPU_OVERLAYS else None
        gains, over = [], []
        for r in doc["rows"]:
            med = {x: statistics.median(ts) for x, ts in r["us_rounds"].items()}
            (old, t_old), (new, t_new) = med.items()  # [M-only rules', shipped rules'] (bench.ab.changed_launches)
            gains.append(t_old / t_new)
            e = explain[name](r["m"], r["n"], r["k"])
            now = e.kernel + ("+pdl" if e.pdl else "")
            over.append(t_old / med[now] if now in med else math.nan)
            lines.append(f"  {name} {r['m']}x{r['n']}x{r['k']}: {old} {t_old:.2f} us, {new} {t_new:.2f} us "
                         f"({t_old / t_new:.3f}x); with the overlay: {now}")
        configs._gpu_name_in_use = None
        if gains:
            print(f"| {name} | {len(gains)} | {geomean(gains):.3f} | {min(gains):.3f} | {max(gains):.3f} | "
                  f"{geomean(over):.3f} | {min(over):.3f} |")
    print("\n".join(lines))
    print("\n| family | shapes | competitor | competitor time / ours (geomean) | min | max |")
    print("|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(folder, "bench_*", "*.json"))):
        doc = json.load(open(path))
        by = {}
        for r in doc["rows"]:
            for name, c in r["competitors"].items():
                if c.get("status") == "ok" and r["ours"].get("status") == "ok":
                    by.setdefault(name, []).append(c["us"] / r["ours"]["us"])
        for name, xs in by.items():
            print(f"| {os.path.basename(os.path.dirname(path))[6:]} | {len(xs)} | {name} | {geomean(xs):.3f} | "
                  f"{min(xs):.3f} | {max(xs):.3f} |")


def offline() -> None:
    configs, explain = _explain_by_name()
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s58_unseen")
    call = {"gemm bf16, epilogue none": explain["bf16"], "gemm bf16, epilogue bias_gelu_residual": explain["bf16_fused"],
            "scaled_mm e4m3 -> bf16, row scales, fast accumulation, epilogue bias": explain["row_fast"]}
    print("| H100 overlay | run | family | shapes | launch moved | torch / M-only pick | torch / shipped pick | "
          "M-only / shipped | shipped / best (max) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for overlay, run in [(o, r) for o in (False, True) for r in ("h100_a", "h100_b")]:
        for path in sorted(glob.glob(os.path.join(here, run, "sweep_*.json"))):
            d = json.load(open(path))
            title = d["case"]["title"]
            configs._gpu_name_in_use = d["gpu"] if overlay and d["gpu"] in configs.GPU_OVERLAYS else None
            old_r, new_r, gain, best_r, moved = [], [], [], [], 0
            for r in d["rows"]:
                us = {x: v for x, v in r["us"].items() if v}
                e = call[title](r["m"], r["n"], r["k"])
                t_old, t_new, t = us[r["selected"]], us[e.kernel], r["competitor"]["us"]
                moved += e.kernel != r["selected"]
                old_r.append(t / t_old)
                new_r.append(t / t_new)
                gain.append(t_old / t_new)
                best_r.append(t_new / min(us.values()))
            print(f"| {'with (session 59 rules in-sample)' if overlay else 'without'} | {run[5:]} | {title} | {len(gain)} | {moved} | {geomean(old_r):.3f} | {geomean(new_r):.3f} | "
                  f"{geomean(gain):.3f} | {geomean(best_r):.3f} ({max(best_r):.2f}) |")


if __name__ == "__main__":
    offline() if sys.argv[1:] == ["--offline"] else main(sys.argv[1])
