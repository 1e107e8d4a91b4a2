"""The shape suites of shared/benchmarks.md and the published figures quoted there. Pure data;
no torch import."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

Shape = Tuple[int, int, int]  # (M, N, K)

LLAMA3_70B_NK = ((10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672))  # qkv, o, gate_up, down
LLAMA3_70B_M = (1, 16, 64, 128, 512, 2048, 8192)
DEEPSEEK_V3_NK = ((2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048))
DEEPSEEK_V3_M = (64, 128, 4096)

SUITES: Dict[str, List[Shape]] = {
    "square": [(s, s, s) for s in (1024, 2048, 4096, 8192)],
    "llama3_70b": [(m, n, k) for n, k in LLAMA3_70B_NK for m in LLAMA3_70B_M],
    "deepseek_v3": [(m, n, k) for n, k in DEEPSEEK_V3_NK for m in DEEPSEEK_V3_M],
    # No tile divides these: tails in M, N and K, and N/K off the 16-byte rule.
    "odd": [(1000, 1000, 1000), (77, 4097, 3000), (3, 50000, 256), (8191, 8193, 520)],
}

# --quick: a few representative shapes per suite (the README demo).
QUICK: Dict[str, List[Shape]] = {
    "square": [(4096, 4096, 4096)],
    "llama3_70b": [(16, 8192, 8192), (2048, 8192, 8192)],
    "deepseek_v3": [(128, 7168, 16384), (4096, 7168, 2048)],
    "odd": [(77, 4097, 3000)],
}

# Published, not same-run: a floor to clear, never a ratio of this run. Only the figures
# quoted in shared/benchmarks.md.
DEEPGEMM_SOURCE = "deepseek-ai/DeepGEMM README, initial release table (H800, NVCC 12.8)"
DEEPGEMM_H800_TFLOPS: Dict[Shape, float] = {
    (4096, 7168, 16384): 1358.0,
    (4096, 7168, 2048): 1025.0,
    (128, 7168, 16384): 645.0,
    (64, 2112, 7168): 206.0,
}


def parse_shape(text: str) -> Shape:
    """'M,N,K' or 'MxNxK' -> (M, N, K), each >= 1."""
    parts = text.lower().replace("x", ",").split(",")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise ValueError(f"expected a shape M,N,K of three positive integers, got '{text}'")
    return shape  # type: ignore[return-value]


def parse_suites(text: str) -> List[str]:
    """Comma list of suite names, or 'all' (in the order of SUITES)."""
    names = list(SUITES) if text.strip() == "all" else [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in SUITES]
    if unknown or not names:
        raise ValueError(f"unknown suite(s) {unknown or text!r}; choose from {', '.join(SUITES)} or all")
    return names


def plan(suites: Sequence[str], shapes: Sequence[Shape] = (), quick: bool = False) -> List[Tuple[str, List[Shape]]]:
    """(suite, shapes) to run: the named suites (QUICK subsets with quick), then ad hoc shapes as 'custom'."""
    out = [(s, list(QUICK[s] if quick else SUITES[s])) for s in suites]
    if shapes:
        out.append(("custom", list(shapes)))
    return out


def deepgemm_floor(m: int, n: int, k: int) -> Optional[float]:
    return DEEPGEMM_H800_TFLOPS.get((m, n, k))
