"""bench/ on CPU: suites, CLI parsing, roofline arithmetic, FP8 quantization layouts, the
check-then-time flow (fake timer, CPU reference of the op) and the report files. No GPU needed."""

import argparse
import importlib
import json
import math
import os
import re
import subprocess
import sys

import pytest
import torch

import cutlass_gemm
from bench import cases, cli, metrics, report, runner, suites, timing
from pkg_paths import pythonpath

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fake_timer(fns, sets):
    for fn in fns:
        fn(*sets[0])  # runs each like the real one would
    return [0.5] * len(fns)  # ms


# --- suites and CLI ---------------------------------------------------------------------------

def test_suites_match_benchmarks_md():
    assert suites.SUITES["square"] == [(s, s, s) for s in (1024, 2048, 4096, 8192)]
    llama = {(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)}
    assert set(suites.SUITES["llama3_70b"]) == {(m, n, k) for n, k in llama for m in (1, 16, 64, 128, 512, 2048, 8192)}
    assert len(suites.SUITES["llama3_70b"]) == 28
    ds = {(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)}
    assert set(suites.SUITES["deepseek_v3"]) == {(m, n, k) for n, k in ds for m in (64, 128, 4096)}
    assert len(suites.SUITES["deepseek_v3"]) == 18
    assert suites.SUITES["odd"] == [(1000, 1000, 1000), (77, 4097, 3000), (3, 50000, 256), (8191, 8193, 520)]
    for name, shapes in suites.QUICK.items():
        assert set(shapes) <= set(suites.SUITES[name])


def test_deepgemm_floor_only_quoted_figures():
    assert suites.DEEPGEMM_H800_TFLOPS == {(4096, 7168, 16384): 1358, (4096, 7168, 2048): 1025,
                                           (128, 7168, 16384): 645, (64, 2112, 7168): 206}
    assert all(s in suites.SUITES["deepseek_v3"] for s in suites.DEEPGEMM_H800_TFLOPS)
    assert "H800" in suites.DEEPGEMM_SOURCE and "DeepGEMM" in suites.DEEPGEMM_SOURCE


@pytest.mark.parametrize("text,shape", [("1,2,3", (1, 2, 3)), ("77x4097x3000", (77, 4097, 3000)), (" 8, 9 ,10", (8, 9, 10))])
def test_parse_shape(text, shape):
    assert suites.parse_shape(text) == shape


@pytest.mark.parametrize("text", ["1,2", "1,2,3,4", "0,2,3", "a,b,c", "-1,2,3", ""])
def test_parse_shape_rejects(text):
    with pytest.raises(ValueError, match="M,N,K"):
        suites.parse_shape(text)


def test_parse_args():
    a = cli.parse_args([])
    assert a.suite == list(suites.SUITES) and a.op == ["gemm"] and a.epilogue == ["none"] and a.shapes == []
    assert a.out == os.path.join(ROOT, "bench", "results") and not a.quick and not a.no_compile
    a = cli.parse_args(["--shapes", "1,2,3", "4x5x6"])
    assert a.suite == [] and a.shapes == [(1, 2, 3), (4, 5, 6)]
    a = cli.parse_args(["--suite", "odd,square", "--op", "gemm,scaled_mm", "--epilogue", "bias,bias_gelu_residual",
                        "--scale", "blockwise", "--accumulate", "accurate,fast", "--quick", "--no-compile"])
    assert a.suite == ["odd", "square"] and a.op == ["gemm", "scaled_mm"] and a.epilogue == ["bias", "bias_gelu_residual"]
    assert a.scale == ["blockwise"] and a.accumulate == ["accurate", "fast"] and a.quick and a.no_compile
    assert cli.parse_args(["--suite", "all"]).suite == list(suites.SUITES)


@pytest.mark.parametrize("argv", [["--suite", "cube"], ["--op", "gemv"], ["--epilogue", "gelu"], ["--shapes", "1,2"],
                                  ["--scale", "col"], ["--dtype", "fp8"]])
def test_parse_args_rejects(argv, capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(argv)


def test_plan():
    assert suites.plan(["odd"], [(1, 2, 3)]) == [("odd", suites.SUITES["odd"]), ("custom", [(1, 2, 3)])]
    assert suites.plan(["square"], quick=True) == [("square", [(4096, 4096, 4096)])]


def test_build_cases(monkeypatch, capsys):
    args = cli.parse_args(["--op", "gemm,scaled_mm", "--epilogue", "none,bias_gelu", "--scale", "row,blockwise",
                           "--accumulate", "fast"])
    monkeypatch.delattr(cutlass_gemm, "scaled_mm", raising=False)
    assert [c.tag for c in cli.build_cases(args, "cpu")] == ["gemm_bf16_none", "gemm_bf16_bias_gelu"]
    assert "no scaled_mm" in capsys.readouterr().out
    monkeypatch.setattr(cutlass_gemm, "scaled_mm", fake_scaled_mm, raising=False)
    assert [c.tag for c in cli.build_cases(args, "cpu")][2:] == [
        "scaled_mm_row_fast_none", "scaled_mm_row_fast_bias_gelu", "scaled_mm_blockwise_fast_none",
        "scaled_mm_blockwise_fast_bias_gelu"]


# --- arithmetic -------------------------------------------------------------------------------

def test_bytes_moved():
    n = 4096
    assert metrics.bytes_moved(n, n, n, 2, 2) == 3 * n * n * 2
    # bias [N] + residual [M, N] on top of A, B, D
    assert metrics.bytes_moved(16, 8192, 1024, 2, 2, 2, True) == (16 * 1024 + 8192 * 1024) * 2 + 16 * 8192 * 2 * 2 + 8192 * 2
    assert metrics.bytes_moved(2, 3, 4, 1, 2, extra=100) == (8 + 12) + 12 + 100
    g = cases.GemmCase("bias_gelu_residual", device="cpu")
    assert g.nbytes(5, 6, 7) == (35 + 42) * 2 + 30 * 2 + 6 * 2 + 30 * 2
    assert cases.GemmCase("none", "f16", "cpu").nbytes(5, 6, 7) == (35 + 42 + 30) * 2
    # FP8: 1-byte operands, bf16 out/bias/residual, float32 scales
    s = cases.ScaledMMCase("bias", "blockwise", device="cpu")
    assert s.nbytes(256, 300, 1000) == (256 * 1000 + 300 * 1000) + 256 * 300 * 2 + 300 * 2 + 4 * (256 * 8 + 3 * 8)
    assert cases.ScaledMMCase("none", "tensor", device="cpu").nbytes(4, 4, 4) == 32 + 32 + 8
    assert cases.ScaledMMCase("none", "row", device="cpu").nbytes(4, 5, 4) == 36 + 40 + 4 * 9


def test_roofline_bound():
    f, b = metrics.flops(8192, 8192, 8192), metrics.bytes_moved(8192, 8192, 8192, 2, 2)
    # compute bound: 2 * 8192^3 / 800e12 s
    assert metrics.bound_us(f, b, 800.0, 4000.0) == pytest.approx(2 * 8192**3 / 800e12 * 1e6)
    # memory bound (M = 1): weights once, at 4000 GB/s
    f, b = metrics.flops(1, 8192, 8192), metrics.bytes_moved(1, 8192, 8192, 2, 2)
    assert metrics.bound_us(f, b, 800.0, 4000.0) == pytest.approx(b / 4000e9 * 1e6)
    assert metrics.bound_us(f, b, None, 4000.0) is None and metrics.bound_us(f, b, 800.0, None) is None
    assert metrics.tflops(2 * 10**12, 1e6) == pytest.approx(2.0) and metrics.gbps(10**9, 1e6) == pytest.approx(1.0)
    assert metrics.tflops(1, None) is None


def test_geomean():
    assert metrics.geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert metrics.geomean([2.0, None, float("nan"), 8.0, 0.0]) == pytest.approx(4.0)
    assert metrics.geomean([]) is None and metrics.geomean([None]) is None


def test_rel_err():
    x = torch.ones(4, 4)
    assert metrics.rel_err(x, x) == 0.0
    assert metrics.rel_err(x * 1.01, x) == pytest.approx(0.01, rel=1e-4)
    assert metrics.rel_err(torch.ones(4, 5), x) == math.inf
    assert metrics.rel_err(torch.full((4, 4), float("nan")), x) == math.inf


# --- FP8 inputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("gran,shape", [("tensor", (1,)), ("row", (130, 1)), ("1x128", (130, 3)), ("128x128", (2, 3))])
def test_quantize_layouts_and_roundtrip(gran, shape):
    x = torch.randn(130, 300) * torch.linspace(0.1, 10, 130)[:, None]
    q, s = cases.quantize(x, gran)
    assert q.dtype == torch.float8_e4m3fn and q.shape == x.shape
    assert s.dtype == torch.float32 and tuple(s.shape) == shape == cases.scale_shape(gran, 130, 300)
    assert q.float().abs().max() <= cases.FP8_MAX
    assert metrics.rel_err(cases.dequantize(q, s, gran, torch.float32), x) < 0.05


def test_scale_shapes_match_the_op_spec():
    m, n, k = 64, 2112, 7168
    a, b = cases.SCALE_MODES["blockwise"]
    assert cases.scale_shape(a, m, k) == (m, math.ceil(k / 128))
    assert cases.scale_shape(b, n, k) == (math.ceil(n / 128), math.ceil(k / 128))
    assert cases.scale_shape("row", n, k) == (n, 1) and cases.scale_shape("tensor", m, k) == (1,)


def test_torch_scale_layouts():
    m, n, k = 64, 256, 384
    c = cases.ScaledMMCase("none", "blockwise", device="cpu")
    a8, b8, sa, sb, bias, res, sa_t, sb_t = c.make(m, n, k)
    assert bias is None and res is None
    # outer-dim-major [M, K/128]; b as [K/128 padded to 4, N/128], outer-dim-major
    assert sa_t.shape == (m, 3) and sa_t.stride() == (1, m) and torch.equal(sa_t, sa)
    assert sb_t.shape == (4, 2) and sb_t.stride() == (1, 4) and torch.equal(sb_t[:3], sb.t())
    c = cases.ScaledMMCase("none", "row", device="cpu")
    *_, sa_t, sb_t = c.make(m, n, k)
    assert sa_t.shape == (m, 1) and sb_t.shape == (1, n) and sb_t.is_contiguous()


def test_inputs_use_the_ops_quantizer(monkeypatch):
    """With cutlass_gemm.quantize_fp8, ours gets its scale layouts (here: column-major) and torch the same values."""
    def col_major(x, gran):
        q, s = cases.quantize(x, gran)
        return q, s.t().contiguous().t()

    monkeypatch.setattr(cutlass_gemm, "quantize_fp8", col_major, raising=False)
    a8, b8, sa, sb, _, _, sa_t, sb_t = cases.ScaledMMCase("none", "blockwise", device="cpu").make(64, 256, 384)
    assert sa.stride() == (1, 64) and sb.stride() == (1, 2)
    assert torch.equal(sa_t, sa) and sa_t.stride() == (1, 64) and torch.equal(sb_t[:3], sb.t()) and sb_t.stride() == (1, 4)


def test_selected_kernel_passes_known_keywords(monkeypatch):
    seen = {}

    def explain(m, n, k, dtype=torch.bfloat16, out_dtype=None, scale="none"):
        seen.update(dtype=dtype, out_dtype=out_dtype, scale=scale)
        return cutlass_gemm.configs.Decision("k_fp8", "rule 0 (default)")

    monkeypatch.setattr(cutlass_gemm.configs, "explain", explain)
    assert cases.ScaledMMCase("none", "row", "fast", device="cpu").kernel(8, 16, 32) == "k_fp8"
    assert seen == {"dtype": torch.float8_e4m3fn, "out_dtype": torch.bfloat16, "scale": "tensor_row_col"}
    monkeypatch.setattr(cutlass_gemm.configs, "explain", lambda *a, **k: 1 / 0)
    assert cases.GemmCase("none", device="cpu").kernel(8, 16, 32) is None


def test_rows_record_the_launch_the_op_makes():
    """A row says whether its kernel launched with PDL and how the op launches it, from configs.explain, whose
    `launch` is the op's own C++ (CUTLASS_GEMM_PDL over the rule's flag there: test_cpu's knob child)."""
    from cutlass_gemm import configs

    case = cases.GemmCase("none", device="cpu")
    pp = "sm90_bf16_t64x128x64_c1x1_pingpong_st7"
    configs.add_rule(pp, m=(8, 8), pdl=True)
    configs.add_rule(pp, m=(9, 9))
    configs.add_rule("sm90_bf16_t128x128x64_c1x1_coop_streamk", m=(300, 300))  # 12 tiles: stream-K by default
    try:
        if configs.explain(8, 16, 32).kernel != pp:  # a build without SM90 kernels, or an SM100 GPU
            pytest.skip("needs the SM90 kernels as the current arch")
        assert case.launch(8, 16, 32) == (pp, True) and case.launch(9, 16, 32) == (pp, False)
        assert case.selection(8, 16, 32) == {"kernel": pp, "pdl": True,
                                             "launch": "TMA L2 promotion 256 B, data-parallel"}
        assert case.selection(300, 512, 32)["launch"] == "TMA L2 promotion 128 B, stream-K"
    finally:
        configs.clear_rules()


def test_torch_accepts_fp8():
    assert cases.torch_accepts_fp8(7168, 2048, "row") and cases.torch_accepts_fp8(50000, 256, "tensor")
    assert not cases.torch_accepts_fp8(4097, 3000, "row") and not cases.torch_accepts_fp8(1000, 1000, "tensor")
    assert not cases.torch_accepts_fp8(50000, 256, "blockwise") and cases.torch_accepts_fp8(2112 - 64, 7168, "blockwise")


# --- check-then-time flow on CPU ---------------------------------------------------------------

def fake_scaled_mm(a, b, scale_a, scale_b, *, bias=None, residual=None, activation="none", beta=1.0,
                   out_dtype=torch.bfloat16, accumulate="accurate", config=None):
    """The future op's semantics in plain torch (float32), to exercise the FP8 plumbing."""
    ga = "tensor" if scale_a.numel() == 1 else "row" if scale_a.shape[1] == 1 else "1x128"
    gb = "tensor" if scale_b.numel() == 1 else "row" if scale_b.shape[1] == 1 else "128x128"
    y = cases.dequantize(a, scale_a, ga, torch.float32) @ cases.dequantize(b, scale_b, gb, torch.float32).t()
    y = cases.tail(y, bias, activation == "gelu_tanh")
    return (y if residual is None else y + beta * residual).to(out_dtype)


def test_entries_per_epilogue():
    names = lambda ep: [e.name for e in cases.GemmCase(ep, device="cpu").entries(8, 8, 8, compile=False)]  # noqa: E731
    assert names("none") == ["cutlass_gemm", "cuBLAS mm"]
    assert names("bias") == ["cutlass_gemm", "cuBLAS mm (no epilogue)", "eager addmm"]
    assert names("bias_gelu") == ["cutlass_gemm", "cuBLAS mm (no epilogue)", "eager addmm+gelu", "torch._addmm_activation"]
    assert names("bias_gelu_residual") == ["cutlass_gemm", "cuBLAS mm (no epilogue)", "eager addmm+gelu+add",
                                           "torch._addmm_activation+add"]
    ents = cases.GemmCase("bias_residual", device="cpu").entries(8, 8, 8, compile=True)  # torch.compile is lazy
    assert ents[-1].name == "torch.compile addmm+add" and ents[-1].check
    assert cases.GemmCase("none", device="cpu").entries(8, 8, 8, compile=True)[-1].name == "torch.compile mm"
    s = cases.ScaledMMCase("bias", "tensor", device="cpu")
    assert s.entries(8, 8, 8, compile=True)[-1].name == "torch.compile _scaled_mm tensor(+bias)"
    assert cases.ScaledMMCase("bias_residual", "blockwise", device="cpu").torch_name == "torch._scaled_mm blockwise+bias+add"
    assert not ents[1].check  # plain mm is another expression: timed, not compared
    s = cases.ScaledMMCase("bias_gelu_residual", "row", "fast", device="cpu")
    assert [e.name for e in s.entries(8, 4097, 16, compile=False)] == ["cutlass_gemm", "torch._scaled_mm row fast(+bias)+gelu+add"]
    assert "dequantize" in s.torch_entries(8, 4097, 16)[0].note and not s.torch_entries(8, 4096, 16)[0].note


@pytest.mark.parametrize("ep", list(cases.EPILOGUES))
def test_run_shape_gemm_cpu(ep):
    case = cases.GemmCase(ep, device="cpu")
    row = runner.run_shape(case, "custom", 33, 40, 24, compile=False, timer=fake_timer)
    assert row["ours"]["status"] == "ok" and row["ours"]["us"] == 500.0 and row["ours"]["err"] < 2e-2
    assert row["kernel"] == cutlass_gemm.configs.explain(33, 40, 24, fused=case.ep.fused, activation=case.ep.gelu).kernel
    for name, r in row["competitors"].items():
        assert r["status"] == "ok" and r["us"] == 500.0, name
    assert row["flops"] == 2 * 33 * 40 * 24 and row["published"] is None


def test_run_shape_fail_and_error(monkeypatch):
    case = cases.GemmCase("bias_gelu", device="cpu")
    monkeypatch.setattr(case, "ours", lambda a, b, bias, res: torch.zeros(a.shape[0], b.shape[0], dtype=a.dtype))

    def broken(*args):
        raise RuntimeError("no kernel for you\nsecond line")

    monkeypatch.setattr(case, "addmm_activation", broken)
    row = runner.run_shape(case, "custom", 16, 32, 64, compile=False, timer=fake_timer)
    assert row["ours"]["status"] == "FAIL" and row["ours"]["us"] is None and row["ours"]["err"] == pytest.approx(1.0)
    bad = row["competitors"]["torch._addmm_activation"]
    assert bad["status"] == "error" and bad["us"] is None and bad["note"] == "RuntimeError: no kernel for you"
    assert row["competitors"]["eager addmm+gelu"]["status"] == "ok"


def test_run_shape_times_contenders_together():
    """Every contender that passed its check goes to ONE timer call (one after the other, or
    interleaved with --interleave); a contender
    whose capture fails there is an error with its message, the others keep their numbers."""
    calls = []

    def timer(fns, sets):
        calls.append(len(fns))
        return [RuntimeError("capture failed\nmore") if i == 1 else 0.25 for i in range(len(fns))]

    case = cases.GemmCase("bias_gelu", device="cpu")
    row = runner.run_shape(case, "custom", 16, 32, 64, compile=False, timer=timer)
    names = [e.name for e in case.entries(16, 32, 64, False)]
    assert calls == [len(names)] and len(names) >= 3
    assert row["ours"]["us"] == 250.0
    second = row["competitors"][names[1]]
    assert second["status"] == "error" and second["us"] is None and second["note"].endswith("RuntimeError: capture failed")
    assert all(row["competitors"][n]["us"] == 250.0 for n in names[2:])


def test_run_shape_rounds_geomean_fresh_inputs_alternating_order():
    """--rounds 3: three timer calls, each on newly made inputs, the contender order reversed in
    the middle one; every time is the geometric mean of its rounds; a contender failing in any round gets
    no number; the check runs once, before the first round."""
    case = cases.GemmCase("bias_gelu", device="cpu")
    names = [e.name for e in case.entries(16, 32, 64, False)]
    seen, made = [], []
    real = case.make
    case.make = lambda m, n, k: made.append(1) or real(m, n, k)
    fail_in = {1: names[-1]}  # the last contender fails in round 2 only

    def timer(fns, sets):
        r = len(seen)
        order = [next(nm for nm in names if case_fns[nm] is fn) for fn in fns]
        seen.append((order, len(made)))
        return [RuntimeError("replay failed") if fail_in.get(r) == nm else 0.1 * (r + 1) + 0.01 * i
                for i, nm in enumerate(order)]

    entries = case.entries(16, 32, 64, False)
    case_fns = {e.name: e.fn for e in entries}
    case.entries = lambda *a, **k: entries
    row = runner.run_shape(case, "custom", 16, 32, 64, compile=False, timer=timer, rounds=3)
    assert len(seen) == 3 and seen[0][1] < seen[1][1] < seen[2][1]  # new inputs made before rounds 2 and 3
    assert seen[0][0] == names and seen[1][0] == names[::-1] and seen[2][0] == names[:-1]
    mid = 200.0 + 10 * (len(names) - 1)  # round 2 timed ours last
    assert row["ours"]["us_rounds"] == pytest.approx([100.0, mid, 300.0])
    assert row["ours"]["us"] == pytest.approx((100.0 * mid * 300.0) ** (1 / 3))
    last = row["competitors"][names[-1]]
    assert last["status"] == "error" and last["us"] is None and "replay failed" in last["note"]


def test_run_shape_max_rounds_adds_rounds_while_the_ratio_is_uncertain():
    """--max-rounds: after --rounds, one more round at a time while the standard error of some competitor's
    mean log ratio against ours is above 1.8%, up to max_rounds; steady rounds stop at --rounds; the stored
    rounds and the geometric mean cover every round timed."""
    case = cases.GemmCase("none", device="cpu")
    entries = case.entries(16, 32, 64, False)
    case.entries = lambda *a, **k: entries
    ours = entries[0].fn

    def timer_with(comp_ms):
        calls = []

        def timer(fns, sets):
            calls.append(1)
            return [0.1 if fn is ours else comp_ms(len(calls) - 1) for fn in fns]
        return timer, calls

    def rows(comp_ms, **kw):
        timer, calls = timer_with(comp_ms)
        return runner.run_shape(case, "custom", 16, 32, 64, compile=False, timer=timer, rounds=3, **kw), calls

    row, calls = rows(lambda r: 0.1, max_rounds=7)
    assert len(calls) == 3 and len(row["ours"]["us_rounds"]) == 3
    # one 10% round among steady ones: the standard error falls below 1.8% after 6 rounds
    row, calls = rows(lambda r: 0.11 if r == 1 else 0.1, max_rounds=9)
    assert len(calls) == 6
    comp = next(iter(row["competitors"].values()))
    assert comp["us_rounds"] == pytest.approx([100.0, 110.0, 100.0, 100.0, 100.0, 100.0])
    assert comp["us"] == pytest.approx(runner.geomean(comp["us_rounds"]))
    _, calls = rows(lambda r: 0.1 + 0.01 * (r % 2), max_rounds=7)  # never settles: stops at max_rounds
    assert len(calls) == 7
    _, calls = rows(lambda r: 0.11 if r == 1 else 0.1)  # default: no extra rounds
    assert len(calls) == 3
    timer, calls = timer_with(lambda r: 0.1)  # --rounds 1: a second round to judge by, then steady
    runner.run_shape(case, "custom", 16, 32, 64, compile=False, timer=timer, rounds=1, max_rounds=5)
    assert len(calls) == 2
    assert metrics.rounds_stderr([1.0, 1.0], [1.0, 1.0]) == 0.0 and metrics.rounds_stderr([1.0], [1.0]) is None
    assert metrics.rounds_stderr([1.0, 0.0], [1.0, 1.0]) is None and metrics.rounds_spread([1.0, -1.0], [1.0, 1.0]) is None
    assert metrics.rounds_spread([1.0, 1.0], [1.0, 1.1]) == pytest.approx(0.1)
    assert metrics.rounds_spread([1.0], [1.0]) is None and metrics.rounds_spread([1.0, 2.0], [1.0]) is None
    with pytest.raises(SystemExit):
        cli.parse_args(["--rounds", "3", "--max-rounds", "2"])


def test_rounds_split_the_timed_replays():
    """--rounds N times 15 replays in all, split between rounds, at least 5 per round."""
    assert [timing.replays_per_round(r) for r in (1, 2, 3, 4, 5)] == [15, 8, 5, 5, 5]


def test_run_suite_survives_a_shape(monkeypatch):
    case = cases.GemmCase("none", device="cpu")
    real = case.make
    monkeypatch.setattr(case, "make", lambda m, n, k: real(m, n, k) if m != 2 else (_ for _ in ()).throw(MemoryError("oom")))
    rows = runner.run_suite(case, "custom", [(1, 8, 8), (2, 8, 8), (3, 8, 8)], compile=False, timer=fake_timer)
    assert [r["ours"]["status"] for r in rows] == ["ok", "error", "ok"] and rows[1]["ours"]["note"] == "MemoryError: oom"
    doc = report.document(case.describe(), "custom", rows, ENV, CEIL, "bf16", {})
    assert "| 2x8x8 | `" in report.markdown(doc) and doc["summary"]["cuBLAS mm"]["n"] == 2


@pytest.mark.parametrize("scale", list(cases.SCALE_MODES))
@pytest.mark.parametrize("shape", [(64, 256, 256), (77, 4097, 300)])
def test_run_shape_scaled_mm_cpu(monkeypatch, scale, shape):
    monkeypatch.setattr(cutlass_gemm, "scaled_mm", fake_scaled_mm, raising=False)
    case = cases.ScaledMMCase("bias_gelu_residual", scale, "accurate", device="cpu")
    row = runner.run_shape(case, "custom", *shape, compile=False, timer=fake_timer)
    assert row["ours"]["status"] == "ok" and row["ours"]["err"] < 5e-2
    torch_row = row["competitors"][case.torch_name]
    if shape[1] % 16:
        assert torch_row["status"] == "ok" and "dequantize" in torch_row["note"]
    elif scale != "blockwise":  # torch's CPU _scaled_mm has no blockwise form; the H200's does
        # CPU _scaled_mm support differs across torch versions (2.11 rejects some rowwise forms):
        # either it runs and is checked, or its error is reported; never a FAIL or a crash.
        assert torch_row["status"] in ("ok", "error")
        assert torch_row["note"] == "" if torch_row["status"] == "ok" else torch_row["note"]


def test_published_floor_only_for_blockwise():
    assert cases.ScaledMMCase("none", "blockwise", device="cpu").published(4096, 7168, 2048)["tflops"] == 1025
    assert cases.ScaledMMCase("none", "blockwise", device="cpu").published(4096, 7168, 7168) is None
    assert cases.ScaledMMCase("none", "row", device="cpu").published(4096, 7168, 2048) is None
    assert cases.GemmCase("none", device="cpu").published(4096, 7168, 2048) is None


# --- report -----------------------------------------------------------------------------------

ENV = {"gpu": "Test GPU", "driver_version": "1.0", "torch": "2.x", "cuda": "13.0", "date": "2025-01-01T00:00:00+00:00",
       "git_commit": "0" * 40, "git_dirty": True, "command": "python -m bench --suite deepseek_v3"}
CEIL = {"fp8_tflops": 1400.0, "hbm_gbps": 4000.0, "method": dict(runner.CEILING_METHODS)}


def _res(us, status="ok", note=""):
    return {"status": status, "us": us if status == "ok" else None, "err": 1e-3 if status != "error" else None, "note": note}


def synthetic_rows():
    f = metrics.flops
    mk = lambda m, n, k, ours, comps, pub=None: {  # noqa: E731
        "suite": "deepseek_v3", "m": m, "n": n, "k": k, "kernel": "sm90_k", "flops": f(m, n, k),
        "bytes": metrics.bytes_moved(m, n, k, 1, 2), "ours": ours, "competitors": comps,
        "published": {"name": "DeepGEMM H800 (published, not same-run)", "tflops": pub, "source": suites.DEEPGEMM_SOURCE} if pub else None}
    return [
        mk(4096, 7168, 2048, _res(100.0), {"A": _res(110.0), "B": _res(200.0)}, 1025.0),
        mk(128, 7168, 16384, _res(50.0), {"A": _res(40.0), "B": _res(0, "error", "RuntimeError: nope")}, 645.0),
        mk(64, 2112, 7168, _res(0, "FAIL"), {"A": _res(10.0), "B": _res(0, "FAIL")}, 206.0),
        mk(4096, 4096, 7168, _res(80.0), {"A": _res(80.0, note="torch path: dequantize")}),
    ]


def make_doc():
    return report.document({"title": "scaled_mm test", "op": "scaled_mm"}, "deepseek_v3", synthetic_rows(), ENV, CEIL,
                           "fp8", {"cutlass_gemm": 7.5, "A": None})


def test_document_figures():
    doc = make_doc()
    r0 = doc["rows"][0]
    assert r0["ours"]["tflops"] == pytest.approx(2 * 4096 * 7168 * 2048 / 100e-6 / 1e12)
    assert r0["ours"]["gbps"] == pytest.approx(r0["bytes"] / 100e-6 / 1e9)
    bound = max(r0["flops"] / 1400e12, r0["bytes"] / 4000e9) * 1e6
    assert r0["bound_us"] == pytest.approx(bound) and r0["ours"]["pct_bound"] == pytest.approx(100 * bound / 100.0)
    assert r0["competitors"]["A"]["ratio"] == pytest.approx(1.1) and r0["competitors"]["B"]["ratio"] == pytest.approx(2.0)
    assert r0["published"]["ratio"] == pytest.approx(r0["ours"]["tflops"] / 1025.0)
    assert doc["rows"][2]["competitors"]["A"]["ratio"] is None  # ours FAILed: no ratio
    s = doc["summary"]
    assert s["A"]["geomean"] == pytest.approx((1.1 * 0.8 * 1.0) ** (1 / 3))
    assert s["A"]["min"] == pytest.approx(0.8) and s["A"]["min_shape"] == "128x7168x16384"
    assert (s["A"]["n"], s["A"]["missing"]) == (3, 1)
    assert s["B"]["n"] == 1 and s["B"]["geomean"] == pytest.approx(2.0)
    assert s["DeepGEMM H800 (published, not same-run)"]["n"] == 2


def test_markdown(tmp_path):
    doc = make_doc()
    paths = report.write_all(str(tmp_path), "deepseek_v3_scaled_mm_x", doc)
    md = (tmp_path / "deepseek_v3_scaled_mm_x.md").read_text()
    assert str(tmp_path / "deepseek_v3_scaled_mm_x.md") in paths and str(tmp_path / "deepseek_v3_scaled_mm_x.json") in paths
    lines = md.splitlines()
    head = next(line for line in lines if line.startswith("| M x N x K"))
    assert head == "| M x N x K | kernel | µs | TFLOP/s | GB/s | % bound | A | B | DeepGEMM H800 (published, not same-run) |"
    row0 = next(line for line in lines if line.startswith("| 4096x7168x2048"))
    assert "| 100.0 |" in row0 and "(1.10x)" in row0 and "(2.00x)" in row0 and "1025 (" in row0
    row2 = next(line for line in lines if line.startswith("| 64x2112x7168"))
    assert "FAIL (err 1.0e-03)" in row2 and "| FAIL |" in row2
    assert "error*" in next(line for line in lines if line.startswith("| 128x7168x16384"))
    assert "- vs A: geomean 0.96x, min 0.80x at 128x7168x16384 (n=3, missing 1)" in md
    assert "ours without a number (FAIL/error): 64x2112x7168" in md
    assert suites.DEEPGEMM_SOURCE in md and "not a same-run ratio" in md
    assert "cutlass_gemm 7.5, A —" in md
    assert "128x7168x16384 B: RuntimeError: nope" in md and "4096x4096x7168 A: torch path: dequantize" in md
    assert "commit 000000000000 (dirty)" in md and "`python -m bench --suite deepseek_v3`" in md


def test_json(tmp_path):
    doc = make_doc()
    doc["rows"][0]["ours"]["err"] = float("nan")
    path = tmp_path / "x.json"
    report.write_json(str(path), doc)
    data = json.loads(path.read_text())
    assert data["environment"]["gpu"] == "Test GPU" and data["environment"]["git_dirty"] is True
    assert data["ceilings"]["fp8_tflops"] == 1400.0 and data["peak"]["gbps"] == 4000.0
    assert data["rows"][0]["kernel"] == "sm90_k" and data["rows"][0]["ours"]["err"] is None
    assert data["rows"][1]["competitors"]["B"]["status"] == "error"
    assert data["summary"]["A"]["min_shape"] == "128x7168x16384"
    assert data["eager_overhead_us"] == {"shape": [16, 1024, 1024], "us": {"cutlass_gemm": 7.5, "A": None}}


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    doc = make_doc()
    assert report.write_plot(str(tmp_path / "p.png"), doc)
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import raises ImportError
    assert not report.write_plot(str(tmp_path / "p.png"), make_doc())
    assert not (tmp_path / "p.png").exists()


def test_environment():
    env = report.environment(["--suite", "odd", "--shapes", "1,2,3"])
    assert env["command"] == "python -m bench --suite odd --shapes 1,2,3"
    assert env["torch"] == torch.__version__ and env["date"]
    assert env["git_commit"] is None or re.fullmatch(r"[0-9a-f]{7,40}", env["git_commit"])
    assert env["git_dirty"] in (None, True, False)


def test_environment_takes_the_commit_a_copied_tree_is_told(monkeypatch):
    """On a machine that got a copied tree, CUTLASS_GEMM_COMMIT names the commit (short or full)."""
    monkeypatch.setenv("CUTLASS_GEMM_COMMIT", "93783bb")
    env = report.environment([])
    assert env["git_commit"] == "93783bb" and env["git_dirty"] is None


def test_run_end_to_end_cpu(tmp_path, monkeypatch, capsys):
    """The CLI's run() with CPU cases and a fake timer: every file per suite and case, tables printed."""
    monkeypatch.setattr(cutlass_gemm, "scaled_mm", fake_scaled_mm, raising=False)
    argv = ["--shapes", "33,40,24", "--op", "gemm,scaled_mm", "--epilogue", "bias_gelu", "--scale", "tensor",
            "--no-compile", "--out", str(tmp_path)]
    args = cli.parse_args(argv)
    paths = cli.run(args, argv, cli.build_cases(args, "cpu"), timer=fake_timer,
                    ceilings={"bf16_tflops": 800.0, "fp8_tflops": 1400.0, "hbm_gbps": 4000.0, "method": {}})
    names = sorted(os.listdir(tmp_path))
    for stem in ("custom_gemm_bf16_bias_gelu", "custom_scaled_mm_tensor_accurate_bias_gelu"):
        assert stem + ".md" in names and stem + ".json" in names
    assert all(os.path.exists(p) for p in paths)
    data = json.loads((tmp_path / "custom_gemm_bf16_bias_gelu.json").read_text())
    assert data["rows"][0]["ours"]["status"] == "ok" and data["config"]["epilogue"] == "bias_gelu"
    assert data["environment"]["command"].startswith("python -m bench --shapes 33,40,24")
    out = capsys.readouterr().out
    assert "| 33x40x24 |" in out and "geomean 1.00x" in out


def test_interleaved_runs_are_kept_apart(tmp_path):
    """--interleave (a diagnostic timing order) writes *_interleaved files, marks the config, and the
    README table (bench.summary) leaves them out."""
    from bench import summary

    argv = ["--shapes", "16,32,64", "--no-compile", "--interleave", "--out", str(tmp_path)]
    args = cli.parse_args(argv)
    assert args.interleave and not cli.parse_args([]).interleave
    cli.run(args, argv, cli.build_cases(args, "cpu"), timer=fake_timer,
            ceilings={"bf16_tflops": 800.0, "fp8_tflops": 1400.0, "hbm_gbps": 4000.0, "method": {}})
    data = json.loads((tmp_path / "custom_gemm_bf16_none_interleaved.json").read_text())
    assert data["config"]["interleave"] is True and summary.rows(str(tmp_path)) == []


def test_progress_fallback(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    bar = runner.progress(2, "odd gemm")
    bar.set_postfix_str("1x2x3")
    bar.update(1)
    bar.close()
    err = capsys.readouterr().err
    assert "[odd gemm] 0/2 1x2x3" in err and "[odd gemm] 1/2 done" in err


def test_entry_points(tmp_path):
    # cwd outside the checkout: `python -m` puts the cwd first, and an installed cutlass_gemm must win.
    env = dict(os.environ, PYTHONPATH=pythonpath())
    for cmd in ([sys.executable, "-m", "bench", "--help"], [sys.executable, os.path.join(ROOT, "bench", "sweep.py"), "--help"]):
        p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and "usage" in p.stdout, p.stderr
    for name in ("demo", "fallback_cost"):  # package mode: relative imports
        assert importlib.import_module(f"bench.{name}").graph_time_ms is timing.graph_time_ms
    assert importlib.import_module("bench.sweep").graph_times_ms is runner.graph_times_ms is timing.graph_times_ms


def test_a_sweep_cut_short_keeps_the_shapes_it_measured(tmp_path, monkeypatch):
    """bench.sweep rewrites its JSON after every shape: killed at the third shape (a call's timeout),
    the file holds the first two, marked incomplete; tools/derive_rules.py reads it and says so."""
    sweep = importlib.import_module("bench.sweep")
    names = ["sm90_bf16_t64x128x64_c1x1_pingpong_st7", "sm90_bf16_t128x128x64_c1x1_coop"]
    monkeypatch.setattr(sweep, "family", lambda case: names)
    calls = []

    def fake_shape(case, ns, m, n, k, reverse=False):
        if len(calls) == 2:
            raise KeyboardInterrupt  # what a timeout's SIGTERM would leave behind
        calls.append((m, n, k))
        return {"m": m, "n": n, "k": k, "us": {ns[0]: 10.0 + len(calls), ns[1]: 12.0}, "rel_err": {},
                "competitor": {"name": "cuBLAS mm", "us": 11.0}, "selected": ns[0]}

    monkeypatch.setattr(sweep, "sweep_shape", fake_shape)
    out = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        sweep.main(["--suite", "square", "--json", str(out)])
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and [(r["m"], r["n"], r["k"]) for r in doc["rows"]] == calls
    assert not (tmp_path / "s.json.tmp").exists()
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"version": 1, "about": "test", "families": []}))
    # --ab / --pdl / --gpu-ab '': the repository's A/B files were measured on GPUs; this made-up sweep names none
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "derive_rules.py"), str(out), "--out", str(rules),
                        "--ab", "", "--pdl", "", "--gpu-ab", ""], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "a partial sweep (bench.sweep was stopped), cut short after 2 shapes" in p.stdout
    assert "cut short after 2 shapes" in json.loads(rules.read_text())["families"][0]["source"]
    # a path it cannot write fails before the first shape runs
    calls.clear()
    with pytest.raises(OSError):
        sweep.main(["--suite", "square", "--json", str(tmp_path / "no_such_dir" / "s.json")])
    assert calls == []


def test_a_sweep_of_ad_hoc_shapes_runs_only_those(tmp_path, monkeypatch):
    """bench.sweep --shapes: only the given shapes (suite 'custom'), no suite unless asked; a bad
    shape is an argparse error naming it, before any kernel runs."""
    sweep = importlib.import_module("bench.sweep")
    names = ["sm90_bf16_t64x128x64_c1x1_pingpong_st7"]
    monkeypatch.setattr(sweep, "family", lambda case: names)
    calls = []

    def fake_shape(case, ns, m, n, k, reverse=False):
        calls.append((m, n, k))
        return {"m": m, "n": n, "k": k, "us": {ns[0]: 10.0}, "rel_err": {},
                "competitor": {"name": "cuBLAS mm", "us": 11.0}, "selected": ns[0]}

    monkeypatch.setattr(sweep, "sweep_shape", fake_shape)
    out = tmp_path / "s.json"
    assert sweep.main(["--shapes", "128,10240,8192", "512,10240,8192", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert calls == [(128, 10240, 8192), (512, 10240, 8192)]
    assert [r["suite"] for r in doc["rows"]] == ["custom", "custom"] and doc["complete"] is True
    calls.clear()
    sweep.main(["--suite", "square", "--shapes", "7,8,9", "--json", str(out)])
    assert calls[-1] == (7, 8, 9) and len(calls) == 5  # the suite's four, then the ad hoc one
    calls.clear()
    with pytest.raises(SystemExit):
        sweep.main(["--shapes", "128,10240"])
    assert calls == []


def test_competitor_kernels_arguments_and_gpu_requirement(tmp_path, capsys):
    """bench.competitor_kernels takes bench.sweep's family and shape options: a bad shape or --reps is a
    usage error naming it; without a GPU it says it needs one (exit 2); both entry points start."""
    ck = importlib.import_module("bench.competitor_kernels")
    with pytest.raises(SystemExit):
        ck.main(["--shapes", "128,10240"])
    assert "expected a shape M,N,K of three positive integers, got '128,10240'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ck.main(["--shapes", "1,2,3", "--reps", "0"])
    assert "--reps: expected a positive count, got 0" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert ck.main(["--op", "scaled_mm", "--shapes", "16,64,64"]) == 2
        assert "needs a CUDA GPU" in capsys.readouterr().err
    env = dict(os.environ, PYTHONPATH=pythonpath())
    for cmd in ([sys.executable, "-m", "bench.competitor_kernels", "--help"],
                [sys.executable, os.path.join(ROOT, "bench", "competitor_kernels.py"), "--help"]):
        p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and "--reps" in p.stdout, p.stderr


@pytest.mark.gpu
def test_competitor_kernels_names_both_sides(capsys):
    """On the GPU: one row per competitor, naming our selected kernel and a kernel of each side with its time."""
    ck = importlib.import_module("bench.competitor_kernels")
    assert ck.main(["--shapes", "128,256,512", "--reps", "2"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| 128x256x512 |")]
    assert len(rows) == 1, rows
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[1].startswith("`sm") and "_bf16_" in cells[1] and float(cells[2]) > 0 and cells[3].startswith("`")
    assert cells[4] == "cuBLAS mm" and float(cells[5]) > 0 and cells[6].startswith("`")


@pytest.mark.parametrize("folder, at_least", [("", 17), ("h100", 17)])
def test_bench_results_ran_the_kernels_the_shipped_rules_pick(monkeypatch, folder, at_least):
    """Every row of the committed tables names the kernel that configs.explain gives for it today, on the GPU
    that ran them: re-deriving the rules (or an overlay) without regenerating the tables fails here (the
    torch.compile folder is a separate one-round run, with its own commit in the README). bench/results is the
    H200's (its rules alone), bench/results/h100 the H100's (its overlay first: explain reads the GPU from each
    table). A row may name the kernel that kernel_table.SUCCEEDED_BY replaced by the rules' pick (the same tile,
    a leaner epilogue) until the tables are regenerated; the README says which."""
    from cutlass_gemm import configs
    from cutlass_gemm import kernel_table as kt

    where = os.path.join(ROOT, "bench", "results", folder)
    files = [f for f in sorted(os.listdir(where)) if f.endswith(".json") and ("_gemm_" in f or "_scaled_mm_" in f)]
    assert len(files) >= at_least  # the tables of bench/regenerate.sh core, fused and odd
    for f in files:
        with open(os.path.join(where, f)) as fh:
            doc = json.load(fh)
        gpu = doc["environment"]["gpu"]
        monkeypatch.setattr(configs, "_gpu_name_in_use", gpu if gpu in configs.GPU_OVERLAYS else None)
        fused, act = "gelu" in f or "residual" in f, "gelu" in f
        for r in doc["rows"]:
            m, n, k = r["m"], r["n"], r["k"]
            if "_gemm_" in f:
                e = configs.explain(m, n, k, fused=fused, activation=act, arch=90)
            else:
                scale = "blockwise" if "blockwise" in f else ("row" if "_row_" in f else "tensor")
                e = configs.explain(m, n, k, torch.float8_e4m3fn, scale=scale,
                                    accumulate="fast" if "_fast_" in f else "accurate", fused=fused, activation=act,
                                    arch=90)
            assert e.kernel == kt.current_name(r["kernel"]), \
                f"{folder or '.'}/{f} {m}x{n}x{k} ({gpu}): the table ran {r['kernel']}, the rules now pick {e.kernel}"
            assert e.pdl == r.get("pdl", False), \
                f"{folder or '.'}/{f} {m}x{n}x{k}: the table ran PDL={r.get('pdl')}, the rules say {e.pdl}"


@pytest.mark.parametrize("readme, results", [("README.md", "bench/results"),
                                             ("bench/results/h100/README.md", "bench/results/h100")])
def test_readme_results_table_is_generated_from_bench_results(readme, results):
    """The README's H200 table (and the H100 folder's own README) is bench.summary's output for the committed
    tables beside it."""
    from bench import summary

    readme, results = os.path.join(ROOT, readme), os.path.join(ROOT, results)
    assert summary.main(["--results", results, "--readme", readme, "--check"]) == 0
    table = summary.table(results)
    assert "| llama3_70b (28) | gemm bf16, epilogue none | cuBLAS mm |" in table  # every suite JSON contributes its rows


@pytest.mark.parametrize("readme, results", [("README.md", "bench/results"),
                                             ("bench/results/h100/README.md", "bench/results/h100")])
def test_readme_bar_table_is_generated_from_bench_results(readme, results):
    """The README's bar table (issue #4; and the H100 folder's) is bench.bars' output for the committed tables:
    every bar of shared/benchmarks.md has a row, with a figure wherever its tables are committed."""
    from bench import bars

    readme, results = os.path.join(ROOT, readme), os.path.join(ROOT, results)
    assert bars.main(["--results", results, "--readme", readme, "--check"]) == 0
    table = bars.table(results)
    for bar in ("bf16 GEMM vs cuBLAS", "bf16 bias+GELU+residual", "FP8 row accurate + bias", "FP8 tensor fast + bias",
                "FP8 row bias+GELU+residual vs the eager pipeline", "FP8 blockwise, deepseek_v3", "FP8 accurate (promoted) at 8192^3",
                "M <= 64", "odd shapes", "eager host time"):
        assert f"| {bar}" in table, bar
    assert "no data" not in table


def _bar_doc(suite, stem_title, competitor, rows):
    return {"suite": suite, "title": stem_title, "config": {"title": stem_title, "op": "gemm"},
            "environment": {"git_commit": "abc1234def"}, "summary": {},
            "rows": [{"m": m, "n": n, "k": k, "ours": {"pct_bound": pct},
                      "competitors": {competitor: {"ratio": r}}} for (m, n, k, r, pct) in rows]}


@pytest.mark.parametrize("worst, verdict", [(0.96, "met"), (0.94, "not met")])
def test_bars_judge_the_plain_bf16_bar_from_the_tables(tmp_path, worst, verdict):
    from bench import bars

    (tmp_path / "square_gemm_bf16_none.json").write_text(json.dumps(
        _bar_doc("square", "gemm bf16, epilogue none", "cuBLAS mm", [(1024, 1024, 1024, worst, 90.0), (2048, 2048, 2048, 1.2, 90.0)])))
    (tmp_path / "llama3_70b_gemm_bf16_none.json").write_text(json.dumps(
        _bar_doc("llama3_70b", "gemm bf16, epilogue none", "cuBLAS mm", [(16, 8192, 8192, 1.0, 84.0)])))
    rows = {r[0]: r for r in bars.bar_rows(bars.load(str(tmp_path)), None)}
    plain = rows["bf16 GEMM vs cuBLAS (square + llama3_70b)"]
    assert plain[3] == verdict and f"{worst:.3f}x at 1024x1024x1024 (square)" in plain[2] and plain[4] == "abc1234"
    small = rows["M <= 64: % of the bandwidth bound (every table)"]  # the one M <= 64 row is at 84%
    assert small[3] == "not met" and "1 of 1 rows below 85%" in small[2]
    # bars whose tables are not there say so instead of a figure
    assert rows["FP8 blockwise, deepseek_v3"][2:4] == ("no table deepseek_v3_scaled_mm_blockwise_accurate_none.json", "no data")
    assert rows["eager host time per call"][3] == "no data"


def test_summary_rejects_a_readme_without_the_markers(tmp_path):
    from bench import summary

    p = tmp_path / "README.md"
    p.write_text("# no markers\n")
    assert summary.main(["--readme", str(p), "--check"]) == 2


def test_compare_runs_flags_a_moved_geomean(tmp_path):
    from bench import compare_runs

    def doc(geo, ratio):
        return {"suite": "custom", "config": {"title": "gemm bf16, epilogue none"},
                "summary": {"cuBLAS mm": {"geomean": geo, "min": ratio, "min_shape": "1x2x3", "n": 1}},
                "rows": [{"m": 1, "n": 2, "k": 3, "competitors": {"cuBLAS mm": {"ratio": ratio}}}]}

    old, same, moved = tmp_path / "old", tmp_path / "same", tmp_path / "moved"
    for d, (g, r) in ((old, (1.0, 1.0)), (same, (1.03, 1.04)), (moved, (0.9, 0.9))):
        d.mkdir()
        (d / "x.json").write_text(json.dumps(doc(g, r)))
    assert compare_runs.main([str(old), str(same)]) == 0
    assert compare_runs.main([str(old), str(moved)]) == 1
    assert compare_runs.main([str(old), str(tmp_path)]) == 2  # nothing in common


def test_compare_runs_from_rounds_uses_the_paired_round_ratios(tmp_path):
    """--from-rounds: each ratio is the geometric mean of the per-round ratios, whatever "ratio" says."""
    from bench import compare_runs

    def doc(ours, comp):
        return {"suite": "custom", "config": {"title": "t"}, "summary": {"c": {"geomean": 9.0, "n": 1}},
                "rows": [{"m": 1, "n": 2, "k": 3, "ours": {"us_rounds": ours},
                          "competitors": {"c": {"ratio": 9.0, "us_rounds": comp}}}]}

    old, new = tmp_path / "old", tmp_path / "new"
    for d, rounds in ((old, ([10.0, 20.0, 40.0], [10.0, 20.0, 40.0])), (new, ([10.0, 10.0, 10.0], [20.0, 10.0, 5.0]))):
        d.mkdir()
        (d / "x.json").write_text(json.dumps(doc(*rounds)))
    geo, shapes, _, _ = compare_runs.compare(str(old), str(new), from_rounds=True)
    assert shapes[0][4:6] == pytest.approx((1.0, 1.0)) and geo[0][0] == pytest.approx(0.0)  # 2 * 1 * 0.5 -> 1
    assert compare_runs.round_ratio({"us_rounds": [1.0]}, {}) is None
    for d in (old, new):  # runs without rounds: a clear error, not a comparison of nothing
        (d / "x.json").write_text(json.dumps(dict(doc([1.0], [1.0]), rows=[{"m": 1, "n": 2, "k": 3, "ours": {},
                                                                             "competitors": {"c": {"ratio": 1.0}}}])))
    assert compare_runs.main([str(old), str(new), "--from-rounds"]) == 2


def test_compare_runs_geomeans_over_the_shapes_both_runs_have(tmp_path, capsys):
    """A shape one run lacks (a failed check, a shorter suite) is reported, not folded into a geomean
    move: old {0.5, 2.0} against new {0.5} is no change."""
    from bench import compare_runs

    def doc(ratios):
        rows = [{"m": m, "n": 8, "k": 8, "ours": {}, "competitors": {"c": {"ratio": r}}} for m, r in ratios]
        return {"suite": "custom", "config": {"title": "t"}, "rows": rows,
                "summary": {"c": {"geomean": math.exp(sum(math.log(r) for _, r in ratios) / len(ratios)),
                                  "n": len(ratios)}}}

    old, new = tmp_path / "old", tmp_path / "new"
    for d, ratios in ((old, [(1, 0.5), (2, 2.0)]), (new, [(1, 0.5)])):
        d.mkdir()
        (d / "x.json").write_text(json.dumps(doc(ratios)))
    geo, shapes, unmatched, _ = compare_runs.compare(str(old), str(new))
    assert geo[0][0] == pytest.approx(0.0) and len(shapes) == 1 and unmatched == [("x.json", "c", "2x8x8")]
    assert compare_runs.main([str(old), str(new)]) == 0
    assert "1 ratios in one run only" in capsys.readouterr().out


def test_compare_runs_same_launch_leaves_out_relaunched_shapes(tmp_path, capsys):
    """--same-launch: a shape whose kernel or PDL flag differs between the runs is no reproducibility
    evidence (another selection ran): it is counted and left out; the worst moves name our own times."""
    from bench import compare_runs

    def doc(rows):
        return {"suite": "custom", "config": {"title": "t"}, "summary": {"c": {"geomean": 1.0, "n": len(rows)}},
                "rows": [{"m": m, "n": 8, "k": 8, "kernel": kern, "pdl": pdl, "ours": {"us": us},
                          "competitors": {"c": {"ratio": r}}} for m, kern, pdl, us, r in rows]}

    old, new = tmp_path / "old", tmp_path / "new"
    for d, rows in ((old, [(1, "a", False, 10.0, 1.0), (2, "a", False, 10.0, 1.0), (3, "a", False, 10.0, 1.0)]),
                    (new, [(1, "a", False, 12.0, 1.02), (2, "b", False, 5.0, 2.0), (3, "a", True, 5.0, 2.0)])):
        d.mkdir()
        (d / "x.json").write_text(json.dumps(doc(rows)))
    geo, shapes, _, relaunched = compare_runs.compare(str(old), str(new), same_launch=True)
    assert relaunched == [("x.json", "2x8x8"), ("x.json", "3x8x8")] and [s[3] for s in shapes] == ["1x8x8"]
    assert geo[0][4] == pytest.approx(1.02)
    assert compare_runs.main([str(old), str(new)]) == 1  # all three: the geomean moved
    assert compare_runs.main([str(old), str(new), "--same-launch"]) == 0
    out = capsys.readouterr().out
    assert "(ours 10.0 -> 12.0 us)" in out and "2 shapes launched differently" in out


def test_compare_runs_reports_each_runs_round_spread(tmp_path, capsys):
    """The worst moves carry how far each run's own per-round ratios spread (max / min - 1; against a fixed
    published figure, our rounds alone), and the summary counts the moves past the tolerance whose rounds
    already spread past it within one run."""
    from bench import compare_runs

    def doc(rows):
        return {"suite": "custom", "config": {"title": "t"}, "summary": {"c": {"geomean": 1.0, "n": len(rows)}},
                "rows": [{"m": m, "n": 8, "k": 8, "ours": {"us": 10.0, "us_rounds": ours},
                          "competitors": {"c": {"ratio": r, "us_rounds": comp}},
                          "published": {"name": "P", "ratio": 1.0, "tflops": 1.0}} for m, ours, comp, r in rows]}

    assert compare_runs.round_spread({"us_rounds": [10.0, 10.0]}, {"us_rounds": [10.0, 12.0]}) == pytest.approx(0.2)
    assert compare_runs.round_spread({"us_rounds": [10.0, 8.0]}, None) == pytest.approx(0.25)
    assert compare_runs.round_spread({}, {"us_rounds": [1.0]}) is None
    assert compare_runs.round_spread({"us_rounds": [1.0, 1.0]}, {"us_rounds": [1.0]}) is None
    old, new = tmp_path / "old", tmp_path / "new"
    steady, wobbly = [10.0] * 3, [10.0, 11.0, 10.0]
    for d, rows in ((old, [(1, steady, steady, 1.0), (2, steady, wobbly, 1.0), (3, steady, steady, 1.0)]),
                    (new, [(1, steady, steady, 1.2), (2, steady, steady, 1.2), (3, steady, steady, 1.01)])):
        d.mkdir()
        (d / "x.json").write_text(json.dumps(doc(rows)))
    _, shapes, _, _ = compare_runs.compare(str(old), str(new))
    by = {(s[2], s[3]): s for s in shapes}
    assert by[("c", "2x8x8")][8:] == pytest.approx((0.1, 0.0)) and by[("P", "1x8x8")][8:] == (0.0, 0.0)
    assert compare_runs.main([str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "rounds spread 10.0% / 0.0%" in out
    assert "1 of the 2 outside 5% (with rounds in both runs) had per-round ratios spreading more than 5%" in out


def test_rotation_sets_move_three_l2_between_uses():
    """Between two uses of a set, the other sets hold at least 3x L2, up to the cap (session 10:
    the old cap of 8 kept 1024^3's sets L2-resident)."""
    from bench.timing import MAX_ROTATION_SETS, rotation_sets

    l2 = 60 * 2**20
    for nbytes in (1, 2**20, 4 * 2**20, 6 * 2**20, 24 * 2**20, 200 * 2**20, 2**31):
        n = len(rotation_sets(lambda: (), nbytes, l2))
        assert 2 <= n <= MAX_ROTATION_SETS
        assert (n - 1) * nbytes >= 3 * l2 or n == MAX_ROTATION_SETS, (nbytes, n)


def test_decomposition_probe_cli():
    """bench.decomposition_probe parses on any machine and names the modes it accepts."""
    from bench import decomposition_probe as probe

    with pytest.raises(SystemExit):
        probe.main(["--modes", "default,bogus"])
    assert set(probe.MODES) >= {"default", "dp", "streamk"}
    assert probe.mode_env("splitk3") == {"CUTLASS_GEMM_SPLITS": "3"}
    assert probe.mode_env("splitk1") is None and probe.mode_env("splitk65") is None and probe.mode_env("x") is None
    assert all(k.startswith("sm90_") and k.endswith("streamk") for _, _, _, k in probe.CASES)


def test_epilogue_cost_refuses_bad_cases_before_any_run():
    """bench.epilogue_cost: a malformed --case or --rounds < 1 is refused by argparse (exit 2), on any machine."""
    from bench import epilogue_cost
    assert epilogue_cost.parse_case("1024,1024,1024=k") == ((1024, 1024, 1024), "k")
    for bad in ["1024,1024=k", "1024,1024,1024", "0,8,8=k", "a,b,c=k", "8,8,8="]:
        with pytest.raises(argparse.ArgumentTypeError, match="expected M,N,K=KERNEL"):
            epilogue_cost.parse_case(bad)
    with pytest.raises(SystemExit) as e:
        epilogue_cost.main(["--rounds", "0"])
    assert e.value.code == 2


def test_epilogue_cost_refuses_kernels_it_cannot_time(capsys, tmp_path):
    """An unknown kernel, a _noact / FP8 / f32-output one, an unwritable --json: exit 2 with what was expected,
    before any GPU work (these checks run on CPU-only machines too)."""
    from bench import epilogue_cost
    from cutlass_gemm import configs
    names = set(configs.compiled_kernels())
    if "sm90_bf16_t128x256x64_c2x1_coop_noact" not in names:
        pytest.skip("the SM90 bf16 kernels are not built here")
    cases = {"nope": "not a compiled kernel",
             "sm90_bf16_t128x256x64_c2x1_coop_noact": "expected a bf16 -> bf16 kernel with the activation node",
             "sm90_bf16_f32out_t128x128x64_c1x1_coop": "expected a bf16 -> bf16 kernel with the activation node"}
    for kern, msg in cases.items():
        with pytest.raises(SystemExit) as e:
            epilogue_cost.main(["--case", f"64,64,64={kern}"])
        assert e.value.code == 2 and msg in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        epilogue_cost.main(["--json", str(tmp_path / "missing" / "x.json")])
    assert e.value.code == 2 and "expected a writable file in an existing folder" in capsys.readouterr().err


def _kfit_sweep(rows, command="python -m bench.sweep --shapes ...", case=None):
    return {"command": command, "commit": "abc1234", "date": "2026-12-04", "rows": rows,
            "case": case or {"title": "scaled_mm e4m3 -> bf16, blockwise scales, accurate accumulation, epilogue none"}}


def _kfit_row(m, n, k, us, comp):
    return {"m": m, "n": n, "k": k, "us": us, "competitor": {"name": "torch._scaled_mm", "us": comp}}


def test_kfit_separates_fixed_and_per_k_cost(tmp_path, capsys):
    """bench.kfit: exact linear times give back their fixed cost and slope; a kernel missing a time at one K, or a
    (M, N) timed at one K, is left out; tiles per SM follow the name (clusters rounded up, swap-AB transposed,
    stream-K none); --pool fits two rounds of one case together."""
    from bench import kfit
    coop, swap, sk = ("sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop",
                      "sm90_e4m3_blockwise_promoted_t128x32x128_c1x1_pingpong_swapab",
                      "sm90_e4m3_blockwise_promoted_t128x128x128_c1x1_coop_streamk")
    assert kfit.tiles_per_sm(coop, 4096, 7168, 132) == 14       # 32 x 56 tiles = 1792 on 132 SMs
    assert kfit.tiles_per_sm(coop, 4000, 7168, 132) == 14       # 31.25 -> 32 row tiles, a whole cluster pair
    assert kfit.tiles_per_sm(coop, 3968, 128, 132) == 1          # 31 row tiles round up to 32 (2x1 clusters)
    assert kfit.tiles_per_sm(swap, 64, 2112, 132) == 1          # swap-AB: 2112 / 128 x 64 / 32 = 17 x 2
    assert kfit.tiles_per_sm(sk, 4096, 7168, 132) is None
    assert kfit.tiles_per_sm("sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop_noact_sd4", 4096, 7168, 132) == 14
    assert kfit.tiles_per_sm("sm90_e4m3_scaled_fast_t64x16x256_c1x1_ws_swapab_2persm", 16, 10240, 132) == 1
    assert kfit.tiles_per_sm("sm100_bf16_t256x128x64_c2x1_2sm", 4096, 4096, 148) == 7  # 16 x 32 pairs = 1024 CTAs
    assert kfit.tiles_per_sm("no tile here", 1, 1, 132) is None
    with pytest.raises(ValueError, match="two or more distinct K"):
        kfit.fit([(512, 1.0), (512, 2.0)])
    ks = [512, 1024, 2048]
    rows = [_kfit_row(4096, 7168, k, {coop: 18.0 + 0.055 * k, swap: 4.0 + 0.1 * k, sk: None if k == 1024 else 1.0},
                      2.0 + 0.054 * k) for k in ks] + [_kfit_row(64, 2112, 7168, {coop: 20.0}, 10.0)]
    (entry,) = kfit.fits([_kfit_sweep(rows)])
    assert (entry["m"], entry["n"], entry["ks"]) == (4096, 7168, ks)
    by = {c["name"]: c for c in entry["contenders"]}
    assert set(by) == {coop, swap, kfit.COMPETITOR}  # the stream-K kernel failed at K = 1024
    assert abs(by[coop]["fixed_us"] - 18.0) < 1e-9 and abs(by[coop]["us_per_1024_k"] - 0.055 * 1024) < 1e-9
    assert by[coop]["tiles_per_sm"] == 14 and abs(by[coop]["fixed_us_per_tile"] - 18.0 / 14) < 1e-9
    assert abs(by[kfit.COMPETITOR]["fixed_us"] - 2.0) < 1e-9 and by[kfit.COMPETITOR]["tiles_per_sm"] is None
    assert [c["name"] for c in entry["contenders"]][0] == kfit.COMPETITOR  # fastest at the largest K first
    # two rounds pooled: the fit runs over both rounds' points
    other = [_kfit_row(4096, 7168, k, {coop: 22.0 + 0.055 * k}, 2.0 + 0.054 * k) for k in ks]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_kfit_sweep(rows)))
    b.write_text(json.dumps(_kfit_sweep(other)))
    assert kfit.main([str(a), str(b), "--pool"]) == 0
    out = capsys.readouterr().out
    assert "(2 sweeps)" in out and "| 4096x7168 | 512,1024,2048 | `t128x128x128_c2x1_coop` | 20.0 | 56.32 | 14 | 1.43 |" in out
    assert kfit.main([str(a), "--all"]) == 0
    out = capsys.readouterr().out
    assert "`t128x32x128_c1x1_pingpong_swapab` | 4.0 | 102.40 |" in out and "64x2112" not in out


def test_kfit_refuses_bad_input(tmp_path, capsys):
    """bench.kfit: a missing or non-sweep file, --sms below 1, and sweeps with no (M, N) at two K exit 2 naming
    what was expected."""
    from bench import kfit
    one_k = tmp_path / "one_k.json"
    one_k.write_text(json.dumps(_kfit_sweep([_kfit_row(8, 8, 8, {"x": 1.0}, 1.0)])))
    not_sweep = tmp_path / "list.json"
    not_sweep.write_text("[1, 2]")
    bad_row = tmp_path / "bad_row.json"
    bad_row.write_text(json.dumps(_kfit_sweep([_kfit_row(8, 8, 8, {"x": 1.0}, 1.0), {"m": 8, "n": "8", "k": 16}])))
    cases = [([str(tmp_path / "missing.json")], "cannot read"), ([str(not_sweep)], "got no 'rows' list"),
             ([str(bad_row)], "row 1 is"), ([str(one_k)], "no (M, N) timed at two or more K")]
    for argv, msg in cases:
        assert kfit.main(argv) == 2, argv
        assert msg in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        kfit.main([str(one_k), "--sms", "0"])
    assert e.value.code == 2


def test_decode_scan_refuses_bad_input_before_any_run(capsys, tmp_path):
    """bench.decode_scan: malformed --ks / --n, unknown or unsupported kernels and an unwritable --json are
    refused by argparse (exit 2) before any GPU work, on any machine."""
    from bench import decode_scan
    assert decode_scan.parse_ks("1024,2048") == [1024, 2048]
    for bad in ("1024", "1024,x", "0,1024", "1024,1000"):
        with pytest.raises(argparse.ArgumentTypeError):
            decode_scan.parse_ks(bad)
    intercept, rate = decode_scan.fit([(1e6, 3.0 + 1e6 / 4e3), (2e6, 3.0 + 2e6 / 4e3)])
    assert abs(intercept - 3.0) < 1e-9 and abs(rate - 4.0) < 1e-9
    for argv in (["--n", "100"], ["--m", "0"], ["--kernel", "no_such_kernel"],
                 ["--kernel", "sm90_e4m3_blockwise_promoted_t128x16x128_c1x1_pingpong_swapab"],
                 ["--json", str(tmp_path / "missing" / "x.json")]):
        with pytest.raises(SystemExit) as e:
            decode_scan.main(argv)
        assert e.value.code == 2, argv


def test_scheduler_knobs_refuses_malformed_arguments(capsys):
    """bench/scheduler_knobs.py: a bad swizzle:raster[:l2] setting, shape or case is refused by argparse (exit 2) with what
    was expected, before any child process or GPU work."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import scheduler_knobs as knobs
    finally:
        sys.path.pop(0)
    assert knobs._ints("8192,57344,8192") == (8192, 57344, 8192) and knobs._ints("8:2", ":", 2) == (8, 2)
    assert knobs._kv("op=gemm,dtype=bf16") == {"op": "gemm", "dtype": "bf16"}
    assert knobs._setting("8:2") == (8, 2, 0) and knobs._setting("0:0:256") == (0, 0, 256)
    bad = [(["--settings", "3:0"], "expected swizzle 0/1/2/4/8, raster 0/1/2 and L2 promotion 0/64/128/256 in --settings, got 3:0:0"),
           (["--settings", "0:0:512"], "got 0:0:512"),
           (["--settings", "8"], "expected swizzle:raster or swizzle:raster:l2 (whole numbers), got '8'"),
           (["--settings", "0:0:256:1"], "expected swizzle:raster or swizzle:raster:l2 (whole numbers), got '0:0:256:1'"),
           (["--settings", "0:0:x"], "expected 3 whole numbers separated by ':'"),
           (["--shapes", "1,2"], "expected 3 whole numbers separated by ','"),
           (["--case", "op"], "expected key=value pairs separated by ','"),
           (["--rounds", "0"], "expected --rounds 1 or more, got 0")]
    for argv, msg in bad:
        with pytest.raises(SystemExit) as e:
            knobs.main(argv)
        assert e.value.code == 2 and msg in capsys.readouterr().err, argv


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs every child to fail: no GPU")
def test_scheduler_knobs_fails_when_every_child_fails(tmp_path):
    """With no child measuring anything (here: no GPU), the command exits non-zero saying so, with no empty table or
    JSON that could pass for a result."""
    out = tmp_path / "knobs.json"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "scheduler_knobs.py"), "--shapes", "8,8,8",
                        "--settings", "0:0", "--case", "op=gemm,dtype=bf16,epilogue=none", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "every child process failed" in p.stderr, p.stderr[-2000:]
    assert not out.exists() and "| shape |" not in p.stdout


@pytest.mark.parametrize("argv, msg", [
    (["--configs", "sm90_nope"], "expected --configs from cutlass_gemm.configs.compiled_kernels(), got ['sm90_nope']"),
    (["--case", "op=gemm,epilogue=bogus"], "expected epilogue one of none, bias,"),
    (["--case", "op=gemm,epilogue=none,colour=red"], "unexpected keyword argument 'colour'")])
def test_scheduler_knobs_children_refuse_what_the_parent_cannot_check(argv, msg):
    """Kernel names and case values are checked in the first child (it has torch): one clear line, exit 2, and no
    further children, before any GPU work."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "scheduler_knobs.py"), *argv,
                        "--settings", "0:0,8:2"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and msg in p.stderr and "failed" not in p.stderr, p.stderr[-2000:]


def test_make_case_names_the_choices():
    from bench.cases import make_case

    for kw, msg in [(dict(op="gemn", epilogue="none"), "expected op one of gemm, scaled_mm, got 'gemn'"),
                    (dict(op="scaled_mm", epilogue="none", scale="col"), "expected scale one of tensor, row, blockwise"),
                    (dict(op="scaled_mm", epilogue="none", accumulate="slow"), "expected accumulate one of accurate, fast"),
                    (dict(op="gemm", epilogue="none", dtype="fp32"), "expected dtype one of bf16, f16")]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            make_case(**kw)


def test_sustained_clocks_refuses_bad_arguments_before_any_gpu_work(capsys):
    """bench/probes/sustained_clocks.py: --probe, --seconds and --cases are checked before torch or NVML is touched;
    --cases counts the chosen probe's cases."""
    sys.path.insert(0, os.path.join(ROOT, "bench", "probes"))
    try:
        import sustained_clocks
    finally:
        sys.path.pop(0)
    for argv, msg in [(["--seconds", "0"], "--seconds: expected more than 0.5"),
                      (["--cases", "0,9"], "--cases: expected indices from 0 to 5"),
                      (["--cases", "a"], "--cases: expected indices"),
                      (["--probe", "tensor_vs_row", "--cases", "6"], "--cases: expected indices from 0 to 5"),
                      (["--probe", "nope"], "--probe: invalid choice")]:
        with pytest.raises(SystemExit) as e:
            sustained_clocks.main(argv)
        assert e.value.code == 2 and msg in capsys.readouterr().err, argv
    import torch

    if not torch.cuda.is_available():  # valid arguments, no GPU: a clear exit before any input is made
        with pytest.raises(SystemExit) as e:
            sustained_clocks.main(["--probe", "tensor_vs_row", "--seconds", "1"])
        assert "expected a CUDA GPU" in str(e.value.code)


def test_ncu_table_reads_a_details_export(tmp_path):
    """bench/probes/ncu_table.py: one column per launch in ID order, the named metrics as rows, '-' where a launch
    lacks one; gzipped exports read the same."""
    import gzip

    sys.path.insert(0, os.path.join(ROOT, "bench", "probes"))
    try:
        import ncu_table
    finally:
        sys.path.pop(0)
    text = ('"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"1","k1","SOL","Duration","ms","5.13"\n"0","k0","SOL","Duration","ms","5.59"\n'
            '"0","k0","Memory","L2 Hit Rate","%","61.08"\n"1","k1","Other","Ignored","","1"\n')
    plain, gz = tmp_path / "d.csv", tmp_path / "d.csv.gz"
    plain.write_text(text)
    with gzip.open(gz, "wt") as f:
        f.write(text)
    for path in (plain, gz):
        t = ncu_table.table(str(path), ["ping-pong"], ["Duration", "L2 Hit Rate"])
        assert t.splitlines() == ["| metric | ping-pong | launch 1 |", "|---|---|---|",
                                  "| Duration | 5.59 ms | 5.13 ms |", "| L2 Hit Rate | 61.08 % | - |"]
    (tmp_path / "other.csv").write_text('"a","b"\n"1","2"\n')
    with pytest.raises(ValueError, match="expected an ncu details export"):
        ncu_table.table(str(tmp_path / "other.csv"), [])
