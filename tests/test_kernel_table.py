"""The kernel table: budget, naming, generated files, and the built extension matching it."""

import collections
import dataclasses
import importlib.util
import os
import re

import pytest

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _generator():
    spec = importlib.util.spec_from_file_location("generate", os.path.join(ROOT, "tools", "generate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_files_are_fresh():
    stale = _generator().stale_files()
    assert not stale, f"stale generated files {stale}: run `python tools/generate.py`"


def test_budget():
    per_arch = collections.Counter(k.arch for k in kt.KERNELS)
    for arch, count in per_arch.items():
        assert count <= kt.MAX_KERNELS_PER_ARCH, f"sm{arch}: {count} kernels > {kt.MAX_KERNELS_PER_ARCH}"
    for stem, arch, ids in kt.compile_units():
        assert len(ids) <= kt.MAX_KERNELS_PER_UNIT, f"{stem}: {len(ids)} kernels > {kt.MAX_KERNELS_PER_UNIT}"
        assert stem.endswith(f"_sm{arch}"), f"{stem}: arch suffix"
        assert all(kt.KERNELS[i].arch == arch for i in ids)


def test_names_unique_and_descriptive():
    names = [k.name for k in kt.KERNELS]
    assert len(set(names)) == len(names)
    for k in kt.KERNELS:
        assert re.fullmatch(r"sm(90|100)_[a-z0-9x]+(_\w+)*_t\d+x\d+x\d+_c\d+x\d+_(coop|pingpong|ws|1sm|2sm)(_swapab)?(_streamk)?(_noact|_plain)?(_sd\d)?(_st\d+)?(_2persm)?", k.name), k.name
        assert k.a in kt.DTYPES and k.b in kt.DTYPES and k.out in kt.DTYPES
        assert k.scale in kt.SCALE_MODES and k.accum in kt.ACCUMS
        assert k.schedule in kt.SCHEDULES and k.scheduler in kt.SCHEDULERS
        assert isinstance(k.activation, bool) and isinstance(k.residual, bool), k.name
        # no residual node: built only without the activation node and with CUTLASS's stores (tools/generate.py)
        assert k.residual or (not k.activation and k.stores == 0), k.name
        assert k.stores == 0 or (k.arch == 90 and k.schedule in ("coop", "pingpong") and 3 <= k.stores <= 8), k.name
        assert k.stages == 0 or (k.arch == 90 and k.schedule in ("coop", "pingpong") and 2 <= k.stages <= 16), k.name
        if k.arch == 90 and k.schedule == "coop":
            assert k.tile[0] >= 128, f"{k.name}: cooperative needs a 128-row tile"
        if k.schedule == "ws":  # CUTLASS's non-persistent kernel takes no stream-K scheduler; SM90 only
            assert k.arch == 90 and k.scheduler == "persistent" and k.scale != "blockwise", k.name
        # Two resident CTAs per SM: only the non-persistent kernel (a persistent grid is sized to one per SM)
        assert k.ctas_per_sm == 1 or (k.ctas_per_sm == 2 and k.schedule == "ws"), k.name


def test_a_succeeded_kernel_is_retired_and_its_successor_is_the_same_tile_with_fewer_nodes():
    """kernel_table.SUCCEEDED_BY: the successor has the old build's tile, cluster, schedule, scheduler, family and
    store path, lacks no node the old one had that a rule could need (no rule names a `_noact`/`_plain` kernel for
    fused calls), and every rule that named the old build names the successor. A successor may fix its mainloop stages
    (`_stN`): at the count its predecessor's carveout gave, or fewer where an A/B measured it faster (session 42's
    bf16 64x128 ping-pong, act and `_plain`: 7 against the carveout's 8)."""
    pat = re.compile(r"(_noact|_plain)?(_st\d+)?$")
    rule_kernels = {r.kernel for r in configs.DEFAULT_RULES}
    for old, new in kt.SUCCEEDED_BY.items():
        assert old not in kt.KERNEL_IDS and old in kt.RETIRED and new in kt.RETIRED[old], old
        k = kt.KERNELS[kt.KERNEL_IDS[new]]
        assert pat.sub("", old) == pat.sub("", new), (old, new)
        if pat.search(old).group(1) is None:  # the old build had both nodes: so has the successor (a stage change)
            assert k.activation and k.residual, (old, new)
        else:  # a `_noact` / `_plain` build: its successor has no activation node (and the rules no fused use)
            assert not k.activation and not k.residual, (old, new)
        assert old not in rule_kernels and new in rule_kernels, (old, new)
        assert kt.current_name(old) == new and kt.current_name(new) == new


def test_two_per_sm_template_and_refusals():
    gen = _generator()
    two = [k for k in kt.KERNELS if k.ctas_per_sm == 2]
    assert two, "the table has two-CTA-per-SM kernels (kernel_table._sm90_decode_ws_2persm)"
    for k in two:
        assert "sm90::Ws<" in gen.kernel_type(k) and ", 2>" in gen.kernel_type(k), gen.kernel_type(k)
    one = dataclasses.replace(two[0], ctas_per_sm=1)
    assert gen.kernel_type(one).count(", 2>") == 0 and one.name + "_2persm" == two[0].name
    for bad in (dataclasses.replace(two[0], schedule="pingpong"), dataclasses.replace(two[0], ctas_per_sm=3)):
        with pytest.raises(NotImplementedError, match="two CTAs per SM"):
            gen.kernel_type(bad)


def test_blockwise_tile_refusals():
    """Blockwise tiles CUTLASS cannot build are refused when the sources are generated, not deep in nvcc: a Normal
    tile's N and every tile's K must be multiples of 128, a swapped tile's first extent 64 or a multiple of 128."""
    gen = _generator()
    block = [k for k in kt.KERNELS if k.scale == "blockwise" and k.arch == 90]
    normal = next(k for k in block if not k.swap_ab)
    swapped = next(k for k in block if k.swap_ab)
    for k in block:
        assert gen.kernel_type(k).startswith("BlockwiseGemm<"), k.name
    with pytest.raises(NotImplementedError, match="blockwise tile's N must be a multiple of 128 .*got 192"):
        gen.kernel_type(dataclasses.replace(normal, tile=(128, 192, 128)))
    with pytest.raises(NotImplementedError, match="blockwise tile's K must be a multiple of 128 .*got 64"):
        gen.kernel_type(dataclasses.replace(normal, tile=(128, 128, 64)))
    with pytest.raises(NotImplementedError, match="swapped blockwise tile's first extent"):
        gen.kernel_type(dataclasses.replace(swapped, tile=(96, 32, 128)))
    assert gen.kernel_type(dataclasses.replace(swapped, tile=(128, 48, 128)))  # tokens: any width the MMA takes


def test_stores_template_and_refusals():
    """The stores-in-flight knob: a `_sdN` name and a trailing template argument; every argument before it is
    written out (defaults included), and a kernel without it keeps its instantiation; SM100, ws, an f32 output and
    a count outside 3-8 are refused."""
    gen = _generator()
    base = next(k for k in kt.KERNELS if (k.arch, k.scale, k.schedule, k.swap_ab, k.scheduler, k.activation)
                == (90, "blockwise", "coop", False, "persistent", True))
    plain = gen.kernel_type(base)
    assert plain.endswith(", sm90::Coop<false>>"), plain
    sd4 = dataclasses.replace(base, stores=4, activation=False)
    assert sd4.name == base.name + "_noact_sd4"
    assert gen.kernel_type(sd4) == plain[:-1] + ", cutlass::gemm::PersistentScheduler, Normal, false, 4>"
    sd5 = dataclasses.replace(base, stores=5)
    assert sd5.name == base.name + "_sd5"
    assert gen.kernel_type(sd5) == plain[:-1] + ", cutlass::gemm::PersistentScheduler, Normal, true, 5>"
    noact = dataclasses.replace(base, activation=False)
    assert gen.kernel_type(noact) == plain[:-1] + ", cutlass::gemm::PersistentScheduler, Normal, false>"
    ws = next(k for k in kt.KERNELS if k.schedule == "ws")
    sm100 = next(k for k in kt.KERNELS if k.arch == 100 and k.out == "bf16")
    f32 = next(k for k in kt.KERNELS if k.arch == 90 and k.out == "f32")
    for bad in (ws, sm100, f32):
        with pytest.raises(NotImplementedError, match="stores-in-flight knob is built for SM90 persistent"):
            gen.kernel_type(dataclasses.replace(bad, stores=4))
    for count in (1, 2, 9):
        with pytest.raises(ValueError, match=f"expected stores 0 .* or 3-8 .* got {count}"):
            gen.kernel_type(dataclasses.replace(base, stores=count))


def test_stages_template_and_refusals():
    """The fixed-stages knob: a `_stN` name and the schedule's second argument (the other template arguments as
    before); a kernel without it keeps its instantiation; SM100, ws and a count outside 2-16 are refused."""
    gen = _generator()
    for schedule, tag in (("pingpong", "Pingpong"), ("coop", "Coop")):
        base = next(k for k in kt.KERNELS if (k.arch, k.scale, k.schedule, k.activation, k.stages)
                    == (90, "none", schedule, False, 0) and k.residual)
        st8 = dataclasses.replace(base, residual=False, stages=8)
        assert st8.name == base.name.replace("_noact", "_plain") + "_st8"
        typ = gen.kernel_type(st8)
        assert f"sm90::{tag}<false, 8>" in typ and typ.endswith(", false, 0, false>"), typ
        assert gen.kernel_type(base) == gen.kernel_type(dataclasses.replace(base, stages=0))
        assert f"sm90::{tag}<false>" in gen.kernel_type(base)
    ws = next(k for k in kt.KERNELS if k.schedule == "ws")
    sm100 = next(k for k in kt.KERNELS if k.arch == 100)
    for bad in (dataclasses.replace(ws, stages=4), dataclasses.replace(sm100, stages=4),
                dataclasses.replace(base, stages=1), dataclasses.replace(base, stages=17)):
        with pytest.raises(NotImplementedError, match="fixed stage count is built for SM90 cooperative and ping-pong"):
            gen.kernel_type(bad)
    blockwise = next(k for k in kt.KERNELS if k.scale == "blockwise" and k.arch == 90 and k.schedule == "coop")
    with pytest.raises(NotImplementedError, match="blockwise mainloop builder sizes its stages from a carveout only"):
        gen.kernel_type(dataclasses.replace(blockwise, stages=5))
    with pytest.raises(ValueError, match="expected stages to be an int"):
        gen.kernel_type(dataclasses.replace(base, stages=8.0))


def test_every_kernel_has_a_template():
    gen = _generator()
    for k in kt.KERNELS:
        assert gen.kernel_type(k)


def test_extension_matches_table():
    import torch

    from cutlass_gemm._ops import _table_hash

    assert torch.ops.cutlass_gemm._kernel_table_hash() == _table_hash([k.name for k in kt.KERNELS])
    mask = torch.ops.cutlass_gemm._compiled_kernels()
    assert mask.shape == (len(kt.KERNELS),)


def test_tma_encode_counts_start_at_zero():
    """The TMA descriptor counts by L2 promotion (none, 64, 128, 256 B; the GPU test
    test_tma_l2_promotion_reaches_the_descriptors reads them) are zero in a process that ran no GEMM."""
    import subprocess
    import sys

    code = "import torch, cutlass_gemm; print(torch.ops.cutlass_gemm._tma_encode_counts().tolist())"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[0, 0, 0, 0]", r.stdout


def test_default_rules_cover_every_family():
    families = {k.family for k in kt.KERNELS}
    ruled = {r.spec.family for r in configs.DEFAULT_RULES}
    for fam in families:
        # Families with a single kernel need no rule (the family fallback picks it).
        n = sum(1 for k in kt.KERNELS if k.family == fam)
        assert fam in ruled or n == 1, f"no default rule for {fam}"


def test_host_probe_every_compiled_kernel():
    """can_implement / get_workspace_size on the host for every kernel this build has (no GPU)."""
    import torch

    mask = torch.ops.cutlass_gemm._compiled_kernels().tolist()
    for i, k in enumerate(kt.KERNELS):
        status, ws = torch.ops.cutlass_gemm._probe_kernel(i, 1000, 1024, 4096, 132).tolist()
        if not mask[i]:
            assert status == 2, k.name  # kNotCompiledForArch
            continue
        assert status == 0 and ws >= 0, f"{k.name}: status {status}"
        # K off the 16-byte rule: the kernel itself refuses (the op pads before it gets there).
        status, _ = torch.ops.cutlass_gemm._probe_kernel(i, 1000, 1024, 4095, 132).tolist()
        assert status != 0, f"{k.name} accepted K = 4095"


def test_ws_kernels_refuse_more_tiles_than_a_grid_holds():
    """Schedule ws launches one CTA per output tile, the tiles along the tile's second extent (M when swap-AB,
    else N) as grid.y, at most 65535: can_implement refuses beyond that (CUTLASS does not check), so the op
    raises before any launch (host probe, no GPU)."""
    import torch

    mask = torch.ops.cutlass_gemm._compiled_kernels().tolist()
    ws = [(i, k) for i, k in enumerate(kt.KERNELS) if k.schedule == "ws" and mask[i]]
    if not ws:
        pytest.skip("no ws kernel in this build")
    for i, k in ws:
        most = k.tile[1] * 65535  # the most M (swap-AB) or N one grid holds
        mn = (lambda x: (x, 1024)) if k.swap_ab else (lambda x: (1024, x))
        over = most + (1 if k.swap_ab else 8)  # N stays a multiple of 8 (D's 16-byte rows), else a different refusal
        assert torch.ops.cutlass_gemm._probe_kernel(i, *mn(most), 4096, 132).tolist()[0] == 0, k.name
        assert torch.ops.cutlass_gemm._probe_kernel(i, *mn(over), 4096, 132).tolist()[0] == 3, k.name  # kTooManyTiles
    # the persistent kernels' grids are at most the SM count: the same M is theirs to take
    pp = kt.KERNEL_IDS["sm90_bf16_t64x16x128_c1x1_pingpong_swapab"]
    if mask[pp]:
        assert torch.ops.cutlass_gemm._probe_kernel(pp, 16 * 65535 + 1, 1024, 4096, 132).tolist()[0] == 0


def test_small_grid_bf16_stream_k_decomposition():
    """16-bit stream-K kernels use the stream-K decomposition when the output has fewer tiles than 2/3
    of the SMs (it needs a partials workspace; CUTLASS's data-parallel choice needs none); 8-bit ones
    and larger grids keep CUTLASS's heuristic (host probe, no GPU)."""
    import torch

    mask = torch.ops.cutlass_gemm._compiled_kernels().tolist()
    names = [k.name for k in kt.KERNELS]

    def workspace(name, m, n, k):
        i = names.index(name)
        if not mask[i]:
            pytest.skip(f"{name} not in this build")
        status, ws = torch.ops.cutlass_gemm._probe_kernel(i, m, n, k, 132).tolist()
        assert status == 0, (name, status)
        return ws

    bf16 = "sm90_bf16_t128x32x128_c1x1_coop_swapab_streamk"
    fp8 = "sm90_e4m3_scaled_fast_t128x32x128_c1x1_coop_swapab_streamk"
    assert workspace(bf16, 16, 10240, 8192) > 0      # 80 tiles of 128 rows (swap-AB): stream-K
    assert workspace(bf16, 1, 10240, 8192) > 0
    assert workspace(bf16, 64, 8192, 8192) == 0      # 128 tiles: data-parallel, as CUTLASS decides
    assert workspace(fp8, 16, 10240, 8192) == 0      # FP8: data-parallel won at 80 tiles too


def test_stage_counts_probe_covers_every_sm90_kernel():
    """tools/stage_counts.py's host probe (compiled by hand, with nvcc) prints each SM90 kernel's stage count from the
    same C++ type the generated units instantiate."""
    spec = importlib.util.spec_from_file_location("stage_counts", os.path.join(ROOT, "tools", "stage_counts.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    table = mod.generate.load_table()
    sm90 = mod.sm90_kernels(table)
    assert sm90 and {k.arch for k in sm90} == {90} and len(sm90) == sum(k.arch == 90 for k in kt.KERNELS)
    src = mod.probe_source(sm90)
    for k in sm90:
        assert f'"{k.name}", (int){mod.generate.kernel_type(k)}::CollectiveMainloop' in src, k.name
    assert [k.name for k in mod.sm90_kernels(table, "pingpong_plain_st7$")] == ["sm90_bf16_t64x128x64_c1x1_pingpong_plain_st7"]
