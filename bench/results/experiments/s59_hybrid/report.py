"""Session 59: call.sh's results as two tables: the M x N ladder's launch against the M-only ladder's where they
differ (bench.ab --against: each launch's median over the rounds), and ours (shipped rules) against torch.

    python bench/results/experiments/s59_hybrid/report.py OUT_FOLDER
    python bench/results/experiments/s59_hybrid/report.py --offline     (no GPU: from ../s58_unseen's H100 sweeps)

--offline: at the s58 probe's 20 shapes, where the H100 timed every kernel of three families and the torch
competitor in one run (runs a and b), the launch the shipped rules make now (configs.explain, that GPU's overlay
first, as the op on it would) against the one the sweep's op made then (its `selected`: the M-only ladder), both
times from the same run.
"""
import glob
import json
import math
import os
import statistics
import sys


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(folder: str) -> None:
    print("| family | shapes whose launch differs | M-only launch / M x N launch (geomean) | min | max |")
    print("|---|---|---|---|---|")
    lines = []
    for path in sorted(glob.glob(os.path.join(folder, "ab_*.json"))):
        doc = json.load(open(path))
        gains = []
        for r in doc["rows"]:
            (old, t_old), (new, t_new) = [(x, statistics.median(ts)) for x, ts in r["us_rounds"].items()]
            gains.append(t_old / t_new)  # launches are listed [M-only rules', shipped rules'] (bench.ab.changed_launches)
            lines.append(f"  {os.path.basename(path)[3:-5]} {r['m']}x{r['n']}x{r['k']}: {old} {t_old:.2f} us, "
                         f"{new} {t_new:.2f} us ({t_old / t_new:.3f}x)")
        if gains:
            print(f"| {os.path.basename(path)[3:-5]} | {len(gains)} | {geomean(gains):.3f} | {min(gains):.3f} | {max(gains):.3f} |")
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
    import torch

    from cutlass_gemm import configs

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s58_unseen")
    call = {"gemm bf16, epilogue none": lambda m, n, k: configs.explain(m, n, k, arch=90),
            "gemm bf16, epilogue bias_gelu_residual": lambda m, n, k: configs.explain(m, n, k, fused=True, activation=True,
                                                                                      arch=90),
            "scaled_mm e4m3 -> bf16, row scales, fast accumulation, epilogue bias":
                lambda m, n, k: configs.explain(m, n, k, torch.float8_e4m3fn, scale="row", accumulate="fast", arch=90)}
    print("| run | family | shapes | launch moved | torch / M-only pick | torch / shipped pick | M-only / shipped | "
          "shipped / best (max) |")
    print("|---|---|---|---|---|---|---|---|")
    for run in ("h100_a", "h100_b"):
        for path in sorted(glob.glob(os.path.join(here, run, "sweep_*.json"))):
            d = json.load(open(path))
            title = d["case"]["title"]
            configs._gpu_name_in_use = d["gpu"] if d["gpu"] in configs.GPU_OVERLAYS else None
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
            print(f"| {run[5:]} | {title} | {len(gain)} | {moved} | {geomean(old_r):.3f} | {geomean(new_r):.3f} | "
                  f"{geomean(gain):.3f} | {geomean(best_r):.3f} ({max(best_r):.2f}) |")


if __name__ == "__main__":
    offline() if sys.argv[1:] == ["--offline"] else main(sys.argv[1])
