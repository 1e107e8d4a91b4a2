"""Property-based tests against the float64 reference with the three correctness measures:
random M/N/K (1, primes, K < 16, N = 1, zeros), dtypes, output dtypes, epilogues, scale
granularities, FP8 dtype pairs, 3-D inputs and operand layouts (transposed views, row strides
above K, storage offsets). The CPU variant runs in CI through the reference kernels; the GPU
variant runs the real kernels (1500 examples per op, larger tile-edge dims, NaN-poisoned outputs).

Report: per op and device, the number of cases run, the failing ones and the worst figure per
measure (relative Frobenius, worst row, worst column, elementwise bound excess) are printed at
the end of the module and merged into the JSON file named by $CUTLASS_GEMM_FUZZ_REPORT.
Hypothesis replays a failing example while shrinking it: `cases` counts every execution,
`failing` the distinct failing examples."""

import contextlib
import json
import os

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cutlass_gemm
from conftest import GPU_ARCH
from gemm_checks import Problem, ScaledProblem, check_result, check_scaled_result, fresh, poison_next_output

DIMS = st.one_of(st.sampled_from([0, 1, 2, 3, 7, 13, 16, 17, 31, 64, 127, 128, 129, 257]),
                 st.integers(min_value=1, max_value=700))
# GPU: also tile and cluster edges of the larger kernels (64/128/192/256-wide tiles, 2-CTA clusters).
GPU_DIMS = st.one_of(DIMS, st.sampled_from([191, 192, 193, 255, 256, 383, 384, 511, 513, 1023, 1025, 2047, 2049]))
REPORT_ENV = "CUTLASS_GEMM_FUZZ_REPORT"
MEASURES = ("fro", "row", "col", "elem")
STATS = {}  # "gemm/cuda" -> {"cases", "failing", "worst": {measure: [value, case]}}


def _run_case(op, device, what, run):
    """run(report_dict) raises on failure; the figures it reports are kept either way."""
    st_ = STATS.setdefault(f"{op}/{device}", {"cases": 0, "failing": [], "worst": {}})
    st_["cases"] += 1
    figs = {}
    try:
        run(figs)
    except BaseException as e:
        if what not in st_["failing"]:
            st_["failing"].append(what)
            st_.setdefault("errors", {})[what] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        raise
    finally:
        for key, v in figs.items():
            if key not in st_["worst"] or v > st_["worst"][key][0]:
                st_["worst"][key] = [v, what]


@pytest.fixture(scope="module", autouse=True)
def _fuzz_report(request):
    yield
    if not STATS:
        return
    lines = ["", "fuzz report (cases run / distinct failing examples / worst figure per measure):"]
    for key in sorted(STATS):
        s = STATS[key]
        worst = ", ".join(f"{m} {s['worst'][m][0]:.3e}" for m in MEASURES if m in s["worst"])
        lines.append(f"  {key}: {s['cases']} cases, {len(s['failing'])} failing; worst {worst}")
        for m in MEASURES:
            if m in s["worst"]:
                lines.append(f"      worst {m}: {s['worst'][m][0]:.3e} at {s['worst'][m][1]}")
        for what in s["failing"][:5]:
            lines.append(f"      FAILING {what}: {s['errors'][what]}")
    capman = request.config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
        print("\n".join(lines), flush=True)
    path = os.environ.get(REPORT_ENV)
    if path:
        data = {}
        if os.path.exists(path):
            try:
                with open(path) as fh:
                    data = json.load(fh)
            except ValueError:
                data = {}
        for key, s in STATS.items():
            data[key] = {"cases": s["cases"], "failing": len(s["failing"]), "failing_examples": s["failing"][:20],
                         "errors": {w: s["errors"][w] for w in s["failing"][:20]},
                         "worst": {m: {"value": v, "case": w} for m, (v, w) in s["worst"].items()},
                         "gpu": torch.cuda.get_device_name() if key.endswith("/cuda") else None,
                         "torch": torch.__version__}
        with open(path, "w") as fh:
            json.dump(data, fh, indent=1)
ACTS = st.sampled_from(["none", "relu", "gelu", "gelu_tanh", "silu"])
LAYOUTS = st.sampled_from(["contiguous", "transposed", "row_stride", "offset"])


def _layout(x: torch.Tensor, how: str) -> torch.Tensor:
    """The same values in another memory layout."""
    r, c = x.shape
    if how == "transposed":
        return x.t().contiguous().t()
    if how == "row_stride":  # rows further apart than K
        big = torch.empty(r, c + 5, dtype=x.dtype, device=x.device)
        big[:, :c] = x
        return big[:, :c]
    if how == "offset":  # storage offset of one element: an unaligned base pointer
        flat = torch.empty(r * c + 1, dtype=x.dtype, device=x.device)
        v = flat[1:].view(r, c)
        v.copy_(x)
        return v
    return x


def _gemm_case(device, m, n, k, dtype, act, bias, residual, layout_a, layout_b, alpha, beta, out32=False,
               lead3=False):
    out = torch.float32 if out32 else dtype
    a = _layout(fresh((m, k), dtype, device), layout_a)
    b = _layout(fresh((n, k), dtype, device, scale=k ** -0.5 if k else 1.0), layout_b)
    bias_t = {None: None, "out": fresh((n,), out, device), "f32": fresh((n,), torch.float32, device)}[bias]
    res = _layout(fresh((m, n), out, device), layout_a) if residual else None
    if lead3:  # [..., K] with two leading dims: [2, m/2, K] when m is even, else [m, 1, K]
        lead = (2, m // 2) if m % 2 == 0 else (m, 1)
        a = a.reshape(*lead, k)
        res = res.reshape(*lead, n) if res is not None else None
    out_dtype = torch.float32 if out32 else None
    p = Problem(a, b, bias_t, res, act, alpha, beta, out_dtype)
    what = (f"gemm {m}x{n}x{k} {dtype} out={out} {act} bias={bias} res={residual} {layout_a}/{layout_b} "
            f"alpha={alpha} beta={beta} lead3={lead3}")

    def run(report):
        poison_next_output(m * n, device)
        got = cutlass_gemm.gemm(a, b, bias=bias_t, residual=res, activation=act, alpha=alpha, beta=beta,
                                out_dtype=out_dtype)
        check_result(got, p, f"fuzz {what}", report)

    _run_case("gemm", torch.device(device).type, what, run)


GEMM_ARGS = dict(m=DIMS, n=DIMS, k=DIMS, dtype=st.sampled_from([torch.bfloat16, torch.float16]), act=ACTS,
                 bias=st.sampled_from([None, "out", "f32"]), residual=st.booleans(), layout_a=LAYOUTS,
                 layout_b=LAYOUTS, alpha=st.sampled_from([1.0, 0.5, -2.0]), beta=st.sampled_from([1.0, 0.25]),
                 out32=st.booleans(), lead3=st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**GEMM_ARGS)
def test_fuzz_gemm_cpu(**kw):
    _gemm_case("cpu", **kw)


@pytest.mark.gpu
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(**dict(GEMM_ARGS, m=GPU_DIMS, n=GPU_DIMS, k=GPU_DIMS))
def test_fuzz_gemm_gpu(**kw):
    _gemm_case("cuda", **kw)


FP8_PAIRS = [(torch.float8_e4m3fn, torch.float8_e4m3fn), (torch.float8_e4m3fn, torch.float8_e5m2),
             (torch.float8_e5m2, torch.float8_e4m3fn)]


def _scaled_case(device, m, n, k, scales, act, bias, residual, layout_a, accumulate, pair=0, beta=1.0, lead3=False):
    from cutlass_gemm import quantize_fp8

    ga, gb = {"tensor": ("tensor", "tensor"), "row_col": ("row", "row"), "row_tensor": ("row", "tensor"),
              "tensor_col": ("tensor", "row"), "blockwise": ("1x128", "128x128")}[scales]
    da, db = FP8_PAIRS[0 if scales == "blockwise" else pair]  # blockwise is e4m3 x e4m3 only
    a8, sa = quantize_fp8(torch.randn(m, k, device=device) * 2, ga, da)
    b8, sb = quantize_fp8(torch.randn(n, k, device=device) * (k ** -0.5 if k else 1.0), gb, db)
    a8 = _layout(a8.view(torch.uint8), layout_a).view(da)
    bias_t = {None: None, "out": fresh((n,), torch.bfloat16, device), "f32": fresh((n,), torch.float32, device)}[bias]
    res = fresh((m, n), torch.bfloat16, device) if residual else None
    if lead3:
        lead = (2, m // 2) if m % 2 == 0 else (m, 1)
        a8 = a8.reshape(*lead, k)
        res = res.reshape(*lead, n) if res is not None else None
    p = ScaledProblem(a8, b8, sa, sb, bias_t, res, act, beta, accumulate)
    what = (f"scaled_mm {m}x{n}x{k} {scales} {str(da)[6:]}x{str(db)[6:]} {act} bias={bias} res={residual} "
            f"beta={beta} {accumulate} {layout_a} lead3={lead3}")

    def run(report):
        poison_next_output(m * n, device)
        out = cutlass_gemm.scaled_mm(*p.args(), **p.kwargs())
        check_scaled_result(out, p, f"fuzz {what}", report)

    _run_case("scaled_mm", torch.device(device).type, what, run)


SCALED_ARGS = dict(m=DIMS, n=DIMS, k=DIMS,
                   scales=st.sampled_from(["tensor", "row_col", "row_tensor", "tensor_col", "blockwise"]),
                   act=ACTS, bias=st.sampled_from([None, "out", "f32"]), residual=st.booleans(), layout_a=LAYOUTS,
                   accumulate=st.sampled_from(["accurate", "fast"]), pair=st.sampled_from(range(len(FP8_PAIRS))),
                   beta=st.sampled_from([1.0, -0.5]), lead3=st.booleans())


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(**SCALED_ARGS)
def test_fuzz_scaled_mm_cpu(**kw):
    _scaled_case("cpu", **kw)


@pytest.mark.gpu
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(**dict(SCALED_ARGS, m=GPU_DIMS, n=GPU_DIMS, k=GPU_DIMS))
def test_fuzz_scaled_mm_gpu(**kw):
    _scaled_case("cuda", **kw)
