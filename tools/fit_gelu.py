"""The polynomial behind the 16-bit-output erf GELU (csrc/kernels/activation.cuh, gelu16).

GELU(x) = x * Phi(x) with Phi(x) = 1 - Q(|x|) for x >= 0 and Q(|x|) for x < 0, Q the standard normal's
upper tail. The kernel evaluates Q(t) = 2^P(min(t, CLAMP)): P, a degree-DEG polynomial in t, fits log2 Q
on [0, FIT_T] in the minimax sense (Lawson's reweighted least squares on Chebyshev nodes, float64). One
MUFU.EX2 and DEG FMAs replace erff's two polynomials, selects and branch (~3x the instructions; H200,
session 23: erf GELU cost 1024^3's 64x128 ping-pong 37% over relu).

    python tools/fit_gelu.py          # print the coefficients and their error
    python tools/fit_gelu.py --check  # the header's coefficients hold the bounds below (tests run this)

Bounds, with the polynomial evaluated in float32 as the kernel does:
- relative error of Q (so of GELU for x < 0, and at most that for x >= 0) <= MAX_REL on [0, FIT_T];
  bf16's rounding is 2^-9 = 2e-3 relative, fp16's 2^-11 = 4.9e-4: invisible after the output's rounding.
- P decreasing on [FIT_T, CLAMP] (Q stays below Q(FIT_T) ~ 1e-9 there, as the true tail does) and
  P(CLAMP) < -126: past the clamp ex2.approx.ftz gives exactly 0, so GELU(x) is x for x >= CLAMP and
  -0 for x <= -CLAMP, as the erf formula gives in float32.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

import torch

DEG = 6
FIT_T = 6.0
CLAMP = 14.0
MAX_REL = 6e-5
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc", "kernels", "activation.cuh")


def log2_q(t: torch.Tensor) -> torch.Tensor:
    return torch.special.log_ndtr(-t) / math.log(2.0)


def fit(deg: int = DEG, T: float = FIT_T, nodes: int = 3000, iters: int = 200) -> list:
    """Coefficients c0..c_deg (float64) of P(t) ~ log2 Q(t), minimax on [0, T]."""
    t = (torch.cos(torch.linspace(0, math.pi, nodes, dtype=torch.float64)) + 1) * T / 2
    y = log2_q(t)
    V = torch.stack([(t / T) ** i for i in range(deg + 1)], dim=1)
    w = torch.ones(nodes, dtype=torch.float64)
    for _ in range(iters):  # Lawson: weights grow where the error is largest -> equioscillation
        sw = w.sqrt()
        c = torch.linalg.lstsq(V * sw[:, None], (y * sw)[:, None]).solution[:, 0]
        w = w * (V @ c - y).abs()
        w = w / w.sum()
    return [float(c[i]) / T ** i for i in range(deg + 1)]


def horner_f32(coeffs, t: torch.Tensor) -> torch.Tensor:
    """P(t) in float32, highest coefficient first (the kernel's fmaf chain, up to fma's single rounding)."""
    cs = [torch.tensor(c, dtype=torch.float32) for c in coeffs]
    p = torch.full_like(t, float(cs[-1]))
    for c in reversed(cs[:-1]):
        p = p * t + c
    return p


def errors(coeffs) -> dict:
    """What --check bounds: the max relative error of Q on [0, FIT_T], monotonicity past it, P(CLAMP)."""
    t = torch.linspace(0, FIT_T, 400001, dtype=torch.float32)
    rel = ((horner_f32(coeffs, t).double() - log2_q(t.double())) * math.log(2.0)).abs().max().item()
    tail = horner_f32(coeffs, torch.linspace(FIT_T, CLAMP, 8001, dtype=torch.float32))
    return {"max_rel": rel, "decreasing_past_fit": bool((tail[1:] <= tail[:-1]).all()),
            "p_at_clamp": float(horner_f32(coeffs, torch.tensor([CLAMP]))[0])}


def header_coeffs(path: str = HEADER) -> list:
    """The kGelu16P0..kGelu16P<DEG> coefficients written in the header (lowest degree first)."""
    found = dict(re.findall(r"kGelu16P(\d+) = ([-+0-9.eE]+)f", open(path).read()))
    if not found:
        raise SystemExit(f"{path}: no kGelu16P<i> coefficients")
    return [float(found[str(i)]) if str(i) in found else float("nan") for i in range(max(map(int, found)) + 1)]


def problems(coeffs) -> list:
    e = errors(coeffs)
    out = []
    if len(coeffs) != DEG + 1:
        out.append(f"{len(coeffs)} coefficients, expected {DEG + 1}")
    if not e["max_rel"] <= MAX_REL:
        out.append(f"relative error of Q {e['max_rel']:.2e} > {MAX_REL:.0e} on [0, {FIT_T}]")
    if not e["decreasing_past_fit"]:
        out.append(f"P is not decreasing on [{FIT_T}, {CLAMP}]")
    if not e["p_at_clamp"] < -126:
        out.append(f"P({CLAMP}) = {e['p_at_clamp']:.1f}, expected < -126 (ex2.approx.ftz -> 0)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="check the header's coefficients instead of fitting")
    args = ap.parse_args(argv)
    if args.check:
        bad = problems(header_coeffs())
        for b in bad:
            print(f"activation.cuh kGelu16P: {b}", file=sys.stderr)
        return 1 if bad else 0
    c = fit()
    e = errors(c)
    print(f"// degree {DEG} on [0, {FIT_T}], clamp {CLAMP}: max rel err of Q {e['max_rel']:.2e}, "
          f"P({CLAMP}) = {e['p_at_clamp']:.1f}")
    print("constexpr float " + ", ".join(f"kGelu16P{i} = {v:.9e}f" for i, v in enumerate(c)) + ";")
    bad = problems(c)
    for b in bad:
        print(f"fit: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
