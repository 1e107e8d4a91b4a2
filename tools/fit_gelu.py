"""The polynomials behind the 16-bit-output GELUs (csrc/kernels/activation.cuh, gelu_tail).

Both GELUs are x * F(x) with F(x) = 1 - q(|x|) for x >= 0 and q(|x|) for x < 0, so
    GELU(x) = max(x, 0) - |x| * q(|x|)
with q the tail: erf GELU's q(t) = Q(t), the standard normal's upper tail; tanh GELU's q(t) = sigmoid(-2u),
u = sqrt(2/pi) (t + 0.044715 t^3). The kernel evaluates q(t) = 2^P(min(t, CLAMP)), P of degree DEG
fit to log2 q on [0, FIT_T] in the minimax sense (Lawson's reweighted least squares on Chebyshev nodes,
float64). One MUFU.EX2 and about ten FP32 instructions: erff costs ~25; tanh.approx, one MUFU
like this, errs by 2^-11 of tanh near +-1, which is all of 1 + tanh(u) past x = -3.7.

    python tools/fit_gelu.py          # fit both tails, print the header lines and their error
    python tools/fit_gelu.py --check  # the header's coefficients hold the bounds below (tests run this)

Bounds, with P evaluated in float32 as the kernel does:
- relative error of q <= MAX_REL on [0, FIT_T]: of GELU for x >= -FIT_T, and at most that for x >= 0
  (bf16 rounds at 2^-9 = 2e-3 relative, fp16 at 2^-11 = 4.9e-4);
- P decreasing on [FIT_T, CLAMP] (q stays below q(FIT_T) < 2^-29, as the true tail does: |error| < 2e-9 |x|)
  and P(CLAMP) < -126: past the clamp ex2.approx.ftz gives exactly 0 (GELU(x) = max(x, 0)).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable

import torch

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc", "kernels", "activation.cuh")
K_TANH = math.sqrt(2 / math.pi)


@dataclass(frozen=True)
class Tail:
    name: str  # the header's constants are k<name>0..k<name><deg>, its clamp k<name>Clamp
    log2_q: Callable[[torch.Tensor], torch.Tensor]
    deg: int
    fit_t: float
    clamp: float
    max_rel: float


TAILS = [
    Tail("ErfTail", lambda t: torch.special.log_ndtr(-t) / math.log(2.0), 6, 6.0, 14.0, 6e-5),
    Tail("TanhTail", lambda t: -torch.nn.functional.softplus(2 * K_TANH * (t + 0.044715 * t ** 3)) / math.log(2.0),
         7, 5.5, 10.0, 1e-4),
]


def fit(tail: Tail, nodes: int = 3000, iters: int = 300) -> list:
    """Coefficients c0..c_deg (float64) of P(t) ~ log2 q(t), minimax on [0, fit_t]."""
    T = tail.fit_t
    t = (torch.cos(torch.linspace(0, math.pi, nodes, dtype=torch.float64)) + 1) * T / 2
    y = tail.log2_q(t)
    V = torch.stack([(t / T) ** i for i in range(tail.deg + 1)], dim=1)
    w = torch.ones(nodes, dtype=torch.float64)
    for _ in range(iters):  # Lawson: weights grow where the error is largest -> equioscillation
        sw = w.sqrt()
        c = torch.linalg.lstsq(V * sw[:, None], (y * sw)[:, None]).solution[:, 0]
        w = w * (V @ c - y).abs()
        w = w / w.sum()
    return [float(c[i]) / T ** i for i in range(tail.deg + 1)]


def horner_f32(coeffs, t: torch.Tensor) -> torch.Tensor:
    """P(t) in float32, highest coefficient first (the kernel's fmaf chain, up to fma's single rounding)."""
    cs = [torch.tensor(c, dtype=torch.float32) for c in coeffs]
    p = torch.full_like(t, float(cs[-1]))
    for c in reversed(cs[:-1]):
        p = p * t + c
    return p


def errors(tail: Tail, coeffs) -> dict:
    """What --check bounds: the max relative error of q on [0, fit_t], monotonicity past it, P(clamp)."""
    t = torch.linspace(0, tail.fit_t, 400001, dtype=torch.float32)
    rel = ((horner_f32(coeffs, t).double() - tail.log2_q(t.double())) * math.log(2.0)).abs().max().item()
    past = horner_f32(coeffs, torch.linspace(tail.fit_t, tail.clamp, 8001, dtype=torch.float32))
    return {"max_rel": rel, "decreasing_past_fit": bool((past[1:] <= past[:-1]).all()),
            "p_at_fit_t": float(past[0]), "p_at_clamp": float(horner_f32(coeffs, torch.tensor([tail.clamp]))[0])}


def header_constants(path: str = HEADER) -> dict:
    """name -> float for every `k<Tail><i|Clamp> = <value>f` in the header."""
    return {n: float(v) for n, v in re.findall(r"\b(k\w+Tail(?:\d+|Clamp)) = ([-+0-9.eE]+)f", open(path).read())}


def header_coeffs(tail: Tail, path: str = HEADER) -> list:
    found = header_constants(path)
    n = 1 + max([int(k[len(tail.name) + 1:]) for k in found if re.fullmatch(rf"k{tail.name}\d+", k)], default=-1)
    return [found.get(f"k{tail.name}{i}", float("nan")) for i in range(n)]


def problems(tail: Tail, coeffs, clamp=None) -> list:
    out = []
    if len(coeffs) != tail.deg + 1:
        return [f"{tail.name}: {len(coeffs)} coefficients, expected {tail.deg + 1}"]
    if clamp is not None and clamp != tail.clamp:
        out.append(f"{tail.name}: clamp {clamp}, expected {tail.clamp}")
    e = errors(tail, coeffs)
    if not e["max_rel"] <= tail.max_rel:
        out.append(f"{tail.name}: relative error of q {e['max_rel']:.2e} > {tail.max_rel:.0e} on [0, {tail.fit_t}]")
    if not e["decreasing_past_fit"]:
        out.append(f"{tail.name}: P is not decreasing on [{tail.fit_t}, {tail.clamp}]")
    if not e["p_at_fit_t"] < -29:
        out.append(f"{tail.name}: P({tail.fit_t}) = {e['p_at_fit_t']:.1f}, expected < -29 (1 - q rounds to 1)")
    if not e["p_at_clamp"] < -126:
        out.append(f"{tail.name}: P({tail.clamp}) = {e['p_at_clamp']:.1f}, expected < -126 (ex2.approx.ftz -> 0)")
    return out


def header_line(tail: Tail, coeffs) -> str:
    return ("constexpr float " + ", ".join(f"k{tail.name}{i} = {v:.9e}f" for i, v in enumerate(coeffs))
            + f", k{tail.name}Clamp = {tail.clamp}f;")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="check the header's coefficients instead of fitting")
    args = ap.parse_args(argv)
    bad = []
    for tail in TAILS:
        if args.check:
            bad += problems(tail, header_coeffs(tail), header_constants().get(f"k{tail.name}Clamp"))
            continue
        c = fit(tail)
        e = errors(tail, c)
        print(f"// {tail.name}: degree {tail.deg} on [0, {tail.fit_t}], clamp {tail.clamp}: max rel err of q "
              f"{e['max_rel']:.2e}, P({tail.clamp}) = {e['p_at_clamp']:.1f}")
        print(header_line(tail, c))
        bad += problems(tail, c)
    for b in bad:
        print(f"fit_gelu: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
