"""FP8 scaled_mm on the GPU: every FP8 kernel forced for its granularities and epilogues, the
shape suites with the selected kernel, odd shapes through the fallback, CUDA graphs, compile,
and the bad-input table through the C++ glue."""

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt
from conftest import GPU_ARCH
from gemm_checks import (BAD_SCALED_MM_INPUTS, DEEPSEEK_V3_NK, LLAMA3_70B_NK, ODD, SQUARE, check_scaled_result,
                         check_writer_then_gemm, epilogues_for, make_scaled_problem, poison_next_output)

pytestmark = pytest.mark.gpu
DEV = "cuda"
DT = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
WORST = {}


def run_and_check(p, what, config=None):
    poison_next_output(p.a.numel() // max(p.a.shape[-1], 1) * p.b.shape[0], DEV)
    out = cutlass_gemm.scaled_mm(*p.args(), config=config, **p.kwargs())
    torch.cuda.synchronize()
    figs = check_scaled_result(out, p, what)
    for key, v in figs.items():
        if v > WORST.get(key, (-1e30, ""))[0]:
            WORST[key] = (v, what)
    return out


def _fp8_kernels():
    if not GPU_ARCH:
        return []
    names = set(configs.compiled_kernels())
    return [k for k in kt.KERNELS if k.name in names and k.arch == GPU_ARCH and k.scale != "none"]


KERNELS = _fp8_kernels()
# (64, 384, 16384): 3 output tiles and a long K, so a stream-K kernel splits K across SMs;
# (3, 1001, 264): N off the 16-byte rule (padded output), where a swap-AB kernel's tile runs over N;
# (1024, 2304, 520): more 128x128 tiles than SMs (a persistent CTA's second tile continues the shared-memory
# pipeline where its first left it) and an odd k-tile count (5: a promotion group cut short);
# (2048, 4096, 144): 256 tiles of 128x256, two per persistent CTA of the widest tiles too (the epilogue's store
# and residual-load pipelines carry over from one tile to the next).
SHAPES = [(128, 256, 128), (200, 136, 520), (1, 16, 16), (257, 1000, 4096), (64, 384, 16384), (3, 1001, 264),
          (1024, 2304, 520), (2048, 4096, 144)]
EPILOGUES = [dict(), dict(bias="out", activation="gelu_tanh", residual=True, beta=0.5),
             dict(bias="f32", activation="silu"), dict(activation="relu", residual=True, beta=-1.0)]


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_every_fp8_kernel_forced(kernel):
    scale_kinds = ["blockwise"] if kernel.scale == "blockwise" else ["tensor", "row_col", "row_tensor", "tensor_col"]
    accumulate = "fast" if kernel.accum == "fast" else "accurate"
    epilogues = epilogues_for(kernel, EPILOGUES)
    for (m, n, k) in SHAPES:
        for i, epi in enumerate(epilogues):
            scales = scale_kinds[i % len(scale_kinds)]
            p = make_scaled_problem(m, n, k, DEV, scales=scales, a_dtype=DT[kernel.a], b_dtype=DT[kernel.b],
                                    accumulate=accumulate, **epi)
            run_and_check(p, f"{kernel.name} {m}x{n}x{k} {scales} {epi}", config=kernel.name)
    if not kernel.activation:  # refused before any launch, never run without the asked activation
        p = make_scaled_problem(64, 128, 128, DEV, scales="blockwise" if kernel.scale == "blockwise" else "row_col",
                                accumulate=accumulate, activation="gelu")
        with pytest.raises(RuntimeError, match="has no activation in its epilogue; expected activation='none'"):
            cutlass_gemm.scaled_mm(p.a, p.b, p.scale_a, p.scale_b, config=kernel.name, **p.kwargs())
    if not kernel.residual:  # likewise without the residual node
        p = make_scaled_problem(64, 128, 128, DEV, scales="blockwise" if kernel.scale == "blockwise" else "row_col",
                                accumulate=accumulate, residual=True)
        with pytest.raises(RuntimeError, match="has no residual in its epilogue; expected residual=None"):
            cutlass_gemm.scaled_mm(p.a, p.b, p.scale_a, p.scale_b, config=kernel.name, **p.kwargs())


STREAMK = [k for k in KERNELS if k.scheduler == "streamk"]


@pytest.mark.parametrize("kernel", STREAMK, ids=[k.name for k in STREAMK])
def test_streamk_is_deterministic(kernel):
    """FP8 stream-K (scaled and blockwise): partial tiles reduced in a fixed order, bitwise equal runs."""
    scales = "blockwise" if kernel.scale == "blockwise" else "row_col"
    accumulate = "fast" if kernel.accum == "fast" else "accurate"
    for m, n, k in [(64, 384, 16384), (64, 2112, 7168), (300, 1024, 8192)]:
        p = make_scaled_problem(m, n, k, DEV, scales=scales, accumulate=accumulate, bias="out", residual=True,
                                **(dict(activation="gelu_tanh") if kernel.activation else {}))
        what = f"{kernel.name} {m}x{n}x{k}"
        first = run_and_check(p, what, config=kernel.name)
        for _ in range(3):
            poison_next_output(m * n, DEV)
            again = cutlass_gemm.scaled_mm(*p.args(), config=kernel.name, **p.kwargs())
            assert torch.equal(again, first), f"{what}: stream-K run differs from the first"


@pytest.mark.parametrize("accumulate", ["accurate", "fast"])
@pytest.mark.parametrize("scales", ["row_col", "blockwise"])
@pytest.mark.parametrize("nk", DEEPSEEK_V3_NK, ids=[f"{n}x{k}" for n, k in DEEPSEEK_V3_NK])
@pytest.mark.parametrize("m", [64, 128, 4096])
def test_deepseek_v3_selected(m, nk, scales, accumulate):
    n, k = nk
    p = make_scaled_problem(m, n, k, DEV, scales=scales, accumulate=accumulate, bias="out", activation="gelu_tanh",
                            residual=True)
    run_and_check(p, f"deepseek_v3 {m}x{n}x{k} {scales} {accumulate}")


@pytest.mark.parametrize("accumulate", ["accurate", "fast"])
@pytest.mark.parametrize("scales", ["tensor", "row_col", "blockwise"])
@pytest.mark.parametrize("mnk", SQUARE, ids=[str(s[0]) for s in SQUARE])
def test_square_selected(mnk, scales, accumulate):
    p = make_scaled_problem(*mnk, DEV, scales=scales, accumulate=accumulate, bias="out", activation="gelu_tanh",
                            residual=True)
    run_and_check(p, f"square {mnk[0]} {scales} {accumulate}")


@pytest.mark.parametrize("scales", ["tensor", "row_col", "blockwise"])
@pytest.mark.parametrize("layer", list(LLAMA3_70B_NK))
@pytest.mark.parametrize("m", [1, 16, 128, 2048])
def test_llama3_70b_selected(m, layer, scales):
    n, k = LLAMA3_70B_NK[layer]
    p = make_scaled_problem(m, n, k, DEV, scales=scales, bias="f32", activation="silu")
    run_and_check(p, f"llama3_70b {layer} M={m} {scales}")


@pytest.mark.parametrize("scales", ["tensor", "row_col", "blockwise"])
@pytest.mark.parametrize("m,n,k", ODD + [(1, 1, 1), (5, 3, 7), (17, 4095, 33), (3, 130, 0)])
def test_odd_shapes(m, n, k, scales):
    p = make_scaled_problem(m, n, k, DEV, scales=scales, bias="out", activation="gelu", residual=True)
    run_and_check(p, f"odd {m}x{n}x{k} {scales}")


def test_mixed_e5m2():
    for a, b in (("e4m3", "e5m2"), ("e5m2", "e4m3")):
        for acc in ("accurate", "fast"):
            p = make_scaled_problem(300, 520, 1024, DEV, scales="row_col", a_dtype=DT[a], b_dtype=DT[b],
                                    accumulate=acc, bias="out", residual=True, activation="gelu_tanh")
            run_and_check(p, f"mixed {a}x{b} {acc}")


def test_blockwise_scale_layouts():
    """K-major (row-major) scales are accepted and converted; results match the native layout."""
    p = make_scaled_problem(77, 300, 520, DEV, scales="blockwise", bias="out")
    native = cutlass_gemm.scaled_mm(*p.args(), **p.kwargs())
    other = cutlass_gemm.scaled_mm(p.a, p.b, p.scale_a.contiguous(), p.scale_b.contiguous(), **p.kwargs())
    torch.testing.assert_close(native, other, rtol=0, atol=0)
    check_scaled_result(native, p, "blockwise native layout")


def test_cuda_graph_capture_and_replay():
    p = make_scaled_problem(96, 512, 256, DEV, scales="row_col", bias="out", residual=True, activation="gelu_tanh")
    static_a = p.a.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        cutlass_gemm.scaled_mm(static_a, *p.args()[1:], **p.kwargs())
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = cutlass_gemm.scaled_mm(static_a, *p.args()[1:], **p.kwargs())
    fresh = make_scaled_problem(96, 512, 256, DEV, scales="row_col")
    static_a.copy_(fresh.a)
    out.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    p.a = fresh.a
    check_scaled_result(out, p, "fp8 graph replay")


def test_torch_compile_reduce_overhead():
    torch._dynamo.reset()
    p = make_scaled_problem(64, 1024, 512, DEV, scales="row_col", bias="out")
    lin = torch.nn.Linear(1024, 1024, device=DEV, dtype=torch.bfloat16)

    def f(a, b, sa, sb, bias):
        return lin(cutlass_gemm.scaled_mm(a, b, sa, sb, bias=bias, activation="silu"))

    cf = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(3):
            got = cf(*p.args(), p.bias).clone()
        torch.testing.assert_close(got, f(*p.args(), p.bias), rtol=0, atol=0)


@pytest.mark.parametrize("case", BAD_SCALED_MM_INPUTS, ids=[c[0] for c in BAD_SCALED_MM_INPUTS])
def test_bad_inputs_cuda_match_python(case):
    _, build, message = case
    args, kwargs = build(DEV)
    kwargs = {"out_dtype": torch.bfloat16, "config": "", **kwargs}
    with pytest.raises(RuntimeError) as e:
        torch.ops.cutlass_gemm.scaled_mm.default(*args, **kwargs)
    assert str(e.value).splitlines()[0] == message


def test_worst_errors_report(capsys):
    with capsys.disabled():
        for key, (v, what) in sorted(WORST.items()):
            print(f"\nfp8 worst {key}: {v:.3e} ({what})")


# The shipped rules and this GPU's overlay (configs.gpu_rules(): empty on a GPU without one) that launch with PDL.
PDL_RULES = [r for r in list(configs.gpu_rules()) + list(configs.DEFAULT_RULES)
             if r.pdl and r.spec.arch == GPU_ARCH and r.spec.scale != "none"]


@pytest.mark.parametrize("rule", PDL_RULES, ids=[f"{r.kernel}-m{r.m[0]}-{r.n[0]}x{r.k[0]}" for r in PDL_RULES])
def test_pdl_rule_waits_for_the_kernel_that_writes_its_inputs(rule):
    """A rule that launches with PDL: its GEMM starts while the quantizer that writes a (and a's scales)
    may still run; it must read them only after that kernel completes. Eager and CUDA-graph replay on
    new data, output poisoned, against float64."""
    fused = rule.epilogue == "fused"  # such a rule serves calls with an activation or a residual
    accumulate = "fast" if rule.spec.accum == "fast" else "accurate"  # the family the rule belongs to
    epi = dict(activation="gelu_tanh", residual=True) if fused else {}
    d = configs.explain(rule.m[0], rule.n[0], rule.k[0], torch.float8_e4m3fn, scale=rule.spec.scale,
                        accumulate=accumulate, fused=fused, activation=fused)
    if d.source == "overlay" and rule not in configs.gpu_rules():
        # this GPU's overlay shadows the shipped rule here: what runs is the overlay's launch, with PDL too
        assert d.pdl, f"an overlay rule with PDL shadows the shipped one: {d}"
    else:
        assert (d.kernel, d.pdl) == (rule.kernel, True), f"the rule is the one selecting: {d}"
    scales = "blockwise" if rule.spec.scale == "blockwise" else "row_col"
    gran = "1x128" if scales == "blockwise" else "row"
    for m in sorted({rule.m[0], min(rule.m[1], rule.m[0] + 300)}):
        n, k = rule.n[0], rule.k[0]
        p = make_scaled_problem(m, n, k, DEV, scales=scales, bias="out", accumulate=accumulate, **epi)

        def step(x):
            a8, sa = cutlass_gemm.quantize_fp8(x, gran)  # the kernel just before the GEMM writes its a
            return cutlass_gemm.scaled_mm(a8, p.b, sa, p.scale_b, **p.kwargs()), a8, sa

        def adopt(inputs):
            p.a, p.scale_a = inputs

        check_writer_then_gemm(step, torch.randn(m, k, device=DEV) * 3.0, adopt,
                               lambda out, what: check_scaled_result(out, p, what),
                               f"PDL {rule.kernel} {m}x{n}x{k}", m * n, x_scale=3.0)


_PROMOTION_CHILD = """
import sys
import torch
import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt
sys.path.insert(0, {tests!r})
from gemm_checks import check_scaled_result, make_scaled_problem, poison_next_output
names = set(configs.compiled_kernels())
promoted = [k for k in kt.KERNELS if k.name in names and k.scale == "tensor_row_col" and k.accum == "promoted"]
assert promoted
for kernel in promoted:
    for m, n, k in [(1024, 2304, 520), (257, 1000, 4096), (64, 384, 1408)]:
        p = make_scaled_problem(m, n, k, "cuda", scales="row_col", accumulate="accurate",
                                a_dtype=getattr(torch, kt.TORCH_DTYPE_NAMES[kernel.a]),
                                b_dtype=getattr(torch, kt.TORCH_DTYPE_NAMES[kernel.b]))
        poison_next_output(m * n, "cuda")
        out = cutlass_gemm.scaled_mm(*p.args(), config=kernel.name, **p.kwargs())
        torch.cuda.synchronize()
        check_scaled_result(out, p, f"{{kernel.name}} {{m}}x{{n}}x{{k}}")
print("ok", len(promoted))
"""


@pytest.mark.parametrize("interval", ["4", "12", "64"])
def test_promotion_interval_keeps_results(interval):
    """Every promoted FP8 kernel stays within the accurate mode's bounds under other promotion intervals
    (CUTLASS_GEMM_FP8_PROMOTION_INTERVAL, read once per process): every k-tile (4), groups of 3 k-tiles cut
    short at K = 520 / 1408 (5 / 11 k-tiles; 12), one group longer than K = 520 (64)."""
    import os
    import subprocess
    import sys

    child = _PROMOTION_CHILD.format(tests=os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", child], env={**os.environ, "CUTLASS_GEMM_FP8_PROMOTION_INTERVAL": interval},
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().startswith("ok"), r.stderr[-3000:]
