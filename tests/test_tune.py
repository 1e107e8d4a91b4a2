"""cutlass_gemm.tune and its persistent cache."""

import json

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import autotune as tune
from cutlass_gemm import configs
from conftest import GPU_ARCH


def test_rules_from_winners_split_at_geometric_midpoints():
    """The same ladder as tools/derive_rules.py (cutlass_gemm.ladder): geometric midpoints, equal
    neighbours merged, over the tuned span only (past M = 4096 the shipped rules serve)."""
    w = {(8192, 8192): {1: "sm90_bf16_t64x128x64_c1x1_pingpong_st7", 16: "sm90_bf16_t64x128x64_c1x1_pingpong_st7",
                        128: "sm90_bf16_t128x128x64_c1x1_coop", 4096: "sm90_bf16_t128x256x64_c2x1_coop"}}
    rules = tune.rules_from_winners(w)
    assert [(r.kernel, r.m) for r in rules] == [
        ("sm90_bf16_t64x128x64_c1x1_pingpong_st7", (1, 45)),
        ("sm90_bf16_t128x128x64_c1x1_coop", (46, 724)),
        ("sm90_bf16_t128x256x64_c2x1_coop", (725, 4096)),
    ]
    assert all(r.n == (8192, 8192) and r.k == (8192, 8192) for r in rules)
    # a 16-wide swap-AB winner stops at M = 16 before a taller tile, as in the shipped rules; M = 1-15
    # and past 64, untuned here, stay with the shipped rules
    w = {(10240, 8192): {16: "sm90_e4m3_scaled_fast_t128x16x128_c1x1_pingpong_swapab",
                         64: "sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong"}}
    assert [r.m for r in tune.rules_from_winners(w)] == [(16, 16), (17, 64)]


def test_cache_round_trip_and_rejections(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTLASS_GEMM_CACHE_DIR", str(tmp_path))
    rule = configs.Rule("sm90_bf16_t128x128x64_c1x1_coop", m=(1, 100), n=(512, 512), k=(256, 256))
    path = tune.write_cache([rule])
    try:
        assert tune.load_cache() == 1
        assert configs.explain(50, 512, 256, torch.bfloat16, arch=90).kernel == rule.kernel
        # Written for another GPU: ignored with a warning.
        data = json.loads(open(path).read())
        data["gpu"] = "some other GPU"
        open(path, "w").write(json.dumps(data))
        with pytest.warns(UserWarning, match="written for another gpu"):
            assert tune.load_cache() == 0
        # Corrupt: ignored with a warning.
        open(path, "w").write("{not json")
        with pytest.warns(UserWarning, match="unreadable"):
            assert tune.load_cache() == 0
        # Unknown kernel name (a stale table would also change the key): ignored.
        data["gpu"] = tune._cache_key()["gpu"]
        data["rules"] = [{"kernel": "sm90_gone", "m": [1, 2], "n": [1, 2], "k": [1, 2]}]
        open(path, "w").write(json.dumps(data))
        with pytest.warns(UserWarning, match="unreadable"):
            assert tune.load_cache() == 0
    finally:
        configs.clear_rules()


def test_tuned_rules_carry_their_epilogue_class():
    """A plain tune's rules leave fused calls to the other rules (the shipped fused ones), and the
    reverse; the cache keeps both for one (N, K)."""
    w = {(640, 320): {64: "sm90_bf16_t128x128x64_c1x1_coop"}}
    plain, fused = tune.rules_from_winners(w, "plain"), tune.rules_from_winners(w, "fused")
    assert [r.epilogue for r in plain + fused] == ["plain", "fused"]
    assert tune._rule_key(plain[0]) != tune._rule_key(fused[0])
    with configs._lock:
        configs._tuned_rules[:] = plain
    configs.push()
    try:
        shipped_fused = configs.explain(64, 640, 320, torch.bfloat16, arch=90, fused=True)
        assert configs.explain(64, 640, 320, torch.bfloat16, arch=90).source == "tuned"
        assert shipped_fused.source != "tuned"
    finally:
        configs.clear_rules()
    with pytest.raises(ValueError, match="expected epilogue 'plain' or 'fused', got 'gelu'"):
        cutlass_gemm.tune([(16, 64, 64)], epilogue="gelu")


@pytest.mark.skipif(bool(GPU_ARCH), reason="checks the no-GPU error")
def test_tune_needs_a_gpu():
    with pytest.raises(RuntimeError, match="needs an SM90/SM100 GPU"):
        cutlass_gemm.tune([(16, 64, 64)])


@pytest.mark.gpu
def test_tune_on_gpu(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CUTLASS_GEMM_CACHE_DIR", str(tmp_path))
    shapes = [(16, 1024, 512), (1024, 1024, 512)]
    try:
        rules = cutlass_gemm.tune(shapes, torch.bfloat16, verbose=True)
        out = capsys.readouterr().out
        print(out)  # kept in the report on failure
        # verbose: "MxNxK: winner name=time ..." per shape
        winners = {shape: rest.split()[0] for shape, rest in (ln.split(": ", 1) for ln in out.splitlines() if ": " in ln)}
        assert set(winners) == {f"{m}x{n}x{k}" for m, n, k in shapes}, out
        # Equal winners of neighbouring Ms merge into one M range: one or two rules.
        assert 1 <= len(rules) <= 2 and all(r.n == (1024, 1024) and r.k == (512, 512) for r in rules), rules
        for installed in ("by tune", "from the cache"):
            if installed == "from the cache":
                assert tune.load_cache() == len(rules)
            for m, n, k in shapes:
                e = configs.explain(m, n, k, torch.bfloat16)
                assert e.kernel == winners[f"{m}x{n}x{k}"] and e.source == "tuned", (installed, e, out)
        a = torch.randn(16, 512, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(1024, 512, device="cuda", dtype=torch.bfloat16)
        torch.testing.assert_close(cutlass_gemm.gemm(a, b), (a.float() @ b.float().t()).bfloat16(), rtol=2e-2, atol=2e-2)
        # The timer measures GPU time, not host time: the kernel takes ~4 us, an eager call 15-20 us of host time.
        us = tune.graph_timer(lambda: torch.ops.cutlass_gemm.gemm.default(a, b)) * 1e3
        assert us < 15, f"graph_timer: {us:.1f} us per call of a 16x1024x512 bf16 GEMM"
        rules = cutlass_gemm.tune([(64, 2048, 1024)], torch.float8_e4m3fn, scale="blockwise")
        assert rules[0].spec.scale == "blockwise"
        # A fused tune: timed with bias + GELU + residual (each candidate checked against the
        # reference with them), its rules serve fused calls only.
        fused = cutlass_gemm.tune([(1024, 1024, 512)], torch.bfloat16, epilogue="fused")
        assert [r.epilogue for r in fused] == ["fused"]
        assert configs.explain(1024, 1024, 512, torch.bfloat16, fused=True).kernel == fused[0].kernel
        assert configs.explain(1024, 1024, 512, torch.bfloat16).kernel == winners["1024x1024x512"]
    finally:
        configs.clear_rules()


def test_tune_never_times_or_installs_a_wrong_kernel(monkeypatch):
    """The correctness gate, on the CPU: a candidate off the reference is skipped with a warning;
    if none is right, tune raises and installs nothing."""
    from cutlass_gemm import kernel_table as kt

    good, bad = (kt.KERNELS[kt.KERNEL_IDS[n]] for n in ("sm90_bf16_t128x128x64_c1x1_coop", "sm90_bf16_t64x128x64_c1x1_pingpong_st7"))
    ref = torch.randn(8, 16)
    wrong = {bad.name}

    seen_fused = []

    def inputs(m, n, k, dtype, scale, fused=False):
        seen_fused.append(fused)
        return (lambda cfg: ref + (1.0 if cfg in wrong else 1e-4) * torch.randn_like(ref)), ref, tune.CHECK_TOL["16bit"]

    timed = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    monkeypatch.setattr(configs, "current_arch", lambda: 90)
    monkeypatch.setattr(configs, "push", lambda: None)
    monkeypatch.setattr(tune, "_family_kernels", lambda *a: [bad, good])
    monkeypatch.setattr(tune, "_inputs", inputs)
    try:
        with pytest.warns(UserWarning, match="sm90_bf16_t64x128x64_c1x1_pingpong_st7 on 8x4096x4096: relative error"):
            rules = tune.tune([(8, 4096, 4096)], save=False, timer=lambda fn: timed.append(fn) or 1.0)
        assert [r.kernel for r in rules] == [good.name] and len(timed) == 1
        assert [r.epilogue for r in rules] == ["plain"] and seen_fused == [False]
        with pytest.warns(UserWarning):  # a fused tune times the fused epilogue and installs fused rules
            fused = tune.tune([(8, 4096, 4096)], save=False, timer=lambda fn: 1.0, epilogue="fused")
        assert [r.epilogue for r in fused] == ["fused"] and seen_fused[-1] is True
        assert {r.epilogue for r in configs._tuned_rules} == {"plain", "fused"}  # one did not replace the other
        wrong.add(good.name)
        with pytest.raises(RuntimeError, match="no kernel of the family is within"), pytest.warns(UserWarning):
            tune.tune([(8, 2048, 4096)], save=False, timer=lambda fn: 1.0)
        assert all(r.n != (2048, 2048) for r in configs._tuned_rules)
    finally:
        configs._tuned_rules.clear()
