"""Every bad input is a clear error on every path, and the CUDA context stays healthy after.

The tables live in gemm_checks.py (BAD_GEMM_INPUTS, BAD_SCALED_MM_INPUTS and the device-mismatch
builders). test_cpu*.py replay them through the CPU reference, test_gpu_*.py through the C++
glue one case at a time. Here: scaled_mm through the fake kernel (torch.compile's view), and on
the GPU every case of both ops (device mismatches included) in one session through direct
`torch.ops.cutlass_gemm.*` calls, each message compared with the Python validator's on the same
tensors, followed by correct calls whose results are checked against float64.
"""

import pytest
import torch

import cutlass_gemm
from gemm_checks import (BAD_GEMM_INPUTS, BAD_SCALED_MM_INPUTS, check_result, check_scaled_result,
                         device_mismatch_cases, make_problem, make_scaled_problem, op_kwargs,
                         scaled_device_mismatch_cases, validator_message)


@pytest.mark.parametrize("case", BAD_SCALED_MM_INPUTS, ids=[c[0] for c in BAD_SCALED_MM_INPUTS])
def test_bad_scaled_mm_inputs_fake(case):
    """The fake kernel raises the CPU reference's message (scaled_mm; gemm: test_cpu.py)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    _, build, message = case
    args, kwargs = build("cpu")
    with FakeTensorMode(allow_non_fake_inputs=True):
        with pytest.raises(RuntimeError) as e:
            cutlass_gemm.scaled_mm(*args, **kwargs)
    assert message in str(e.value)


def test_tables_name_each_case_once():
    for table in (BAD_GEMM_INPUTS, BAD_SCALED_MM_INPUTS):
        ids = [c[0] for c in table]
        assert len(ids) == len(set(ids))


# ---------------------------------------------------------------------------------------------
# GPU: direct op calls, C++ messages == Python messages, then a healthy context.

def _all_cases(op, dev):
    if op == "gemm":
        return BAD_GEMM_INPUTS + device_mismatch_cases(dev)
    return BAD_SCALED_MM_INPUTS + scaled_device_mismatch_cases(dev)


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["gemm", "scaled_mm"])
def test_every_bad_input_then_context_healthy(op):
    dev = f"cuda:{torch.cuda.current_device()}"
    fn = torch.ops.cutlass_gemm.gemm.default if op == "gemm" else torch.ops.cutlass_gemm.scaled_mm.default
    torch.cuda.synchronize()
    allocated = torch.cuda.memory_allocated()
    wrong = []
    cases = _all_cases(op, dev)
    for name, build, message in cases:
        args, kwargs = build(dev)
        before = torch.cuda.memory_allocated()
        try:
            fn(*args, **op_kwargs(op, kwargs))
        except RuntimeError as e:
            got = str(e).splitlines()[0]
            if got != message:
                wrong.append(f"{name}: C++ said {got!r}, table says {message!r}")
            py = validator_message(op, args, kwargs)
            if py != got:
                wrong.append(f"{name}: C++ said {got!r}, Python validator says {py!r}")
        else:
            wrong.append(f"{name}: no error")
        del args, kwargs
        assert torch.cuda.memory_allocated() <= before, f"{name}: memory left allocated after the error"
    assert not wrong, "\n".join(wrong)
    # No launch happened and nothing is pending: the context is healthy and later calls are right.
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() <= allocated
    for m, n, k in [(64, 128, 256), (33, 40, 72)]:
        p = make_problem(m, n, k, torch.bfloat16, dev, bias="out", residual=True, activation="gelu_tanh")
        torch.full((m * n + 256,), float("nan"), device=dev, dtype=torch.bfloat16)  # poison the next block
        check_result(cutlass_gemm.gemm(p.a, p.b, **p.kwargs()), p, f"after bad inputs: gemm {m}x{n}x{k}")
        for scales in ("row_col", "blockwise"):
            q = make_scaled_problem(m, n, k, dev, scales=scales, bias="out", residual=True, activation="silu")
            check_scaled_result(cutlass_gemm.scaled_mm(*q.args(), **q.kwargs()), q,
                                f"after bad inputs: scaled_mm {m}x{n}x{k} {scales}")
    torch.cuda.synchronize()
