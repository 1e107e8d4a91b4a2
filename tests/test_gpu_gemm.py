"""GPU tests (skipped without an SM90/SM100 GPU): every kernel forced, the shape suites with the
selected kernel, M sweeps across selection boundaries, odd/unaligned/degenerate shapes, CUDA
graphs, torch.compile, and the bad-input table through the C++ glue."""

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt
from cutlass_gemm._reference import ACTIVATION_FNS
from conftest import GPU_ARCH
from gemm_checks import (BAD_GEMM_INPUTS, LLAMA3_70B_NK, ODD, check_result, check_writer_then_gemm,
                         device_mismatch_cases, epilogues_for, make_problem, poison_next_output)

pytestmark = pytest.mark.gpu
DEV = "cuda"
WORST = {}  # worst figures per measure, printed at the end of the session


def run_and_check(p, what, config=None):
    poison_next_output(p.a.numel() // max(p.a.shape[-1], 1) * p.b.shape[0], DEV)
    out = cutlass_gemm.gemm(p.a, p.b, config=config, **p.kwargs())
    torch.cuda.synchronize()
    figs = check_result(out, p, what)
    for key, v in figs.items():
        if v > WORST.get(key, (-1e30, ""))[0]:
            WORST[key] = (v, what)
    return out


def _compiled_16bit():
    if not GPU_ARCH:
        return []
    names = set(configs.compiled_kernels())
    return [k for k in kt.KERNELS if k.name in names and k.arch == GPU_ARCH and k.scale == "none"]


KERNELS = _compiled_16bit()
# (64, 384, 16384): 3 output tiles and a long K, so a stream-K kernel splits K across SMs;
# (3, 1001, 264): N off the 16-byte rule (padded output), where a swap-AB kernel's tile runs over N;
# (2304, 4096, 72): 288 tiles of 128x256, so every persistent CTA runs two or more (the epilogue's store and
# residual-load pipelines carry over from one tile to the next).
FORCED_SHAPES = [(128, 256, 64), (200, 136, 520), (1, 8, 8), (257, 1000, 4096), (64, 384, 16384), (3, 1001, 264),
                 (2304, 4096, 72)]
EPILOGUES = [
    dict(),
    dict(bias="out", activation="gelu_tanh", residual=True, alpha=0.5, beta=0.75),
    dict(bias="f32", activation="gelu"),
    dict(activation="relu", residual=True, beta=-1.0),
    dict(bias="out", activation="silu"),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_every_kernel_forced(kernel):
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[kernel.a]
    out_dtype = torch.float32 if kernel.out == "f32" else None
    epilogues = epilogues_for(kernel, EPILOGUES)
    for (m, n, k) in FORCED_SHAPES:
        for epi in epilogues:
            p = make_problem(m, n, k, dtype, DEV, out_dtype=out_dtype, **epi)
            run_and_check(p, f"{kernel.name} {m}x{n}x{k} {epi}", config=kernel.name)
    if not kernel.activation:  # refused before any launch, never run without the asked activation
        p = make_problem(64, 128, 64, dtype, DEV, activation="gelu")
        with pytest.raises(RuntimeError, match="has no activation in its epilogue; expected activation='none'"):
            cutlass_gemm.gemm(p.a, p.b, config=kernel.name, **p.kwargs())
    if not kernel.residual:  # likewise without the residual node
        p = make_problem(64, 128, 64, dtype, DEV, residual=True)
        with pytest.raises(RuntimeError, match="has no residual in its epilogue; expected residual=None"):
            cutlass_gemm.gemm(p.a, p.b, config=kernel.name, **p.kwargs())


# Pre-activations from -1e4 to 1e4, through silu's band where 1 + e^-x passes 2^126 (-88.7 < x < -87.3)
# and exp overflows (x < -88.7), plus a grid of step 1/8 over [-15, 15]: the span of the 16-bit erf GELU's
# fit and clamp (tools/fit_gelu.py) and the tails where 1 + tanh or 1 + erf cancel. a = diag(v) times b = I
# puts each value on the diagonal exactly.
EXTREMES = [-1e4, -1e3, -100.0, -88.5, -88.0, -87.5, -50.0, -20.0, -10.0, -5.0, -3.0, -1.0, -0.5, -1e-3, 0.0,
            1e-3, 0.5, 1.0, 3.0, 5.0, 10.0, 20.0, 50.0, 88.0, 100.0, 1e3, 1e4] + [i / 8 for i in range(-120, 121)]
ACT_KERNELS = [k for k in KERNELS if k.activation]


@pytest.mark.parametrize("kernel", ACT_KERNELS, ids=[k.name for k in ACT_KERNELS])
def test_activations_at_extreme_inputs(kernel):
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[kernel.a]
    out_dtype = torch.float32 if kernel.out == "f32" else dtype
    v = torch.tensor(EXTREMES, dtype=torch.float64)
    if dtype == torch.float16:
        v = v.clamp(-6e4, 6e4)
    n = len(EXTREMES)
    a = torch.diag(v).to(dtype).to(DEV)
    b = torch.eye(n, dtype=dtype, device=DEV)
    x = torch.diag(a.double()).cpu()  # the values as the kernel sees them (rounded to the input dtype)
    for act, fn in ACTIVATION_FNS.items():
        poison_next_output(n * n, DEV)
        out = cutlass_gemm.gemm(a, b, activation=act, out_dtype=None if out_dtype == dtype else out_dtype,
                                config=kernel.name)
        ref = fn(torch.diag(x)).to(out_dtype)  # float64, rounded once to the output dtype
        # The epilogue's float32 math errs by a fraction of the input's size: 1 + erf(z) cancels for
        # negative z in the f32 output's erff (as in torch's own CUDA gelu); the 16-bit GELUs are within
        # 2e-9 |x| past their fits (x < -5.5); silu's __fdividef gives 0 for -88.7 < x < -87.3 (true
        # |silu| < 1e-36). On top, the output's rounding (the 16-bit GELUs' relative error is <= 9.1e-5).
        per_x = 1e-7
        rtol = torch.finfo(out_dtype).eps if out_dtype != torch.float32 else 1e-6
        got, want = out.double().cpu(), ref.double()
        bad = (got - want).abs() > rtol * want.abs() + per_x * torch.diag(x).abs()
        assert not bad.any(), (f"{kernel.name} {act}: at x = {torch.diag(x)[bad].tolist()[:4]} got "
                               f"{got[bad].tolist()[:4]}, expected {want[bad].tolist()[:4]}")


@pytest.mark.parametrize("kernel", ACT_KERNELS, ids=[k.name for k in ACT_KERNELS])
def test_activations_keep_nan_and_inf(kernel):
    """NaN in gives NaN out for every activation (a NaN never becomes a number); +inf stays +inf; -inf
    gives relu 0, the 16-bit outputs' GELUs 0 (their limit: max(x, 0) past the clamp), the float32
    outputs' GELUs and silu NaN (-inf * 0, as torch). Rows 0-2 hold NaN, +inf, -inf on the diagonal
    (their other columns are NaN: NaN * 0), the rest 1.0; the output is first filled with a finite
    sentinel, so an unwritten element cannot pass for a NaN."""
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[kernel.a]
    out_dtype = torch.float32 if kernel.out == "f32" else dtype
    n = 16
    a = torch.eye(n, dtype=dtype, device=DEV)
    a[0, 0], a[1, 1], a[2, 2] = float("nan"), float("inf"), float("-inf")
    b = torch.eye(n, dtype=dtype, device=DEV)
    want_neg_inf = {"none": float("-inf"), "relu": 0.0}
    if out_dtype != torch.float32:
        want_neg_inf.update(gelu=0.0, gelu_tanh=0.0)
    for act in ACTIVATION_FNS:
        torch.full((n * n + 256,), 12345.0, device=DEV)  # the caching allocator hands this block out next
        out = cutlass_gemm.gemm(a, b, activation=act, out_dtype=None if out_dtype == dtype else out_dtype,
                                config=kernel.name).double().cpu()
        d = torch.diagonal(out)
        assert d[0].isnan(), f"{kernel.name} {act}: NaN in gave {d[0].item()}"
        assert d[1].item() == float("inf"), f"{kernel.name} {act}: +inf in gave {d[1].item()}"
        w = want_neg_inf.get(act, float("nan"))
        assert (d[2].isnan() if w != w else d[2].item() == w), f"{kernel.name} {act}: -inf in gave {d[2].item()}, expected {w}"
        want = ACTIVATION_FNS[act](torch.eye(n - 3, dtype=torch.float64))
        assert ((out[3:, 3:] - want).abs() <= torch.finfo(out_dtype).eps * want.abs()).all(), \
            f"{kernel.name} {act}: the finite rows are wrong"


STREAMK = [k for k in KERNELS if k.scheduler == "streamk"]


@pytest.mark.parametrize("kernel", STREAMK, ids=[k.name for k in STREAMK])
def test_streamk_is_deterministic(kernel):
    """Stream-K splits K across SMs and reduces the partial tiles in a fixed order: bitwise equal runs."""
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[kernel.a]
    for m, n, k in [(64, 384, 16384), (1, 8192, 8192), (300, 1024, 8192)]:
        p = make_problem(m, n, k, dtype, DEV, bias="out", activation="gelu_tanh", residual=True)
        first = run_and_check(p, f"{kernel.name} {m}x{n}x{k}", config=kernel.name)
        for _ in range(3):
            poison_next_output(m * n, DEV)
            again = cutlass_gemm.gemm(p.a, p.b, config=kernel.name, **p.kwargs())
            assert torch.equal(again, first), f"{kernel.name} {m}x{n}x{k}: stream-K run differs from the first"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("layer", list(LLAMA3_70B_NK))
@pytest.mark.parametrize("m", [1, 16, 128, 2048])
def test_llama3_70b_selected(dtype, layer, m):
    n, k = LLAMA3_70B_NK[layer]
    p = make_problem(m, n, k, dtype, DEV, bias="out", activation="gelu_tanh", residual=True)
    run_and_check(p, f"llama3_70b {layer} M={m} {dtype}")


@pytest.mark.parametrize("m,n,k", ODD + [(1, 1, 1), (5, 3, 7), (17, 4095, 33), (64, 64, 4097)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_odd_shapes(m, n, k, dtype):
    p = make_problem(m, n, k, dtype, DEV, bias="out", activation="gelu", residual=True)
    run_and_check(p, f"odd {m}x{n}x{k} {dtype}")


def test_m_sweep_across_selection_boundaries():
    """M = 1..256 with the selected kernel, plus both sides of every rule boundary."""
    boundaries = set()
    for r in configs.rules():
        boundaries |= {r.m[0] - 1, r.m[0], r.m[1], r.m[1] + 1}
    ms = sorted(set(range(1, 257)) | {b for b in boundaries if 1 <= b <= 9000})
    b = make_problem(1, 1024, 512, torch.bfloat16, DEV).b
    bias = torch.randn(1024, device=DEV, dtype=torch.bfloat16)
    for m in ms:
        p = make_problem(m, 1024, 512, torch.bfloat16, DEV, residual=True, activation="gelu_tanh")
        p.b, p.bias = b, bias
        run_and_check(p, f"M sweep m={m}")
    # Wide N crosses the big-tile rule.
    for m in (1023, 1024, 1025):
        p = make_problem(m, 8192, 256, torch.bfloat16, DEV, bias="out")
        run_and_check(p, f"M sweep wide m={m}")


def test_degenerate():
    for (m, n, k) in [(0, 64, 64), (64, 0, 64), (0, 0, 0)]:
        p = make_problem(m, n, k, torch.bfloat16, DEV, bias="out", residual=True)
        out = cutlass_gemm.gemm(p.a, p.b, **p.kwargs())
        assert out.shape == (m, n)
    # K = 0: act(bias) + beta * residual, through the padded fast kernel.
    p = make_problem(33, 40, 0, torch.bfloat16, DEV, bias="f32", residual=True, activation="gelu", beta=0.5)
    run_and_check(p, "K=0")


def test_noncontiguous_and_offset_inputs():
    a_big = torch.randn(64, 300, device=DEV, dtype=torch.bfloat16)
    b_big = torch.randn(256, 300, device=DEV, dtype=torch.bfloat16) * 300 ** -0.5
    cases = {
        "a column slice (stride 300, K 256)": (a_big[:, :256], b_big[:128, :256]),
        "a offset by one column (misaligned base)": (a_big[:, 1:257], b_big[:128, 1:257]),
        "a transposed view": (a_big[:, :64].t(), b_big[:32, :64]),
        "b transposed copy layout": (a_big[:, :128], b_big[:128, :128].t().contiguous().t()),
    }
    for what, (a, b) in cases.items():
        from gemm_checks import Problem

        n = b.shape[0]
        p = Problem(a, b, torch.randn(n, device=DEV, dtype=torch.bfloat16), None, "gelu", 1.0, 1.0, None)
        run_and_check(p, what)
    # Non-contiguous residual and bias.
    p = make_problem(64, 128, 64, torch.bfloat16, DEV)
    p.residual = torch.randn(128, 64, device=DEV, dtype=torch.bfloat16).t()
    p.bias = torch.randn(256, device=DEV, dtype=torch.bfloat16)[::2]
    run_and_check(p, "strided residual and bias")


def test_output_is_poisoned_then_written():
    """The kernel writes every element: results on NaN-filled recycled memory are clean."""
    p = make_problem(300, 520, 128, torch.bfloat16, DEV, bias="out")
    for _ in range(3):
        junk = torch.full((300 * 520 * 2,), float("nan"), device=DEV, dtype=torch.bfloat16)
        del junk  # the caching allocator hands this block to the next output
        run_and_check(p, "poisoned")


def test_cuda_graph_capture_and_replay():
    p = make_problem(96, 512, 256, torch.bfloat16, DEV, bias="out", residual=True, activation="gelu_tanh")
    static_a = p.a.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            cutlass_gemm.gemm(static_a, p.b, **p.kwargs())
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = cutlass_gemm.gemm(static_a, p.b, **p.kwargs())
    for _ in range(3):
        fresh = torch.randn_like(static_a)
        static_a.copy_(fresh)
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        p.a = fresh
        check_result(out, p, "graph replay")


def test_torch_compile_reduce_overhead():
    torch._dynamo.reset()
    lin = torch.nn.Linear(512, 512, device=DEV, dtype=torch.bfloat16)
    w = torch.randn(1024, 512, device=DEV, dtype=torch.bfloat16) * 512 ** -0.5
    bias = torch.randn(1024, device=DEV, dtype=torch.bfloat16)

    def f(x, r):
        return cutlass_gemm.gemm(lin(x), w, bias=bias, residual=r, activation="gelu_tanh")

    cf = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    with torch.no_grad():
        for m in (64, 64, 64, 200):
            x = torch.randn(m, 512, device=DEV, dtype=torch.bfloat16)
            r = torch.randn(m, 1024, device=DEV, dtype=torch.bfloat16)
            got = cf(x, r).clone()
            want = f(x, r)
            torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("case", BAD_GEMM_INPUTS + device_mismatch_cases("cuda:0"),
                         ids=[c[0] for c in BAD_GEMM_INPUTS + device_mismatch_cases("cuda:0")])
def test_bad_inputs_cuda_match_python(case):
    """C++ glue messages == Python validator messages, raised before any launch."""
    _, build, message = case
    args, kwargs = build(DEV)
    with pytest.raises(RuntimeError) as e:
        torch.ops.cutlass_gemm.gemm.default(*args, **{**kwargs, "config": kwargs.get("config", "")})
    assert str(e.value).splitlines()[0] == message


def test_worst_errors_report(capsys):
    """Runs last in this file: prints the worst figures seen (for the issue note)."""
    with capsys.disabled():
        for key, (v, what) in sorted(WORST.items()):
            print(f"\nworst {key}: {v:.3e} ({what})")


_KNOB_CHILD = """
import torch, cutlass_gemm
a = torch.randn(1000, 2048, device="cuda", dtype=torch.bfloat16)
b = torch.randn(3000, 2048, device="cuda", dtype=torch.bfloat16)
ref = a.double() @ b.double().t()
for cfg in cutlass_gemm.configs.compiled_kernels():
    if cfg.startswith("sm%d_bf16_t" % cutlass_gemm.configs.current_arch()):
        torch.full((1000 * 3000 + 256,), float("nan"), device="cuda", dtype=torch.bfloat16)  # poison the next block
        out = cutlass_gemm.gemm(a, b, config=cfg).double()
        err = ((out - ref).norm() / ref.norm()).item()
        assert err < 1e-2, (cfg, err)
print("ok")
"""


@pytest.mark.parametrize("env", [dict(CUTLASS_GEMM_SWIZZLE="4", CUTLASS_GEMM_RASTER="2"),
                                 dict(CUTLASS_GEMM_SWIZZLE="8", CUTLASS_GEMM_RASTER="1"),
                                 dict(CUTLASS_GEMM_PDL="1"),
                                 dict(CUTLASS_GEMM_DECOMPOSITION="1"),
                                 dict(CUTLASS_GEMM_DECOMPOSITION="2", CUTLASS_GEMM_SPLITS="4"),
                                 dict(CUTLASS_GEMM_DECOMPOSITION="3", CUTLASS_GEMM_REDUCTION="1")])
def test_scheduler_knobs_keep_results(env):
    """Every bf16 kernel stays correct under non-default swizzle / raster, programmatic dependent launch
    and stream-K decompositions (bench/scheduler_knobs.py, gpu notes)."""
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _KNOB_CHILD], env={**os.environ, **env}, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


@pytest.mark.parametrize("name, value, expected", [
    ("CUTLASS_GEMM_SWIZZLE", "3", "expected CUTLASS_GEMM_SWIZZLE 1, 2, 4 or 8"),
    ("CUTLASS_GEMM_SWIZZLE", "8x", "expected CUTLASS_GEMM_SWIZZLE 1, 2, 4 or 8"),
    ("CUTLASS_GEMM_RASTER", "0", "expected CUTLASS_GEMM_RASTER 1 (along M) or 2 (along N), got '0'"),
    ("CUTLASS_GEMM_PDL", "2", "expected CUTLASS_GEMM_PDL 0 or 1"),
    ("CUTLASS_GEMM_DECOMPOSITION", "4", "expected CUTLASS_GEMM_DECOMPOSITION 1 (data-parallel), 2 (split-K) or 3"),
    ("CUTLASS_GEMM_SPLITS", "1", "expected CUTLASS_GEMM_SPLITS a split-K factor from 2 to 64, got '1'"),
    ("CUTLASS_GEMM_REDUCTION", "x", "expected CUTLASS_GEMM_REDUCTION 0 (deterministic) or 1"),
    ("CUTLASS_GEMM_DECOMPOSITION", "2", "expected CUTLASS_GEMM_SPLITS (a split-K factor from 2 to 64) with"),
    ("CUTLASS_GEMM_TMA_L2_PROMOTION", "512", "expected CUTLASS_GEMM_TMA_L2_PROMOTION 64, 128 or 256 (bytes of L2"),
    ("CUTLASS_GEMM_TMA_L2_PROMOTION", "256B", "expected CUTLASS_GEMM_TMA_L2_PROMOTION 64, 128 or 256"),
    ({"CUTLASS_GEMM_DECOMPOSITION": "3", "CUTLASS_GEMM_SPLITS": "4"}, None,
     "expected CUTLASS_GEMM_SPLITS only with CUTLASS_GEMM_DECOMPOSITION unset or 2 (split-K), got "
     "CUTLASS_GEMM_DECOMPOSITION=3"),
])
def test_bad_scheduler_knob_is_a_clear_error(name, value, expected):
    """name: one variable (set to value) or a dict of them (contradicting combinations)."""
    import os
    import subprocess
    import sys

    code = ("import torch, cutlass_gemm\n"
            "a = torch.randn(64, 64, device='cuda', dtype=torch.bfloat16)\n"
            "cutlass_gemm.gemm(a, a)\n")
    env = name if isinstance(name, dict) else {name: value}
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True)
    assert r.returncode != 0 and expected in r.stderr, r.stderr[-2000:]


_L2_PROMOTION_CHILD = """
import sys
import torch
import cutlass_gemm

torch.manual_seed(0)
counts = torch.ops.cutlass_gemm._tma_encode_counts
a = torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16)
b = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
x, w = torch.randn(256, 1024, device="cuda"), torch.randn(512, 1024, device="cuda")
a8r, sar = cutlass_gemm.quantize_fp8(x, "row")
b8r, sbr = cutlass_gemm.quantize_fp8(w, "row")
a8b, sab = cutlass_gemm.quantize_fp8(x, "1x128")
b8b, sbb = cutlass_gemm.quantize_fp8(w, "128x128")
a_big = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
calls = {"bf16": lambda: cutlass_gemm.gemm(a, b), "row": lambda: cutlass_gemm.scaled_mm(a8r, b8r, sar, sbr),
         "blockwise": lambda: cutlass_gemm.scaled_mm(a8b, b8b, sab, sbb),
         "bf16 512x512": lambda: cutlass_gemm.gemm(a_big, b)}
explain, fp8 = cutlass_gemm.configs.explain, torch.float8_e4m3fn
said = {"bf16": lambda: explain(256, 512, 1024), "row": lambda: explain(256, 512, 1024, fp8, scale="row"),
        "blockwise": lambda: explain(256, 512, 1024, fp8, scale="blockwise"),
        "bf16 512x512": lambda: explain(512, 512, 1024)}
outs = {"a": a, "b": b}
for key, call in calls.items():  # each call's descriptors counted apart
    outs["explain " + key] = torch.tensor(said[key]().launch.tma_l2_promotion)
    torch.cuda.synchronize()
    before = counts().clone()
    outs[key] = call()
    torch.cuda.synchronize()
    outs["counts " + key] = counts() - before
torch.save({k: v.cpu() for k, v in outs.items()}, sys.argv[1])
"""


def test_tma_l2_promotion_reaches_the_descriptors(tmp_path):
    """CUTLASS_GEMM_TMA_L2_PROMOTION=64/128/256 sets the L2 promotion of every TMA descriptor the kernels
    encode (counted by promotion in the op); unset, the SM90 bf16 and FP8 per-row kernels get 256 B on
    problems of at most 256 rows or columns and CUTLASS's 128 B above, the blockwise ones 128 B
    (default_tma_l2_promotion); and the outputs are bit for bit the same under every setting: the promotion
    moves data into L2, not the arithmetic. configs.explain's `launch` names the promotion the descriptors got."""
    import os
    import subprocess
    import sys

    runs = {}
    for promo in (None, "64", "128", "256"):
        env = {k: v for k, v in os.environ.items() if k != "CUTLASS_GEMM_TMA_L2_PROMOTION"}
        if promo:
            env["CUTLASS_GEMM_TMA_L2_PROMOTION"] = promo
        path = tmp_path / f"promo_{promo}.pt"
        r = subprocess.run([sys.executable, "-c", _L2_PROMOTION_CHILD, str(path)], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        runs[promo] = torch.load(path)
    slot = {"64": 1, "128": 2, "256": 3}  # CUtensorMapL2promotion: none, 64 B, 128 B, 256 B
    default = {"bf16": "256", "row": "256"} if GPU_ARCH == 90 else {}  # 256x512 problems; 512x512 and blockwise: 128
    for promo, out in runs.items():
        for key in ("bf16", "row", "blockwise", "bf16 512x512"):
            c = out["counts " + key].tolist()
            want = slot[promo or default.get(key, "128")]
            assert c[want] >= 3 and sum(c) == c[want], (promo, key, c)  # A, B and D at least
            assert slot[str(out["explain " + key].item())] == want, (promo, key, out["explain " + key])
            assert torch.equal(out[key], runs[None][key]), (promo, key)
    ref = runs[None]["a"].double() @ runs[None]["b"].double().t()
    err = ((runs[None]["bf16"].double() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, err


@pytest.mark.skipif(GPU_ARCH != 90, reason="SM90 kernel names")
def test_fused_epilogue_rules_reach_the_op():
    """A rule limited to fused epilogues (activation or residual) decides those calls in the op, and
    only those: the launched kernel's schedule, read from the profiler, follows the epilogue class."""
    from torch.profiler import ProfilerActivity, profile

    m = n = k = 1024
    pp, coop = "sm90_bf16_t64x128x64_c1x1_pingpong_st7", "sm90_bf16_t128x128x64_c1x1_coop"
    p = make_problem(m, n, k, torch.bfloat16, DEV)
    res = torch.randn(m, n, device=DEV, dtype=torch.bfloat16)

    def schedule(**kw) -> str:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            cutlass_gemm.gemm(p.a, p.b, **kw)
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if "device_kernel" in e.name]
        assert len(names) == 1, names
        return "pingpong" if "Pingpong" in names[0] else "coop" if "Cooperative" in names[0] else names[0]

    configs.add_rule(coop, m=(m, m), n=(n, n), k=(k, k))
    configs.add_rule(pp, m=(m, m), n=(n, n), k=(k, k), epilogue="fused")
    try:
        assert configs.explain(m, n, k, fused=True).kernel == pp and configs.explain(m, n, k).kernel == coop
        assert schedule() == "coop" and schedule(bias=p.b[0]) == "coop"  # bias alone: plain
        assert schedule(activation="gelu") == "pingpong" and schedule(residual=res) == "pingpong"
    finally:
        configs.clear_rules()


PDL_RULES = [r for r in configs.DEFAULT_RULES if r.pdl and r.spec.arch == GPU_ARCH and r.spec.scale == "none"]


@pytest.mark.parametrize("rule", PDL_RULES, ids=[f"{r.kernel}-m{r.m[0]}-{r.n[0]}x{r.k[0]}" for r in PDL_RULES])
def test_pdl_rule_waits_for_the_kernel_that_writes_its_inputs(rule):
    """A 16-bit rule that launches with PDL: its GEMM may start while the cast that writes a still runs,
    and must read a only after it. Eager and CUDA-graph replay on new data, output poisoned, float64."""
    dtype = torch.bfloat16 if rule.spec.a == "bf16" else torch.float16
    fused = rule.epilogue == "fused"  # such a rule serves calls with an activation or a residual
    epi = dict(activation="gelu_tanh", residual=True) if fused else {}
    d = configs.explain(rule.m[0], rule.n[0], rule.k[0], dtype, fused=fused, activation=fused)
    assert (d.kernel, d.pdl) == (rule.kernel, True), f"the rule is the one selecting: {d}"
    for m in sorted({rule.m[0], min(rule.m[1], rule.m[0] + 300)}):
        n, k = rule.n[0], rule.k[0]
        p = make_problem(m, n, k, dtype, DEV, bias="out", **epi)

        def step(x):
            a = x.to(dtype)  # the kernel just before the GEMM writes its a
            return cutlass_gemm.gemm(a, p.b, **p.kwargs()), a

        def adopt(inputs):
            (p.a,) = inputs

        check_writer_then_gemm(step, torch.randn(m, k, device=DEV), adopt, lambda out, what: check_result(out, p, what),
                               f"PDL {rule.kernel} {m}x{n}x{k}", m * n)
