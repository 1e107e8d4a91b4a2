"""The one list of compiled kernels. Pure data: no torch import.

Everything that enumerates kernels reads this file: the generator
(`tools/generate.py` -> `csrc/instantiations/*.cu`, `csrc/generated/*`), `setup.py`
(the source list) and the Python registry (`cutlass_gemm.configs`). A kernel's index in
`KERNELS` is its id in the C++ table; `tests/test_kernel_table.py` fails when the
generated files are stale or the table is over budget.

The schema carries every axis of the design even where only a subset is populated:
arch, A/B dtypes, output dtype, scale mode, accumulation mode, schedule, tile, cluster,
swap-AB and tile scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, List, Tuple

# Element types, in the order of the C++ enum `cutlass_gemm::DType` (generated).
DTYPES: Tuple[str, ...] = ("bf16", "f16", "f32", "e4m3", "e5m2")
# torch dtype names, for messages and for the Python side (no torch import here).
TORCH_DTYPE_NAMES: Dict[str, str] = {
    "bf16": "bfloat16",
    "f16": "float16",
    "f32": "float32",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
}
# Scale modes, in the order of `cutlass_gemm::ScaleMode`. "none": 16-bit GEMM (alpha only);
# "tensor_row_col": FP8 with per-tensor / per-row(a) / per-column(b) scales, chosen at run
# time by the scale's shape; "blockwise": DeepSeek 1x128 (a) x 128x128 (b).
SCALE_MODES: Tuple[str, ...] = ("none", "tensor_row_col", "blockwise")
# Accumulation modes, in the order of `cutlass_gemm::Accum`. "f32": plain FP32 accumulation
# (16-bit inputs; SM100 FP8, whose UMMA accumulates in FP32 tensor memory, serving both FP8
# modes); "promoted": FP8 with periodic promotion into FP32 (accurate, default); "fast": FP8
# fast accumulation (explicit opt-in).
ACCUMS: Tuple[str, ...] = ("f32", "promoted", "fast")
# Mainloop/epilogue schedules. SM90: warp-specialized persistent cooperative or ping-pong, or "ws":
# CUTLASS's non-persistent warp-specialized kernel (one producer and one consumer warpgroup, one
# tile per CTA, the grid is the tile count; its scheduler field stays "persistent", unused).
# SM100: 1-SM or 2-SM UMMA (tcgen05; a 2-SM UMMA spans the CTA pair of a 2x1 cluster).
SCHEDULES: Tuple[str, ...] = ("coop", "pingpong", "1sm", "2sm", "ws")
# Tile schedulers: data-parallel persistent, or stream-K (deterministic reduction).
SCHEDULERS: Tuple[str, ...] = ("persistent", "streamk")
# Activations, in the order of `cutlass_gemm::Activation` (the kernel's run-time argument).
ACTIVATIONS: Tuple[str, ...] = ("none", "relu", "gelu", "gelu_tanh", "silu")
# Archs, as built by CUTLASS_GEMM_ARCHS ("90a;100a").
ARCHS: Tuple[int, ...] = (90, 100)
# Compute capability -> the arch whose kernels run there (csrc/device_info.cpp: exactly these two).
ARCH_OF_CAPABILITY: Dict[Tuple[int, int], int] = {(9, 0): 90, (10, 0): 100}

# Compile budget (design: <= ~120 per arch, <= 8 per unit; units hold at most UNIT_SIZE).
MAX_KERNELS_PER_ARCH = 120
MAX_KERNELS_PER_UNIT = 8
UNIT_SIZE = 6


@dataclass(frozen=True)
class Kernel:
    arch: int
    a: str
    b: str
    out: str
    tile: Tuple[int, int, int]  # SM90: the CTA tile; SM100: the UMMA tile (2sm: the CTA pair's); swap-AB: (N, M, K) extents
    cluster: Tuple[int, int]
    schedule: str
    scale: str = "none"
    accum: str = "f32"
    swap_ab: bool = False
    scheduler: str = "persistent"
    activation: bool = True  # False: no activation in the epilogue (activation="none" calls only)
    # False (with activation False: `_plain`): no residual (CUTLASS's source C) in the epilogue either, so calls with
    # neither serve; its epilogue drops the beta * C node's per-element work that runs even when C is not loaded. (Every
    # SM90 16-bit and FP8 scaled kernel of Normal orientation adds a bias of either dtype with one node: RowBiasEither.)
    residual: bool = True
    ctas_per_sm: int = 1  # ws only: 2 sizes the stages to half an SM's shared memory, two CTAs resident per SM
    stores: int = 0  # SM90 TMA epilogue subtile stores in flight; 0: CUTLASS's builder's min(subtiles, 2)
    # SM90 coop / ping-pong mainloop stages; 0: as many as fit beside the epilogue (a `_plain` epilogue's smaller
    # shared memory gives its mainloop more than its `_noact` twin's: set it to compare the epilogues alone)
    stages: int = 0

    @property
    def name(self) -> str:
        """What the kernel is, e.g. `sm90_bf16_t128x256x64_c2x1_coop`."""
        parts = [f"sm{self.arch}", self.a if self.b == self.a else f"{self.a}x{self.b}"]
        if self.out != _default_out(self.a):
            parts.append(f"{self.out}out")
        if self.scale != "none":
            parts.append({"tensor_row_col": "scaled", "blockwise": "blockwise"}[self.scale])
        if self.accum != "f32":
            parts.append(self.accum)
        m, n, k = self.tile
        parts.append(f"t{m}x{n}x{k}")
        parts.append(f"c{self.cluster[0]}x{self.cluster[1]}")
        parts.append(self.schedule)
        if self.swap_ab:
            parts.append("swapab")
        if self.scheduler != "persistent":
            parts.append(self.scheduler)
        if not self.activation:
            parts.append("noact" if self.residual else "plain")
        if self.stores:
            parts.append(f"sd{self.stores}")
        if self.stages:
            parts.append(f"st{self.stages}")
        if self.ctas_per_sm != 1:
            parts.append(f"{self.ctas_per_sm}persm")
        return "_".join(parts)

    @property
    def serves_fused(self) -> bool:
        """Whether it can run a fused call (an activation or a residual): it has both nodes."""
        return self.activation and self.residual

    @property
    def m_extent(self) -> int:
        """The rows of M one cluster of tiles covers: `tile_m` times the cluster along M, since the grid rounds M's
        tiles up to whole clusters (a 1x2 swap-AB 128x96 tile runs four 96-row tiles at M = 193)."""
        return self.tile_m * self.cluster[1 if self.swap_ab else 0]

    @property
    def tile_m(self) -> int:
        """The rows of M one tile covers: the tile's M side, or its second extent when swap-AB."""
        return self.tile[1] if self.swap_ab else self.tile[0]

    @property
    def family_label(self) -> str:
        """The family as default_rules.json names it: 'sm90 bf16', 'sm90 e4m3 scaled promoted',
        'sm100 e4m3 blockwise' (the name's family parts; blockwise accumulation is inherent)."""
        parts = self.name.split("_t")[0].split("_")
        return " ".join(p for p in parts if not (self.scale == "blockwise" and p == self.accum))

    @property
    def family(self) -> Tuple[int, str, str, str, str, str]:
        """The problem class a kernel serves: (arch, a, b, out, scale, accum)."""
        return (self.arch, self.a, self.b, self.out, self.scale, self.accum)

    @property
    def unit_prefix(self) -> str:
        """Kernels of one (arch, dtypes, scale mode) share compile units: same headers, and the
        header parse (~30 s, ~3 GB) is most of a unit's cost."""
        ab = self.a if self.a == self.b else f"{self.a}x{self.b}"
        return f"gemm_{ab}_{self.scale}"


def _default_out(a: str) -> str:
    return "bf16" if a in ("e4m3", "e5m2") else a


def _sm90_16bit(dtype: str) -> List[Kernel]:
    k = dict(arch=90, a=dtype, b=dtype, out=dtype)
    return [
        # Large tiles for big M x N: 128x256 cooperative nearly matches cuBLAS at 8192^3.
        Kernel(tile=(128, 256, 64), cluster=(2, 1), schedule="coop", **k),
        # Ping-pong hides the epilogue behind the other warpgroup's mainloop: the middle.
        Kernel(tile=(128, 128, 64), cluster=(1, 2), schedule="pingpong", **k),
        Kernel(tile=(128, 128, 64), cluster=(1, 1), schedule="coop", **k),
        # 64-row tiles waste less of the tile when M <= 64 (decode). bf16 at 7 mainloop stages, not the carveout's 8
        # (SUCCEEDED_BY says why); f16 is unswept and keeps the carveout.
        Kernel(tile=(64, 128, 64), cluster=(1, 1), schedule="pingpong", stages=7 if dtype == "bf16" else 0, **k),
    ]


def _sm90_fp8() -> List[Kernel]:
    e4 = dict(arch=90, a="e4m3", b="e4m3", out="bf16")
    scaled = dict(scale="tensor_row_col", **e4)
    ks = [
        # Fast accumulation (explicit opt-in): the large-tile ladder of the 16-bit family.
        Kernel(tile=(128, 256, 128), cluster=(2, 1), schedule="coop", accum="fast", **scaled),
        Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="pingpong", accum="fast", **scaled),
        Kernel(tile=(64, 128, 128), cluster=(1, 1), schedule="pingpong", accum="fast", **scaled),
        # Accurate (promoted, the default): tiles whose per-warpgroup accumulator fits twice in
        # registers, so promotion does not spill (-Xptxas -v: 128x192 coop 0 bytes; 128x256 coop
        # spills 872 bytes). No derived rule names the 128x192 tile (its c2x1 twin is retired); it stays,
        # one of the first SM90 kernels, whose ids tests/test_sm100.py pins.
        Kernel(tile=(128, 192, 128), cluster=(1, 2), schedule="coop", accum="promoted", **scaled),
        Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="coop", accum="promoted", **scaled),
        Kernel(tile=(64, 128, 128), cluster=(1, 1), schedule="pingpong", accum="promoted", **scaled),
    ]
    for a, b in (("e4m3", "e5m2"), ("e5m2", "e4m3")):  # gradients: one operand in e5m2
        mixed = dict(arch=90, a=a, b=b, out="bf16", scale="tensor_row_col")
        ks += [
            Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="pingpong", accum="fast", **mixed),
            Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="coop", accum="promoted", **mixed),
        ]
    # DeepSeek blockwise: FP32 accumulation across 128-wide K blocks is inherent ("promoted").
    block = dict(scale="blockwise", accum="promoted", **e4)
    ks += [
        Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="coop", **block),
        Kernel(tile=(64, 128, 128), cluster=(1, 1), schedule="pingpong", **block),
    ]
    return ks


def _sm90_small_m_and_few_tiles() -> List[Kernel]:
    """Appended after the first SM90 kernels so their ids (positions) never move."""
    ks = []
    for dtype in ("bf16", "f16"):
        # Stream-K (deterministic): few output tiles on 132 SMs (small M x N, large K) split K so
        # every SM streams; CUTLASS's heuristic keeps data-parallel tiles where those fill the GPU.
        ks.append(Kernel(arch=90, a=dtype, b=dtype, out=dtype, tile=(128, 128, 64), cluster=(1, 1), schedule="coop",
                         scheduler="streamk"))
    scaled = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col")
    # Fast accumulation only: the promoted one spilled (RETIRED).
    ks.append(Kernel(tile=(128, 128, 128), cluster=(1, 1), schedule="coop", accum="fast", scheduler="streamk", **scaled))
    # Swap-AB for decode-sized M (D^T = B A^T; the tile is (N extent, M extent, K)): M rides the
    # MMA's narrow 32-wide side instead of idling most of a 64-row tile. bf16 and e4m3 only (lean build).
    bf16 = dict(arch=90, a="bf16", b="bf16", out="bf16")
    ks += [
        Kernel(tile=(64, 32, 128), cluster=(1, 1), schedule="pingpong", swap_ab=True, **bf16),
        Kernel(tile=(128, 32, 128), cluster=(1, 1), schedule="coop", swap_ab=True, scheduler="streamk", **bf16),
        Kernel(tile=(64, 32, 128), cluster=(1, 1), schedule="pingpong", accum="fast", swap_ab=True, **scaled),
        Kernel(tile=(64, 32, 128), cluster=(1, 1), schedule="pingpong", accum="promoted", swap_ab=True, **scaled),
        # FP8 decode shapes stream their weight on few tiles: split K across the idle SMs too.
        Kernel(tile=(128, 32, 128), cluster=(1, 1), schedule="coop", accum="fast", swap_ab=True, scheduler="streamk",
               **scaled),
        Kernel(tile=(128, 32, 128), cluster=(1, 1), schedule="coop", accum="promoted", swap_ab=True,
               scheduler="streamk", **scaled),
        # cuBLAS's accurate 8192^3 kernel is a 128x128 tile without a cluster (6 stages, as ours gets):
        # the promoted 128x128 tile without b multicast, for the mid-size shapes (2048^3, 4096^3).
        Kernel(tile=(128, 128, 128), cluster=(1, 1), schedule="coop", accum="promoted", **scaled),
    ]
    return ks


def _sm90_fp8_cublas_tiles() -> List[Kernel]:
    """FP8 tiles cuBLAS 13.0 picks on the H200 where the table was behind (torch.profiler kernel names,
    session 12), kept for what the session-12 sweeps measured against the rest of the table."""
    scaled = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col")
    return [
        # nvjet 128x128 6-stage c2x1 (b multicast across an M pair), fast: 4096^3 113.2 -> 98.2 us,
        # 512x8192x8192 58.9 -> 55.3 (row scales).
        Kernel(tile=(128, 128, 128), cluster=(2, 1), schedule="pingpong", accum="fast", **scaled),
        # nvjet 128x8 / 128x16 swap-AB (80 CTAs at N = 10240, 11-12 stages) for M = 1-16: one 128-row
        # weight tile per CTA and 16 columns of the MMA, not 32: 1x10240x8192 28.7 -> 25.0 us (fast),
        # 28.7 -> 25.8 (accurate, per-tensor).
        Kernel(tile=(128, 16, 128), cluster=(1, 1), schedule="pingpong", accum="fast", swap_ab=True, **scaled),
        # nvjet's accurate per-tensor 128x128 6-stage c2x1 coop: 2048x8192x8192 237.1 -> 211.2 us (per-tensor),
        # 512x8192x8192 61.9 -> 56.0 (row).
        Kernel(tile=(128, 128, 128), cluster=(2, 1), schedule="coop", accum="promoted", **scaled),
    ]


def _sm90_no_activation() -> List[Kernel]:
    """Kernels without the run-time activation in the epilogue (activation "none" only; the op and
    configs pass over them for calls with an activation): the tiles the plain rules pick at mid and
    large sizes. bf16 (H200, session 13, same run, 3 rounds): 128x256 c2x1 coop 512x10240x8192
    201.3 -> 176.1 us, 4096^3 230.5 -> 214.5; 256x128 c2x1 coop 4096^3 230.6 -> 216.7; 64x128 ping-pong
    1024^3 7.5 -> 6.9. FP8: the kernels the FP8 plain rules picked at M >= 256; one sweep each (session 13):
    promoted 128x128 c2x1 coop 2048x10240x8192 row 1.070x, fast 128x128 c1x2 ping-pong 2048^3 1.13x,
    fast 128x256 c2x1 coop 1.02-1.09x at 4096^3 and up; each wins some shapes of the sweeps.
    The three promoted 128x128 coop tiles are `_plain` since session 39 (SUCCEEDED_BY), with one bias node since
    session 40 (H200: 0.970-0.996x the two-node build's time, experiments/s39_one_bias); the three fast FP8 tiles
    since session 41 (one bias node; SUCCEEDED_BY). The bf16 coop / 64x256 twins stay `_noact`: with one bias node too,
    session 41's H100 K scans had them no faster (128x256 / 256x128 coop 0.986-1.020x, 64x256 ping-pong 0.982-0.994x but
    1.03-1.08x at 2048x8192x4096; experiments/s40_plain_twins/results_s41). The 64x128 ping-pong's `_plain` was 1.07x
    slower there, but only through the ninth mainloop stage its smaller epilogue frees: at its twin's 8 it is 0.975x at
    1024^3 and 0.997-1.007x elsewhere, and at 7 stages faster still (0.78-0.95x 8 stages' time at 1024^3, 200x8192x8192,
    160 / 48x10240x8192, 1024x1024x4096, 0.995-1.006x at six more rule shapes, 1.025x at 48x4096x4096; 6 stages no
    better than 7; session 42, H100, experiments/s41_stages and s42_stages), so `_plain_st7` succeeds `_noact`."""
    bf16 = dict(arch=90, a="bf16", b="bf16", out="bf16", activation=False)
    fp8 = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", activation=False)
    return [
        Kernel(tile=(64, 128, 64), cluster=(1, 1), schedule="pingpong", residual=False, stages=7, **bf16),
        Kernel(tile=(128, 256, 64), cluster=(2, 1), schedule="coop", **bf16),
        Kernel(tile=(256, 128, 64), cluster=(2, 1), schedule="coop", **bf16),
        Kernel(tile=(64, 256, 64), cluster=(2, 1), schedule="pingpong", **bf16),
        # `_plain` (no residual node either; SUCCEEDED_BY says what they replaced and why)
        Kernel(tile=(128, 256, 128), cluster=(2, 1), schedule="coop", accum="fast", residual=False, **fp8),
        Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="pingpong", accum="fast", residual=False, **fp8),
        Kernel(tile=(128, 128, 128), cluster=(2, 1), schedule="pingpong", accum="fast", residual=False, **fp8),
        Kernel(tile=(128, 128, 128), cluster=(1, 1), schedule="coop", accum="promoted", residual=False, **fp8),
        Kernel(tile=(128, 128, 128), cluster=(2, 1), schedule="coop", accum="promoted", residual=False, **fp8),
        Kernel(tile=(128, 128, 128), cluster=(1, 2), schedule="coop", accum="promoted", residual=False, **fp8),
    ]


def _sm90_blockwise_more() -> List[Kernel]:
    """Blockwise tiles beyond the first two (session 14, H200 sweeps: deepseek_v3 x6, square + llama3_70b x4).
    c2x1 (b multicast across an M pair) for large M: 4096x7168x16384 1024.7 -> 911.0 us, 4096x7168x2048
    150.3 -> 132.0 against the c1x2 tile. Stream-K c1x1 for the middle: 512x8192x28672 253.9 -> 215.8,
    512x10240x8192 97.0 -> 92.2. Stream-K did not rescue M <= 128 (64x2112x7168: 17 output tiles, K = 7168):
    27.2 us against the 64-row ping-pong's 19.9; split-K 2-8 23-30 us (bench/decomposition_probe.py)."""
    block = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="blockwise", accum="promoted")
    return [
        Kernel(tile=(128, 128, 128), cluster=(1, 1), schedule="coop", scheduler="streamk", **block),
        Kernel(tile=(128, 128, 128), cluster=(2, 1), schedule="coop", **block),
        # Swap-AB for M <= 128 (D^T = B A^T: b's 128x128 scale blocks along the tile's first extent, a's
        # 1x128 rows along the narrow one), so more CTAs stream the weight: DeepGEMM's 64x16 tiles fill
        # 132 SMs at 64x2112x7168 where a 64x128 tile makes 17 CTAs. Against the 64-row ping-pong
        # (session 14 sweeps): 64x2112x7168 19.8 -> 13.5 us, 64x4096x7168 20.2 -> 14.0, 1x8192x28672
        # 84.7 -> 60.3.
        Kernel(tile=(128, 16, 128), cluster=(1, 1), schedule="pingpong", swap_ab=True, **block),
        Kernel(tile=(128, 32, 128), cluster=(1, 1), schedule="pingpong", swap_ab=True, **block),
        Kernel(tile=(128, 32, 128), cluster=(1, 1), schedule="coop", swap_ab=True, **block),
    ]


def _sm90_cublas_wide_n() -> List[Kernel]:
    """cuBLAS 13.0's tiles at 128x10240x8192 on the H200 (session 16 ncu: nvjet tst_80x128 c2x1, bf16, and
    qqtst_160x64 c1x2, FP8 fast; 128 CTAs each, where our 128-wide tiles make 80): N = 80 / 160 need
    CuTe's extended wgmma shapes (setup.py). Also the 160-wide coop tiles for M = 512 (256 tiles, 1.94 waves)."""
    bf16 = dict(arch=90, a="bf16", b="bf16", out="bf16")
    scaled = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col")
    return [
        Kernel(tile=(128, 80, 64), cluster=(1, 2), schedule="coop", **bf16),
        Kernel(tile=(128, 160, 64), cluster=(2, 1), schedule="coop", **bf16),
        Kernel(tile=(64, 160, 128), cluster=(2, 1), schedule="pingpong", accum="fast", **scaled),
        Kernel(tile=(64, 160, 128), cluster=(2, 1), schedule="pingpong", accum="promoted", **scaled),
        Kernel(tile=(128, 160, 128), cluster=(2, 1), schedule="coop", accum="fast", **scaled),
        Kernel(tile=(128, 160, 128), cluster=(2, 1), schedule="coop", accum="promoted", **scaled),
    ]


def _sm90_cublas_112() -> List[Kernel]:
    """cuBLAS 13.0's 112-wide accurate FP8 tile at 128x57344x8192 (session 17 torch.profiler name: nvjet
    qqtst_112x128 c2x1 coopA): 512 tiles where 128-wide ones make 448 (3.4 waves). In our (M, N) order it is
    128x112 c1x2; 112 needs CuTe's extended wgmma shapes. Session 17 sweeps: 147.4 us against ~159 selected."""
    scaled = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col")
    return [Kernel(tile=(128, 112, 128), cluster=(1, 2), schedule="coop", accum="promoted", **scaled)]


def _sm90_bf16_decode() -> List[Kernel]:
    """cuBLAS 13.0's bf16 decode tile at 1x8192x8192 (session 18 ncu: nvjet tst_64x8_64x16_2x1, 35.0 us
    against our swapped 64x32's 38.3, both 128 CTAs): a 16-row M extent (less of each stage spent on
    padding rows of a). Its k = 64, activation-multicasting 2x1 variant is retired (RETIRED)."""
    bf16 = dict(arch=90, a="bf16", b="bf16", out="bf16", schedule="pingpong", swap_ab=True)
    return [
        Kernel(tile=(64, 16, 128), cluster=(1, 1), **bf16),
    ]


def _sm90_fp8_decode() -> List[Kernel]:
    """FP8 decode tiles with 256-deep k-tiles (session 24, H200, M = 1, N = 8192, K 1-32 K, graph replay:
    python -m bench.decode_scan, bench/results/experiments/s24_decode_scan.json): the weight streams at 4.0-4.3 TB/s through 128-byte rows per k-tile, 4.45 TB/s through
    the 256-byte rows of bf16's 64x16x128 tile; the 64x32 tile pays ~0.6 us more per call than a 16-wide one.
    A 256-deep k-tile gives FP8 the same 256-byte rows (the promoted mainloop promotes once per k-tile): 4.43-4.48
    TB/s; in the M <= 16 sweeps 1.00-1.08x the best 128-deep tile, and 22 of the 24 launches the rules changed won
    their A/B by 1-8% (bench/results/ab/s24_*.json; 1x57344x8192 fast 117.6 -> 109.3 us)."""
    scaled = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", schedule="pingpong", swap_ab=True)
    return [
        Kernel(tile=(64, 16, 256), cluster=(1, 1), accum="fast", **scaled),
        Kernel(tile=(64, 16, 256), cluster=(1, 1), accum="promoted", **scaled),
        Kernel(tile=(128, 16, 256), cluster=(1, 1), accum="fast", **scaled),
        Kernel(tile=(128, 16, 256), cluster=(1, 1), accum="promoted", **scaled),
    ]


def _sm90_decode_ws() -> List[Kernel]:
    """The decode tiles as CUTLASS's non-persistent warp-specialized kernel (session 25, H200, M = 1, graph
    replay over rotated weights: bench/probes/decode_latency.cu, bench/results/experiments/
    s25_decode_latency_probe.txt): a call costs ~0.5 us less than the persistent ping-pong kernel of the same
    tile and epilogue (FP8 64x16x256 fast 1x8192x8192 18.4-18.5 against 19.1-19.2 us; promoted 19.0-19.1
    against 19.4-19.5), and the bf16 64x16x128 tile takes 1x10240x8192 (160 tiles) in 42.9 us against the
    ping-pong's 49.0-49.9 and cuBLAS's 46.0. Their rules: bench/results/ab/s25_*.json; many-wave grids
    (N = 57344, 50000) keep the ping-pong."""
    ks = [replace(k, schedule="ws") for k in _sm90_fp8_decode() + _sm90_bf16_decode()]
    return [k for k in ks if k.name != _RETIRED_DECODE_WS]


_RETIRED_DECODE_WS = "sm90_e4m3_scaled_fast_t128x16x256_c1x1_ws_swapab"  # see RETIRED


def _sm90_m64_ws() -> List[Kernel]:
    """Swap-AB ws tiles for M = 33-64 (session 26): one 64-wide column tile covers the whole activation, so
    each weight row streams from DRAM once, and N = 8192 makes 128 CTAs, one wave. The M = 64 llama3_70b
    rows ran at 71-79% of the bandwidth bound in FP8 (the 64x32 swap-AB ping-pong: 256 tiles, each weight
    row read twice; or the 64x128 ping-pong) and bf16 64x10240x8192 at 0.93x cuBLAS (tables at 9a6ec18).
    Sweeps (bench/results/sweeps/*_m64_s26_*.json, 3 rounds) and same-run A/Bs (bench/results/ab/s26_*.json):
    FP8 accurate 64x8192x8192 22.3 -> 20.9 us, 64x8192x28672 62.9 -> 59.0, fast 64x8192x8192 21.3 -> 20.1; bf16
    (its 2x1 cluster multicasts the activation tile to a CTA pair: 0.6-2.3% faster than 1x1 where it wins)
    36.2 -> 35.7 and 64x57344x8192 237.3 -> 228.3. Both lose at N = 10240 (160 tiles: 1.2 waves) and M <= 32."""
    ws = dict(arch=90, schedule="ws", swap_ab=True)
    scaled = dict(a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", tile=(64, 64, 256), cluster=(1, 1), **ws)
    return [
        Kernel(accum="fast", **scaled),
        Kernel(accum="promoted", **scaled),
        Kernel(a="bf16", b="bf16", out="bf16", tile=(64, 64, 128), cluster=(2, 1), **ws),
    ]


def _sm90_n80_ws() -> List[Kernel]:
    """Non-swapped 64x80 ws tiles for N = 10240 at M <= 64 (session 27): 10240 / 80 = 128 CTAs, one wave on
    132 SMs, where the 64-wide tiles make 160 (1.2 waves) and the 128-wide ones 80. One 64x80 wgmma per k-step
    (CuTe's extended wgmma shapes, on since session 17; session 16's 128x80 coop tile lost with five narrow
    ones). Sweeps (bench/results/sweeps/*_n80_s27_*.json, *_m8m48_s27_*.json, 2 rounds) and same-run A/Bs
    (bench/results/ab/s27_*.json): M 40-64 at N = 10240 in every FP8 family and bf16 (64x10240x8192 FP8 row accurate
    26.5 -> 25.5 us, fast 25.9 -> 25.0, bf16 45.1 -> 44.0). At M <= 32 they lose to the swapped 16-wide tiles (M = 1:
    30.5 against 24.5 us): the rows a 64-row activation tile lacks are TMA zero fill, which the sweeps show costing
    time in every kernel whose activation tile is taller than M. At the other llama3_70b (N, K) 3-6% slower than the
    64x64 swapped tile."""
    ws = dict(arch=90, schedule="ws", cluster=(1, 1))
    scaled = dict(a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", tile=(64, 80, 256), **ws)
    return [
        Kernel(accum="fast", **scaled),
        Kernel(accum="promoted", **scaled),
        Kernel(a="bf16", b="bf16", out="bf16", tile=(64, 80, 128), **ws),
    ]


def _sm90_decode_ws_2persm() -> List[Kernel]:
    """The FP8 64x16 / 64x32 swap-AB ws decode tiles with two CTAs resident per SM (session 28): their stages cut
    to fit half an SM's shared memory (64x16x256: 5 stages, 101 KB, against 11 at one CTA per SM; 64x32x256: 4),
    so N = 10240's 160 tiles all stream at once instead of in 1.2 waves (a second wave of 28 CTAs streaming
    alone), with 64 weight rows per CTA where the 128x16 tile's 80 CTAs leave 52 SMs idle. Probe
    (bench/probes/ws_occupancy.cu, bench/results/experiments/s28_ws_occupancy_*.txt, graph replay, row scales +
    bias, promoted): 16x10240x8192 24.7 -> 23.1-23.4 us against the 128x16 tile, 32x10240x8192 23.7 against
    26.9 for the 64x80 tile; at N = 8192 (128 tiles, one wave either way) 2-4% slower than the 11-stage
    tile. Sweep + same-run A/Bs (bench/results/sweeps/*_2persm_s28_1.json, bench/results/ab/s28_*.json): N = 10240 at
    M 1-32 in every FP8 family (fast M 1-8 once launched with PDL, bench/results/ab/s28p_*.json), e.g. 24x10240x8192
    row fast 25.9 -> 23.8 us, 32x10240x8192 row accurate + GELU + residual 28.6 -> 24.4; with PDL (unlike the 80-CTA
    128x16 grid) 16x10240x8192 row accurate 23.8 -> 22.6. N = 8192 keeps the 11-stage tile with PDL (M = 16: 18.7
    against 19.9)."""
    ws = dict(arch=90, schedule="ws", swap_ab=True, ctas_per_sm=2, cluster=(1, 1))
    scaled = dict(a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", **ws)
    return [
        Kernel(tile=(64, 16, 256), accum="fast", **scaled),
        Kernel(tile=(64, 16, 256), accum="promoted", **scaled),
        Kernel(tile=(64, 32, 256), accum="fast", **scaled),
        Kernel(tile=(64, 32, 256), accum="promoted", **scaled),
    ]


def _sm90_m160_ws() -> List[Kernel]:
    """Swap-AB ws tiles for M = 129-160 (session 31): the M = 33-64 tiles (64x64x256) with a 160-wide M extent
    on the MMA's N side (one m64n160 wgmma per k-step), so the whole activation is one column of tiles and
    N = 8192 is 128 CTAs, one wave, each weight row streamed once; c2x1 multicasts the activation tile to a CTA
    pair. Past M = 128 the rules ran two or three rows of 64- / 128-row tiles (the 64x128 ping-pong: 192 tiles,
    1.5 waves). Sweeps (bench/results/sweeps/*_m160_s31_1.json, per-tensor accurate, the best kernel before against
    this one): 160x8192x28672 120.0 -> 85.7 us, 160x8192x8192 36.6 -> 27.0, 160x57344x8192 247.6 -> 195.5; it loses
    at N = 10240 (1.2 waves), N <= 4096 and past its extent (M = 176: 1.8-2.7x). A/Bs: bench/results/ab/s31_*.json. A 128-wide twin (64x128x256, c1x1 and
    c2x1) lost to the 64x128 ping-pong at M = 80-128 (1.03-1.4x its time) and is not kept
    (bench/results/experiments/s31_m128_ws/)."""
    ws = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", schedule="ws", swap_ab=True,
              tile=(64, 160, 128), cluster=(2, 1))
    return [Kernel(accum="promoted", **ws), Kernel(accum="fast", **ws)]


def _sm90_coop_swapab() -> List[Kernel]:
    """Swap-AB cooperative tiles for M = 129-224 (session 33): 128 weight rows (one 64-row half per consumer
    warpgroup) by 80 / 96 / 112 tokens, two CTAs of a 1x2 cluster covering up to 2x the tokens with one multicast
    weight tile, or 192 tokens with 2x1. cuBLAS runs such tiles for per-tensor FP8 at M = 128-256 (nvjet qqtst
    128x96 1x2 coopA at 176x8192x28672, 128x88 1x2 fast at 176x8192x8192; experiments/s32_cublas_kernels). Sweeps
    sweeps/*_cs_s33_1.json (M = 144-224 x 13 (N, K)): fastest at 42-45 of 65 shapes per FP8 family, 0.90-0.95x the
    best older kernel's time at M = 144-192; 128x64 c1x2 (M = 97-128) lost by up to 1.25x, 128x88 tied 128x96.
    128x160 c2x1 (session 34): cuBLAS's per-tensor tile at 160x14336x4096 and 160x28672x8192 (nvjet qqtst 128x160 4x1
    coopA; experiments/s34_wscoop_subset), one column of token tiles at M = 129-160 (14336 weight rows: 112 CTAs); its
    subset round (experiments/s34_onewave_subset) put it at 0.90-1.00x the best older time at M = 160 x 10240x8192,
    28672x8192 and 14336x4096 (per-tensor accurate 0.90-0.94x), while 256x64 c2x1 / c4x1 (cuBLAS's 256x64 4x1 at
    N = 10240) lost everywhere. Full-build sweeps sweeps/*_c160_s34_1.json (M = 136-160 x 13 (N, K)): fastest at 18-20
    of 52 shapes per FP8 family, best with / without 0.97-0.99x per M."""
    sw = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="tensor_row_col", schedule="coop", swap_ab=True)
    tiles = [((128, 80, 128), (1, 2)), ((128, 96, 128), (1, 2)), ((128, 112, 128), (1, 2)), ((128, 192, 128), (2, 1)),
             ((128, 160, 128), (2, 1))]
    return [Kernel(tile=t, cluster=c, accum=a, **sw) for t, c in tiles for a in ("promoted", "fast")]


def _sm90_blockwise_plain() -> List[Kernel]:
    """The blockwise 128x128 c2x1 / c1x2 coop tiles with neither the activation nor the residual node (`_plain`), for
    plain calls. Without the activation node alone (`_noact`) they took 0.974-0.979x the act kernel's time in
    session 37's K scans on the H200 (bench/results/experiments/s36_store_stages/results_s37/twins.txt, two rounds at
    13 shapes of M = 2048 / 4096 x N = 7168 / 24576, K = 512-16384), 0.90-0.92x at K = 512, where our blockwise
    losses to `_scaled_mm` are; dropping the residual node too takes the per-tile epilogue from 879 to 585 SASS
    instructions (session 38, experiments/s38_plain)."""
    block = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="blockwise", accum="promoted", schedule="coop")
    return [Kernel(tile=(128, 128, 128), cluster=c, activation=False, residual=False, **block) for c in ((2, 1), (1, 2))]


def _sm90_blockwise_swap64() -> List[Kernel]:
    """The swapped blockwise tile of 64 weight rows by 32 tokens for M <= 128 (session 48): twice the CTAs of the
    128-row swapped tiles, each streaming half the weight bytes per k-block. b's 128-row scale blocks are read as
    64-row halves in place (fp8.cuh HalfBlocksLayoutSFA). 128 CTAs at 64x4096, 132 at 128x2112. On the H100 it took
    1.12x / 1.14x the 128-row tiles' speed at 64 / 128 x 2112 x 7168 (bench/results/experiments/s48_swap64); its
    64x16 twin (132 CTAs at 64x2112) was slower than it at all 12 deepseek_v3 shapes of M <= 128 and is RETIRED
    (session 49, RETIRED says why)."""
    block = dict(arch=90, a="e4m3", b="e4m3", out="bf16", scale="blockwise", accum="promoted", schedule="pingpong")
    return [Kernel(tile=(64, 32, 128), cluster=(1, 1), swap_ab=True, **block)]


def _sm100_16bit(dtype: str) -> List[Kernel]:
    # NOTES: the tile is the UMMA tile (a 2-SM tile is shared by the CTA pair of a 2x1 cluster).
    # Choices follow CUTLASS's SM100 examples/profiler and vLLM's SM100 configs until measured:
    # 256x128 2-SM for large M x N (vLLM's default FP8 tile; each CTA loads half of B), 128x256
    # 1-SM as the wide-N alternative (256 of 512 TMEM columns, double-buffered), 128x128 1-SM for
    # the middle, and the 64-row 1-SM UMMA for decode-sized M. (The bf16 128x256 build spills a
    # little: 64-byte stack at 255 registers; no default rule selects it.)
    k = dict(arch=100, a=dtype, b=dtype, out=dtype)
    return [
        Kernel(tile=(256, 128, 64), cluster=(2, 1), schedule="2sm", **k),
        Kernel(tile=(128, 256, 64), cluster=(1, 1), schedule="1sm", **k),
        Kernel(tile=(128, 128, 64), cluster=(1, 1), schedule="1sm", **k),
        Kernel(tile=(64, 128, 64), cluster=(1, 1), schedule="1sm", **k),
    ]


def _sm100_fp8() -> List[Kernel]:
    # NOTES: on SM100 CUTLASS 4.2 has one FP8 mainloop: tcgen05 accumulates into FP32 tensor
    # memory, with no fast-accumulation variant and no periodic promotion (Hopper's reduced-
    # precision FP8 accumulator is what promotion works around). So the FP8 tensor_row_col
    # kernels carry accum "f32" and serve both `accumulate="accurate"` and `"fast"`
    # (`resolve_accum`). Blockwise keeps "promoted" on both archs: its scales are applied per
    # 128-wide K block into FP32 registers by construction. Unverified on SM100 hardware here.
    e4 = dict(arch=100, a="e4m3", b="e4m3", out="bf16")
    scaled = dict(scale="tensor_row_col", **e4)
    ks = [
        Kernel(tile=(256, 128, 128), cluster=(2, 1), schedule="2sm", **scaled),
        Kernel(tile=(128, 128, 128), cluster=(1, 1), schedule="1sm", **scaled),
        Kernel(tile=(64, 128, 128), cluster=(1, 1), schedule="1sm", **scaled),
    ]
    for a, b in (("e4m3", "e5m2"), ("e5m2", "e4m3")):  # gradients: one operand in e5m2
        ks.append(Kernel(arch=100, a=a, b=b, out="bf16", scale="tensor_row_col", tile=(128, 128, 128), cluster=(1, 1),
                         schedule="1sm"))
    block = dict(scale="blockwise", accum="promoted", **e4)
    ks += [
        Kernel(tile=(256, 128, 128), cluster=(2, 1), schedule="2sm", **block),
        Kernel(tile=(64, 128, 128), cluster=(1, 1), schedule="1sm", **block),
    ]
    return ks


# SM90 first, then SM100: a kernel's index is its id, so SM90 ids never move when SM100 kernels
# are added.
KERNELS: Tuple[Kernel, ...] = tuple(
    _sm90_16bit("bf16")
    + _sm90_16bit("f16")
    + _sm90_fp8()
    + [
        # fp32 output: a documented subset (one general-purpose tile per input dtype).
        Kernel(arch=90, a="bf16", b="bf16", out="f32", tile=(128, 128, 64), cluster=(1, 1), schedule="coop"),
        Kernel(arch=90, a="f16", b="f16", out="f32", tile=(128, 128, 64), cluster=(1, 1), schedule="coop"),
    ]
    + _sm90_small_m_and_few_tiles()
    + [
        # bf16 tiles for the compute-bound middle (session 11 sweeps on the H200, one per epilogue,
        # against the rest of the table): 64x256 ping-pong (b multicast across an M pair; one
        # tile's epilogue under the other warpgroup's mainloop) took 4096^3 from 236.7 to 202.2 us
        # (its `_noact` build is kept; this one is RETIRED); 256x128 cooperative (each warpgroup 128x128, b multicast across an M pair) 512x8192x8192
        # from 108.0 to 104.0 us plain, 113.5 to 108.3 with bias+GELU+residual. A 128x256 c4x1
        # cooperative tile never won (179.5 us at 512x8192x8192) and was not kept.
        Kernel(arch=90, a="bf16", b="bf16", out="bf16", tile=(256, 128, 64), cluster=(2, 1), schedule="coop"),
    ]
    + _sm90_fp8_cublas_tiles()
    + _sm90_no_activation()
    + _sm90_blockwise_more()
    + _sm90_cublas_wide_n()
    + _sm90_cublas_112()
    + _sm90_bf16_decode()
    + _sm90_fp8_decode()
    + _sm90_decode_ws()
    + _sm90_m64_ws()
    + _sm90_n80_ws()
    + _sm90_decode_ws_2persm()
    + _sm90_m160_ws()
    + _sm90_coop_swapab()
    + _sm90_blockwise_plain()
    + _sm90_blockwise_swap64()
    + _sm100_16bit("bf16")
    + _sm100_16bit("f16")
    + _sm100_fp8()
    + [
        # fp32 output on SM100: the same documented subset.
        Kernel(arch=100, a="bf16", b="bf16", out="f32", tile=(128, 128, 64), cluster=(1, 1), schedule="1sm"),
        Kernel(arch=100, a="f16", b="f16", out="f32", tile=(128, 128, 64), cluster=(1, 1), schedule="1sm"),
    ]
)

KERNEL_IDS: Dict[str, int] = {k.name: i for i, k in enumerate(KERNELS)}

_WAVE_FIT = ("a tile whose count at N = 10240 fills 132 SMs in whole waves (128 tiles at M <= 128, 256 at M = 512); "
             "session-16 N = 10240 sweeps (bench/results/sweeps/*_wf.json): {} the best kernel's time at M 1-8192 "
             "({}), built without CuTe's extended wgmma shapes (CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED): five narrow "
             "wgmmas (64x16 / 64x32) per k-step where one 64x80 / 64x160 does (SASS; notes/gpu_runbook.md, session 16)")

_SPLIT_MMA = ("the large bf16 tiles with two 64x128 wgmmas per warpgroup, as cuBLAS's 2048^3 kernel issues them, where "
              "CUTLASS's builder issues one 64x256: twin time / split time 0.90-1.38, median 1.00, over 39 (kernel, shape) "
              "pairs of the session-19 sweeps (bench/results/experiments/s19_sweep_bf16*_split.json, 11 plain and 6 fused "
              "shapes, M 512-8192; the extremes on single-round shapes); same registers, no spills")
_OVERLAP = ("promoted FP8 with each k-tile's promotion run under the next k-tile's MMAs (two partials in alternation, "
            "4-k-tile trips with one drain each): twin time / overlapped time 0.88-1.08, median 0.99, for the coop tiles "
            "and 0.94-1.05, median 1.03, for the 64x128 ping-pong (0.98 at 128x8192x8192, where the rules pick it) in the "
            "session-19 sweeps (bench/results/experiments/s19_sweep_row_acc*_ovl.json, row accurate plain and fused, "
            "M 128-8192): the promotion bubble is not what keeps the coop tile's tensor pipe at 71%")
_FIXED_ACT = ("the activation compiled in instead of the run-time switch (bias + residual, two rounds each, "
              "bench/results/experiments/s20_act_fixed_vs_runtime.json): fixed / switch time 0.95-0.98 on the 128x256 c2x1 "
              "coop tile (gelu at 2048^3, 4096^3, 2048x8192x8192), 0.99-1.04 on the 128x128 c1x2 ping-pong (gelu, silu at "
              "4096^3, 512 and 2048x8192x8192): a few percent at most, for a kernel per activation")

_UNUSED_S25 = ("named by no rule derived from the sweeps and A/Bs committed up to session 25 (tools/derive_rules.py over "
               "bench/results/sweeps and bench/results/ab); retired to keep the build lean (CI time grows ~1 min per kernel)")

_M64_CLUSTER = ("the other cluster of the session-26 64x64 ws tile (sweeps/*_m64_s26_*.json, M = 32/64 x the llama3_70b "
                "(N, K), 3 rounds): {}")


_M128_WS = ("session 29's 128-row ws tile for M = 65-128 (one wave, each weight row streamed once; "
            "bench/results/sweeps/*_m128_s29_1.json, one round at M = 80/96/128 x the llama3_70b (N, K), seven "
            "families; per-shape table in bench/results/experiments/s29_m128_ws_sweeps/best.txt): {}")

# Kernels once compiled and measured (their names remain in committed sweeps), now left out, with why.
# tools/derive_rules.py skips their timings; any other unknown name in a sweep is an error.
RETIRED: Dict[str, str] = {
    "sm90_e4m3_scaled_promoted_t128x192x128_c2x1_coop":
        _UNUSED_S25 + "; the fastest in single sweep rounds at 512x10240x8192 only, never after rounds merge by median",
    "sm90_e4m3_scaled_promoted_t128x16x128_c1x1_pingpong_swapab":
        _UNUSED_S25 + ": the 256-deep decode tiles (session 24) and the ws schedule (session 25) took its shapes",
    "sm90_bf16_t64x16x64_c2x1_pingpong_swapab":
        _UNUSED_S25 + ": the ws 64x16x128 tile (session 25) took its shapes (1-16x10240x8192: 48.6 -> 43.0 us, "
        "bench/results/ab/s25_bf16_none.json)",
    "sm90_bf16_t64x256x64_c2x1_pingpong": _UNUSED_S25 + ": its `_noact` build serves the plain rules that name the tile",
    "sm90_bf16_t64x112x64_c1x4_pingpong":
        "cuBLAS's 64x10240x8192 tile (nvjet tst_112x64 c4x1) with 64x112 wgmmas: never the fastest in the session-17 sweeps (M 64-512 x the llama3_70b (N, K), five plain families, two rounds: sweeps/*_n112*.json)",
    "sm90_e4m3_scaled_promoted_t64x112x128_c1x4_pingpong":
        "cuBLAS's per-tensor 64x10240x8192 tile (nvjet qqtst_112x64 c4x1): never the fastest in the session-17 sweeps (M 64-512 x the llama3_70b (N, K), five plain families, two rounds: sweeps/*_n112*.json)",
    "sm90_e4m3_scaled_fast_t64x128x128_c2x1_pingpong":
        "cuBLAS's 128x8192xK tile (nvjet qqtst_128x64 c1x2, b multicast across the M pair): never the fastest in the session-17 sweeps (M 64-512 x the llama3_70b (N, K), five plain families, two rounds: sweeps/*_n112*.json)",
    "sm90_e4m3_scaled_promoted_t64x128x128_c2x1_pingpong":
        "cuBLAS's 128x8192xK tile (nvjet qqtst_128x64 c1x2, b multicast across the M pair): never the fastest in the session-17 sweeps (M 64-512 x the llama3_70b (N, K), five plain families, two rounds: sweeps/*_n112*.json)",
    "sm90_e4m3_scaled_fast_t128x112x128_c1x2_coop":
        "the fast twin of the kept promoted 128x112 c1x2 tile: never the fastest in the session-17 sweeps (M 64-512 x the llama3_70b (N, K), five plain families, two rounds: sweeps/*_n112*.json)",
    "sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_streamk":
        "ptxas: 44 bytes of spill stores at its 168-register cap (the accurate mode must not spill); in the "
        "session-8 sweeps it was never more than 2% faster than the 128x128 c1x2 data-parallel kernel",
    "sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop_streamk":
        "never the fastest at any shape of the four session-14 blockwise sweeps (the c1x1 stream-K tile was "
        "as fast or faster wherever stream-K won)",
    "sm90_e4m3_scaled_promoted_t128x112x128_c1x1_coop_noact":
        "cuBLAS's 112-wide FP8 tile as a CUTLASS cooperative kernel: 1.44-2.58x the best kernel's time at every "
        "shape of the session-14 row and per-tensor sweeps (512x10240x8192 per-tensor: 1.76x)",
    "sm90_e4m3_scaled_fast_t128x112x128_c1x1_coop_noact":
        "cuBLAS's 112-wide FP8 tile as a CUTLASS cooperative kernel: 1.47-2.85x the best kernel's time at every "
        "shape of the session-14 row and per-tensor sweeps (512x10240x8192 per-tensor: 1.79x)",
    "sm90_e4m3_blockwise_promoted_t128x16x128_c1x1_coop_swapab_streamk":
        "never 2% faster than the swapped 128x16 ping-pong at any shape of four session-15 blockwise sweeps; "
        "forced stream-K made 64x2112x7168 slower (15.5 us against 13.5 data-parallel): the small-M time is "
        "per-SM operand traffic plus a fixed ~4 us per call, not SM count",
    "sm90_e4m3_blockwise_promoted_t128x32x128_c1x1_coop_swapab_streamk":
        "never 2% faster than the kept swapped tiles at any shape of four session-15 blockwise sweeps "
        "(64x2112x7168: 16.1-17.1 us under every decomposition against the 128x16 ping-pong's 13.6)",
    "sm90_bf16_t128x256x64_c2x1_coop_mma64x128_noact": _SPLIT_MMA,
    "sm90_bf16_t128x256x64_c2x1_coop_mma64x128": _SPLIT_MMA,
    "sm90_bf16_t64x256x64_c2x1_pingpong_mma64x128_noact": _SPLIT_MMA,
    "sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_overlap": _OVERLAP,
    "sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop_overlap_noact": _OVERLAP,
    "sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop_overlap_noact": _OVERLAP,
    "sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong_overlap": _OVERLAP,
    "sm90_bf16_t128x256x64_c2x1_coop_fixgelu": _FIXED_ACT,
    "sm90_bf16_t128x128x64_c1x2_pingpong_fixgelu": _FIXED_ACT,
    "sm90_bf16_t128x128x64_c1x2_pingpong_fixsilu": _FIXED_ACT,
    "sm90_e4m3_scaled_fast_t128x80x128_c1x2_coop": _WAVE_FIT.format("1.26-2.33x", "row, 128x10240x8192: 1.26x"),
    "sm90_e4m3_scaled_promoted_t128x80x128_c1x2_coop": _WAVE_FIT.format("1.22-2.24x", "row, 128x10240x8192: 1.30x"),
    "sm90_e4m3_scaled_fast_t64x64x256_c2x1_ws_swapab": _M64_CLUSTER.format(
        "at most 0.1% faster than 1x1 (64x8192x28672), 0.8-3.8% slower at the other M = 64 shapes"),
    "sm90_e4m3_scaled_promoted_t64x64x256_c2x1_ws_swapab": _M64_CLUSTER.format(
        "at most 0.4% faster than 1x1 (fused 64x8192x8192), up to 7.5% slower (fused 64x8192x28672)"),
    "sm90_bf16_t128x256x64_c2x1_coop_streamk":
        "the 128x256 c2x1 coop tile under stream-K, for grids a little over one wave (session 27, "
        "sweeps/*_sk256_s27_1.json, bf16 plain and fused): slower than the selected kernel at every shape swept "
        "(512x10240x8192 156.0 against the 128x160 c2x1 coop's 136.9 us, 128x10240x8192 75.8 against 50.6, 2048^3 "
        "28.8 against 26.4; A/B at 2048^3 1.07x the data-parallel tile's time: ab/s27d_bf16_none.json)",
    "sm90_bf16_t64x64x128_c1x1_ws_swapab": _M64_CLUSTER.format(
        "0.6-2.3% slower than the 2x1 tile wherever the tile wins (e.g. 64x8192x28672 112.4 against 110.9 us)"),
    "sm90_e4m3_scaled_fast_t128x80x256_c1x1_ws": _M128_WS.format(
        "0.99-1.01x the selected kernel at 128x10240x8192, 0.70-0.89x everywhere else (M = 80: 0.70-0.80x)"),
    "sm90_e4m3_scaled_promoted_t128x80x256_c1x1_ws": _M128_WS.format(
        "0.96-1.01x the selected kernel at 128x10240x8192, 0.71-0.89x everywhere else (M = 80: 0.71-0.82x)"),
    "sm90_e4m3_scaled_fast_t128x64x256_c1x1_ws": _M128_WS.format(
        "0.60-0.93x the selected kernel (128x8192x8192: 24.4-24.5 against the 64x128 ping-pong's 22.5-22.8 us; not "
        "profiled)"),
    "sm90_e4m3_scaled_promoted_t128x64x256_c1x1_ws": _M128_WS.format(
        "0.60-0.96x the selected kernel (128x8192x8192: 25.3 against 23.5-24.1 us)"),
    "sm90_bf16_t128x80x128_c1x1_ws": _M128_WS.format(
        "0.99-1.00x the selected kernel at 128x10240x8192, 0.70-0.91x everywhere else"),
    "sm90_bf16_t128x64x128_c1x1_ws": _M128_WS.format("0.57-0.91x the selected kernel at every swept shape"),
    **{f"sm90_e4m3_scaled_{a}_t64x192x128_c2x1_ws_swapab":
       "session 32's one-column swap-AB ws tile for M = 161-192 (one m64n192 wgmma per k-step; sweeps/*_m192_s32_1.json): "
       "named by no rule since session 33's swap-AB cooperative tiles (128 weight rows x 80-192 tokens, "
       "sweeps/*_cs_s33_1.json) took its shapes; retired in session 51 (the derived rules are the same without it)"
       for a in ("promoted", "fast")},
    _RETIRED_DECODE_WS:
        "named by no rule since session 28, whose two-per-SM 64x16x256 tile with PDL took its last one (fast, "
        "N = 10240, M 1-8: bench/results/ab/s28p_*.json); retired in session 29 (the derived rules are the same "
        "without it; its promoted twin stays)",
}


_PLAIN_TWINS_S39 = ("its `_plain` twin (no residual node: D = X + bias_f32 with C void, ~30% less per-tile epilogue SASS) "
                    "took 0.967-0.998x its time, geomean per twin and scan (tensor accurate plain and row accurate + "
                    "bias, M = 2048 / 4096 x N = 8192, K = 1024-16384, plus 2048^3 / 4096^3 for tensor; 2 rounds each; "
                    "0.93-0.98x at K = 1024); measured on an H100 (no H200 lent in session 39): "
                    "bench/results/experiments/s38_plain/results_s39")

# A kernel replaced by a leaner build of the same tile that serves every call the rules gave it (old name -> new name).
# Sweeps and A/Bs that timed the old build count its time for the new one where they did not time the new one: the
# twin scans named in RETIRED measured the new one no slower, so the rules derived from them stand (and reproduce).
SUCCEEDED_BY: Dict[str, str] = {
    f"sm90_e4m3_scaled_promoted_t128x128x128_{c}_coop_noact": f"sm90_e4m3_scaled_promoted_t128x128x128_{c}_coop_plain"
    for c in ("c1x1", "c2x1", "c1x2")
}
RETIRED.update({old: f"succeeded by '{new}' in session 39: " + _PLAIN_TWINS_S39 for old, new in SUCCEEDED_BY.items()})

_PLAIN_TWINS_S41 = ("its `_plain` twin with one bias node took {} its time (geomeans of 4 K scans: tensor fast plain and row "
                    "fast + bias, M = 2048 / 4096 x N = 8192, K = 1024-8192, plus 1024^3 / 2048^3 / 4096^3; 2 rounds "
                    "each; 0.89-0.97x at 1024^3); measured on an H100 (session 41 asked for an H200 and got an H100): "
                    "bench/results/experiments/s40_plain_twins/results_s41")
_FAST_TWINS_S41 = {"t128x256x128_c2x1_coop": "0.958-0.984x", "t128x128x128_c1x2_pingpong": "0.971-1.001x",
                   "t128x128x128_c2x1_pingpong": "0.977-0.991x"}
for _tile, _ratio in _FAST_TWINS_S41.items():
    _old, _new = f"sm90_e4m3_scaled_fast_{_tile}_noact", f"sm90_e4m3_scaled_fast_{_tile}_plain"
    SUCCEEDED_BY[_old] = _new
    RETIRED[_old] = f"succeeded by '{_new}' in session 41: " + _PLAIN_TWINS_S41.format(_ratio)


_BF16_PINGPONG_OLD, _BF16_PINGPONG_NEW = "sm90_bf16_t64x128x64_c1x1_pingpong_noact", "sm90_bf16_t64x128x64_c1x1_pingpong_plain_st7"
SUCCEEDED_BY[_BF16_PINGPONG_OLD] = _BF16_PINGPONG_NEW
RETIRED[_BF16_PINGPONG_OLD] = (
    f"succeeded by '{_BF16_PINGPONG_NEW}' in session 42: its `_plain` twin (one bias node) at the carveout's 9 mainloop "
    "stages was 1.03-1.09x slower, at the same 8 stages 0.975x its time at 1024^3 and 0.997-1.007x at four more shapes, "
    "and at 7 stages 0.78-0.95x the 8-stage build's time at 1024^3 (PDL), 200x8192x8192, 160 / 48x10240x8192, "
    "1024x1024x4096, 0.995-1.006x at six more shapes of the rules naming the tile and 1.025x at 48x4096x4096 (bench.ab, "
    "5-10 rounds, the order reversed every other round); measured on an H100 (session 42 asked for an H200 and got an "
    "H100): bench/results/experiments/s41_stages/results_s42, bench/results/experiments/s42_stages/results_s42")

_BF16_PINGPONG_ACT = "sm90_bf16_t64x128x64_c1x1_pingpong"
SUCCEEDED_BY[_BF16_PINGPONG_ACT] = _BF16_PINGPONG_ACT + "_st7"
RETIRED[_BF16_PINGPONG_ACT] = (
    f"succeeded by '{_BF16_PINGPONG_ACT}_st7' in session 42: the same kernel at 7 mainloop stages instead of the "
    "carveout's 8 took 0.84x / 0.89x / 0.86x its time at 200x8192x8192 / 160x10240x8192 (bias + GELU + residual) / "
    "200x10240x8192 (plain), 0.98x at 1024^3 fused (PDL), 1.00-1.01x at 48x8192x8192, 100x8192x28672, 128x57344x8192 "
    "and 1.04x at 100x4096x4096 (bench.ab, 5 rounds, the order reversed every other round); its `_plain` twin gained "
    "the same way (up to 0.78x); measured on an H100 (session 42 asked for an H200 and got an H100): "
    "bench/results/experiments/s42_stages/results_s42/b")

RETIRED["sm90_e4m3_blockwise_promoted_t64x16x128_c1x1_pingpong_swapab"] = (
    "the 64x16 twin of the swapped 64-row blockwise tile (session 48): in no rule; on an H100 slower than the 64x32 "
    "tile at all 12 deepseek_v3 shapes of M <= 128 (64x2112x7168: 11.2 against 10.6 us with PDL, 1.3-1.8x elsewhere; "
    "bench.ab, 5 rounds: bench/results/experiments/s48_swap64/results_h100); retired in session 49 without an H200 sweep "
    "(none was lent)")


def current_name(name: str) -> str:
    """The table's name for a measured kernel: its successor's when it was succeeded (SUCCEEDED_BY)."""
    return SUCCEEDED_BY.get(name, name)


def m_rows(name: str) -> Tuple[int, int]:
    """The rows of M one tile of the named kernel covers and one cluster row of its tiles covers (the M ladders
    compare tiles by the first and stop a winner at the second)."""
    k = KERNELS[KERNEL_IDS[name]]
    return k.tile_m, k.m_extent


def unknown_kernel(name: str) -> str:
    """How an error names a kernel the table lacks: quoted, plus why when it was retired."""
    return f"'{name}' (retired: {RETIRED[name]})" if name in RETIRED else f"'{name}'"


def resolve_accum(arch: int, a: str, b: str, out: str, scale: str, accum: str) -> str:
    """The accumulation mode of the kernels that serve a request on `arch`.

    The request's mode ("f32" for 16-bit, "promoted" for accurate FP8, "fast") when the table has
    kernels of that family; else "f32" when the arch's family accumulates FP8 in plain FP32 (SM100:
    one kernel serves both FP8 modes). C++ mirrors this in registry.cpp (resolve_accum).
    """
    have = {k.accum for k in KERNELS if (k.arch, k.a, k.b, k.out, k.scale) == (arch, a, b, out, scale)}
    if accum in have or "f32" not in have:
        return accum
    return "f32"


def serves_accum(kernel_accum: str, requested: str) -> bool:
    """Whether a kernel of accumulation `kernel_accum` serves a request for `requested`: the same
    mode, or a kernel accumulating in plain FP32 (it satisfies the accurate and the fast mode)."""
    return kernel_accum == requested or kernel_accum == "f32"


def compile_units() -> List[Tuple[str, int, List[int]]]:
    """(unit file stem, arch, kernel ids): kernels of one family, UNIT_SIZE at a time."""
    groups: Dict[Tuple[str, int], List[int]] = {}
    for i, k in enumerate(KERNELS):
        groups.setdefault((k.unit_prefix, k.arch), []).append(i)
    units = []
    for (prefix, arch), ids in groups.items():
        for j in range(0, len(ids), UNIT_SIZE):
            units.append((f"{prefix}_{j // UNIT_SIZE}_sm{arch}", arch, ids[j : j + UNIT_SIZE]))
    return units
