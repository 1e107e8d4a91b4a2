"""cutlass_gemm: ahead-of-time compiled CUTLASS GEMMs with fused epilogues, as PyTorch ops.

    import cutlass_gemm
    y = cutlass_gemm.gemm(x, w, bias=b, activation="gelu_tanh", residual=r)
    # D = act(alpha * (x @ w.T) + bias) + beta * residual   (torch.ops.cutlass_gemm.gemm)
"""

from ._version import __version__  # the one place (pyproject.toml reads the same file)
from ._info import build_info

try:
    from . import kernel_table
    from ._ops import gemm, scaled_mm
    from .quantize import quantize_fp8
    from . import configs
    from ._reference import gemm_reference, scaled_mm_reference

    from . import _autograd, distributed, nn
    from .nn import convert
    from .autotune import tune

    _autograd.register()
    configs._init()
    distributed._install()  # DTensor sharding rules, once torch.distributed.tensor is imported
except ImportError as _e:
    from . import _info

    if not _info.env_report_requested():
        raise
    _info.LOAD_ERROR = _e  # `python -m cutlass_gemm.env` prints it instead of dying in this import

__all__ = ["gemm", "scaled_mm", "quantize_fp8", "gemm_reference", "scaled_mm_reference", "configs", "kernel_table", "nn", "convert", "tune", "distributed", "build_info"]
