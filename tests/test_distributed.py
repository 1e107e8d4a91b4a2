"""Tensor parallelism through DTensor: world 2 with gloo on CPU (reference kernels; runs in CI)
and with NCCL on 2 GPUs. The cases live in tests/tp_cases.py; rank 0 writes a JSON report
(copied to $CUTLASS_GEMM_TP_REPORT when set)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import tp_cases
from pkg_paths import pythonpath

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")


def _spawn(tmp_path, backend):
    report = tmp_path / "tp_report.json"
    env = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}  # keep multicast off
    for k, v in env.items():
        os.environ.setdefault(k, v)
    mp.spawn(tp_cases.run_cases, args=(2, backend, str(tmp_path / "store"), str(report)), nprocs=2, join=True)
    data = json.loads(report.read_text())
    for section in ("ops", "modules"):
        for name, r in data[section].items():
            extra = f", weight bytes/rank {r['weight_bytes_per_rank']:.3f}" if "weight_bytes_per_rank" in r else ""
            print(f"[{backend}] {name}: rel_fro {r['rel_fro']:.2e} worst_row {r['worst_row']:.2e} comms {r['comms']}{extra}")
    if os.environ.get("CUTLASS_GEMM_TP_REPORT"):
        shutil.copy(report, os.environ["CUTLASS_GEMM_TP_REPORT"])
    return data


def test_tensor_parallel_gloo_cpu(tmp_path):
    if not dist.is_gloo_available():
        pytest.skip("gloo is not available")
    data = _spawn(tmp_path, "gloo")
    assert len(data["modules"]) == 12 and len(data["ops"]) == 12


@pytest.mark.gpu
def test_tensor_parallel_nccl_2gpu(tmp_path):
    if torch.cuda.device_count() < 2 or not dist.is_nccl_available():
        pytest.skip("needs 2 GPUs and NCCL")
    data = _spawn(tmp_path, "nccl")
    assert len(data["modules"]) == 12 and len(data["ops"]) == 12


def test_rules_register_after_a_late_dtensor_import():
    """`import cutlass_gemm` does not pay for torch.distributed.tensor; importing it later registers the rules."""
    code = (
        "import sys, torch, cutlass_gemm\n"
        "assert 'torch.distributed.tensor' not in sys.modules\n"
        "from torch.distributed.tensor import DTensor\n"
        "funcs = DTensor._op_dispatcher.sharding_propagator.op_strategy_funcs\n"
        "assert torch.ops.cutlass_gemm.gemm.default in funcs and torch.ops.cutlass_gemm.scaled_mm.default in funcs\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=pythonpath())
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def _two_d_mesh_errors(rank, store_path, out_path):
    import cutlass_gemm
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh

    dist.init_process_group("gloo", store=dist.FileStore(store_path, 1), rank=0, world_size=1)
    try:
        mesh = init_device_mesh("cpu", (1, 1))
        msgs = []
        for lin in (cutlass_gemm.nn.Linear, cutlass_gemm.nn.Fp8Linear):
            m = lin(256, 128, dtype=torch.bfloat16)
            m.weight = torch.nn.Parameter(distribute_tensor(m.weight.data, mesh, [Shard(0), Replicate()]))
            try:
                m(torch.randn(4, 256, dtype=torch.bfloat16))
                msgs.append("no error")
            except NotImplementedError as e:
                msgs.append(str(e))
        with open(out_path, "w") as f:
            json.dump(msgs, f)
    finally:
        dist.destroy_process_group()
    tp_cases.exit_worker()


def test_two_d_mesh_is_a_clear_error(tmp_path):
    """The nn modules shard over a 1-D mesh; a 2-D one is refused with the fix, before any kernel."""
    if not dist.is_gloo_available():
        pytest.skip("gloo is not available")
    out = tmp_path / "msgs.json"
    mp.spawn(_two_d_mesh_errors, args=(str(tmp_path / "store"), str(out)), nprocs=1, join=True)
    msgs = json.loads(out.read_text())
    assert len(msgs) == 2
    for what, msg in zip(("Linear", "Fp8Linear"), msgs):
        assert msg.startswith(f"cutlass_gemm.nn.{what}: tensor parallelism over a 2-D mesh is not supported"), msg
