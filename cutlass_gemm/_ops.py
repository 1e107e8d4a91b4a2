"""Loads the extension, checks it matches this Python package, registers the fake and CPU
kernels, and defines the public functions (thin: they never branch on sizes)."""

from __future__ import annotations

import warnings
from typing import Optional

import torch

from . import kernel_table as kt
from ._reference import gemm_cpu, scaled_mm_cpu
from ._validate import GEMM, SCALED_MM, check_gemm, check_scaled_mm, fail

try:
    from . import _C  # noqa: F401  (registers torch.ops.cutlass_gemm.* from static initializers)
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        f"cutlass_gemm: the compiled extension failed to load ({e}). Build it with "
        "`pip install --no-build-isolation -e .` against a CUDA build of torch (see README)."
    ) from e

try:
    from . import _build_info
except ImportError:  # pragma: no cover
    _build_info = None


def _table_hash(names) -> int:
    h = 0xCBF29CE484222325
    for byte in ";".join(names).encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h - (1 << 64) if h >= (1 << 63) else h  # the op returns a signed int64


def _check_build() -> None:
    built = torch.ops.cutlass_gemm._kernel_table_hash()
    if built != _table_hash([k.name for k in kt.KERNELS]):
        raise ImportError(
            "cutlass_gemm: the compiled extension was built from a different kernel_table.py; rebuild it "
            "(`python tools/generate.py && pip install --no-build-isolation -e .`)"
        )
    if _build_info is not None and torch.version.cuda is not None:
        want, have = _build_info.CUDA_VERSION.split(".")[0], torch.version.cuda.split(".")[0]
        if want != have:
            raise ImportError(
                f"cutlass_gemm was built for CUDA {_build_info.CUDA_VERSION} but this torch uses CUDA "
                f"{torch.version.cuda}; rebuild against this torch"
            )
    if torch.cuda.is_available():
        sm100 = []
        for d in range(torch.cuda.device_count()):
            arch = torch.ops.cutlass_gemm._device_arch(d)
            if arch == 0:
                major, minor = torch.cuda.get_device_capability(d)
                warnings.warn(
                    f"cutlass_gemm: cuda:{d} is sm_{major}{minor}; cutlass_gemm runs on sm_90 (H100/H200) and "
                    "sm_100 (B200/GB200) only, and its ops raise on this device",
                    stacklevel=3,
                )
            elif arch == 100:
                sm100.append(f"cuda:{d}")
        if sm100:  # once per process (at import)
            warnings.warn(
                f"cutlass_gemm: {', '.join(sm100)} is sm_100 (Blackwell); the SM100 kernels compile and pass host-side "
                "checks but have not been verified on SM100 hardware by this project (see README, Supported GPUs)",
                stacklevel=3,
            )


_check_build()

# Which kernels this build holds (kernel_table order), read once here, outside any fake mode: the
# fake kernels and cutlass_gemm.configs read it (the op would make a fake tensor inside one).
COMPILED_MASK = tuple(bool(x) for x in torch.ops.cutlass_gemm._compiled_kernels().tolist())

# The op handles, looked up once: the torch.ops attribute chain costs ~1.3 us per call.
_GEMM = torch.ops.cutlass_gemm.gemm.default
_SCALED_MM = torch.ops.cutlass_gemm.scaled_mm.default


def _check_config_device(op: str, config: str, device: torch.device) -> None:
    """The fake kernels' share of the C++ choose_kernel: a forced config must be a kernel of the device's
    arch and compiled into this build, so a torch.compile trace fails where the eager call would."""
    if not config or device.type != "cuda" or not torch.cuda.is_available():
        return
    arch = kt.ARCH_OF_CAPABILITY.get(torch.cuda.get_device_capability(device), 0)
    i = kt.KERNEL_IDS[config]  # the validator has checked that the config exists
    if arch and kt.KERNELS[i].arch != arch:
        fail(op, f"config '{config}' is an sm{kt.KERNELS[i].arch} kernel; this GPU is sm_{arch}")
    if arch and not COMPILED_MASK[i]:
        fail(op, f"config '{config}' is not compiled into this build (rebuild with CUTLASS_GEMM_ARCHS including {arch}a)")


@torch.library.register_fake("cutlass_gemm::gemm")
def _gemm_fake(a, b, bias=None, residual=None, *, activation="none", alpha=1.0, beta=1.0, out_dtype=None, config=""):
    shape, dtype = check_gemm(a, b, bias, residual, activation, out_dtype, config)
    _check_config_device(GEMM, config, a.device)
    return a.new_empty(shape, dtype=dtype)


torch.library.register_kernel("cutlass_gemm::gemm", "cpu", gemm_cpu)


@torch.library.register_fake("cutlass_gemm::scaled_mm")
def _scaled_mm_fake(a, b, scale_a, scale_b, bias=None, residual=None, *, activation="none", beta=1.0, out_dtype=None,
                    accumulate="accurate", config=""):
    shape, dtype, _ = check_scaled_mm(a, b, scale_a, scale_b, bias, residual, activation, out_dtype, accumulate, config)
    _check_config_device(SCALED_MM, config, a.device)
    return a.new_empty(shape, dtype=dtype)


torch.library.register_kernel("cutlass_gemm::scaled_mm", "cpu", scaled_mm_cpu)


@torch.library.register_fake("cutlass_gemm::_quantize_fp8_rows_")
def _quantize_fp8_rows_fake(x, q, scale, group):
    return None  # writes q and scale in place (quantize_fp8's CUDA kernel)


def gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    bias: Optional[torch.Tensor] = None,
    residual: Optional[torch.Tensor] = None,
    activation: str = "none",
    alpha: float = 1.0,
    beta: float = 1.0,
    out_dtype: Optional[torch.dtype] = None,
    config: Optional[str] = None,
) -> torch.Tensor:
    """D = act(alpha * (a @ b.T) + bias) + beta * residual, fused in one kernel.

    a: [..., K] bfloat16/float16; b: [N, K] (nn.Linear's weight layout), same dtype;
    bias: [N] in the output dtype or float32; residual: [..., N] in the output dtype;
    activation: "none" | "relu" | "gelu" | "gelu_tanh" | "silu"; out_dtype: None (a's dtype)
    or float32; config: force a kernel by name (see cutlass_gemm.configs.kernels()).
    Returns a fresh contiguous [..., N] tensor.
    """
    op = _GEMM
    if activation == "none" and alpha == 1.0 and beta == 1.0 and out_dtype is None and not config:
        args, kwargs = (a, b, bias, residual), {}  # the schema's defaults: the dispatcher parses no keywords
    else:
        args = (a, b, bias, residual)
        kwargs = dict(activation=activation, alpha=float(alpha), beta=float(beta), out_dtype=out_dtype,
                      config=config or "")
    return _call(op, args, kwargs)


def scaled_mm(
    a: torch.Tensor,
    b: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    *,
    bias: Optional[torch.Tensor] = None,
    residual: Optional[torch.Tensor] = None,
    activation: str = "none",
    beta: float = 1.0,
    out_dtype: Optional[torch.dtype] = torch.bfloat16,
    accumulate: str = "accurate",
    config: Optional[str] = None,
) -> torch.Tensor:
    """D = act((a @ b.T) * scale_a * scale_b + bias) + beta * residual, FP8 inputs, fused.

    a: [..., K] float8_e4m3fn (or e5m2 with an e4m3 b); b: [N, K] float8. Scales are float32
    and their shapes choose the granularity: scale_a [1] per-tensor, [M, 1] per-row (token),
    [M, ceil(K/128)] blockwise 1x128; scale_b [1] per-tensor, [N, 1] per-column (channel),
    [ceil(N/128), ceil(K/128)] blockwise 128x128 (blockwise goes with blockwise, e4m3 only).
    accumulate: "accurate" (FP32 promotion, default) or "fast" (FP8 fast accumulation).
    """
    op = _SCALED_MM
    if activation == "none" and beta == 1.0 and out_dtype in (None, torch.bfloat16) and accumulate == "accurate" \
            and not config:
        return op(a, b, scale_a, scale_b, bias, residual)  # the schema's defaults (out_dtype None = bfloat16)
    return op(a, b, scale_a, scale_b, bias, residual, activation=activation, beta=float(beta), out_dtype=out_dtype,
              accumulate=accumulate, config=config or "")


def _call(op, args, kwargs):
    """op(*args, **kwargs), skipping the Python autograd kernel that register_autograd installs when
    no gradient can flow (grad mode off or no input requiring grad): about 6 us of host time per
    eager call on the H200 host. Only plain tensors take the shortcut; traced calls (torch.compile,
    export, fx proxies) and tensor subclasses take the op's full dispatch."""
    a, b, bias, residual = args  # written out, not generator expressions: ~3 us less host time per call
    T = torch.Tensor
    if (type(a) is T and type(b) is T and (bias is None or type(bias) is T) and (residual is None or type(residual) is T)
            and not torch.compiler.is_compiling()
            and not (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad
                                                  or (bias is not None and bias.requires_grad)
                                                  or (residual is not None and residual.requires_grad)))):
        with torch._C._AutoDispatchBelowAutograd():
            return op(*args, **kwargs)
    return op(*args, **kwargs)
