"""Streams, threads and devices (GPU; skipped without one; the 2-GPU cases skip with fewer).

- The op runs on the caller's current stream and never syncs the host: its input is written
  on a side stream behind a ~0.1 s sleep kernel; the op, called on that stream, must return
  while the stream is still busy and must see the written values (the stale input is NaN).
- Several Python threads, each on its own stream (and device, with 2 GPUs), run gemm and
  scaled_mm on several shapes (fast path, shape fallback, fp32 out, FP8 row/blockwise/mixed)
  while another thread rewrites the selection table: forced-kernel results are bitwise equal to
  a serial run, selected-kernel results pass the float64 measures.
- Tensors on different devices are a clear error, the same as the Python validator's (CPU +
  CUDA on one GPU; cuda:0 + cuda:1 with two), and the context stays healthy after.
- The device guard follows the inputs: tensors on cuda:1 while cuda:0 is current run on cuda:1,
  on cuda:1's current stream, give the right result and leave cuda:0 current.
"""

import threading

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm import kernel_table as kt
from conftest import GPU_ARCH
from gemm_checks import (check_result, check_scaled_result, device_mismatch_cases, make_problem, make_scaled_problem,
                         op_kwargs, poison_next_output, scaled_device_mismatch_cases, validator_message)

pytestmark = pytest.mark.gpu
SLEEP_CYCLES = 200_000_000  # ~0.1 s at H200 clocks
NAN = float("nan")


def _supported_gpus():
    if not GPU_ARCH:
        return []
    return [d for d in range(torch.cuda.device_count()) if torch.ops.cutlass_gemm._device_arch(d)]


GPUS = _supported_gpus()
two_gpus = pytest.mark.skipif(len(GPUS) < 2, reason="needs 2 SM90/SM100 GPUs")


# ---------------------------------------------------------------------------------------------
# Cases: (problem, scaled?) built on a device; the call takes `a` separately so tests can swap it.

KINDS = {
    # name: builder(dev) -> (problem, scaled, out_dtype)
    "gemm_bf16_fast": lambda d: (make_problem(257, 1000, 512, torch.bfloat16, d, bias="out", residual=True,
                                              activation="gelu_tanh", beta=0.5), False),
    "gemm_f16_fallback_k_n": lambda d: (make_problem(77, 129, 100, torch.float16, d, bias="f32", residual=True,
                                                     activation="silu"), False),
    "gemm_bf16_f32out": lambda d: (make_problem(64, 256, 128, torch.bfloat16, d, out_dtype=torch.float32, bias="f32",
                                                activation="relu"), False),
    "scaled_row_col": lambda d: (make_scaled_problem(200, 512, 256, d, scales="row_col", bias="out", residual=True,
                                                     activation="gelu"), True),
    "scaled_blockwise_fallback": lambda d: (make_scaled_problem(130, 300, 520, d, scales="blockwise", bias="f32",
                                                                activation="gelu_tanh"), True),
    "scaled_e4m3xe5m2_fast": lambda d: (make_scaled_problem(64, 128, 256, d, scales="tensor",
                                                            b_dtype=torch.float8_e5m2, accumulate="fast",
                                                            residual=True), True),
}


def _call(p, scaled, a, config=None):
    if scaled:
        return cutlass_gemm.scaled_mm(a, p.b, p.scale_a, p.scale_b, config=config, **p.kwargs())
    return cutlass_gemm.gemm(a, p.b, config=config, **p.kwargs())


def _check(out, p, scaled, what):
    return check_scaled_result(out, p, what) if scaled else check_result(out, p, what)


def _selected(p, scaled) -> str:
    """The kernel the selection table picks now (forced later, for bitwise comparisons)."""
    k = p.a.shape[-1]
    m, n = p.a.numel() // max(k, 1), p.b.shape[0]
    fused = p.activation != "none" or p.residual is not None  # the table's epilogue class
    act = p.activation != "none"
    if scaled:
        scale = "blockwise" if p.scale_a.dim() == 2 and p.scale_a.shape[1] > 1 else "tensor_row_col"
        return configs.explain(m, n, k, p.a.dtype, b_dtype=p.b.dtype, scale=scale, accumulate=p.accumulate,
                               fused=fused, activation=act).kernel
    return configs.explain(m, n, k, p.a.dtype, out_dtype=p.out_dtype, fused=fused, activation=act).kernel


def _nan_like(a: torch.Tensor) -> torch.Tensor:
    """Same shape/strides, every element NaN (FP8: 0x7F is NaN in e4m3fn and e5m2)."""
    x = torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device)
    if a.element_size() == 1:
        x.view(torch.uint8).fill_(0x7F)
    else:
        x.fill_(NAN)
    return x


# ---------------------------------------------------------------------------------------------
# The current stream.

def _stream_order_check(p, scaled, s: torch.Tensor, what: str, other_streams=()):
    """On stream `s` (current): sleep, write the real `a` over a NaN copy, call the op. The op
    must return while `s` is still busy (no host sync), and its result must be the real one."""
    live = _nan_like(p.a)
    torch.cuda.synchronize(p.a.device)
    torch.cuda._sleep(SLEEP_CYCLES)
    live.copy_(p.a)
    out = _call(p, scaled, live)
    busy = not s.query()
    idle = [o.query() for o in other_streams]
    s.synchronize()
    assert busy, f"{what}: the op returned after its stream's pending work had finished (a host sync?)"
    assert all(idle), f"{what}: work was queued on a stream other than the current one"
    _check(out, p, scaled, what)
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_runs_on_the_current_stream(kind):
    dev = torch.device("cuda", torch.cuda.current_device())
    p, scaled = KINDS[kind](dev)
    _call(p, scaled, p.a)  # warm-up: lazy module loading stays out of the timed window
    s = torch.cuda.Stream(dev)
    with torch.cuda.stream(s):
        _stream_order_check(p, scaled, s, f"{kind} on a side stream", other_streams=[torch.cuda.default_stream(dev)])
    # And on the default stream, ordered after earlier work there.
    _stream_order_check(p, scaled, torch.cuda.current_stream(dev), f"{kind} on the default stream")


def test_events_order_across_streams():
    """Producer stream -> event -> consumer stream running the op -> event -> reader stream."""
    dev = torch.device("cuda", torch.cuda.current_device())
    p, _ = KINDS["gemm_bf16_fast"](dev)
    producer, consumer, reader = (torch.cuda.Stream(dev) for _ in range(3))
    live = _nan_like(p.a)
    torch.cuda.synchronize(dev)
    with torch.cuda.stream(producer):
        torch.cuda._sleep(SLEEP_CYCLES // 2)
        live.copy_(p.a)
        produced = torch.cuda.Event()
        produced.record()
    with torch.cuda.stream(consumer):
        consumer.wait_event(produced)
        out = _call(p, False, live)
        done = torch.cuda.Event()
        done.record()
        out.record_stream(reader)
    with torch.cuda.stream(reader):
        reader.wait_event(done)
        copy = out.clone()
    reader.synchronize()
    check_result(copy, p, "event-ordered across streams")


# ---------------------------------------------------------------------------------------------
# Threads.

def _thread_work(dev, problems, errors, rounds=3):
    """On its own stream: each problem with its forced kernel (bitwise == the serial result) and
    through the selection table (float64 measures)."""
    try:
        with torch.cuda.device(dev):
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                s.wait_stream(torch.cuda.default_stream())
                for r in range(rounds):
                    for kind, p, scaled, config, expected in problems:
                        poison_next_output(expected.numel(), f"cuda:{dev}")
                        got = _call(p, scaled, p.a, config=config)
                        if not torch.equal(got, expected) or torch.isnan(got.float()).any():
                            errors.append(f"{kind} on cuda:{dev} round {r}: forced {config} differs from the serial run")
                        poison_next_output(expected.numel(), f"cuda:{dev}")
                        _check(_call(p, scaled, p.a), p, scaled, f"{kind} on cuda:{dev} (thread, selected) round {r}")
                s.synchronize()
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        errors.append(f"cuda:{dev}: {type(e).__name__}: {e}")


def _churn(stop, errors):
    """Rewrite the selection table while the others run (results must not depend on it)."""
    names = [k.name for k in kt.KERNELS if k.name in set(configs.compiled_kernels()) and k.arch == GPU_ARCH]
    try:
        i = 0
        while not stop.is_set():
            configs.add_rule(names[i % len(names)], m=(1, 1 + (i * 37) % 400))
            i += 1
            if i % 8 == 0:
                configs.clear_rules()
    except Exception as e:  # noqa: BLE001
        errors.append(f"churn: {type(e).__name__}: {e}")


@pytest.mark.parametrize("threads_per_gpu", [4])
def test_threads_each_on_its_own_stream(threads_per_gpu):
    with configs._lock:
        saved = (list(configs._user_rules), list(configs._tuned_rules))
    try:
        work = []
        for t in range(threads_per_gpu * len(GPUS)):
            dev = GPUS[t % len(GPUS)]
            with torch.cuda.device(dev):
                problems = []
                for kind, build in KINDS.items():
                    p, scaled = build(f"cuda:{dev}")
                    config = _selected(p, scaled)
                    expected = _call(p, scaled, p.a, config=config)
                    _check(expected, p, scaled, f"{kind} serial on cuda:{dev}")
                    problems.append((kind, p, scaled, config, expected))
                work.append((dev, problems))
        for d in GPUS:
            torch.cuda.synchronize(d)
        errors, stop = [], threading.Event()
        churn = threading.Thread(target=_churn, args=(stop, errors))
        threads = [threading.Thread(target=_thread_work, args=(dev, problems, errors)) for dev, problems in work]
        churn.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        stop.set()
        churn.join(60)
        assert not any(t.is_alive() for t in threads), "a worker thread hung"
        assert not errors, "\n".join(errors[:20])
    finally:
        with configs._lock:
            configs._user_rules[:], configs._tuned_rules[:] = saved
        configs.push()


# ---------------------------------------------------------------------------------------------
# Devices.

def _mismatch_cases(other):
    return [("gemm", c) for c in device_mismatch_cases("cuda:0", other)] + \
           [("scaled_mm", c) for c in scaled_device_mismatch_cases("cuda:0", other)]


@pytest.mark.parametrize("other", ["cpu", pytest.param("cuda:1", marks=two_gpus)])
def test_operands_on_different_devices_are_a_clear_error(other):
    wrong = []
    with torch.cuda.device(0):
        for op, (name, build, message) in _mismatch_cases(other):
            args, kwargs = build("cuda:0")
            fn = getattr(torch.ops.cutlass_gemm, op).default
            try:
                fn(*args, **op_kwargs(op, kwargs))
                wrong.append(f"{op} {name}: no error")
            except RuntimeError as e:
                got = str(e).splitlines()[0]
                py = validator_message(op, args, kwargs)
                if got != message or py != got:
                    wrong.append(f"{op} {name}: C++ {got!r}; table {message!r}; Python {py!r}")
    assert not wrong, "\n".join(wrong)
    for d in ["cuda:0"] + ([other] if other.startswith("cuda") else []):  # healthy after the errors
        torch.cuda.synchronize(d)
        p, scaled = KINDS["gemm_bf16_fast"](d)
        _check(_call(p, scaled, p.a), p, scaled, f"after device errors, {d}")


@two_gpus
@pytest.mark.parametrize("kind", list(KINDS))
def test_device_guard_follows_the_inputs(kind):
    with torch.cuda.device(0):
        p, scaled = KINDS[kind]("cuda:1")
        poison_next_output(p.b.shape[0] * 512, "cuda:1")
        out = _call(p, scaled, p.a)
        assert out.device == torch.device("cuda", 1), f"{kind}: output on {out.device}"
        assert torch.cuda.current_device() == 0, f"{kind}: the op left cuda:{torch.cuda.current_device()} current"
        torch.cuda.synchronize(1)
        _check(out, p, scaled, f"{kind} on cuda:1 with cuda:0 current")
        # cuda:1's current stream (not cuda:0's, not cuda:1's default) carries the work.
        s1 = torch.cuda.Stream(1)
        with torch.cuda.device(1), torch.cuda.stream(s1):  # live is prepared on s1, behind a sleep
            live = _nan_like(p.a)
            torch.cuda.synchronize(1)
            torch.cuda._sleep(SLEEP_CYCLES)
            live.copy_(p.a)
            with torch.cuda.device(0):  # cuda:0 current again; cuda:1's current stream stays s1
                out = _call(p, scaled, live)
                busy = not s1.query()
                others_idle = torch.cuda.default_stream(1).query() and torch.cuda.default_stream(0).query()
                assert torch.cuda.current_device() == 0
        s1.synchronize()
        assert busy, f"{kind}: the op on cuda:1 returned after s1 finished (a host sync?)"
        assert others_idle, f"{kind}: work queued on a default stream instead of cuda:1's current stream"
        _check(out, p, scaled, f"{kind} on cuda:1's current side stream")
