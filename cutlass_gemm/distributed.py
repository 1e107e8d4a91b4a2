"""Tensor parallelism through PyTorch's own stack: DTensor sharding rules for every op.

With the rules registered, `torch.ops.cutlass_gemm.gemm` / `scaled_mm` accept DTensors and DTensor
propagates placements without gathering anything. Placements the rules accept (1-D mesh of size w;
`a` is [..., K] with last dim d, `b` is [N, K]):

    layout            a      b     bias   residual  scale_a       scale_b          output
    replicated        R      R     R      R         R             R                R
    column-parallel   R      S(0)  S(0)   S(d)      R             R | S(0)         S(d)
    row-parallel      S(d)   S(1)  P      P         R | S(1)      R | S(1)         P  (Partial sum)
    token-parallel    S(0)   R     R      S(0)      R | S(0)      R                S(0)

- Row-parallel leaves a partial sum. The linear part of the epilogue (alpha, scales, bias,
  residual) distributes over it, so it is applied inside the kernel on every rank (bias and residual
  enter as Partial: DTensor hands each rank 1/w of them, exact for power-of-two w); the output's
  one all-reduce (e.g. RowwiseParallel's output redistribution) completes it. A nonlinear
  activation does not distribute over a sum, so no row-parallel rule is offered with one; the nn
  modules then run the GEMM and its linear epilogue first, all-reduce, and apply the activation
  after the reduction (one extra elementwise pass).
- Scale shapes as in `scaled_mm`: per-tensor R; per-channel scale_b [N, 1] follows b's N;
  blockwise scales follow their 128-blocks, so blockwise column/row parallel needs N (resp. K) to
  be a multiple of 128 * w (else the rule is not offered and DTensor redistributes instead).
- Non-tensor arguments (activation, alpha, beta, ...) are part of the sharding cache key.

Registration happens when `cutlass_gemm` is imported if `torch.distributed.tensor` is already
loaded, else right after it is first imported (an import hook), so the ~0.8 s DTensor import is
never paid by users who do not use it. `register_sharding_rules()` is idempotent.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from typing import List, Optional, Sequence, Tuple

import torch

from ._validate import GEMM, check_residual, classify_scale_a, classify_scale_b

_DTENSOR_MODULE = "torch.distributed.tensor"
_lock = threading.Lock()
_registered = False


def _mesh_size(spec) -> int:
    return int(spec.mesh.size())


def _leading(shape: Sequence[int]) -> int:
    m = 1
    for s in shape[:-1]:
        m *= int(s)
    return m


def _meta(spec) -> torch.Tensor:
    """A storage-free tensor of a DTensorSpec's global shape, for the validator's shape rules."""
    return torch.empty(tuple(spec.shape), device="meta")


def _opt(t, placement):
    return None if t is None else placement


def gemm_strategies(a, b, bias=None, residual=None, *, activation="none", **_unused) -> List[Tuple[list, list]]:
    """Acceptable (output placements, input placements) of `gemm` on one mesh dimension."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    R, d = Replicate(), a.ndim - 1
    out = [([R], [R, R, _opt(bias, R), _opt(residual, R)])]
    out.append(([Shard(d)], [R, Shard(0), _opt(bias, Shard(0)), _opt(residual, Shard(d))]))
    if a.ndim >= 2:
        out.append(([Shard(0)], [Shard(0), R, _opt(bias, R), _opt(residual, Shard(0))]))
    if activation == "none":  # the epilogue is linear: it distributes over the partial sum
        out.append(([Partial()], [Shard(d), Shard(1), _opt(bias, Partial()), _opt(residual, Partial())]))
    return out


def scaled_mm_strategies(a, b, scale_a, scale_b, bias=None, residual=None, *, activation="none",
                         **_unused) -> List[Tuple[list, list]]:
    """Acceptable (output placements, input placements) of `scaled_mm` on one mesh dimension."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    R, d, w = Replicate(), a.ndim - 1, _mesh_size(a)
    m, k, n = _leading(a.shape), int(a.shape[-1]), int(b.shape[0])
    kb, nb = -(-k // 128), -(-n // 128)
    # The validator's reading of the scale shapes (a shape it rejects fails when the op runs).
    sa = {"tensor": "tensor", "row": "vector"}.get(classify_scale_a(_meta(scale_a), m, kb), "block")
    sb = {"tensor": "tensor", "col": "vector"}.get(classify_scale_b(_meta(scale_b), n, nb, kb), "block")
    out = [([R], [R, R, R, R, _opt(bias, R), _opt(residual, R)])]
    # column-parallel: N split; a per-channel or 128-row-block scale_b splits with it
    sb_col = {"tensor": R, "vector": Shard(0), "block": Shard(0) if n % (128 * w) == 0 else None}[sb]
    if sb_col is not None:
        out.append(([Shard(d)], [R, Shard(0), R, sb_col, _opt(bias, Shard(0)), _opt(residual, Shard(d))]))
    # token-parallel: rows of a split; a per-row or 1x128 scale_a splits with them
    rows_even = a.ndim == 2 or int(a.shape[0]) % w == 0
    if a.ndim >= 2 and (sa == "tensor" or rows_even):
        sa_tok = R if sa == "tensor" else Shard(0)
        out.append(([Shard(0)], [Shard(0), R, sa_tok, R, _opt(bias, R), _opt(residual, Shard(0))]))
    # row-parallel: K split; blockwise scales split on their K-block dim when the blocks align
    k_even = k % (128 * w) == 0
    sa_row = {"tensor": R, "vector": R, "block": Shard(1) if k_even else None}[sa]
    sb_row = {"tensor": R, "vector": R, "block": Shard(1) if k_even else None}[sb]
    if activation == "none" and sa_row is not None and sb_row is not None:
        out.append(([Partial()], [Shard(d), Shard(1), sa_row, sb_row, _opt(bias, Partial()),
                                  _opt(residual, Partial())]))
    return out


def register_sharding_rules() -> None:
    """Register the DTensor sharding rules of every cutlass_gemm op (idempotent)."""
    global _registered
    with _lock:
        if _registered:
            return
        from torch.distributed.tensor import DTensor
        from torch.distributed.tensor._op_schema import RuntimeSchemaInfo
        from torch.distributed.tensor.experimental import register_sharding

        prop = DTensor._op_dispatcher.sharding_propagator
        for op, fn in ((torch.ops.cutlass_gemm.gemm.default, gemm_strategies),
                       (torch.ops.cutlass_gemm.scaled_mm.default, scaled_mm_strategies)):
            register_sharding(op)(fn)
            # register_sharding keys its cache on int arguments only; activation (a str) decides
            # whether the row-parallel rule applies, so every keyword argument joins the key.
            kwargs = [x.name for x in op._schema.arguments if x.kwarg_only]
            prop.op_to_schema_info[op] = RuntimeSchemaInfo(static_argnum=100, static_kwargkey=kwargs,
                                                           needs_pytree=True)
        _registered = True


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs register_sharding_rules() right after torch.distributed.tensor finishes importing."""

    def find_spec(self, name, path, target=None):
        if name != _DTENSOR_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _remove_hook()
            _register_or_warn()

        loader.exec_module = exec_and_register
        return spec


_hook: Optional[_AfterImport] = None


def _register_or_warn() -> None:
    """Registration from an import never breaks the import (DTensor's API is partly private)."""
    try:
        register_sharding_rules()
    except Exception as e:
        import warnings

        warnings.warn(f"cutlass_gemm: DTensor sharding rules not registered ({type(e).__name__}: {e}); "
                      "cutlass_gemm ops will not accept DTensors", stacklevel=3)


def _remove_hook() -> None:
    global _hook
    if _hook is not None and _hook in sys.meta_path:
        sys.meta_path.remove(_hook)
    _hook = None


def _install() -> None:
    """Called at `import cutlass_gemm`."""
    global _hook
    if not torch.distributed.is_available():
        return
    if _DTENSOR_MODULE in sys.modules:
        _register_or_warn()
    elif _hook is None:
        _hook = _AfterImport()
        sys.meta_path.insert(0, _hook)


# ---------------------------------------------------------------------------------------------
# nn modules under tensor parallelism (stock ColwiseParallel / RowwiseParallel, or any style that
# turns `weight` into a DTensor on a 1-D mesh).


def is_dtensor(t) -> bool:
    mod = sys.modules.get(_DTENSOR_MODULE)
    return mod is not None and isinstance(t, mod.DTensor)


def _as_dtensor(t, mesh):
    """A plain tensor next to DTensors is the full (replicated) value."""
    from torch.distributed.tensor import DTensor, Replicate

    if t is None or is_dtensor(t):
        return t
    return DTensor.from_local(t, mesh, [Replicate()], run_check=False)


def _mesh_1d(w, what: str):
    mesh = w.device_mesh
    if mesh.ndim != 1:
        raise NotImplementedError(f"cutlass_gemm.nn.{what}: tensor parallelism over a {mesh.ndim}-D mesh is not "
                                  "supported; shard the weight over a 1-D mesh (e.g. the TP dim of a 2-D mesh)")
    return mesh


def _k_sharded(w) -> bool:
    return w.placements[0].is_shard(1)


def _finish_after_reduce(y, bias, residual, activation: str):
    """The nonlinear epilogue of a row-parallel layer, after the all-reduce (one elementwise pass)."""
    from torch.distributed.tensor import Replicate

    from ._reference import ACTIVATION_FNS

    y = y.redistribute(placements=[Replicate()])  # the layer's one all-reduce
    if bias is not None:
        y = y + bias.to(y.dtype)
    y = ACTIVATION_FNS[activation](y)
    return y if residual is None else y + residual


def linear_forward(mod, x, residual):
    """cutlass_gemm.nn.Linear.forward when its weight is a DTensor."""
    from ._ops import gemm

    mesh = _mesh_1d(mod.weight, "Linear")
    x, residual, bias = (_as_dtensor(t, mesh) for t in (x, residual, mod.bias))
    if _k_sharded(mod.weight) and mod.activation != "none":
        if residual is not None:  # added after the all-reduce, outside the op: the op's check (global shapes)
            check_residual(GEMM, residual, (*x.shape[:-1], mod.out_features), x.dtype)
        y = gemm(x, mod.weight)  # Partial: the activation needs the full sum (the op checks x and the weight)
        return _finish_after_reduce(y, bias, residual, mod.activation)
    return gemm(x, mod.weight, bias=bias, residual=residual, activation=mod.activation)


def quantize_weight_sharded(w, granularity: str, dtype=torch.float8_e4m3fn):
    """Quantize a DTensor weight [N, K] shard by shard into DTensors (w8, scale) with the same
    values an unsharded quantization gives: N-sharded rows are independent; a K-sharded per-channel
    amax is all-reduced (once, here); 128x128 blocks must not straddle shards."""
    from torch.distributed.tensor import DTensor, Replicate, Shard

    from .quantize import _divide, _scale, quantize_fp8

    mesh = _mesh_1d(w, "Fp8Linear")
    p, local, ws = w.placements[0], w.to_local(), mesh.size()
    n, k = w.shape
    if p.is_replicate():
        q, s = quantize_fp8(local, granularity, dtype)
        return DTensor.from_local(q, mesh, [Replicate()], run_check=False), \
            DTensor.from_local(s, mesh, [Replicate()], run_check=False)
    dim = p.dim
    if not p.is_shard() or dim not in (0, 1):
        raise NotImplementedError(f"cutlass_gemm.nn.Fp8Linear: expected the weight replicated or sharded on dim 0 "
                                  f"or 1, got {w.placements}")
    size = (n, k)[dim]
    chunk = -(-size // ws)
    if granularity == "128x128" and ws > 1 and chunk % 128:
        what = ("out_features", "column") if dim == 0 else ("in_features", "row")
        raise ValueError(f"cutlass_gemm.nn.Fp8Linear: {what[1]}-parallel 128x128 weight scales need {what[0]} = "
                         f"{size} split into whole 128-blocks over {ws} ranks (a multiple of {128 * ws}); use "
                         f"weight_granularity='row' or another world size")
    if dim == 1 and granularity == "row":  # per-channel amax over the whole K: one all-reduce, at setup
        amax = local.detach().abs().amax(dim=1, keepdim=True).float()
        torch.distributed.all_reduce(amax, op=torch.distributed.ReduceOp.MAX, group=mesh.get_group())
        s = _scale(amax, torch.finfo(dtype).max)  # quantize_fp8's rules, on the global amax
        q = _divide(local.detach(), s, dtype)
        s_place = Replicate()
        s_shape = tuple(s.shape)
    else:
        q, s = quantize_fp8(local, granularity, dtype)
        s_place = Shard(dim)
        s_shape = (n, 1) if granularity == "row" else (-(-n // 128), -(-k // 128))
    w8 = DTensor.from_local(q, mesh, [Shard(dim)], run_check=False, shape=w.shape, stride=(k, 1))
    s_stride = (1, s_shape[0]) if granularity == "128x128" else (1, 1)  # 128x128 scales are N-major
    sd = DTensor.from_local(s, mesh, [s_place], run_check=False, shape=torch.Size(s_shape), stride=s_stride)
    return w8, sd


def fp8_linear_forward(mod, x, residual):
    """cutlass_gemm.nn.Fp8Linear.forward when its weight is a DTensor.

    Column-parallel (weight sharded on N, input replicated): every rank quantizes the whole input
    (the same values an unsharded layer uses) and scaled_mm's rules keep the output sharded on N.
    Row-parallel (weight sharded on K, input sharded on K): every rank quantizes its K-slice with
    its own per-token (or 1x128) scales -- no collective for the scales -- and its partial product
    is dequantized by them before the one all-reduce; bias and residual enter on the first rank
    only (exact), a nonlinear activation after the reduction."""
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard

    from ._ops import scaled_mm
    from .quantize import quantize_fp8

    if not is_dtensor(mod.weight_fp8) or mod.weight_fp8.placements != mod.weight.placements:
        mod.quantize_weight()  # a style sharded `weight` after construction: shard the FP8 copy to match
    w8, sw = mod.weight_fp8, mod.weight_scale
    mesh = _mesh_1d(w8, "Fp8Linear")
    x = _as_dtensor(x, mesh)
    residual = _as_dtensor(residual, mesh)
    bias = mod.bias if mod.bias is None or mod.bias.dtype in (torch.bfloat16, torch.float32) else mod.bias.float()
    bias = _as_dtensor(bias, mesh)
    if residual is not None:
        residual = residual.to(torch.bfloat16)
    lead, d = tuple(x.shape[:-1]), x.ndim - 1
    if _k_sharded(w8):
        xl = x.redistribute(placements=[Shard(d)]).to_local()
        x8, sx = quantize_fp8(xl.reshape(-1, xl.shape[-1]), mod.input_granularity)
        first = mesh.get_local_rank() == 0
        linear = mod.activation == "none"
        # Redistributing is a collective when bias/residual are sharded: every rank takes part, then
        # only the first adds them (exact).
        bl = bias.redistribute(placements=[Replicate()]).to_local() if bias is not None and linear else None
        rl = (residual.redistribute(placements=[Replicate()]).to_local().reshape(-1, mod.out_features)
              if residual is not None and linear else None)
        if not first:
            bl = rl = None
        yl = scaled_mm(x8, w8.to_local(), sx, sw.to_local(), bias=bl, residual=rl, accumulate=mod.accumulate)
        y = DTensor.from_local(yl.reshape(*lead, -1), mesh, [Partial()], run_check=False)
        if not linear:
            y = _finish_after_reduce(y, bias, residual, mod.activation)
    else:
        xl = x.redistribute(placements=[Replicate()]).to_local()
        x8, sx = quantize_fp8(xl.reshape(-1, xl.shape[-1]), mod.input_granularity)
        x8, sx = (DTensor.from_local(t, mesh, [Replicate()], run_check=False) for t in (x8, sx))
        res = None if residual is None else residual.reshape(-1, mod.out_features)
        y = scaled_mm(x8, w8, sx, sw, bias=bias, residual=res, activation=mod.activation, accumulate=mod.accumulate)
        y = y.reshape(*lead, mod.out_features)
    return y if x.dtype == torch.bfloat16 else y.to(x.dtype)
