"""Blackwell (SM100) kernels without an SM100 GPU: the table, the generated units, the host side
of every kernel (can_implement / workspace size), the sm_100a code in the built library, and
run-time dispatch by arch (an SM90 GPU never selects an SM100 kernel, and the reverse).

The correctness suites (tests/test_gpu_*.py) run every compiled kernel of the GPU's own arch,
so on an SM100 GPU they exercise these kernels on hardware.
"""

import glob
import itertools
import os
import shutil
import subprocess
import sys
import warnings

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt

from test_kernel_table import _generator

try:
    from cutlass_gemm import _build_info

    BUILT_ARCHS = set(_build_info.ARCHS)
except ImportError:  # pragma: no cover
    BUILT_ARCHS = set()

SM90 = [k for k in kt.KERNELS if k.arch == 90]
SM100 = [k for k in kt.KERNELS if k.arch == 100]
MASK = dict(zip(configs.kernels(), configs._compiled_mask()))

# The SM90 kernel ids before SM100 existed (ids are positions in the table; C++ uses them). Later
# SM90 kernels are appended after these, so these never move.
SM90_IDS = [
    "sm90_bf16_t128x256x64_c2x1_coop", "sm90_bf16_t128x128x64_c1x2_pingpong", "sm90_bf16_t128x128x64_c1x1_coop",
    "sm90_bf16_t64x128x64_c1x1_pingpong_st7", "sm90_f16_t128x256x64_c2x1_coop", "sm90_f16_t128x128x64_c1x2_pingpong",
    "sm90_f16_t128x128x64_c1x1_coop", "sm90_f16_t64x128x64_c1x1_pingpong",
    "sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop", "sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong",
    "sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong", "sm90_e4m3_scaled_promoted_t128x192x128_c1x2_coop",
    "sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop", "sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong",
    "sm90_e4m3xe5m2_scaled_fast_t128x128x128_c1x2_pingpong", "sm90_e4m3xe5m2_scaled_promoted_t128x128x128_c1x2_coop",
    "sm90_e5m2xe4m3_scaled_fast_t128x128x128_c1x2_pingpong", "sm90_e5m2xe4m3_scaled_promoted_t128x128x128_c1x2_coop",
    "sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop", "sm90_e4m3_blockwise_promoted_t64x128x128_c1x1_pingpong",
    "sm90_bf16_f32out_t128x128x64_c1x1_coop", "sm90_f16_f32out_t128x128x64_c1x1_coop",
]

# Problems every SM100 kernel must accept on the host: decode, prefill, odd M/N, DeepSeek-V3 and
# Llama-3-70B layers. (M, N, K) with K a multiple of 16 and N of 8 (the op pads otherwise).
PROBLEMS = [(1, 4096, 4096), (16, 8192, 8192), (64, 7168, 2048), (100, 1000, 512), (129, 2112, 7168),
            (1000, 1024, 4096), (2048, 28672, 8192), (4093, 7168, 16384), (8192, 8192, 8192)]
B200_SMS = 148


# ---------------------------------------------------------------------------------------------
# The table

def test_sm90_ids_and_names_unchanged():
    assert [k.name for k in kt.KERNELS[: len(SM90_IDS)]] == SM90_IDS
    assert [k.name for k in SM90[: len(SM90_IDS)]] == SM90_IDS


def test_sm100_kernels_follow_the_sm90_ones():
    archs = [k.arch for k in kt.KERNELS]
    assert archs == sorted(archs), "SM100 kernels are appended after every SM90 kernel"


@pytest.mark.parametrize("family", [
    ("bf16", "bf16", "bf16", "none", "f32"), ("f16", "f16", "f16", "none", "f32"),
    ("bf16", "bf16", "f32", "none", "f32"), ("f16", "f16", "f32", "none", "f32"),
    ("e4m3", "e4m3", "bf16", "tensor_row_col", "f32"), ("e4m3", "e5m2", "bf16", "tensor_row_col", "f32"),
    ("e5m2", "e4m3", "bf16", "tensor_row_col", "f32"), ("e4m3", "e4m3", "bf16", "blockwise", "promoted"),
])
def test_table_lists_sm100_family(family):
    ks = [k for k in SM100 if k.family[1:] == family]
    assert ks, f"no SM100 kernel for {family}"


def test_sm100_16bit_ladder_and_small_m():
    for d in ("bf16", "f16"):
        names = {k.name for k in SM100 if k.a == d and k.out == d}
        assert f"sm100_{d}_t256x128x64_c2x1_2sm" in names
        assert f"sm100_{d}_t64x128x64_c1x1_1sm" in names  # small M (decode)


def test_sm100_schedules_and_clusters():
    for k in SM100:
        assert k.schedule in ("1sm", "2sm"), k.name
        if k.schedule == "2sm":
            assert k.cluster[0] % 2 == 0 and k.tile[0] in (128, 256), f"{k.name}: a 2-SM UMMA spans a CTA pair"
        else:
            assert k.tile[0] in (64, 128), f"{k.name}: 1-SM UMMA M is 64 or 128"
        if k.scale == "blockwise":
            assert k.a == k.b == "e4m3" and k.tile[1] % 128 == 0 and k.tile[2] == 128


def test_sm100_budget():
    assert len(SM100) <= kt.MAX_KERNELS_PER_ARCH
    for stem, arch, ids in kt.compile_units():
        if arch == 100:
            assert stem.endswith("_sm100") and len(ids) <= kt.MAX_KERNELS_PER_UNIT


def test_accumulation_axis_on_sm100():
    """SM100 FP8 (tensor/row/col) accumulates in FP32: one kernel set serves both modes; SM90 keeps two."""
    for a, b in (("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")):
        for mode in ("promoted", "fast"):
            assert kt.resolve_accum(100, a, b, "bf16", "tensor_row_col", mode) == "f32"
            assert kt.resolve_accum(90, a, b, "bf16", "tensor_row_col", mode) == mode
    assert kt.resolve_accum(100, "e4m3", "e4m3", "bf16", "blockwise", "promoted") == "promoted"
    assert kt.resolve_accum(100, "bf16", "bf16", "bf16", "none", "f32") == "f32"
    assert not any(k.accum == "fast" for k in SM100)


# ---------------------------------------------------------------------------------------------
# The generated units

def test_sm100_units_are_sm100_only():
    gen = _generator()
    files = gen.expected_files()
    for stem, arch, ids in kt.compile_units():
        text = files[f"csrc/instantiations/{stem}.cu"]
        if arch == 100:
            assert "// Compiled only for sm_100a" in text
            assert "kernels/sm100_" in text and "kernels/sm90_" not in text
            assert "sm90::" not in text.split("namespace cutlass_gemm::kernels", 1)[1]
        else:
            assert "sm100" not in text


def test_sm100_kernel_types():
    gen = _generator()
    for k in SM100:
        t = gen.kernel_type(k)
        assert t.endswith(("sm100::OneSm>", "sm100::TwoSm>")) and ("sm100::TwoSm" in t) == (k.schedule == "2sm"), t
        assert gen.kernel_headers(k)[0] == "kernels/sm100_schedules.cuh"


def test_setup_compiles_each_unit_for_its_own_arch():
    """setup.py's ninja file: sm100 units get only sm_100a, sm90 units only sm_90a."""
    build = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")
    ninjas = [os.path.join(r, f) for r, _, fs in os.walk(build) for f in fs if f == "build.ninja"
              and "cutlass_gemm_kernels" in r] if os.path.isdir(build) else []
    if not ninjas:
        pytest.skip("no build/ tree with the kernel ninja file")
    text = open(max(ninjas, key=os.path.getmtime)).read()
    blocks = text.split("\nbuild ")[1:]
    assert blocks
    for b in blocks:
        src = b.split("\n", 1)[0]
        arch = "100" if "_sm100.cu" in src else "90"
        other = "90" if arch == "100" else "100"
        assert f"code=sm_{arch}a" in b and f"sm_{other}a" not in b, b


# ---------------------------------------------------------------------------------------------
# The host side of every SM100 kernel (no GPU): can_implement and the workspace size

def _require_sm100_build():
    if 100 not in BUILT_ARCHS:
        pytest.skip("this build left SM100 out (CUTLASS_GEMM_ARCHS)")


@pytest.mark.parametrize("kernel", SM100, ids=[k.name for k in SM100])
def test_sm100_host_probe(kernel):
    _require_sm100_build()
    kid = kt.KERNEL_IDS[kernel.name]
    if not MASK[kernel.name]:
        pytest.skip("not compiled in this build (CUTLASS_GEMM_KERNELS)")
    for m, n, k in PROBLEMS:
        status, ws = torch.ops.cutlass_gemm._probe_kernel(kid, m, n, k, B200_SMS).tolist()
        assert status == 0, f"{kernel.name} rejected {m}x{n}x{k}: status {status}"
        assert 0 <= ws < 64 << 20, f"{kernel.name} {m}x{n}x{k}: workspace {ws}"
    # Off TMA's 16-byte rule the kernel itself refuses (the op pads K / N before it gets there).
    align_k = 16 if kernel.a in ("e4m3", "e5m2") else 8
    status, _ = torch.ops.cutlass_gemm._probe_kernel(kid, 128, 256, 512 + align_k // 2, B200_SMS).tolist()
    assert status != 0, f"{kernel.name} accepted a K off the 16-byte rule"


def _cuobjdump():
    """cuobjdump from PATH, the CUDA toolkit, or the nvidia-cuda-cuobjdump wheel (requirements.txt)."""
    cands = [shutil.which("cuobjdump"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "cuobjdump")]
    try:
        import nvidia

        cands += [os.path.join(p, sub, "bin", "cuobjdump") for p in nvidia.__path__ for sub in ("cu13", "cuda_cuobjdump")]
    except ImportError:
        pass
    return next((c for c in cands if c and os.path.exists(c)), None)


def test_so_contains_sm100a_code():
    _require_sm100_build()
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not available")
    so = cutlass_gemm._C.__file__
    out = subprocess.run([tool, "--list-elf", so], capture_output=True, text=True, timeout=120).stdout
    assert "sm_100a" in out, out[-2000:]
    if 90 in BUILT_ARCHS:
        assert "sm_90a" in out
    assert not any(f"sm_{x}" in out for x in ("80", "89", "103", "120")), "only sm_90a / sm_100a cubins"


# ---------------------------------------------------------------------------------------------
# Dispatch by arch (Python explain and the C++ selection, both without a GPU)

FAMILIES = [  # (dtype, b_dtype, out_dtype, scale, accumulate)
    (torch.bfloat16, None, None, "none", "accurate"), (torch.float16, None, None, "none", "accurate"),
    (torch.bfloat16, None, torch.float32, "none", "accurate"), (torch.float16, None, torch.float32, "none", "accurate"),
    (torch.float8_e4m3fn, None, None, "tensor_row_col", "accurate"),
    (torch.float8_e4m3fn, None, None, "tensor_row_col", "fast"),
    (torch.float8_e4m3fn, torch.float8_e5m2, None, "tensor_row_col", "accurate"),
    (torch.float8_e5m2, torch.float8_e4m3fn, None, "tensor_row_col", "fast"),
    (torch.float8_e4m3fn, None, None, "blockwise", "accurate"),
]
MS = [1, 16, 64, 65, 128, 129, 256, 257, 1024, 1025, 4096, 100000]


def _cpp_select(arch, fam, m, n, k, fused=False, activation=False, want_pdl=False):
    from cutlass_gemm._validate import dtype_key

    dtype, b_dtype, out_dtype, scale, accumulate = fam
    a = dtype_key(dtype)
    b = dtype_key(b_dtype) if b_dtype is not None else a
    fp8 = a in ("e4m3", "e5m2")
    out = dtype_key(out_dtype) if out_dtype is not None else ("bf16" if fp8 else a)
    accum = "f32" if not fp8 else ("promoted" if scale == "blockwise" or accumulate == "accurate" else "fast")
    return torch.ops.cutlass_gemm._select_kernel(
        arch, kt.DTYPES.index(a), kt.DTYPES.index(b), kt.DTYPES.index(out), kt.SCALE_MODES.index(scale),
        kt.ACCUMS.index(accum), m, n, k, fused, activation, want_pdl)


@pytest.mark.parametrize("arch", [90, 100])
@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: "-".join(str(x).replace("torch.", "") for x in f))
def test_selection_stays_on_its_arch(arch, fam):
    if arch not in BUILT_ARCHS:
        pytest.skip(f"sm{arch} not built")
    dtype, b_dtype, out_dtype, scale, accumulate = fam
    # (fused, activation): plain; a residual alone; an activation (kernels without its node passed over)
    for m, (fused, act) in itertools.product(MS, ((False, False), (True, False), (True, True))):
        for n, k in ((8192, 8192), (7168, 2048), (1000, 512), (57344, 8192), (2112, 7168)):
            d = configs.explain(m, n, k, dtype, out_dtype=out_dtype, arch=arch, b_dtype=b_dtype, scale=scale,
                                accumulate=accumulate, fused=fused, activation=act)
            spec = kt.KERNELS[kt.KERNEL_IDS[d.kernel]]
            assert spec.arch == arch, f"sm{arch} chose {d}"
            assert spec.activation or not act, f"an activation call got {d}, which lacks the activation node"
            assert _cpp_select(arch, fam, m, n, k, fused, act) == kt.KERNEL_IDS[d.kernel], \
                f"C++ and explain differ at M={m}, fused={fused}, activation={act}"
            assert _cpp_select(arch, fam, m, n, k, fused, act, want_pdl=True) == int(d.pdl), \
                f"C++ and explain differ on PDL at M={m}, fused={fused}, activation={act}: {d}"


def test_shipped_sm90_rules_are_what_the_committed_sweeps_give():
    """SM90 selection moves only with the H200 measurements it is derived from (bench/results/sweeps)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sweeps = sorted(glob.glob(os.path.join(root, "bench", "results", "sweeps", "sweep_*.json")))
    assert sweeps, "bench/results/sweeps/sweep_*.json: the measurements the SM90 rules come from"
    tool = os.path.join(root, "tools", "derive_rules.py")
    r = subprocess.run([sys.executable, tool, *sweeps, "--out", configs.DEFAULT_RULES_FILE, "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_both_archs_have_default_rules():
    for arch in (90, 100):
        rules = [r for r in configs.DEFAULT_RULES if r.spec.arch == arch]
        assert rules and {r.spec.family[1:] for r in rules} >= {("bf16", "bf16", "bf16", "none", "f32")}


def test_sm100_explain_ladder():
    if 100 not in BUILT_ARCHS:
        pytest.skip("sm100 not built")
    pick = lambda m, **kw: configs.explain(m, 8192, 8192, arch=100, **kw).kernel  # noqa: E731
    assert pick(1) == "sm100_bf16_t64x128x64_c1x1_1sm"
    assert pick(256) == "sm100_bf16_t128x128x64_c1x1_1sm"
    assert pick(8192) == "sm100_bf16_t256x128x64_c2x1_2sm"
    for acc in ("accurate", "fast"):  # one kernel set for both FP8 modes
        assert pick(4096, dtype=torch.float8_e4m3fn, accumulate=acc) == "sm100_e4m3_scaled_t256x128x128_c2x1_2sm"
    assert pick(64, dtype=torch.float8_e4m3fn, scale="blockwise") == "sm100_e4m3_blockwise_promoted_t64x128x128_c1x1_1sm"


@pytest.mark.parametrize("arch", [0, 80, 89, 103, 110, 120])
def test_unsupported_arch_selects_nothing(arch):
    for fam in FAMILIES:
        assert _cpp_select(arch, fam, 128, 4096, 4096) == -1
    with pytest.raises(RuntimeError, match="no compiled kernel"):
        configs.explain(128, 4096, 4096, arch=arch)


def test_fp8_config_of_either_mode_accepts_sm100_kernel():
    """A forced SM100 FP8 kernel passes validation with accumulate='accurate' and 'fast' (fake tensors)."""
    a = torch.empty(64, 256, dtype=torch.float8_e4m3fn, device="meta")
    b = torch.empty(128, 256, dtype=torch.float8_e4m3fn, device="meta")
    s = torch.empty(1, device="meta")
    for acc in ("accurate", "fast"):
        out = torch.ops.cutlass_gemm.scaled_mm(a, b, s, s, accumulate=acc, config="sm100_e4m3_scaled_t128x128x128_c1x1_1sm")
        assert out.shape == (64, 128) and out.dtype == torch.bfloat16
    with pytest.raises(RuntimeError, match="does not serve these inputs"):  # the mode still matters on SM90
        torch.ops.cutlass_gemm.scaled_mm(a, b, s, s, accumulate="fast",
                                         config="sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong")


def test_warns_once_on_sm100(monkeypatch):
    """Import-time check: an SM100 device gets one 'not verified on hardware' warning."""
    from cutlass_gemm import _ops

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    ns = torch.ops.cutlass_gemm
    monkeypatch.setattr(ns, "_device_arch", lambda d: 100)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _ops._check_build()
    msgs = [str(x.message) for x in w if "sm_100" in str(x.message)]
    assert len(msgs) == 1 and "not been verified on SM100 hardware" in msgs[0] and "cuda:0, cuda:1" in msgs[0]
