import os
import sys
import zlib

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))  # tests/gemm_checks.py
# The repo root last: `bench` is found there, while an installed cutlass_gemm (CI tests the
# installed wheel) still wins over the source tree, which has no compiled extension.
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gpu_arch() -> int:
    if not torch.cuda.is_available():
        return 0
    import cutlass_gemm.configs as configs

    return configs.current_arch()


GPU_ARCH = _gpu_arch()


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs an SM90/SM100 GPU")
    for item in items:
        if "gpu" in item.keywords and not GPU_ARCH:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _seed(request):
    # Fresh random data per test, reproducible per test id.
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))
