"""Large-shape sensitivity to the persistent tile scheduler's swizzle and raster order, same run,
against the competitor: does L2 reuse explain the gap to cuBLAS / _scaled_mm at large M x N?

    python bench/scheduler_knobs.py [--out scheduler_knobs.json]
    python bench/scheduler_knobs.py --case op=scaled_mm,scale=row,accumulate=fast,epilogue=bias \
        --shapes 8192,57344,8192 --configs NAME,NAME --settings 0:0,8:2,1:0 --rounds 2
    python bench/scheduler_knobs.py --shapes 64,8192,8192 --settings 0:0:128,0:0:256 --rounds 3   # TMA L2 promotion A/B

--case (repeatable): make_case's keywords (default: bf16 gemm and FP8 row accurate, no epilogue); --configs: kernels
forced by name (default: the op's own selection); --settings: swizzle:raster pairs (0 = unset); --rounds: the
settings' loop repeated, so that a setting's spread across rounds shows the noise. A setting's optional third field
is the TMA descriptors' L2 promotion in bytes (CUTLASS_GEMM_TMA_L2_PROMOTION 64/128/256; 0 or absent = the op's
default: 256 on SM90 but blockwise when min(M, N) <= 256, else CUTLASS's 128; name 128 to A/B against it).

The knobs (CUTLASS_GEMM_SWIZZLE 1/2/4/8, CUTLASS_GEMM_RASTER 1 = along M / 2 = along N) are read
once per process, so each setting runs in a child process (`--child`) on the same shapes and seed;
the competitor is timed in every child too (its spread is the noise floor). Timing is the
harness's CUDA-graph replay over rotated inputs; each output is checked before it is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SETTINGS = [(0, 0, 0), (1, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0), (8, 1, 0), (8, 2, 0)]  # (swizzle, raster, L2 promotion); 0 = unset
KNOBS = ("CUTLASS_GEMM_SWIZZLE", "CUTLASS_GEMM_RASTER", "CUTLASS_GEMM_TMA_L2_PROMOTION")
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 10240, 8192), (8192, 57344, 8192)]
CASES = [dict(op="gemm", dtype="bf16", epilogue="none"),
         dict(op="scaled_mm", scale="row", accumulate="accurate", epilogue="none")]


def child(spec: dict) -> dict:
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import torch

    from bench.cases import make_case
    from bench.sweep import sweep_shape

    import cutlass_gemm

    unknown = [c for c in spec["configs"] if c and c not in cutlass_gemm.configs.compiled_kernels()]
    if unknown:
        sys.exit(f"scheduler_knobs: expected --configs from cutlass_gemm.configs.compiled_kernels(), got {unknown}")
    try:
        cases = [make_case(**cs) for cs in spec["cases"]]
    except (TypeError, ValueError) as e:  # an unknown keyword, or a value outside bench's choices
        sys.exit(f"scheduler_knobs: --case: {e}")
    out = {}
    for cs, case in zip(spec["cases"], cases):
        for m, n, k in spec["shapes"]:
            torch.manual_seed(0)
            row = sweep_shape(case, spec["configs"], m, n, k)  # "": the op's own selection; checked before timing
            for cfg in spec["configs"]:
                desc = " ".join(str(v) for key, v in cs.items() if key != "op" and v != "none")
                key = f"{cs['op']} {desc} {m}x{n}x{k}" + (f" {cfg}" if cfg else "")
                out[key] = {"ours_us": row["us"][cfg], "competitor_us": row["competitor"]["us"],
                            "err": row["rel_err"][cfg], "kernel": cfg or row["selected"]}
    try:  # the commit the extension was built from: a copied tree may have no .git and no CUTLASS_GEMM_COMMIT
        from cutlass_gemm._build_info import GIT_COMMIT as build_commit
    except ImportError:
        build_commit = None
    return {"meta": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "build_commit": build_commit},
            "rows": out}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--case", action="append", type=_kv, help="make_case keywords, e.g. op=gemm,dtype=bf16,epilogue=none")
    ap.add_argument("--shapes", nargs="+", type=_ints, help="M,N,K ...")
    ap.add_argument("--configs", type=lambda s: s.split(","), default=[""], help="kernels forced by name")
    ap.add_argument("--settings", type=lambda s: [_setting(x) for x in s.split(",")],
                    help="swizzle:raster[:l2] (swizzle 0/1/2/4/8, raster 0 heuristic / 1 along M / 2 along N, "
                         "l2 the TMA L2 promotion 0/64/128/256 bytes)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.rounds < 1:
        ap.error(f"expected --rounds 1 or more, got {args.rounds}")
    for sw, ra, l2 in args.settings or []:
        if sw not in (0, 1, 2, 4, 8) or ra not in (0, 1, 2) or l2 not in (0, 64, 128, 256):
            ap.error(f"expected swizzle 0/1/2/4/8, raster 0/1/2 and L2 promotion 0/64/128/256 in --settings, got {sw}:{ra}:{l2}")
    spec = {"cases": args.case or CASES, "shapes": args.shapes or SHAPES, "configs": args.configs}
    runs, meta = {}, {"commit": os.environ.get("CUTLASS_GEMM_COMMIT", ""), "spec": spec}
    for rnd, setting in [(r, x) for r in range(args.rounds) for x in (args.settings or SETTINGS)]:
        sw, ra, l2 = setting
        env = {k: v for k, v in os.environ.items() if k not in KNOBS}
        env.update({name: str(v) for name, v in zip(KNOBS, setting) if v})
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or [""])[-1]
            if last.startswith("scheduler_knobs:"):  # the child refused the arguments: every other child would too
                print(last, file=sys.stderr)
                sys.exit(2)
            print(f"swizzle {sw} raster {ra} l2 {l2}: failed\n{r.stderr[-2000:]}", file=sys.stderr)
            continue
        doc = json.loads(r.stdout.splitlines()[-1])
        meta.update(doc["meta"])
        name = (f"swizzle={sw or 'default'} raster={['heuristic', 'M', 'N'][ra]}" + (f" l2={l2}B" if l2 else "")
                + (f" #{rnd + 1}" if args.rounds > 1 else ""))
        runs[name] = doc["rows"]
        print(f"{name}: done", file=sys.stderr, flush=True)
        if args.out:  # after every child: a run cut short by a time limit keeps the settings it finished
            with open(args.out, "w") as f:
                json.dump({"meta": meta, "runs": runs}, f, indent=1)
    if not runs:  # no table and no JSON to write: say so, and fail the command
        sys.exit("scheduler_knobs: every child process failed (their errors are above); nothing was measured")
    keys = list(next(iter(runs.values())).keys())
    print("| shape | " + " | ".join(runs) + " |")
    print("|---|" + "---|" * len(runs))
    for key in keys:
        cells = []
        for run in runs.values():
            v = run.get(key, {"ours_us": None})
            cells.append("-" if v["ours_us"] is None or v.get("competitor_us") is None else f"{v['competitor_us'] / v['ours_us']:.3f}x ({v['ours_us']:.0f} us)")
        print(f"| {key} | " + " | ".join(cells) + " |")
    print("\ncells: our speedup over the competitor timed in the same child (cuBLAS mm / _scaled_mm row), our µs")


def _ints(s: str, sep: str = ",", n: int = 3):
    parts = s.split(sep)
    if len(parts) != n or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"expected {n} whole numbers separated by '{sep}', got '{s}'")
    return tuple(int(p) for p in parts)


def _setting(s: str):
    """swizzle:raster or swizzle:raster:l2 -> (swizzle, raster, l2), l2 0 where absent."""
    if s.count(":") not in (1, 2):
        raise argparse.ArgumentTypeError(f"expected swizzle:raster or swizzle:raster:l2 (whole numbers), got '{s}'")
    return _ints(s, ":", 3) if s.count(":") == 2 else _ints(s, ":", 2) + (0,)


def _kv(s: str) -> dict:
    try:
        return dict(p.split("=", 1) for p in s.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected key=value pairs separated by ',', got '{s}'") from None


if __name__ == "__main__":
    main()
