"""cutlass_gemm: ahead-of-time compiled CUTLASS GEMMs with fused epilogues, as PyTorch ops.

    import cutlass_gemm
    y = cutlass_gemm.gemm(x, w, bias=b, activation="gelu_tanh", residual=r)
    # D = act(alpha * (x @ w.T) + bias) + beta * residual   (torch.ops.cutlass_gemm.gemm)
"""

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

__all__ = ["gemm", "scaled_mm", "quantize_fp8", "gemm_reference", "scaled_mm_reference", "configs", "kernel_table", "nn", "convert", "tune", "distributed"]
__version__ = "0.1.0"
