"""The shipped selection rules are data (cutlass_gemm/default_rules.json) derived from sweeps by
tools/derive_rules.py: the derivation on synthetic sweeps, the file's consistency with the kernel
table, and bench/sweep.py's row format on the CPU reference."""

import math
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(ROOT, "tools"))  # appended: the checkout must never shadow an installed cutlass_gemm
import derive_rules as dr  # noqa: E402

BF16 = ["sm90_bf16_t64x128x64_c1x1_pingpong_st7", "sm90_bf16_t128x128x64_c1x1_coop", "sm90_bf16_t128x256x64_c2x1_coop"]
SMALL, MID, BIG = BF16


def _sweep(times):
    """times: {(m, n, k): {kernel: us}} -> a bench/sweep.py-shaped document."""
    return {"gpu": "test", "torch": "x", "commit": "abc", "source": "synthetic",
            "rows": [{"m": m, "n": n, "k": k, "us": us} for (m, n, k), us in times.items()]}


def test_m_ranges_split_at_geometric_midpoints_and_cover_everything():
    assert dr.m_ranges([1, 16, 128, 2048]) == [(1, 4), (5, 45), (46, 512), (513, None)]
    assert dr.m_ranges([64]) == [(1, None)]


def test_global_ladder_takes_the_geomean_best_per_m_and_merges_steps():
    t = {}
    for n, k in ((8192, 8192), (28672, 8192)):
        t[(16, n, k)] = {SMALL: 10.0, MID: 12.0, BIG: 20.0}
        t[(64, n, k)] = {SMALL: 11.0, MID: 12.0, BIG: 20.0}
        t[(2048, n, k)] = {SMALL: 90.0, MID: 60.0, BIG: 50.0}
    rules = dr.derive_family(dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"], 0.03, hybrid=False)
    # SMALL's 64-row tile keeps M only up to 64 (its extent), not up to the midpoint 362 (--m-ladder: M at every M)
    assert rules == [{"kernel": SMALL, "m": [1, 64]}, {"kernel": BIG, "m": [65, None]}]


def test_an_nk_that_loses_to_the_global_ladder_gets_its_own_rules_first():
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (16, 1024, 1024): {SMALL: 10.0, MID: 12.0},
         (16, 57344, 8192): {SMALL: 12.0, MID: 10.0}, (2048, 57344, 8192): {SMALL: 90.0, MID: 60.0},
         (2048, 8192, 8192): {SMALL: 90.0, MID: 60.0}, (2048, 1024, 1024): {SMALL: 90.0, MID: 60.0}}
    rules = dr.derive_family(dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"], 0.03, hybrid=False)
    # the (N, K) ladder spans its measured Ms only (16 .. 2048; --m-ladder): past them the global ladder serves
    assert rules[0] == {"kernel": MID, "m": [16, 2048], "n": [57344, 57344], "k": [8192, 8192]}
    assert rules[1:] == [{"kernel": SMALL, "m": [1, 64]}, {"kernel": MID, "m": [65, None]}]
    for (m, n, k), us in t.items():  # every measured shape now gets its best kernel
        assert dr.choose(rules, m, n, k) == min(us, key=us.get)
    assert dr.choose(rules, 8, 57344, 8192) == SMALL and dr.choose(rules, 4096, 57344, 8192) == MID


def test_hybrid_steps_over_m_x_n_past_small_m_and_per_nk_steps_reach_twice_their_measured_ms():
    """The default (--hybrid in session 58): past SMALL_M the global ladder reads M x N (2048x1024 fills the grid as
    256x8192 does, not as 2048x8192), and a per-(N, K) step measured at M = 16 and 2048 leaves M = 33-1023 to the
    global ladder."""
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0, BIG: 20.0},
         (2048, 8192, 8192): {SMALL: 90.0, MID: 60.0, BIG: 50.0},      # M x N = 2**24: BIG
         (4096, 4096, 4096): {SMALL: 300.0, MID: 100.0, BIG: 150.0},   # 2**24 too: MID, which the bin's geomean takes
         (1024, 1024, 1024): {SMALL: 10.0, MID: 8.0, BIG: 12.0}}       # 2**20: MID
    rows = dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"]
    rules = dr.derive_family(rows, 0.03, hybrid=True)
    assert rules == [{"kernel": SMALL, "m": [16, 32], "n": [8192, 8192], "k": [8192, 8192]},
                     {"kernel": BIG, "m": [1024, 2048], "n": [8192, 8192], "k": [8192, 8192]},
                     {"kernel": SMALL, "m": [1, dr.SMALL_M]},
                     {"kernel": MID, "m": [dr.SMALL_M + 1, None]}]  # one M x N step: every M x N
    for (m, n, k), us in t.items():  # every measured shape still gets its best kernel
        assert dr.choose(rules, m, n, k) == min(us, key=us.get)
    assert dr.choose(rules, 2048, 1024, 2048) == MID and dr.choose(rules, 512, 8192, 8192) == MID
    assert rules == dr.derive_family(rows, 0.03)  # the default
    plain = dr.derive_family(rows, 0.03, hybrid=False)  # --m-ladder: M alone
    assert dr.choose(plain, 2048, 1024, 2048) == BIG
    assert dr.area_bin(2**24 - 1) == 23 and dr.area_bin(2**24) == 24 and dr.area_bin(1) == 0


def test_held_out_times_each_nk_by_the_rules_the_others_give():
    """Each (N, K) left out in turn: the rules of the other two pick MID at M = 2048, which at the odd (N, K) out
    takes 1.5x its best kernel's time; the two alike lose nothing."""
    t = {(2048, 8192, 8192): {SMALL: 90.0, MID: 60.0}, (2048, 28672, 8192): {SMALL: 90.0, MID: 60.0},
         (2048, 1024, 1024): {SMALL: 40.0, MID: 60.0}}
    rows = dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"]
    m_only = lambda rows, tol, per_nk_only: dr.derive_family(rows, tol, per_nk_only, hybrid=False)  # noqa: E731
    assert sorted(dr.held_out(rows, 0.03, derive=m_only)) == [(2048, 1024, 1024, 1.5), (2048, 8192, 8192, 1.0),
                                                              (2048, 28672, 8192, 1.0)]
    # over M x N, 2048x8192 shares the bin below 2**25 with 2048x1024 (SMALL), 2048x28672 the one past it (MID)
    assert sorted(dr.held_out(rows, 0.03)) == [(2048, 1024, 1024, 1.5), (2048, 8192, 8192, 1.5),
                                               (2048, 28672, 8192, 1.0)]
    assert dr.held_out(rows[:1], 0.03) == []  # one (N, K): nothing to derive from
    # a derivation that never picks what the sweeps timed: every held-out pick is untimed
    never = lambda rows, tol, per_nk_only: [{"kernel": BIG, "m": [1, None]}]  # noqa: E731
    assert all(x == math.inf for *_, x in dr.held_out(rows, 0.03, derive=never))


def test_an_nk_ladder_measured_at_few_m_does_not_stretch_to_every_m():
    """An (N, K) measured only at M = 80-112 (where a skinny tile wins) keeps its rules there; M = 4096
    at that (N, K) goes to the global ladder's big tile, not to the skinny tile stretched to M = no bound."""
    t = {(80, 4096, 4096): {SMALL: 10.0, MID: 14.0}, (112, 4096, 4096): {SMALL: 11.0, MID: 14.0},
         (80, 8192, 8192): {SMALL: 30.0, MID: 18.0}, (112, 8192, 8192): {SMALL: 34.0, MID: 20.0},
         (4096, 8192, 8192): {SMALL: 900.0, MID: 600.0}}
    rules = dr.derive_family(dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"], 0.03)
    assert rules[0] == {"kernel": SMALL, "m": [80, 112], "n": [4096, 4096], "k": [4096, 4096]}
    assert dr.choose(rules, 4096, 4096, 4096) == MID and dr.choose(rules, 96, 4096, 4096) == SMALL


def _ladder(winners):
    return dr.ladder(winners, dr.kt.m_rows)


def test_a_winner_keeps_no_m_past_its_tile_extent():
    """A 16-wide swap-AB tile measured at M = 16 does not take M = 17-32 from the taller tile that won
    at 64 (a second row of tiles the sweep never timed; the geometric midpoint would be 32); a 64-row
    tile that also won at M = 128 (two tiles there, measured) keeps the merged range."""
    swap16 = "sm90_e4m3_scaled_fast_t128x16x128_c1x1_pingpong_swapab"
    p64 = "sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong"
    big = "sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop"
    assert _ladder({16: swap16, 64: p64, 128: p64, 2048: big}) == [(swap16, (1, 16)), (p64, (17, 512)), (big, (513, None))]
    assert dr.ladder({16: swap16, 64: p64}) == [(swap16, (1, 32)), (p64, (33, None))]  # without extents
    # a next winner with no taller tile (128x256 c2x1 after 128x128 c1x2 at M = 128) would run two rows of tiles as well
    mid = "sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong"
    assert _ladder({128: mid, 4096: big}) == [(mid, (1, 724)), (big, (725, None))]
    # a one-wave 64-row tile at M = 64 stops there when the 64-row tile that won at M = 80 was timed with the
    # two rows of tiles it runs from M = 65 (the midpoint 71 would hand M = 65-71 a doubled, unmeasured grid)
    ws64 = "sm90_e4m3_scaled_fast_t64x80x256_c1x1_ws"
    pp64 = "sm90_e4m3_scaled_fast_t64x160x128_c2x1_pingpong"
    assert _ladder({64: ws64, 80: pp64}) == [(ws64, (1, 64)), (pp64, (65, None))]
    # ... but not when it was timed with more rows than it runs at M = 65 (three at M = 160): the midpoint holds
    assert _ladder({64: ws64, 160: p64}) == [(ws64, (1, 101)), (p64, (102, None))]
    # only from one row: a 64-row tile timed in two rows at M = 128 keeps the midpoint before the 128-row tile timed at
    # M = 256 (at N = 5120-18944, M = 160, the 64-row tile's three rows beat a 128-row tile's two by 1.15-1.6x)
    big128 = "sm90_e4m3_scaled_fast_t128x128x128_c2x1_pingpong_plain"
    assert _ladder({128: p64, 256: big128}) == [(p64, (1, 181)), (big128, (182, None))]


def test_the_extent_is_one_cluster_row_of_tiles():
    """The grid rounds M's tiles up to whole clusters, so a winner's extent is its tile's M side times the cluster
    along M (swap-AB: the token side and the cluster's second extent). Session 33's A/Bs: the 1x2 swap-AB 128x96
    tile timed at M = 192 ran four 96-token tiles at M = 193-207 (3.4-4.1x the best launch at 200x57344x8192);
    the 2x1 128x128 ping-pong timed at M = 256 ran a second cluster row at 257-362 (2.1-2.4x at 272-340 x 57344x8192)."""
    cs96 = "sm90_e4m3_scaled_fast_t128x96x128_c1x2_coop_swapab"
    cs112 = "sm90_e4m3_scaled_fast_t128x112x128_c1x2_coop_swapab"
    pp2x1 = "sm90_e4m3_scaled_fast_t128x128x128_c2x1_pingpong_plain"
    coop256 = "sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop"
    pp64 = "sm90_e4m3_scaled_fast_t64x160x128_c2x1_pingpong"
    assert [dr.kt.m_rows(n) for n in (cs96, pp2x1, pp64)] == [(96, 192), (128, 256), (64, 128)]
    assert _ladder({192: cs96, 224: cs112}) == [(cs96, (1, 192)), (cs112, (193, None))]
    assert dr.ladder({192: cs96, 224: cs112}) == [(cs96, (1, 207)), (cs112, (208, None))]  # without extents
    # the next winner timed with the cluster rows it runs at 257 (two at M = 512): stop at 256
    assert _ladder({256: pp2x1, 512: coop256}) == [(pp2x1, (1, 256)), (coop256, (257, None))]
    # a 2x1 64-row tile timed at M = 128 is one cluster row there: a taller next tile takes 129 on
    assert _ladder({128: pp64, 256: pp2x1}) == [(pp64, (1, 128)), (pp2x1, (129, None))]


def test_per_nk_only_m_rows_stay_out_of_the_global_ladder():
    """A sweep's per_nk_only_m rows (M = 192 at a few wide (N, K)) do not make a global step, which would
    hand every (N, K) their winner around M = 192; they still give their own (N, K) a ladder."""
    t = {(128, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (512, 8192, 8192): {SMALL: 40.0, MID: 30.0},
         (128, 5120, 5120): {SMALL: 6.0, MID: 8.0}, (512, 5120, 5120): {SMALL: 20.0, MID: 15.0}}
    wide = _sweep({(192, 8192, 8192): {SMALL: 20.0, MID: 14.0}})
    wide["per_nk_only_m"] = [192]
    fam = dr._rows_by_family([_sweep(t), wide])[("sm90 bf16", "any")]
    assert fam["per_nk_only"] == {(192, 8192, 8192)}
    rules = dr.derive_family(fam["rows"], 0.03, fam["per_nk_only"])
    assert dr.choose(rules, 192, 8192, 8192) == MID  # its own (N, K): measured there
    assert dr.choose(rules, 160, 5120, 5120) == SMALL  # elsewhere the global ladder of 128 and 512 (midpoint 256)
    assert {"kernel": SMALL, "m": [1, 256]} in rules
    # A later unmarked sweep of M = 192 over many (N, K), that shape included, makes M = 192 a global step again.
    broad = _sweep({(192, 8192, 8192): {SMALL: 20.0, MID: 14.0}, (192, 5120, 5120): {SMALL: 12.0, MID: 9.0}})
    fam = dr._rows_by_family([_sweep(t), wide, broad])[("sm90 bf16", "any")]
    assert fam["per_nk_only"] == set()
    rules = dr.derive_family(fam["rows"], 0.03, fam["per_nk_only"])
    assert dr.choose(rules, 192, 13824, 5120) == MID and dr.choose(rules, 140, 13824, 5120) == SMALL
    bad = dict(wide, per_nk_only_m=["192"])
    with pytest.raises(SystemExit, match="per_nk_only_m"):
        dr.check_sweep(bad, "x.json")


def test_a_shape_measured_several_times_counts_once_with_median_times():
    """Repeated sweeps (and a shape in two suites of one sweep) merge into one row per shape: each
    kernel's median time, so one noisy run does not decide (SMALL won two of three runs here; the
    last run alone, or the mean, would pick MID)."""
    runs = [{(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}}, {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}},
            {(16, 8192, 8192): {SMALL: 30.0, MID: 12.0}}]
    fam = dr._rows_by_family([_sweep(t) for t in runs])[("sm90 bf16", "any")]
    assert fam["rows"] == [(16, 8192, 8192, {MID: 12.0, SMALL: 10.0})]
    assert dr.derive_family(fam["rows"], 0.03) == [{"kernel": SMALL, "m": [1, None]}]
    twice = _sweep({(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}})
    twice["rows"].append({"m": 16, "n": 8192, "k": 8192, "us": {SMALL: 14.0, MID: None}})
    assert dr._rows_by_family([twice])[("sm90 bf16", "any")]["rows"] == [(16, 8192, 8192, {MID: 12.0, SMALL: 12.0})]


def test_sweeps_of_one_family_from_two_gpus_are_refused():
    a, b = _sweep({(16, 8192, 8192): {SMALL: 10.0}}), _sweep({(16, 8192, 8192): {SMALL: 12.0}})
    b["gpu"], b["path"] = "NVIDIA H100", "h100.json"
    with pytest.raises(SystemExit, match=r"sm90 bf16: expected every sweep of a family from one GPU, got 'test' and "
                                         r"'NVIDIA H100' \(h100.json\)"):
        dr._rows_by_family([a, b])


def test_within_tolerance_no_per_nk_rules():
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 10.2}, (16, 1024, 1024): {SMALL: 10.2, MID: 10.0}}
    rules = dr.derive_family(dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"], 0.03)
    assert len(rules) == 1 and "n" not in rules[0]


def test_untimed_kernels_are_ignored_and_an_m_with_no_common_kernel_is_an_error():
    t = {(16, 8192, 8192): {SMALL: None, MID: 12.0}, (16, 1024, 1024): {SMALL: 9.0, MID: 12.0}}
    rules = dr.derive_family(dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"], 0.03)
    assert dr.choose(rules, 16, 8192, 8192) == MID  # SMALL failed its check there: never chosen
    bad = {(16, 8192, 8192): {SMALL: 9.0}, (16, 1024, 1024): {MID: 12.0}}
    with pytest.raises(SystemExit, match="M = 16"):
        dr.derive_family(dr._rows_by_family([_sweep(bad)])[("sm90 bf16", "any")]["rows"], 0.03)


def test_derive_replaces_only_the_swept_families(tmp_path):
    with open(os.path.join(ROOT, "cutlass_gemm", "default_rules.json")) as fh:
        current = json.load(fh)
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (4096, 8192, 8192): {SMALL: 90.0, MID: 60.0}}
    doc, report = dr.derive([_sweep(t)], current, 0.03)
    key = lambda f: (f["family"], f.get("epilogue", "any"))  # noqa: E731
    assert [key(f) for f in doc["families"]] == [key(f) for f in current["families"]]  # replaced in place
    for old, new in zip(current["families"], doc["families"]):
        assert (new == old) == (key(old) != ("sm90 bf16", "any"))
    assert "sm90 bf16: 2 rules from 2 shapes" in report[0]
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(_sweep(t)))
    out = tmp_path / "rules.json"
    out.write_text(json.dumps(current))
    # --ab '': the repository's A/B files were measured on the H200, this made-up sweep on 'test'
    tool = [sys.executable, os.path.join(ROOT, "tools", "derive_rules.py"), str(sweep), "--out", str(out), "--ab", "",
            "--gpu-ab", ""]
    assert subprocess.run([*tool, "--check"]).returncode == 1
    assert subprocess.run(tool).returncode == 0
    assert subprocess.run([*tool, "--check"]).returncode == 0


def test_a_derived_family_lists_its_measured_nk_and_explain_says_whether_a_call_is_one(monkeypatch, tmp_path):
    """derive writes the (N, K) its sweeps timed beside a family's rules; explain tells a call at one of
    them from one whose rule is an M ladder timed elsewhere (where cutlass_gemm.tune() is the remedy)."""
    import torch

    import cutlass_gemm.configs as configs

    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (4096, 8192, 8192): {SMALL: 90.0, MID: 60.0},
         (4096, 1024, 2048): {SMALL: 9.0, MID: 8.0}}
    doc, _ = dr.derive([_sweep(t)], {"families": []}, 0.03)
    assert doc["families"][0]["measured_nk"] == [[1024, 2048], [8192, 8192]]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(doc))
    rules, measured, _ = configs._load_defaults(str(path))
    monkeypatch.setattr(configs, "DEFAULT_RULES", rules)
    monkeypatch.setattr(configs, "_DEFAULT_MEASURED_NK", measured)
    seen = configs.explain(4096, 8192, 8192, torch.bfloat16, arch=90)
    unseen = configs.explain(4096, 4096, 4096, torch.bfloat16, arch=90)
    assert (seen.kernel, seen.measured, unseen.measured) == (MID, True, False)
    assert "measured at this N, K" in str(seen) and "cutlass_gemm.tune()" in str(unseen)
    with open(configs.DEFAULT_RULES_FILE) as fh:  # the shipped file: every family derived from sweeps lists them
        shipped = json.load(fh)
    assert all(("measured_nk" in f) == f["source"].startswith("tools/derive_rules.py") for f in shipped["families"])


def _gpu_ab(gpu, rows, epilogue="none"):
    return {"gpu": gpu, "case": {"epilogue": epilogue}, "path": "ab_x.json",
            "rows": [{"m": m, "n": n, "k": k, "us_rounds": {name: [us] * 3 for name, us in t.items()}}
                     for (m, n, k), t in rows.items()]}


def test_another_gpus_ab_gives_its_overlay_over_the_rules_m_range_at_that_nk():
    """An A/B on a GPU other than the sweeps' overrides the rules' launch there only where its winner is more than
    GPU_AB_GAIN faster, for that (N, K) over the M range of the rule that made the launch; a launch the A/B did not
    time, or an A/B from the sweeps' own GPU (apply_ab's business), gives no overlay."""
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (4096, 8192, 8192): {SMALL: 90.0, MID: 60.0, BIG: 61.0},
         (4096, 1024, 1024): {SMALL: 9.0, MID: 8.0, BIG: 8.1}}
    doc, _ = dr.derive([_sweep(t)], {"families": []}, 0.03, hybrid=False)
    assert dr.choose(doc["families"][0]["rules"], 4096, 8192, 8192) == MID
    other = _gpu_ab("H100", {(4096, 8192, 8192): {MID: 12.0, BIG: 10.0},  # 1.2x: taken
                         (4096, 1024, 1024): {MID: 10.0, BIG: 9.8},  # 1.02x: within GPU_AB_GAIN, left
                         (16, 8192, 8192): {MID: 10.0, BIG: 5.0}})  # the rules launch SMALL there: not timed
    overlays, notes = dr.gpu_overlays(doc, [other], {"test"})
    assert overlays == [{"gpu": "H100", "source": "tools/derive_rules.py from bench/ab.py on this GPU: ab_x.json",
                         "rules": [{"kernel": BIG, "m": [65, None], "n": [8192, 8192], "k": [8192, 8192]}]}]
    assert any("16x8192x8192 left out: the rules launch " + SMALL in x for x in notes)
    with pytest.raises(SystemExit, match="other than the sweeps'"):
        dr.gpu_overlays(doc, [_gpu_ab("test", {(4096, 8192, 8192): {MID: 12.0, BIG: 10.0}})], {"test"})
    retired = next(iter(dr.kt.RETIRED))  # a contender no longer compiled drops out; one left is no verdict
    overlays, notes = dr.gpu_overlays(doc, [_gpu_ab("H100", {(4096, 8192, 8192): {MID: 12.0, retired: 1.0}})], {"test"})
    assert overlays == [] and any("retired contenders left out" in x for x in notes)
    # the default derivation: the launch comes from an M x N step, and the overlay rule keeps its mn range too
    doc, _ = dr.derive([_sweep(t)], {"families": []}, 0.03)
    last = doc["families"][0]["rules"][-1]
    assert last["m"] == [dr.SMALL_M + 1, None] and "mn" not in last  # one M x N step: every M x N
    doc["families"][0]["rules"][-1:] = [dict(last, kernel=SMALL, mn=[0, 2**24 - 1]), dict(last, mn=[2**24, None])]
    overlays, _ = dr.gpu_overlays(doc, [other], {"test"})
    assert overlays[0]["rules"] == [{"kernel": BIG, "m": [dr.SMALL_M + 1, None], "mn": [2**24, None],
                                     "n": [8192, 8192], "k": [8192, 8192]}]


def test_a_malformed_gpu_overlay_is_a_clear_error(tmp_path):
    import cutlass_gemm.configs as configs

    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"families": [], "gpu_overlays": [{"rules": []}]}))
    with pytest.raises(ValueError, match="expected each gpu_overlays entry"):
        configs._load_defaults(str(path))


def test_the_overlay_of_the_gpu_in_use_comes_before_the_defaults(monkeypatch):
    import torch

    import cutlass_gemm.configs as configs

    gpu, (rule, *_) = next(iter(configs.GPU_OVERLAYS.items()))
    m, n, k = rule.m[1] if rule.m[1] < configs.INF else rule.m[0], rule.n[0], rule.k[0]
    spec = rule.spec
    kw = dict(arch=90, fused=rule.epilogue == "fused")
    if spec.scale != "none":
        kw.update(scale=spec.scale, accumulate="fast" if spec.accum == "fast" else "accurate")
    dtype = getattr(torch, dr.kt.TORCH_DTYPE_NAMES[spec.a])
    fused = rule.epilogue == "fused"
    cpp = lambda: torch.ops.cutlass_gemm._select_kernel(  # noqa: E731  (the op's own choice, from the pushed table)
        90, *(dr.kt.DTYPES.index(x) for x in (spec.a, spec.b, spec.out)), dr.kt.SCALE_MODES.index(spec.scale),
        dr.kt.ACCUMS.index(spec.accum), m, n, k, fused, fused)
    # The defaults alone first, whatever GPU runs this (on that overlay's GPU it is already in use at import).
    monkeypatch.setattr(configs, "_gpu_name_in_use", None)
    try:
        configs.push()
        default = configs.explain(m, n, k, dtype, **kw)
        assert cpp() == dr.kt.KERNEL_IDS[default.kernel] and default.reason.endswith("(default)") and default.source == "default"
        monkeypatch.setattr(configs, "_gpu_name_in_use", gpu)
        configs.push()
        got = configs.explain(m, n, k, dtype, **kw)
        assert got.kernel == rule.kernel != default.kernel and got.reason.endswith(f"(default, {gpu})") and got.source == "overlay" and got.measured
        assert cpp() == dr.kt.KERNEL_IDS[rule.kernel]
        assert configs.rules().index(rule) < configs.rules().index(configs.DEFAULT_RULES[0])
    finally:
        monkeypatch.undo()
        configs.push()
    assert cpp() == dr.kt.KERNEL_IDS[configs.explain(m, n, k, dtype, **kw).kernel]  # this machine's table again
    assert configs._overlay_gpu([gpu, gpu]) == gpu and configs._overlay_gpu([gpu, "another GPU"]) is None
    assert configs._overlay_gpu(["a GPU with no overlay"]) is None and configs._overlay_gpu([]) is None


def test_a_fused_epilogue_sweep_gives_fused_rules_ahead_of_the_family():
    """A sweep timed with GELU + residual yields the family's "fused" entry, placed before its rules
    for any epilogue (which would otherwise win first), every rule tagged; the other entries stay."""
    current = {"families": [{"family": "sm90 f16", "rules": []}, {"family": "sm90 bf16", "rules": [{"kernel": SMALL, "m": [1, None]}]}]}
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (4096, 8192, 8192): {SMALL: 90.0, MID: 60.0}}
    fused = dict(_sweep(t), case={"op": "gemm", "epilogue": "bias_gelu_residual"})
    doc, report = dr.derive([fused], current, 0.03)
    assert [(f["family"], f.get("epilogue")) for f in doc["families"]] == \
        [("sm90 f16", None), ("sm90 bf16", "fused"), ("sm90 bf16", None)]
    assert doc["families"][2] == current["families"][1]
    assert doc["families"][1]["rules"] and all(r["epilogue"] == "fused" for r in doc["families"][1]["rules"])
    assert "sm90 bf16 (fused epilogue): 2 rules from 2 shapes" in report[0]
    assert dr.epilogue_class(dict(case={"epilogue": "bias"})) == "any" and dr.epilogue_class({}) == "any"
    again, _ = dr.derive([fused], doc, 0.03)  # re-deriving replaces the fused entry in place
    assert again == doc


def test_a_sweep_whose_complete_flag_is_not_a_bool_is_refused():
    with pytest.raises(SystemExit, match="expected 'complete' as true or false"):
        dr.check_sweep(dict(_sweep({(16, 8192, 8192): {SMALL: 10.0}}), complete="no"), "s.json")


def test_unknown_kernel_in_a_sweep_is_an_error():
    with pytest.raises(SystemExit, match="not in kernel_table.py"):
        dr._rows_by_family([_sweep({(1, 2, 3): {"sm90_bf16_t1x1x1_c1x1_coop": 1.0}})])


def test_candidates_a_sweep_marks_not_kept_are_skipped():
    cand = "sm90_bf16_t128x256x64_c4x1_coop"
    assert cand not in dr.kt.KERNEL_IDS
    sw = dict(_sweep({(1, 2, 3): {cand: 1.0, "sm90_bf16_t128x128x64_c1x1_coop": 2.0}}), not_kept={cand: "never won"})
    rows = dr._rows_by_family([sw])
    assert [t for fam in rows.values() for *_, t in fam["rows"]] == [{"sm90_bf16_t128x128x64_c1x1_coop": 2.0}]
    with pytest.raises(SystemExit, match="not_kept"):
        dr.check_sweep(dict(sw, not_kept=[cand]), "x.json")
    with pytest.raises(SystemExit, match="'not_kept' names kernels kernel_table.py has: sm90_bf16_t128x128x64_c1x1_coop"):
        dr.check_sweep(dict(sw, not_kept={"sm90_bf16_t128x128x64_c1x1_coop": "x"}), "x.json")


def test_timings_a_sweep_marks_superseded_are_skipped():
    """"superseded": a kernel still in the table whose code changed after the sweep (session 16: the
    80/160-wide tiles, first built without CuTe's extended wgmma shapes): its old times are dropped."""
    k = "sm90_bf16_t128x128x64_c1x1_coop"
    sw = dict(_sweep({(1, 2, 3): {k: 1.0, SMALL: 2.0}}), superseded={k: "built with other atoms"})
    dr.check_sweep(sw, "x.json")  # unlike not_kept, a name the table has is the point
    rows = dr._rows_by_family([sw])
    assert [t for fam in rows.values() for *_, t in fam["rows"]] == [{SMALL: 2.0}]
    with pytest.raises(SystemExit, match="expected 'superseded' as"):
        dr.check_sweep(dict(sw, superseded=[k]), "x.json")


def test_retired_kernels_in_a_sweep_are_skipped():
    retired = next(iter(dr.kt.RETIRED))
    assert retired not in dr.kt.KERNEL_IDS
    rows = dr._rows_by_family([_sweep({(1, 2, 3): {retired: 1.0, "sm90_bf16_t128x128x64_c1x1_coop": 2.0}})])
    assert [t for fam in rows.values() for *_, t in fam["rows"]] == [{"sm90_bf16_t128x128x64_c1x1_coop": 2.0}]


def test_a_succeeded_kernels_time_counts_for_its_successor_unless_the_successor_was_timed():
    """kernel_table.SUCCEEDED_BY: the old build's sweep and A/B times stand for the leaner build that replaced it
    (so the rules derived before the swap reproduce); where an input timed both, the successor's own time counts."""
    old, new = next(iter(dr.kt.SUCCEEDED_BY.items()))
    assert old in dr.kt.RETIRED and old not in dr.kt.KERNEL_IDS and new in dr.kt.KERNEL_IDS
    other = next(k.name for k in dr.kt.KERNELS if k.family_label == dr.kt.KERNELS[dr.kt.KERNEL_IDS[new]].family_label
                 and k.name != new)
    rows = dr._rows_by_family([_sweep({(1, 2, 3): {old: 1.0, other: 2.0}})])
    assert [t for fam in rows.values() for *_, t in fam["rows"]] == [{new: 1.0, other: 2.0}]
    rows = dr._rows_by_family([_sweep({(1, 2, 3): {old: 1.0, new: 3.0, other: 2.0}})])
    assert [t for fam in rows.values() for *_, t in fam["rows"]] == [{new: 3.0, other: 2.0}]
    # a "superseded" old time is dropped, not passed on
    rows = dr._rows_by_family([dict(_sweep({(1, 2, 3): {old: 1.0, other: 2.0}}), superseded={old: "x"})])
    assert [t for fam in rows.values() for *_, t in fam["rows"]] == [{other: 2.0}]
    # an A/B verdict of the old build is the successor's
    t = {(512, 8192, 8192): {new: 10.0, other: 10.1}}
    fam = dr._rows_by_family([_sweep(t)], [_verdicts({(512, 8192, 8192): {old: [9.0, 9.0], other: [8.0, 8.0]}})])
    row = next(us for *_, us in next(iter(fam.values()))["rows"])
    assert row[other] < row[new]
    fam = dr._rows_by_family([_sweep(t)], [_verdicts({(512, 8192, 8192): {old: [7.0, 7.0], new: [9.0, 9.0],
                                                                           other: [8.0, 8.0]}})])
    row = next(us for *_, us in next(iter(fam.values()))["rows"])
    assert row[other] < row[new]  # the successor's own 9.0, not the old 7.0


NOACT = "sm90_bf16_t128x256x64_c2x1_coop_noact"  # no activation node: serves activation "none" only


def test_a_family_swept_without_an_activation_gets_fused_rules_from_its_kernels_with_one():
    """Where a plain sweep's winner lacks the activation node and no fused sweep exists, calls with an
    activation get a ladder of the kernels that have it (else they would fall past every such rule)."""
    current = {"families": []}
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0, NOACT: 11.0}, (4096, 8192, 8192): {SMALL: 90.0, MID: 60.0, NOACT: 55.0}}
    doc, report = dr.derive([_sweep(t)], current, 0.03)
    assert [(f["family"], f.get("epilogue")) for f in doc["families"]] == [("sm90 bf16", "fused"), ("sm90 bf16", None)]
    fused, plain = doc["families"]
    assert [r["kernel"] for r in plain["rules"]] == [SMALL, NOACT]
    assert [r["kernel"] for r in fused["rules"]] == [SMALL, MID] and all(r["epilogue"] == "fused" for r in fused["rules"])
    assert "its kernels with an activation" in fused["source"]
    # with a fused sweep of the family, that sweep gives the fused rules
    gelu = dict(_sweep({(16, 8192, 8192): {SMALL: 12.0, MID: 10.0}}), case={"epilogue": "bias_gelu_residual"})
    doc, _ = dr.derive([_sweep(t), gelu], current, 0.03)
    assert [r["kernel"] for r in doc["families"][0]["rules"]] == [MID]
    # a family whose kernels all have the node gets no extra entry
    doc, _ = dr.derive([_sweep({(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}})], current, 0.03)
    assert [f.get("epilogue") for f in doc["families"]] == [None]


def test_no_fused_rule_names_a_kernel_without_the_activation_or_residual_node():
    with open(os.path.join(ROOT, "cutlass_gemm", "default_rules.json")) as fh:
        doc = json.load(fh)
    for fam in doc["families"]:
        if fam.get("epilogue") == "fused":
            for r in fam["rules"]:
                assert dr.kt.KERNELS[dr.kt.KERNEL_IDS[r["kernel"]]].serves_fused, (fam["family"], r)


def test_shipped_rules_name_table_kernels_of_their_family_and_cover_every_m():
    import cutlass_gemm.configs as configs

    with open(configs.DEFAULT_RULES_FILE) as fh:
        doc = json.load(fh)
    assert configs.DEFAULT_RULES == configs._load_default_rules()
    for fam in doc["families"]:
        specs = [dr.kt.KERNELS[dr.kt.KERNEL_IDS[r["kernel"]]] for r in fam["rules"]]
        assert {s.family_label for s in specs} == {fam["family"]}, fam["family"]
        glob = [r for r in fam["rules"] if "n" not in r and "k" not in r]
        # the M ladder's steps, then (past SMALL_M) the M x N steps, each run of ranges without a gap or an end
        m_steps, mn_steps = [r for r in glob if r["m"][1] is not None], [r for r in glob if r["m"][1] is None]
        assert mn_steps and m_steps == glob[:len(m_steps)], fam["family"]
        ms = [r["m"] for r in m_steps] + [[mn_steps[0]["m"][0], None]]
        mns = [r.get("mn", [0, None]) for r in mn_steps]
        for steps in (ms, mns):
            assert steps[0][0] in (0, 1) and steps[-1][1] is None, fam["family"]
            assert all(b[0] == a[1] + 1 for a, b in zip(steps, steps[1:])), fam["family"]
        assert all(r["m"][0] == mn_steps[0]["m"][0] for r in mn_steps), fam["family"]


def test_sweep_rows_on_the_cpu_reference():
    import torch

    from bench import sweep  # the checkout's bench: conftest appends the repo root
    from bench.cases import make_case

    case = make_case("gemm", "bias_gelu_residual", device="cpu")
    row = sweep.sweep_shape(case, [SMALL, MID], 5, 24, 40, timer=lambda fns, sets: [0.002] * len(fns))
    assert row["us"] == {SMALL: 2.0, MID: 2.0} and all(e < case.tol for e in row["rel_err"].values())
    assert row["competitor"]["us"] == 2.0 and set(row) >= {"m", "n", "k", "selected"}
    # a kernel that passes its check but fails in the timer gets no number and the reason
    row = sweep.sweep_shape(case, [SMALL, MID], 5, 24, 40,
                            timer=lambda fns, sets: [0.002, 0.002, RuntimeError("capture failed\nmore")])
    assert row["us"] == {SMALL: 2.0, MID: None} and row["rel_err"][MID] == "RuntimeError: capture failed"
    # reversed order (main alternates it per shape): the timer sees the kernels last to first, the competitor
    # last, and each time still lands on its own name
    seen = []

    def by_position(fns, sets):
        seen.append(list(fns))
        return [0.001 * (i + 1) for i in range(len(fns))]  # the i-th fn timed gets i + 1 us

    fwd = sweep.sweep_shape(case, [SMALL, MID], 5, 24, 40, timer=by_position)
    rev = sweep.sweep_shape(case, [SMALL, MID], 5, 24, 40, timer=by_position, reverse=True)
    assert (fwd["competitor"]["us"], fwd["us"][SMALL], fwd["us"][MID], fwd["order"]) == (1.0, 2.0, 3.0, "table")
    assert (rev["competitor"]["us"], rev["us"][SMALL], rev["us"][MID], rev["order"]) == (3.0, 2.0, 1.0, "reversed")
    assert [f.keywords.get("config") for f in seen[1][:2]] == [MID, SMALL]
    # a kernel of another family is refused by the op: recorded, never timed
    row = sweep.sweep_shape(case, ["sm90_f16_t128x128x64_c1x1_coop"], 5, 24, 40, timer=lambda fns, sets: [0.002] * len(fns))
    assert row["us"] == {"sm90_f16_t128x128x64_c1x1_coop": None}
    assert "config" in row["rel_err"]["sm90_f16_t128x128x64_c1x1_coop"]
    assert torch.is_tensor(case.make(5, 24, 40)[0])
    # the competitor failing to time (torch rejects the shape) costs its number, not the row
    row = sweep.sweep_shape(case, [SMALL, MID], 5, 24, 40,
                            timer=lambda fns, sets: [RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED"), 0.002, 0.003])
    assert row["us"] == {SMALL: 2.0, MID: 3.0} and row["competitor"]["us"] is None
    assert row["competitor"]["error"] == "RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED"
    # and a competitor that cannot even produce the reference: the next reference checks the kernels

    def rejects(*args):
        raise RuntimeError("not supported")

    eager = case.reference_fns(5, 24, 40)
    case.reference_fns = lambda m, n, k: [rejects, *eager]
    row = sweep.sweep_shape(case, [SMALL], 5, 24, 40, timer=lambda fns, sets: [0.002] * len(fns))
    assert row["us"] == {SMALL: 2.0} and row["rel_err"][SMALL] < case.tol


@pytest.mark.parametrize("bad,expect", [
    ({"m": [1, 2]}, "'kernel' name"),
    ({"kernel": BF16[0], "m": [1]}, "expected m as \\[lo, hi\\] integers"),
    ({"kernel": BF16[0], "n": ["1", 2]}, "expected n as \\[lo, hi\\] integers"),
    ({"kernel": BF16[0], "k": [0, 2**63]}, "hi <= 2\\*\\*62"),
    ({"kernel": BF16[0], "m": [5, 2]}, "expected m = \\(lo, hi\\) integers with 0 <= lo <= hi"),
    ({"kernel": "sm90_bf16_t1x1x1_c1x1_coop"}, "unknown kernel"),
    ({"kernel": BF16[0], "pdl": 1}, "expected pdl True or False, got 1"),
    ({"kernel": BF16[0], "PDL": True}, "unknown key"),
])
def test_a_bad_rule_is_a_clear_error(bad, expect):
    import cutlass_gemm.configs as configs

    with pytest.raises(ValueError, match=expect):
        configs.rule_from_dict(bad)


def test_rule_from_dict_defaults_and_null_bound():
    import cutlass_gemm.configs as configs

    r = configs.rule_from_dict({"kernel": BF16[0], "m": [3, None]})
    assert (r.m, r.n, r.k) == ((3, configs.INF), (1, configs.INF), (0, configs.INF))
    assert r.pdl is False and configs.rule_from_dict({"kernel": BF16[0], "pdl": True}).pdl is True


@pytest.mark.parametrize("doc", [[], {"rows": []}, {"rows": [{"m": 1, "n": 2}]},
                                 {"rows": [{"m": 1, "n": 2, "k": 3, "us": {BF16[0]: "fast"}}]},
                                 {"rows": [{"m": 0, "n": 2, "k": 3, "us": {}}]}])
def test_a_malformed_sweep_is_a_clear_error(doc):
    with pytest.raises(SystemExit, match="derive_rules: x.json"):
        dr.check_sweep(doc, "x.json")


def _ab(tmp_path, run, rows_off, rows_on, epilogue="none"):
    """A PDL A/B pair of `python -m bench` folders: rows {(m, n, k): (kernel, us)} per mode."""
    for mode, rows in (("off", rows_off), ("on", rows_on)):
        d = tmp_path / f"{mode}_{run}"
        d.mkdir(exist_ok=True)
        doc = {"config": {"epilogue": epilogue},
               "rows": [{"m": m, "n": n, "k": k, "kernel": kern, "ours": {"status": "ok", "us": us}}
                        for (m, n, k), (kern, us) in rows.items()]}
        (d / "custom_gemm_bf16_none.json").write_text(json.dumps(doc))


def test_pdl_goes_only_to_rules_it_sped_up_at_every_measured_shape_in_every_run(tmp_path):
    doc = {"families": [{"family": "sm90 bf16", "rules": [
        {"kernel": SMALL, "m": [1, 64], "n": [8192, 8192], "k": [8192, 8192]},   # 0: faster in both runs
        {"kernel": SMALL, "m": [1, 64], "n": [1024, 1024], "k": [1024, 1024]},   # 1: faster in one run only
        {"kernel": MID, "m": [1, 64], "n": [2048, 2048], "k": [2048, 2048]},     # 2: the run timed another kernel
        {"kernel": BIG, "m": [65, 1000]},                                        # 3: global, one (N, K) measured
        {"kernel": MID, "m": [1001, None]},                                      # 4: global, three (N, K), all faster
    ]}]}
    off = {(16, 8192, 8192): (SMALL, 10.0), (16, 1024, 1024): (SMALL, 10.0), (16, 2048, 2048): (SMALL, 10.0),
           (128, 4096, 4096): (BIG, 10.0), (2048, 1, 1): (MID, 10.0), (2048, 2, 2): (MID, 10.0), (2048, 3, 3): (MID, 10.0)}
    fast = {s: (kern, 9.0) for s, (kern, _) in off.items()}
    _ab(tmp_path, "gpu0", off, fast)
    _ab(tmp_path, "gpu1", off, {**fast, (16, 1024, 1024): (SMALL, 9.8)})
    report = []
    dr.assign_pdl(doc, dr.pdl_samples(str(tmp_path)), report)
    assert [bool(r.get("pdl")) for r in doc["families"][0]["rules"]] == [True, False, False, False, True]
    assert "PDL on 2 of 4 measured rules" in report[0]
    # a fused family takes nothing from plain tables, and a stale flag is cleared
    doc["families"][0]["epilogue"] = "fused"
    dr.assign_pdl(doc, dr.pdl_samples(str(tmp_path)), [])
    assert not any(r.get("pdl") for r in doc["families"][0]["rules"])


def test_pdl_ab_needs_both_halves(tmp_path):
    _ab(tmp_path, "gpu0", {(16, 8192, 8192): (SMALL, 10.0)}, {(16, 8192, 8192): (SMALL, 9.0)})
    os.rename(tmp_path / "on_gpu0", tmp_path / "on_other")
    with pytest.raises(SystemExit, match="no on_gpu0"):
        dr.pdl_samples(str(tmp_path))
    os.rename(tmp_path / "on_other", tmp_path / "on_gpu0")
    (tmp_path / "on_gpu0" / "custom_gemm_bf16_none.json").write_text(json.dumps({"rows": [{"m": 16}]}))
    with pytest.raises(SystemExit, match="on_gpu0/custom_gemm_bf16_none.json: expected a `python -m bench` JSON"):
        dr.pdl_samples(str(tmp_path))
    (tmp_path / "on_gpu0" / "custom_gemm_bf16_none.json").write_text("{")
    with pytest.raises(SystemExit, match="cannot read it"):
        dr.pdl_samples(str(tmp_path))
    with pytest.raises(SystemExit, match="expected a folder of off_<run>/ and on_<run>/"):
        dr.pdl_samples(str(tmp_path / "nope"))


def test_shipped_pdl_flags_are_on_measured_per_nk_rules():
    """The shipped rules launch with PDL only where bench/results/pdl_ab measured them faster, in calls of the
    rule family's epilogue class (a fused family's flag rests on fused calls, as assign_pdl decides it)."""
    with open(os.path.join(ROOT, "cutlass_gemm", "default_rules.json")) as fh:
        doc = json.load(fh)
    flagged = [(f["family"], f.get("epilogue", "any"), r) for f in doc["families"] for r in f["rules"] if r.get("pdl")]
    assert flagged, "the PDL A/B found rules it speeds up"
    samples = dr.pdl_samples(os.path.join(ROOT, "bench", "results", "pdl_ab"))
    for fam, fam_ep, r in flagged:
        assert r.get("pdl") is True and "n" in r and "k" in r, r
        got = [ratio for _, ep, m, n, k, kern, ratio in samples
               if ep == fam_ep and kern == r["kernel"] and dr._holds(r, m, n, k)]
        assert got and max(got) <= dr.PDL_GAIN, (fam, fam_ep, r, got)


def test_a_global_rule_gets_a_pdl_copy_for_an_nk_measured_faster_across_its_m_range(tmp_path):
    doc = {"families": [{"family": "sm90 bf16", "rules": [{"kernel": MID, "m": [1, None]}]}]}
    off = {(16, 1024, 1024): (MID, 5.0), (512, 1024, 1024): (MID, 6.0),  # two Ms, both faster: a copy
           (16, 4096, 4096): (MID, 9.0),                                  # one M only: none
           (16, 8192, 8192): (MID, 9.0), (512, 8192, 8192): (MID, 30.0)}  # one M slower: none
    on = {**{s: (kern, 0.9 * us) for s, (kern, us) in off.items()}, (512, 8192, 8192): (MID, 31.0)}
    _ab(tmp_path, "gpu0", off, on)
    dr.assign_pdl(doc, dr.pdl_samples(str(tmp_path)), [])
    rules = doc["families"][0]["rules"]
    assert rules == [{"kernel": MID, "m": [1, None], "n": [1024, 1024], "k": [1024, 1024], "pdl": True},
                     {"kernel": MID, "m": [1, None]}]
    dr.assign_pdl(doc, dr.pdl_samples(str(tmp_path)), [])  # idempotent: the copy now takes those shapes
    assert doc["families"][0]["rules"] == rules


def _verdicts(rows, gpu="test", epilogue="none"):
    """rows: {(m, n, k): {launch: [us per round]}} -> a bench/ab.py-shaped document."""
    return {"gpu": gpu, "case": {"epilogue": epilogue}, "path": "ab_test.json",
            "rows": [{"m": m, "n": n, "k": k, "us_rounds": r} for (m, n, k), r in rows.items()]}


def test_an_overlay_rule_stops_short_of_an_m_where_its_winner_was_timed_behind():
    """Another GPU's A/B winner takes the launching rule's M range at its (N, K), cut at the geometric midpoint
    before an M where an A/B timed that winner more than GPU_AB_GAIN behind the launch made there (a near tie
    does not cut it)."""
    t = {(1024, 8192, 8192): {MID: 5.0, BIG: 6.0}, (4096, 8192, 8192): {MID: 12.0, BIG: 12.5}}
    doc, _ = dr.derive([_sweep(t)], {"families": []}, 0.03, hybrid=False)
    assert dr._first_rule(doc, "sm90 bf16", "any", 1024, 8192, 8192) is dr._first_rule(doc, "sm90 bf16", "any", 4096, 8192, 8192)
    rows = {(4096, 8192, 8192): {MID: 12.0, BIG: 10.0},    # BIG wins by 1.2x: an overlay rule
            (1024, 8192, 8192): {MID: 5.0, BIG: 8.0},      # BIG 1.6x behind: the rule stops at sqrt(1024 * 4096)
            (16384, 8192, 8192): {MID: 50.0, BIG: 51.0}}   # BIG 2% behind: a tie, no cut
    overlays, notes = dr.gpu_overlays(doc, [_gpu_ab("H100", rows)], {"test"})
    assert overlays[0]["rules"] == [{"kernel": BIG, "m": [2049, None], "n": [8192, 8192], "k": [8192, 8192]}]
    assert any("4096x8192x8192 " + BIG + " (1.200x faster than " + MID in x and "M 2049-None" in x for x in notes)
    rows[(16384, 8192, 8192)] = {MID: 50.0, BIG: 60.0}  # now 1.2x behind past M = 8192 too
    overlays, _ = dr.gpu_overlays(doc, [_gpu_ab("H100", rows)], {"test"})
    assert overlays[0]["rules"][0]["m"] == [2049, 8192]


def _table(gpu, epilogue, rows):
    """A `python -m bench` table: rows {(m, n, k): (kernel, pdl)}."""
    return {"environment": {"gpu": gpu}, "config": {"epilogue": epilogue},
            "rows": [{"m": m, "n": n, "k": k, "kernel": kernel, "pdl": pdl, "ours": {"status": "ok", "us": 1.0}}
                     for (m, n, k), (kernel, pdl) in rows.items()]}


def test_the_committed_tables_launches_stay_unless_a_sweep_times_them_behind(tmp_path):
    """--keep-tables: a launch a committed table made (on the sweeps' GPU) that the new rules would not make gets an
    exact-shape rule first in its family, with the table's epilogue class and PDL, unless the sweeps timed another
    kernel more than the tolerance faster there; a table from another GPU pins nothing."""
    t = {(16, 8192, 8192): {SMALL: 10.0, MID: 12.0}, (4096, 8192, 8192): {SMALL: 90.0, MID: 60.0, BIG: 61.0}}
    doc, _ = dr.derive([_sweep(t)], {"families": []}, 0.03)
    assert dr._first_rule(doc, "sm90 bf16", "any", 4096, 8192, 8192)["kernel"] == MID
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "suite_gemm_bf16_bias.json").write_text(json.dumps(_table("test", "bias", {
        (4096, 8192, 8192): (BIG, True),    # 1.7% behind MID in the sweep: kept, with its PDL
        (2048, 2048, 2048): (SMALL, False),  # no sweep timed it: kept
        (16, 8192, 8192): (MID, False),     # 20% behind SMALL in the sweep: not kept
        (8, 8192, 8192): (SMALL, False)})))  # what the rules launch already
    (folder / "suite_gemm_bf16_none.json").write_text(json.dumps(_table("H100", "none", {(4096, 8192, 8192): (SMALL, False)})))
    (folder / "notes.json").write_text("{}")  # not a table
    launches = dr.table_launches(str(folder), {"test"})
    assert len(launches) == 4 and all(x[0] == "suite_gemm_bf16_bias.json" for x in launches)
    report = []
    dr.keep_launches(doc, launches, dr._rows_by_family([_sweep(t)]), 0.03, report)
    rules = doc["families"][0]["rules"]
    assert rules[:2] == [{"kernel": SMALL, "m": [2048, 2048], "n": [2048, 2048], "k": [2048, 2048], "epilogue": "plain"},
                         {"kernel": BIG, "m": [4096, 4096], "n": [8192, 8192], "k": [8192, 8192], "epilogue": "plain",
                          "pdl": True}]
    assert dr._first_rule(doc, "sm90 bf16", "any", 16, 8192, 8192)["kernel"] == SMALL
    assert dr._first_rule(doc, "sm90 bf16", "fused", 4096, 8192, 8192)["kernel"] == MID  # a plain table pins plain calls
    assert dr._first_rule(doc, "sm90 bf16", "any", 4097, 8192, 8192)["kernel"] == MID  # the exact shape only
    assert any("16x8192x8192: not kept, its " + MID + " is 20.0% behind" in x for x in report)
    assert any(x.startswith("kept 2 launches") for x in report)
    # two tables launching differently at one shape of one family and epilogue class: no guess
    clash = launches + [("other_gemm_bf16_none.json", "any", 4096, 8192, 8192, MID, False)]
    with pytest.raises(SystemExit, match=f"4096x8192x8192 .* ran {MID} .pdl False. in other.* but {BIG} .pdl True."):
        dr.keep_launches(doc, clash, {}, 0.03, [])
    with pytest.raises(SystemExit, match="no sm90 bf16 .fused. rules"):  # nothing derived to keep it in
        dr.keep_launches(doc, [("f_gemm_bf16_bias_gelu_residual.json", "fused", 64, 64, 64, BIG, False)], {}, 0.03, [])
    with pytest.raises(SystemExit, match="--keep-tables .*: expected a folder"):
        dr.table_launches(str(tmp_path / "missing"), {"test"})


def test_an_ab_verdict_overrules_the_sweep_at_its_shape():
    t = {(512, 8192, 8192): {SMALL: 10.0, MID: 10.1, BIG: 12.0}, (512, 8192, 28672): {SMALL: 30.0, MID: 33.0, BIG: 40.0}}
    fam = dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]
    assert dr.derive_family(fam["rows"], 0.03) == [{"kernel": SMALL, "m": [1, None]}]
    # MID beat SMALL by 5% head to head at one shape: MID becomes that shape's best, SMALL 5% behind it
    ab = _verdicts({(512, 8192, 8192): {MID: [9.0, 9.5, 9.5], SMALL + "+pdl": [10.0, 9.9, 10.0]}})
    notes = []
    fam = dr._rows_by_family([_sweep(t)], [ab], notes)[("sm90 bf16", "any")]
    row = dict(((m, n, k), us) for m, n, k, us in fam["rows"])[(512, 8192, 8192)]
    assert row[MID] == pytest.approx(dr.AB_UNDER * 10.0) and row[SMALL] == pytest.approx(row[MID] * 10.0 / 9.5)
    assert row[BIG] == 12.0 and notes == [] and "ab_test.json" in fam["sources"]
    rules = dr.derive_family(fam["rows"], 0.03)
    assert dr.choose(rules, 512, 8192, 8192) == MID and dr.choose(rules, 512, 8192, 28672) == SMALL
    # an A/B at a shape no sweep timed is reported and left out (two kernels alone would skew the M ladder)
    notes = []
    dr._rows_by_family([_sweep(t)], [_verdicts({(64, 8192, 8192): {MID: [1.0, 1.0], SMALL: [2.0, 2.0]}})], notes)
    assert len(notes) == 1 and "64x8192x8192 left out" in notes[0]
    # one whose contender's code changed since (superseded) gives no verdict
    notes = []
    stale = dict(ab, superseded={MID: "its epilogue changed"})
    assert dr._rows_by_family([_sweep(t)], [stale], notes)[("sm90 bf16", "any")]["rows"] == \
        dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"]
    assert len(notes) == 1 and "superseded " + MID in notes[0]
    # an A/B of a family or epilogue class the sweeps do not cover is not this run's
    assert dr._rows_by_family([_sweep(t)], [_verdicts({(512, 8192, 8192): {MID: [1.0, 1.0], SMALL: [2.0, 2.0]}},
                                                epilogue="bias_gelu_residual")])[("sm90 bf16", "any")]["rows"] == \
        dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"]
    # one measured on another GPU is refused
    with pytest.raises(SystemExit, match="measured on 'other'"):
        dr._rows_by_family([_sweep(t)], [_verdicts({(512, 8192, 8192): {MID: [1.0, 1.0], SMALL: [2.0, 2.0]}}, gpu="other")])


def test_an_ab_verdict_outranks_its_own_contenders_only():
    """A kernel the A/B did not time keeps its sweep time (one added after the A/B can still take the row);
    a retired contender drops out of the verdict, and a verdict left with one launch says nothing."""
    t = {(512, 8192, 8192): {SMALL: 10.0, MID: 10.1, BIG: 9.0}}
    ab = _verdicts({(512, 8192, 8192): {MID: [9.0, 9.5, 9.5], SMALL: [10.0, 9.9, 10.0]}})
    row = dict(((m, n, k), us) for m, n, k, us in dr._rows_by_family([_sweep(t)], [ab])[("sm90 bf16", "any")]["rows"])
    row = row[(512, 8192, 8192)]
    assert row[BIG] == 9.0 and row[MID] == pytest.approx(dr.AB_UNDER * 10.0)  # under SMALL, not under BIG
    gone = next(name for name in dr.kt.RETIRED if name.startswith("sm90_bf16_"))
    notes = []
    lone = _verdicts({(512, 8192, 8192): {MID: [9.0, 9.0], gone: [10.0, 10.0]}})
    assert dr._rows_by_family([_sweep(t)], [lone], notes)[("sm90 bf16", "any")]["rows"] == \
        dr._rows_by_family([_sweep(t)])[("sm90 bf16", "any")]["rows"]
    assert len(notes) == 1 and "retired " + gone in notes[0]
    three = _verdicts({(512, 8192, 8192): {MID: [9.0, 9.5, 9.5], SMALL: [10.0, 9.9, 10.0], gone: [1.0, 1.0, 1.0]}})
    row3 = dict(((m, n, k), us) for m, n, k, us in dr._rows_by_family([_sweep(t)], [three])[("sm90 bf16", "any")]["rows"])
    assert row3[(512, 8192, 8192)] == row  # the verdict between the two that are still compiled
    dr.check_ab(three, "x.json")  # a retired name is known, not an error


@pytest.mark.parametrize("doc,expect", [
    ({"rows": []}, "non-empty 'rows'"),
    ({"rows": [{"m": 1, "n": 2, "k": 3, "us_rounds": {MID: [1.0, 1.0], SMALL: [1.0, 2.0]}}], "superseded": [MID]},
     "'superseded' as"),
    ({"rows": [{"m": 1, "n": 2, "k": 3, "us_rounds": {MID: [1.0, 1.0]}}]}, "2 or more launches"),
    ({"rows": [{"m": 1, "n": 2, "k": 3, "us_rounds": {MID: [1.0], SMALL: [1.0, 2.0]}}]}, "2 or more"),
    ({"rows": [{"m": 1, "n": 2, "k": 3, "us_rounds": {MID: [1.0, -1.0], SMALL: [1.0, 2.0]}}]}, "microseconds"),
    ({"rows": [{"m": 1, "n": 2, "k": 3, "us_rounds": {"sm90_bf16_nope": [1.0, 1.0], SMALL: [1.0, 2.0]}}]},
     "'sm90_bf16_nope' is not in kernel_table.py"),
])
def test_a_bad_ab_file_is_a_clear_error(doc, expect):
    with pytest.raises(SystemExit, match=expect):
        dr.check_ab(doc, "x.json")


def test_shipped_ab_files_are_valid():
    folder = os.path.join(ROOT, "bench", "results", "ab")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as fh:
            dr.check_ab(json.load(fh), name)


def test_ab_rows_on_the_cpu_reference(monkeypatch):
    from bench import ab
    from bench.cases import make_case

    assert ab.parse_launch("k+pdl") == ("k", True) and ab.parse_launch("k") == ("k", False)
    with pytest.raises(ValueError, match="KERNEL\\+pdl"):
        ab.parse_launch("k+fast")
    assert ab.parse_pair(f"5,24,40={SMALL},{MID}+pdl", BF16) == ((5, 24, 40), [SMALL, MID + "+pdl"])
    for bad, expect in ((f"5,24,40={SMALL}", "KERNEL,KERNEL"), (f"5,24,40={SMALL},{SMALL}", "named twice"),
                        ("5,24,40=sm90_f16_t128x128x64_c1x1_coop," + SMALL, "not a compiled kernel of this family")):
        with pytest.raises(ValueError, match=expect):
            ab.parse_pair(bad, BF16)
    case = make_case("gemm", "bias_gelu_residual", device="cpu")
    launched = []
    monkeypatch.setattr(case, "launch", lambda m, n, k: launched.append(1) or _routed())

    from cutlass_gemm import configs

    def _routed():  # the launch the op would pick: the first user rule's
        r = configs._user_rules[0]
        return r.kernel, r.pdl

    times = iter([0.001, 0.002, 0.0021, 0.0011, 0.001, 0.002])
    row = ab.ab_shape(case, 5, 24, 40, [SMALL, MID + "+pdl"], 3, timer=lambda fns, sets: [next(times)])
    assert row["us_rounds"] == {SMALL: [1.0, 1.1, 1.0], MID + "+pdl": [2.0, 2.1, 2.0]}  # order reversed in round 2
    assert all(e < case.tol for e in row["rel_err"].values()) and not configs._user_rules  # rules cleared after


def test_ab_against_an_older_rules_file_pairs_only_the_changed_launches():
    from bench import ab
    from bench.cases import make_case
    from cutlass_gemm import configs

    with open(configs.DEFAULT_RULES_FILE) as fh:
        doc = json.load(fh)
    case = make_case("gemm", "bias_gelu_residual", device="cpu")
    shapes = [(16, 8192, 8192), (2048, 2048, 2048), (4096, 4096, 4096)]
    assert ab.changed_launches(case, shapes, doc) == []  # the shipped rules against themselves
    now = {s: ab.launch_label(case, *s) for s in shapes}
    other = next(k for k in BF16 if k != now[(2048, 2048, 2048)])
    old = {"families": [{"family": "sm90 bf16", "rules": [
        {"kernel": other, "m": [2048, 2048], "n": [2048, 2048], "k": [2048, 2048], "epilogue": "fused", "pdl": True}]}]
        + doc["families"]}
    assert ab.changed_launches(case, shapes, old) == [((2048, 2048, 2048), [other + "+pdl", now[(2048, 2048, 2048)]])]
    for bad in ([], {"rules": []}, {"families": [{"family": "x"}]}, {"families": [{"rules": [{"kernel": "nope"}]}]}):
        with pytest.raises(ValueError):
            ab.changed_launches(case, shapes, bad)
    assert not configs._user_rules and not configs._tuned_rules  # left as found


def test_ab_score_rates_the_rules_launch_against_each_rows_best(tmp_path, capsys):
    from bench import ab, ab_score
    from bench.cases import make_case
    from cutlass_gemm import configs

    case = make_case("gemm", "bias_gelu_residual", device="cpu")
    shapes = [(16, 8192, 8192), (2048, 2048, 2048), (4096, 4096, 4096)]
    now = {s: ab.launch_label(case, *s) for s in shapes}
    other = {s: next(k for k in BF16 if k != now[s].partition("+")[0]) for s in shapes}
    rows = [  # the shipped launch 2x slower at the first shape, the winner at the second, not timed at the third
        {"m": 16, "n": 8192, "k": 8192, "us_rounds": {now[shapes[0]]: [20.0, 21.0, 20.0], other[shapes[0]]: [10.0] * 3}},
        {"m": 2048, "n": 2048, "k": 2048, "us_rounds": {now[shapes[1]]: [10.0] * 3, other[shapes[1]]: [12.0] * 3}},
        {"m": 4096, "n": 4096, "k": 4096, "us_rounds": {other[shapes[2]]: [1.0] * 3, other[shapes[0]]: [2.0] * 3}}]
    doc = {"case": case.describe(), "rows": rows}
    s = ab_score.score(doc)
    assert s["scored"] == 2 and s["untimed"] == 1 and s["geomean"] == pytest.approx(math.sqrt(2.0))
    assert s["worst"] == [2.0, "16x8192x8192", now[shapes[0]]]
    with open(configs.DEFAULT_RULES_FILE) as fh:
        shipped = json.load(fh)
    old = {"families": [{"family": "sm90 bf16", "rules": [  # older rules that picked the faster kernel at 16x8192x8192
        {"kernel": other[shapes[0]], "m": [16, 16], "n": [8192, 8192], "k": [8192, 8192], "epilogue": "fused"}]}]
        + shipped["families"]}
    s = ab_score.score(doc, old)
    assert s["scored"] == 2 and s["geomean"] == pytest.approx(1.0) and not configs._user_rules and not configs._tuned_rules
    path = tmp_path / "ab.json"
    path.write_text(json.dumps(doc))
    assert ab_score.main([str(path)]) == 0 and "| 2 | 1 | 1.414 |" in capsys.readouterr().out
    for argv in ([str(tmp_path / "missing.json")], ["--rules", str(path), str(path)]):  # an A/B file is not rules
        with pytest.raises(SystemExit):
            ab_score.main(argv)
    with pytest.raises(ValueError, match="'case'"):
        ab_score.case_of({"case": {"op": "conv"}})


def test_ab_cli_writes_what_derive_rules_reads(tmp_path, monkeypatch):
    from bench import ab

    monkeypatch.setattr(ab, "family", lambda case: BF16)
    monkeypatch.setattr(ab, "ab_shape", lambda case, m, n, k, launches, rounds: {
        "m": m, "n": n, "k": k, "rel_err": {x: 0.001 for x in launches},
        "us_rounds": {x: [10.0 + i] * rounds for i, x in enumerate(launches)}})
    out = tmp_path / "ab.json"
    assert ab.main(["--epilogue", "bias_gelu_residual", "--rounds", "3", "--json", str(out),
                    "--pair", f"512,8192,8192={MID},{SMALL}+pdl", f"16,8192,8192={SMALL},{BIG}"]) == 0
    doc = json.loads(out.read_text())
    dr.check_ab(doc, str(out))
    assert doc["rounds"] == 3 and doc["case"]["epilogue"] == "bias_gelu_residual" and len(doc["rows"]) == 2
    assert doc["command"].startswith("python -m bench.ab ") and dr.epilogue_class(doc) == "fused"
    with pytest.raises(SystemExit):  # --pair with --suite, and a kernel of another family
        ab.main(["--suite", "square", "--json", str(out), "--pair", f"1,2,3={MID},{SMALL}"])
    with pytest.raises(SystemExit):
        ab.main(["--json", str(out), "--pair", f"1,2,3={MID},sm90_f16_t128x128x64_c1x1_coop"])
    for argv in (["--json", str(tmp_path / "no" / "dir.json"), "--pair", f"1,2,3={MID},{SMALL}"],  # unwritable
                 ["--json", str(out), "--against", str(tmp_path / "missing.json")],
                 ["--json", str(out), "--against", str(out)]):  # an A/B file is not a rules file
        with pytest.raises(SystemExit):
            ab.main(argv)
    monkeypatch.setenv("CUTLASS_GEMM_PDL", "1")
    with pytest.raises(SystemExit):
        ab.main(["--json", str(out), "--pair", f"1,2,3={MID},{SMALL}"])
