"""Everything that runs without a GPU: semantics of the CPU reference, schema, fake kernel,
opcheck, torch.compile through the reference, every validation error, the registry."""

import json
import re

import pytest
import torch
import torch.nn.functional as F

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt
from gemm_checks import BAD_GEMM_INPUTS, check_result, make_problem

ACTS = list(kt.ACTIVATIONS)


def test_schema():
    schema = str(torch.ops.cutlass_gemm.gemm.default._schema)
    assert schema == (
        "cutlass_gemm::gemm(Tensor a, Tensor b, Tensor? bias=None, Tensor? residual=None, *, "
        "str activation=\"none\", float alpha=1., float beta=1., ScalarType? out_dtype=None, "
        "str config=\"\") -> Tensor"
    )


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("bias", [None, "out", "f32"])
@pytest.mark.parametrize("residual", [False, True])
def test_cpu_reference_matches_float64(dtype, activation, bias, residual):
    p = make_problem(33, 40, 72, dtype, "cpu", bias=bias, residual=residual, activation=activation, alpha=0.5, beta=0.75)
    out = cutlass_gemm.gemm(p.a, p.b, **p.kwargs())
    check_result(out, p, "cpu")


def test_checker_measures_a_cancelled_residual_against_its_terms():
    """A 1x1 output the residual nearly cancels: an error small next to the two terms passes (it did
    not: 9.6% of the tiny result, session 11's GPU fuzz), while dropping the residual still fails."""
    p = make_problem(1, 1, 2048, torch.bfloat16, "cpu", residual=True, beta=-0.5)
    z = (p.a.double() @ p.b.double().t())
    p.residual.copy_((z / 0.5).to(torch.bfloat16) + 0.01)  # beta * residual = -z - 0.005
    ref = z - 0.5 * p.residual.double()
    near = (ref + 2e-3 * z.abs()).to(torch.bfloat16)  # 2e-3 of the product's size
    check_result(near, p, "cancelled residual, small error")
    with pytest.raises(AssertionError, match="relative"):
        check_result(z.to(torch.bfloat16), p, "residual dropped")


def test_checker_measures_an_activation_tail_against_its_input():
    """GELU deep in its negative tail: FP32 gives 0 where float64 gives ~-1e-10 (session 12's GPU fuzz
    failed a correct 1x1x1 kernel on it); measured against |y| it passes, while an output that skipped
    the activation, or the wrong one, still fails."""
    p = make_problem(1, 4, 64, torch.bfloat16, "cpu", activation="gelu_tanh")
    p.b.copy_(p.b.abs() + 0.5)
    p.a.copy_(-(p.a.abs() + 0.5))  # y = a @ b^T <= -16: gelu_tanh(y) is 0 in FP32
    y = p.a.double() @ p.b.double().t()
    check_result(torch.zeros(1, 4, dtype=torch.bfloat16), p, "gelu tail flushed to 0")
    with pytest.raises(AssertionError, match="relative"):
        check_result(y.to(torch.bfloat16), p, "activation skipped")
    q = make_problem(64, 64, 64, torch.bfloat16, "cpu", activation="gelu")
    y = q.a.double() @ q.b.double().t()
    with pytest.raises(AssertionError, match="relative"):
        check_result(torch.relu(y).to(torch.bfloat16), q, "relu for gelu")


def test_cpu_reference_formula_by_hand():
    a = torch.randn(5, 7, dtype=torch.bfloat16)
    b = torch.randn(3, 7, dtype=torch.bfloat16)
    bias = torch.randn(3, dtype=torch.float32)
    res = torch.randn(5, 3, dtype=torch.bfloat16)
    out = cutlass_gemm.gemm(a, b, bias=bias, residual=res, activation="gelu", alpha=2.0, beta=-0.5)
    want = F.gelu(2.0 * (a.float() @ b.float().t()) + bias) + -0.5 * res.float()
    torch.testing.assert_close(out, want.to(torch.bfloat16), rtol=0, atol=0)


@pytest.mark.parametrize("lead", [(7,), (2, 3), (2, 1, 4)])
def test_leading_dims(lead):
    p = make_problem(None, 24, 16, torch.bfloat16, "cpu", lead=lead, residual=True, bias="out")
    out = cutlass_gemm.gemm(p.a, p.b, **p.kwargs())
    assert out.shape == tuple(lead) + (24,)
    check_result(out, p)


def test_one_dim_input():
    a = torch.randn(16, dtype=torch.bfloat16)
    b = torch.randn(8, 16, dtype=torch.bfloat16)
    assert cutlass_gemm.gemm(a, b).shape == (8,)


@pytest.mark.parametrize("m,n,k", [(0, 8, 16), (8, 0, 16), (0, 0, 0), (4, 8, 0)])
def test_degenerate_shapes(m, n, k):
    p = make_problem(m, n, k, torch.bfloat16, "cpu", bias="out", residual=True, activation="gelu")
    out = cutlass_gemm.gemm(p.a, p.b, **p.kwargs())
    assert out.shape == (m, n)
    if k == 0 and m and n:  # K = 0: act(bias) + beta * residual
        want = F.gelu(p.bias.float()) + p.residual.float()
        torch.testing.assert_close(out.float(), want.to(torch.bfloat16).float())


def test_fp32_output():
    p = make_problem(16, 24, 32, torch.bfloat16, "cpu", out_dtype=torch.float32, bias="f32", residual=True)
    out = cutlass_gemm.gemm(p.a, p.b, **p.kwargs())
    assert out.dtype == torch.float32
    check_result(out, p)


@pytest.mark.parametrize("case", BAD_GEMM_INPUTS, ids=[c[0] for c in BAD_GEMM_INPUTS])
def test_bad_inputs_cpu(case):
    _, build, message = case
    args, kwargs = build("cpu")
    with pytest.raises(RuntimeError) as e:
        cutlass_gemm.gemm(*args, **kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize("case", BAD_GEMM_INPUTS, ids=[c[0] for c in BAD_GEMM_INPUTS])
def test_bad_inputs_fake(case):
    """The fake kernel (torch.compile's view) raises the same message."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    _, build, message = case
    args, kwargs = build("cpu")
    with FakeTensorMode(allow_non_fake_inputs=True):
        with pytest.raises(RuntimeError) as e:
            cutlass_gemm.gemm(*args, **kwargs)
    assert message in str(e.value)


@pytest.mark.parametrize("capability,config,message", [
    ((9, 0), "sm100_bf16_t128x128x64_c1x1_1sm", "config 'sm100_bf16_t128x128x64_c1x1_1sm' is an sm100 kernel; this GPU is sm_90"),
    ((10, 0), "sm90_bf16_t128x128x64_c1x1_coop", "config 'sm90_bf16_t128x128x64_c1x1_coop' is an sm90 kernel; this GPU is sm_100"),
])
def test_fake_refuses_another_archs_config(monkeypatch, capability, config, message):
    """A forced config of another arch fails in the fake kernel (a torch.compile trace) with the message
    the C++ op gives at its first call, not only at run time (the device is simulated: no GPU here)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    with FakeTensorMode():
        a = torch.empty(64, 128, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(256, 128, dtype=torch.bfloat16, device="cuda")
        with pytest.raises(RuntimeError, match=message):
            torch.ops.cutlass_gemm.gemm(a, b, config=config)
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        s = torch.ones(1, device="cuda")
        fp8 = config.replace("bf16_t128x128x64", "e4m3_scaled_fast_t128x128x128").replace("_c1x1_coop", "_c1x2_pingpong")
        if fp8 in kt.KERNEL_IDS:  # the SM90 side of the pair; SM100's FP8 names differ
            with pytest.raises(RuntimeError, match="is an sm90 kernel"):
                torch.ops.cutlass_gemm.scaled_mm(a8, b8, s, s, accumulate="fast", config=fp8)
        own = "sm90_bf16_t128x128x64_c1x1_coop" if capability == (9, 0) else "sm100_bf16_t128x128x64_c1x1_1sm"
        if configs._compiled_mask()[kt.KERNEL_IDS[own]]:
            torch.ops.cutlass_gemm.gemm(a, b, config=own)  # the device's own arch traces
        else:
            with pytest.raises(RuntimeError, match=f"config '{own}' is not compiled into this build"):
                torch.ops.cutlass_gemm.gemm(a, b, config=own)


def _opcheck_samples():
    yield (torch.randn(8, 16, dtype=torch.bfloat16), torch.randn(4, 16, dtype=torch.bfloat16)), {}
    yield (torch.randn(2, 3, 16, dtype=torch.float16), torch.randn(8, 16, dtype=torch.float16)), dict(
        bias=torch.randn(8, dtype=torch.float32), residual=torch.randn(2, 3, 8, dtype=torch.float16),
        activation="gelu_tanh", alpha=0.5, beta=2.0)
    yield (torch.randn(5, 8, dtype=torch.bfloat16), torch.randn(6, 8, dtype=torch.bfloat16)), dict(
        out_dtype=torch.float32, bias=torch.randn(6), activation="silu", config="sm90_bf16_f32out_t128x128x64_c1x1_coop")
    yield (torch.randn(3, 0, dtype=torch.bfloat16), torch.randn(6, 0, dtype=torch.bfloat16)), dict(
        bias=torch.randn(6, dtype=torch.bfloat16), activation="relu")


@pytest.mark.parametrize("i,sample", list(enumerate(_opcheck_samples())))
def test_opcheck(i, sample):
    args, kwargs = sample
    torch.library.opcheck(torch.ops.cutlass_gemm.gemm.default, args, kwargs)


def test_compile_fullgraph_cpu_dynamic_m():
    """Compiled through the fake + CPU kernels; dynamic M does not recompile."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()  # global across tests: count this test's graphs only
    lin = torch.nn.Linear(32, 32, dtype=torch.bfloat16)
    w = torch.randn(48, 32, dtype=torch.bfloat16)
    bias = torch.randn(48, dtype=torch.bfloat16)

    def f(x):
        return cutlass_gemm.gemm(torch.relu(lin(x)), w, bias=bias, activation="gelu")

    cf = torch.compile(f, fullgraph=True, dynamic=True)
    counts = []
    with torch.no_grad():
        for m in (3, 17, 64, 130):
            x = torch.randn(m, 32, dtype=torch.bfloat16)
            torch.testing.assert_close(cf(x), f(x))
    assert counters["stats"]["unique_graphs"] <= 1


def _first_default(m, n, k, family):
    """The shipped rule explain() must pick: the first default rule of the family holding (m, n, k)."""
    return next(r.kernel for r in configs.DEFAULT_RULES if r.spec.family == family and r.holds(m, n, k))


def test_configs_explain_and_rules():
    configs.clear_rules()
    bf16 = (90, "bf16", "bf16", "bf16", "none", "f32")
    d = configs.explain(16, 4096, 4096, torch.bfloat16, arch=90)
    assert d.kernel == _first_default(16, 4096, 4096, bf16) and "default" in d.reason
    at48 = configs.explain(48, 4096, 4096, torch.bfloat16, arch=90).kernel
    forced = next(k.name for k in kt.KERNELS if k.family == bf16 and k.name not in (d.kernel, at48))
    configs.add_rule(forced, m=(1, 32))  # a user rule beats the defaults inside its range only
    try:
        assert configs.explain(16, 4096, 4096, torch.bfloat16, arch=90).kernel == forced
        assert configs.explain(16, 4096, 4096, torch.bfloat16, arch=90).source == "user"
        assert configs.explain(48, 4096, 4096, torch.bfloat16, arch=90).kernel == at48
    finally:
        configs.clear_rules()
    # An epilogue-limited rule serves only its class of calls; "any" (the default) serves both.
    configs.add_rule(forced, m=(40, 60), epilogue="fused")
    try:
        assert configs.explain(48, 4096, 4096, torch.bfloat16, arch=90, fused=True).kernel == forced
        assert configs.explain(48, 4096, 4096, torch.bfloat16, arch=90).kernel == at48
        with pytest.raises(ValueError, match="expected epilogue one of any, plain, fused"):
            configs.add_rule(forced, epilogue="gelu")
        assert configs.rule_from_dict({"kernel": forced, "epilogue": "plain"}).epilogue == "plain"
    finally:
        configs.clear_rules()
    # A kernel without the activation node: a rule naming it serves calls without an activation (a
    # residual included) and is passed over for calls with one, by explain and by the C++ choice alike.
    noact = next(k.name for k in kt.KERNELS if k.family == bf16 and not k.activation and k.residual)
    configs.add_rule(noact, m=(40, 60))
    try:
        cpp = lambda fused, act: torch.ops.cutlass_gemm._select_kernel(  # noqa: E731
            90, kt.DTYPES.index("bf16"), kt.DTYPES.index("bf16"), kt.DTYPES.index("bf16"),
            kt.SCALE_MODES.index("none"), kt.ACCUMS.index("f32"), 48, 4096, 4096, fused, act)
        for fused, act in ((False, False), (True, False), (True, True)):
            d = configs.explain(48, 4096, 4096, torch.bfloat16, arch=90, fused=fused, activation=act)
            assert (d.kernel == noact) == (not act), (fused, act, d)
            assert kt.KERNEL_IDS[d.kernel] == cpp(fused, act), (fused, act, d)
        # the op's activation names say the same ("none": no activation)
        assert configs.explain(48, 4096, 4096, torch.bfloat16, arch=90, activation="gelu_tanh").kernel != noact
        assert configs.explain(48, 4096, 4096, torch.bfloat16, arch=90, activation="none").kernel == noact
        for bad in ("swish", 1, None):
            with pytest.raises(ValueError, match="expected activation"):
                configs.explain(48, 4096, 4096, torch.bfloat16, arch=90, activation=bad)
    finally:
        configs.clear_rules()
    # A family with one kernel and no rule falls back to it.
    d = configs.explain(16, 64, 64, torch.bfloat16, torch.float32, arch=90)
    assert d.kernel == "sm90_bf16_f32out_t128x128x64_c1x1_coop" and d.reason == "family fallback" and d.source == "fallback"


@pytest.mark.parametrize("scale", ["blockwise", "tensor_row_col"])
def test_plain_kernels_serve_calls_with_neither_activation_nor_residual(scale):
    """A `_plain` kernel (no activation node, no residual node): a rule naming it serves plain calls only and is
    passed over for fused ones (a residual, an activation or both), by explain and by the C++ choice alike; forcing
    it with a residual is refused before launch."""
    plain = next(k for k in kt.KERNELS if not k.residual and k.scale == scale and k.arch == 90)
    assert not plain.activation and plain.name.endswith("_plain")
    fam = [kt.DTYPES.index(plain.a), kt.DTYPES.index(plain.b), kt.DTYPES.index(plain.out),
           kt.SCALE_MODES.index(plain.scale), kt.ACCUMS.index(plain.accum)]
    configs.add_rule(plain.name, m=(4000, 4200))
    try:
        for fused, act in ((False, False), (True, False), (True, True)):
            d = configs.explain(4096, 7168, 2048, torch.float8_e4m3fn, scale=scale.replace("tensor_row_col", "row"),
                                accumulate="fast" if plain.accum == "fast" else "accurate", arch=90, fused=fused,
                                activation=act)
            assert (d.kernel == plain.name) == (not fused), (fused, act, d)
            cpp = torch.ops.cutlass_gemm._select_kernel(90, *fam, 4096, 7168, 2048, fused, act)
            assert kt.KERNEL_IDS[d.kernel] == cpp, (fused, act, d)
    finally:
        configs.clear_rules()
    with pytest.raises(ValueError, match="never runs a fused call; expected epilogue 'plain' or 'any'"):
        configs.add_rule(plain.name, epilogue="fused")  # a rule that could never fire is refused
    a = torch.zeros(4, 256, dtype=torch.float8_e4m3fn)
    b = torch.zeros(128, 256, dtype=torch.float8_e4m3fn)
    # blockwise: [M, K/128], [N/128, K/128]; else per-row and per-column
    sa, sb = (torch.ones(4, 2), torch.ones(1, 2)) if scale == "blockwise" else (torch.ones(4, 1), torch.ones(128, 1))
    with pytest.raises(RuntimeError, match=f"config '{plain.name}' has no residual in its epilogue; expected residual=None"):
        cutlass_gemm.scaled_mm(a, b, sa, sb, residual=torch.zeros(4, 128, dtype=torch.bfloat16), config=plain.name,
                               accumulate="fast" if plain.accum == "fast" else "accurate")


def test_configs_file_roundtrip(tmp_path):
    path = tmp_path / "tuned.json"
    rule = configs.Rule("sm90_f16_t128x256x64_c2x1_coop", m=(100, 200), n=(1, 10**6), k=(0, 10**6))
    configs.save(str(path), [rule])
    assert json.loads(path.read_text())["rules"][0]["kernel"] == rule.kernel
    try:
        assert configs.load(str(path)) == 1
        assert configs.explain(150, 512, 512, torch.float16, arch=90).kernel == rule.kernel
        assert "tuned" in configs.explain(150, 512, 512, torch.float16, arch=90).reason
    finally:
        configs.clear_rules()


def test_configs_reject_bad_rules():
    with pytest.raises(ValueError, match="unknown kernel 'nope'"):
        configs.add_rule("nope")
    retired = next(iter(kt.RETIRED))  # a name users may have written down: the error says why it is gone
    with pytest.raises(ValueError, match=f"unknown kernel '{retired}' \\(retired: {re.escape(kt.RETIRED[retired][:30])}"):
        configs.add_rule(retired)
    a8 = torch.randn(8, 128).to(torch.float8_e4m3fn)
    with pytest.raises(RuntimeError, match=f"unknown config '{retired}' \\(retired: "):
        cutlass_gemm.scaled_mm(a8, a8, torch.ones(()), torch.ones(()), config=retired)
    before = configs.rules()
    bad_bounds = [(10, 1), (1, 2**63), (1, 2.5), (True, 4), (1,), (-1, 4)]
    for m in bad_bounds:  # the C++ table is int64: every rule is checked before it is installed
        with pytest.raises(ValueError, match=r"expected m = \(lo, hi\) integers with 0 <= lo <= hi <= 2\*\*62"):
            configs.add_rule("sm90_bf16_t128x128x64_c1x1_coop", m=m)
        assert configs.rules() == before
    try:  # no upper bound: None or math.inf, as in the JSON form's null
        for hi in (None, float("inf")):
            configs.add_rule("sm90_bf16_t128x128x64_c1x1_coop", m=(1, hi))
            assert configs.rules()[0].m == (1, configs.INF)
            assert configs.explain(16, 8192, 8192).kernel == "sm90_bf16_t128x128x64_c1x1_coop"
            assert configs.explain(16, 8192, 8192).reason == "rule 0 (user)"
    finally:
        configs.clear_rules()
    assert configs.rules() == before
    with pytest.raises(ValueError, match="expected pdl True or False, got 'yes'"):
        configs.add_rule("sm90_bf16_t128x128x64_c1x1_coop", pdl="yes")
    assert configs.rules() == before


def test_a_rule_carries_its_pdl_flag_to_explain_the_table_and_a_saved_file(tmp_path):
    """pdl=True: explain says so, C++ reads it from the table (column 'pdl'), save/load keep it."""
    kernel = "sm90_bf16_t128x128x64_c1x1_coop"
    try:
        configs.add_rule(kernel, m=(3, 5), pdl=True)
        d = configs.explain(4, 8192, 8192)
        assert (d.kernel, d.pdl) == (kernel, True) and str(d) == f"{kernel} (rule 0 (user), PDL); TMA L2 promotion 256 B, data-parallel"
        assert not configs.explain(6, 8192, 8192).pdl or configs.explain(6, 8192, 8192).reason != "rule 0 (user)"
        t = configs.flatten(configs.rules())
        assert t[0, configs.RULE_FIELDS.index("pdl")].item() == 1
        sel = lambda m, want: torch.ops.cutlass_gemm._select_kernel(  # noqa: E731
            90, kt.DTYPES.index("bf16"), kt.DTYPES.index("bf16"), kt.DTYPES.index("bf16"), kt.SCALE_MODES.index("none"),
            kt.ACCUMS.index("f32"), m, 8192, 8192, False, False, want)
        assert (sel(4, False), sel(4, True)) == (kt.KERNEL_IDS[kernel], 1)
        path = str(tmp_path / "rules.json")
        configs.save(path)
        configs.clear_rules()
        assert sel(4, True) == int(configs.explain(4, 8192, 8192).pdl)  # the defaults' own flag
        configs.load(path)
        assert configs.explain(4, 8192, 8192).pdl and sel(4, True) == 1
    finally:
        configs.clear_rules()


def test_a_rule_bounds_the_outputs_m_x_n_in_explain_the_table_and_a_saved_file(tmp_path):
    """mn=(lo, hi) bounds M x N (the grid's fill): Python and the C++ table agree on both sides of each bound, at a
    product past int64 too (capped, as INF), and save/load keep it; bad bounds are refused before anything changes."""
    kernel = "sm90_bf16_t128x128x64_c1x1_coop"
    sel = lambda m, n: torch.ops.cutlass_gemm._select_kernel(  # noqa: E731
        90, kt.DTYPES.index("bf16"), kt.DTYPES.index("bf16"), kt.DTYPES.index("bf16"), kt.SCALE_MODES.index("none"),
        kt.ACCUMS.index("f32"), m, n, 8192, False, False, False)
    before = configs.rules()
    for mn in [(1,), (2**40, 2**39), (0, 2**63), (-1, 4)]:
        with pytest.raises(ValueError, match=r"expected mn = \(lo, hi\) integers with 0 <= lo <= hi <= 2\*\*62"):
            configs.add_rule(kernel, mn=mn)
        assert configs.rules() == before
    with pytest.raises(ValueError, match="expected mn as \\[lo, hi\\] integers"):
        configs.rule_from_dict({"kernel": kernel, "mn": [1]})
    try:
        configs.add_rule(kernel, m=(300, None), mn=(2**20, 2**22 - 1))
        for m, n, inside in [(512, 2048, True), (512, 8191, True), (512, 8192, False), (511, 2053, True), (511, 2052, False),
                             (300, 3495, False), (2**40, 2**40, False)]:
            assert (configs.explain(m, n, 8192).reason == "rule 0 (user)") == inside, (m, n)
            assert sel(m, n) == kt.KERNEL_IDS[configs.explain(m, n, 8192).kernel], (m, n)  # C++ agrees
        configs.clear_rules()
        configs.add_rule(kernel, mn=(2**62, None))  # only a product at or past the cap
        for m, n, inside in [(2**30, 2**31, False), (2**31, 2**31, True), (2**40, 2**40, True)]:  # 2**62 is the cap
            assert (configs.explain(m, n, 8192).reason == "rule 0 (user)") == inside, (m, n)
            assert sel(m, n) == kt.KERNEL_IDS[configs.explain(m, n, 8192).kernel], (m, n)
        path = str(tmp_path / "rules.json")
        configs.save(path)
        configs.clear_rules()
        configs.load(path)
        assert configs.rules()[0].mn == (2**62, configs.INF) and sel(2**40, 2**40) == kt.KERNEL_IDS[kernel]
    finally:
        configs.clear_rules()
    assert configs.rules() == before


@pytest.mark.parametrize("kwargs, msg", [
    (dict(m=-5), "expected m a non-negative integer below 2..63, got -5"),
    (dict(k=2.0), "expected k a non-negative integer below 2..63, got 2.0"),
    (dict(m=2**63), "expected m a non-negative integer below 2..63, got 9223372036854775808"),
    (dict(dtype=torch.float32), "expected dtype bfloat16, float16, float8_e4m3fn or float8_e5m2 .a's., got float32"),
    (dict(scale="blockwise"), "expected scale 'none' .16-bit gemm. for bfloat16 inputs, got 'blockwise'"),
    (dict(dtype=torch.float8_e4m3fn, scale="per_token"), "expected scale 'tensor_row_col' .* for float8_e4m3fn inputs"),
    (dict(dtype=torch.float8_e4m3fn, accumulate="bogus"), "expected accumulate 'accurate' or 'fast', got 'bogus'"),
    (dict(sm_count=0), "expected sm_count a positive integer, got 0"),
    (dict(sm_count=True), "expected sm_count a positive integer, got True"),
    (dict(sm_count=132.0), "expected sm_count a positive integer, got 132.0"),
    (dict(sm_count=2**31), "expected sm_count a positive integer, got 2147483648"),
])
def test_explain_rejects_bad_arguments(kwargs, msg):
    args = dict(m=16, n=8192, k=8192)
    args.update(kwargs)
    with pytest.raises(ValueError, match="cutlass_gemm.configs.explain: " + msg):
        configs.explain(args.pop("m"), args.pop("n"), args.pop("k"), **args)


def test_launch_settings_rejects_bad_arguments():
    n = len(kt.KERNELS)
    for bad in (-1, n):
        with pytest.raises(RuntimeError, match=rf"_launch_settings: expected a kernel id in \[0, {n}\), got {bad}"):
            torch.ops.cutlass_gemm._launch_settings(bad, 16, 16, 132, False)
    for m, nn, sms in ((-1, 16, 132), (16, -1, 132), (16, 16, 0), (16, 16, 2**31)):
        with pytest.raises(RuntimeError, match=rf"expected m, n non-negative and sm_count a positive int32, got m={m}, "
                                               rf"n={nn}, sm_count={sms}"):
            torch.ops.cutlass_gemm._launch_settings(0, m, nn, sms, False)


def test_explain_says_how_the_op_launches():
    """explain().launch is C++'s resolve_launch (the op's own code) with no knob set: the SM90 16-bit and FP8
    per-row kernels get 256 B of TMA L2 promotion where M or N is at most 256, 128 B above and for blockwise;
    promoted FP8 promotes every 8 MMAs; a stream-K kernel runs stream-K on grids under 2/3 of the SMs."""
    fp8 = torch.float8_e4m3fn
    l2 = lambda *a, **kw: configs.explain(*a, arch=90, **kw).launch.tma_l2_promotion
    assert l2(256, 512, 1024) == l2(4096, 256, 1024) == l2(256, 512, 1024, fp8, scale="row", accumulate="fast") == 256
    assert l2(257, 512, 1024) == l2(512, 512, 1024, fp8, scale="row") == 128
    assert l2(256, 512, 1024, fp8, scale="blockwise") == l2(64, 7168, 2048, fp8, scale="blockwise") == 128
    row = configs.explain(4096, 4096, 4096, fp8, arch=90, scale="row")
    assert row.launch.fp8_promotion_interval == 8 and "FP32 promotion every 8 MMAs" in str(row)
    assert configs.explain(4096, 4096, 4096, fp8, arch=90, scale="row", accumulate="fast").launch.fp8_promotion_interval is None
    assert configs.explain(0, 4096, 4096, arch=90).launch is None is configs.explain(16, 0, 4096, arch=90).launch
    configs.add_rule("sm90_bf16_t64x128x64_c1x1_pingpong_st7", m=(0, 0), pdl=True)
    try:  # no launch: the rule's flag
        assert configs.explain(0, 4096, 4096, arch=90).launches_with_pdl
    finally:
        configs.clear_rules()
    assert configs.explain(16, 4096, 0, arch=90).launch is not None  # K = 0: the epilogue alone runs
    plain = configs.explain(4096, 4096, 4096, arch=90)
    assert plain.launch.decomposition == "data-parallel" and plain.launch.deterministic and not plain.launch.pdl
    assert str(plain).endswith("; TMA L2 promotion 128 B, data-parallel"), str(plain)
    sk = "sm90_bf16_t128x128x64_c1x1_coop_streamk"
    configs.add_rule(sk)
    try:  # 16 tiles of 128x128 against 2/3 of 132 SMs; 1024 tiles
        assert configs.explain(512, 512, 4096, arch=90, sm_count=132).launch.decomposition == "stream-K"
        assert configs.explain(512, 512, 4096, arch=90, sm_count=23).launch.decomposition == \
            "CUTLASS's decomposition heuristic"
        assert configs.explain(4096, 4096, 4096, arch=90).launch.decomposition == "CUTLASS's decomposition heuristic"
    finally:
        configs.clear_rules()
    if 100 in {k.arch for k, on in zip(kt.KERNELS, configs._compiled_mask()) if on}:  # SM100: CUTLASS's 128 B
        assert configs.explain(256, 512, 1024, arch=100).launch.tma_l2_promotion == 128


_LAUNCH_KNOBS_CHILD = """
import torch
from cutlass_gemm import configs
configs.add_rule("sm90_bf16_t128x128x64_c1x1_coop_streamk")
d = configs.explain(256, 512, 4096, arch=90)
r = configs.explain(4096, 4096, 4096, torch.float8_e4m3fn, arch=90, scale="row")
print(d.launch, "|", r.launch.fp8_promotion_interval, d.launch.pdl, d.launch.swizzle, d.launch.raster, "PDL" in str(d), d.launches_with_pdl)
"""


@pytest.mark.parametrize("env, want", [
    (dict(CUTLASS_GEMM_TMA_L2_PROMOTION="64", CUTLASS_GEMM_DECOMPOSITION="2", CUTLASS_GEMM_SPLITS="4",
          CUTLASS_GEMM_REDUCTION="1", CUTLASS_GEMM_SWIZZLE="4", CUTLASS_GEMM_RASTER="2", CUTLASS_GEMM_PDL="1",
          CUTLASS_GEMM_FP8_PROMOTION_INTERVAL="4"),
     "TMA L2 promotion 64 B, split-K x4, non-deterministic reduction, swizzle 4, raster along N | 4 True 4 along N True True"),
    (dict(CUTLASS_GEMM_SPLITS="4"),  # CUTLASS's heuristic mode with splits > 1 is split-K
     "TMA L2 promotion 256 B, split-K x4 | 8 False 0 heuristic False False"),
    (dict(CUTLASS_GEMM_DECOMPOSITION="1", CUTLASS_GEMM_RASTER="1"),
     "TMA L2 promotion 256 B, data-parallel, raster along M | 8 False 0 along M False False"),
    (dict(CUTLASS_GEMM_TMA_L2_PROMOTION="256B"), "expected CUTLASS_GEMM_TMA_L2_PROMOTION 64, 128 or 256"),
    (dict(CUTLASS_GEMM_DECOMPOSITION="2"), "expected CUTLASS_GEMM_SPLITS (a split-K factor from 2 to 64) with"),
])
def test_explain_launch_follows_the_knobs(env, want):
    """The CUTLASS_GEMM_* launch knobs (read once per process, hence a child) show in explain().launch as the op
    applies them, and a bad one raises from explain as it would from the op, naming what was expected."""
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if not k.startswith("CUTLASS_GEMM_")}
    r = subprocess.run([sys.executable, "-c", _LAUNCH_KNOBS_CHILD], env={**clean, **env}, capture_output=True, text=True)
    if want.startswith("expected"):
        assert r.returncode != 0 and "cutlass_gemm.configs.explain: " + want in r.stderr, r.stderr[-2000:]
    else:
        assert r.returncode == 0 and r.stdout.strip() == want, (r.stdout, r.stderr[-2000:])


def test_explain_scale_names():
    """bench's granularity names ("tensor", "row") name the one tensor/row/col scale mode."""
    fp8 = dict(dtype=torch.float8_e4m3fn)
    for acc in ("accurate", "fast"):
        want = configs.explain(16, 8192, 8192, scale="tensor_row_col", accumulate=acc, **fp8)
        for alias in ("tensor", "row", "col", "none"):
            assert configs.explain(16, 8192, 8192, scale=alias, accumulate=acc, **fp8) == want


@pytest.mark.parametrize("kwargs, msg", [
    (dict(dtype=torch.float32), "expected dtype bfloat16"),
    (dict(scale="bogus"), "expected scale 'none'"),
    (dict(accumulate="x"), "expected accumulate 'accurate' or 'fast'"),
    (dict(shapes=[(16, 128)]), r"expected shapes of \(M, N, K\) positive integers, got \(16, 128\)"),
    (dict(shapes=[(0, 128, 128)]), r"expected shapes of \(M, N, K\) positive integers, got \(0, 128, 128\)"),
    (dict(shapes=5), r"expected shapes as a list of \(M, N, K\) tuples, got 5"),
    (dict(shapes=(16, 128, 128)), r"expected shapes as a list of \(M, N, K\) tuples \(one shape: \[\(16, 128, 128\)\]\), got \(16, 128, 128\)"),
    (dict(shapes="16,128,128"), r"expected shapes as a list of \(M, N, K\) tuples, got '16,128,128'"),
])
def test_tune_rejects_bad_arguments_before_anything_runs(kwargs, msg):
    shapes = kwargs.pop("shapes", [(16, 128, 128)])
    with pytest.raises(ValueError, match="cutlass_gemm.tune: " + msg):
        cutlass_gemm.tune(shapes, **kwargs)


def test_flatten_layout():
    t = configs.flatten(configs.rules())
    assert t.dtype == torch.int64 and t.shape == (len(configs.rules()), len(configs.RULE_FIELDS))


def test_autograd_layer_only_when_a_gradient_can_flow():
    """gemm() skips the Python autograd kernel when no gradient can flow (host time), and only then."""
    a = torch.randn(4, 16, dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(8, 16, dtype=torch.bfloat16)
    y = cutlass_gemm.gemm(a, b)
    assert y.requires_grad and y.grad_fn is not None
    y.float().sum().backward()
    torch.testing.assert_close(a.grad, b.sum(0).expand(4, 16).to(a.grad.dtype), rtol=2e-2, atol=2e-2)
    with torch.no_grad():
        assert not cutlass_gemm.gemm(a, b).requires_grad
    plain = cutlass_gemm.gemm(a.detach(), b, activation="gelu", alpha=0.5)
    assert not plain.requires_grad
    torch.testing.assert_close(plain, cutlass_gemm.gemm(a, b, activation="gelu", alpha=0.5).detach())


def test_fx_symbolic_trace_records_the_op():
    """gemm() under torch.fx.symbolic_trace (proxies, not tensors) records the op, no control flow."""
    class M(torch.nn.Module):
        def forward(self, x, w):
            return cutlass_gemm.gemm(x, w, activation="gelu")

    gm = torch.fx.symbolic_trace(M())
    assert any(n.target is torch.ops.cutlass_gemm.gemm.default for n in gm.graph.nodes)
    x, w = torch.randn(3, 16, dtype=torch.bfloat16), torch.randn(8, 16, dtype=torch.bfloat16)
    torch.testing.assert_close(gm(x, w), cutlass_gemm.gemm(x, w, activation="gelu"))
