"""Tensor-parallel cases, run in every rank of a process group (tests/test_distributed.py spawns
them: world 2 on CPU with gloo in CI, on 2 GPUs with NCCL on the H200).

Each case runs the sharded computation and the unsharded one from the same full tensors on the
same device and compares them; CommDebugMode counts the collectives of the sharded forward.
Rank 0 writes a JSON report. gloo cannot move float8 tensors ("Invalid scalar type"), so FP8
DTensors are made with src_data_rank=None (every rank slices its own copy; no communication) and
Fp8Linear derives its FP8 weights from the already-sharded high-precision weight.
"""

from __future__ import annotations

import copy
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

TOL = {"bf16": 1e-2, "fp8": 3e-2}  # design: relative Frobenius error


def _errors(got: torch.Tensor, want: torch.Tensor):
    g, w = got.double().reshape(-1, got.shape[-1]), want.double().reshape(-1, want.shape[-1])
    fro = ((g - w).norm() / w.norm().clamp_min(1e-30)).item()
    row = ((g - w).norm(dim=1) / w.norm(dim=1).clamp_min(1e-30)).max().item()
    assert not torch.isnan(got).any(), "NaN in the sharded output"
    return fro, row


class MLP(torch.nn.Module):
    """fc2(act(fc1(x))) + x: fc1 column-parallel (activation fused), fc2 row-parallel (residual fused)."""

    def __init__(self, lin, d, h, **kw):
        super().__init__()
        self.fc1 = lin(d, h, activation="gelu_tanh", **kw)
        self.fc2 = lin(h, d, **kw)

    def forward(self, x):
        return self.fc2(self.fc1(x), residual=x)


class Attention(torch.nn.Module):
    """Causal self-attention block: q/k/v column-parallel (heads split), o row-parallel + residual.
    The local head count follows the local width, so the same code runs sharded and unsharded."""

    def __init__(self, lin, d, head_dim, **kw):
        super().__init__()
        self.hd = head_dim
        self.q, self.k, self.v = (lin(d, d, **kw) for _ in range(3))
        self.o = lin(d, d, bias=False, **kw)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (p(x).view(b, s, -1, self.hd).transpose(1, 2) for p in (self.q, self.k, self.v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, -1), residual=x)


def _plan(names_col, names_row):
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    return {**{n: ColwiseParallel() for n in names_col}, **{n: RowwiseParallel() for n in names_row}}


def _weight_bytes(model) -> int:
    total = 0
    for m in model.modules():
        for name in ("weight", "weight_fp8"):
            t = getattr(m, name, None)
            if isinstance(t, torch.Tensor):
                local = t.to_local() if hasattr(t, "to_local") else t
                total += local.numel() * local.element_size()
    return total


def _comm_counts(fn):
    from torch.distributed.tensor.debug import CommDebugMode

    with CommDebugMode() as mode:
        out = fn()
    counts = {str(k).split(".")[-1]: v for k, v in mode.get_comm_counts().items() if v}
    return out, counts


def run_cases(rank: int, world: int, backend: str, store_path: str, report_path: str) -> None:
    import cutlass_gemm
    from cutlass_gemm.nn import Fp8Linear, Linear
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
    from torch.distributed.tensor.parallel import RowwiseParallel, parallelize_module

    store = dist.FileStore(store_path, world)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world)
    try:
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dev = f"cuda:{rank}" if backend == "nccl" else "cpu"
        mesh = init_device_mesh("cuda" if backend == "nccl" else "cpu", (world,))
        report = {"world": world, "backend": backend, "ops": {}, "modules": {}}
        R, S0, S1 = Replicate(), Shard(0), Shard(1)

        def shard(t, *placements):  # every rank slices the same full tensor: no communication
            return distribute_tensor(t, mesh, list(placements), src_data_rank=None)

        def check(name, got_dt, want, kind, expect_comms, counts, section="ops"):
            got = got_dt.full_tensor() if hasattr(got_dt, "full_tensor") else got_dt
            fro, row = _errors(got, want)
            report[section][name] = {"rel_fro": fro, "worst_row": row, "comms": counts}
            assert fro <= TOL[kind], f"{name}: relative Frobenius error {fro:.3e} > {TOL[kind]}"
            if expect_comms is not None:
                assert counts == expect_comms, f"{name}: expected collectives {expect_comms}, got {counts}"

        g = torch.Generator().manual_seed(1234)  # the same full tensors on every rank

        def randn(*shape, dtype=torch.bfloat16, scale=1.0):
            return (torch.randn(*shape, generator=g) * scale).to(dev, dtype)

        # ---- op level: gemm ------------------------------------------------------------------
        m, n, k = 48, 512, 768
        a, b = randn(2, m // 2, k), randn(n, k, scale=k ** -0.5)
        bias, res = randn(n), randn(2, m // 2, n)
        gemm = cutlass_gemm.gemm
        want = gemm(a, b, bias=bias, residual=res, activation="gelu")
        out, c = _comm_counts(lambda: gemm(shard(a, R), shard(b, S0), bias=shard(bias, S0),
                                           residual=shard(res, Shard(2)), activation="gelu"))
        assert out.placements == (Shard(2),), out.placements
        check("gemm column-parallel (bias, gelu, residual)", out, want, "bf16", {}, c)
        want = gemm(a, b, bias=bias, residual=res)
        out, c = _comm_counts(lambda: gemm(shard(a, Shard(2)), shard(b, S1), bias=shard(bias, R),
                                           residual=shard(res, R)).redistribute(placements=[R]))
        check("gemm row-parallel (bias, residual) + all-reduce", out, want, "bf16", {"all_reduce": 1}, c)
        want = gemm(a, b, bias=bias, activation="silu")
        out, c = _comm_counts(lambda: gemm(shard(a, S0), shard(b, R), bias=shard(bias, R), activation="silu"))
        assert out.placements == (S0,), out.placements
        check("gemm token-parallel (bias, silu)", out, want, "bf16", {}, c)
        # A nonlinear epilogue has no row-parallel rule: DTensor redistributes, the result stays right.
        out, c = _comm_counts(lambda: gemm(shard(a, Shard(2)), shard(b, S1), bias=shard(bias, R), activation="silu"))
        check("gemm K-sharded inputs with silu (DTensor redistributes)", out, want, "bf16", None, c)

        # ---- op level: scaled_mm -------------------------------------------------------------
        qf = cutlass_gemm.quantize_fp8
        a2 = a.reshape(m, k)
        res2 = res.reshape(m, n)
        for gran_a, gran_b in (("tensor", "tensor"), ("row", "row"), ("1x128", "128x128")):
            a8, sa = qf(a2, gran_a)
            b8, sb = qf(b, gran_b)
            want = cutlass_gemm.scaled_mm(a8, b8, sa, sb, bias=bias, residual=res2)
            sb_col = R if gran_b == "tensor" else S0
            out, c = _comm_counts(lambda: cutlass_gemm.scaled_mm(
                shard(a8, R), shard(b8, S0), shard(sa, R), shard(sb, sb_col), bias=shard(bias, S0),
                residual=shard(res2, S1)))
            assert out.placements == (S1,), out.placements
            check(f"scaled_mm {gran_a}x{gran_b} column-parallel (bias, residual)", out, want, "fp8", {}, c)
            sa_row = S1 if gran_a == "1x128" else R
            sb_row = S1 if gran_b == "128x128" else R
            out, c = _comm_counts(lambda: cutlass_gemm.scaled_mm(
                shard(a8, S1), shard(b8, S1), shard(sa, sa_row), shard(sb, sb_row), bias=shard(bias, R),
                residual=shard(res2, R)).redistribute(placements=[R]))
            check(f"scaled_mm {gran_a}x{gran_b} row-parallel (bias, residual) + all-reduce", out, want, "fp8",
                  {"all_reduce": 1}, c)
            if gran_a != "tensor":
                want = cutlass_gemm.scaled_mm(a8, b8, sa, sb, bias=bias, activation="gelu")
                out, c = _comm_counts(lambda: cutlass_gemm.scaled_mm(
                    shard(a8, S0), shard(b8, R), shard(sa, S0), shard(sb, R), bias=shard(bias, R), activation="gelu"))
                assert out.placements == (S0,), out.placements
                check(f"scaled_mm {gran_a}x{gran_b} token-parallel (bias, gelu)", out, want, "fp8", {}, c)

        # ---- modules: stock ColwiseParallel / RowwiseParallel on our nn.Linear subclasses -----
        d, h, hd = 256, 512, 64
        x = randn(2, 24, d)
        variants = [("bf16", Linear, {}), ("fp8 row", Fp8Linear, {"weight_granularity": "row"}),
                    ("fp8 128x128", Fp8Linear, {"weight_granularity": "128x128"})]
        for label, lin, kw in variants:
            kind = "bf16" if lin is Linear else "fp8"
            for block, cols, rows in (("mlp", ["fc1"], ["fc2"]), ("attention", ["q", "k", "v"], ["o"])):
                torch.manual_seed(7)  # identical weights on every rank
                model = (MLP(lin, d, h, **kw) if block == "mlp" else Attention(lin, d, hd, **kw)).to(dev, torch.bfloat16)
                full_bytes = _weight_bytes(model)
                with torch.no_grad():
                    want = model(x)
                    tp = parallelize_module(copy.deepcopy(model), mesh, _plan(cols, rows))
                    out, c = _comm_counts(lambda: tp(x))
                    out, c = _comm_counts(lambda: tp(x))  # the second call: FP8 copies already sharded
                check(f"{block} {label}", out, want, kind, {"all_reduce": len(rows)}, c, section="modules")
                ratio = _weight_bytes(tp) / full_bytes
                report["modules"][f"{block} {label}"]["weight_bytes_per_rank"] = ratio
                assert abs(ratio - 1 / world) < 1e-9, f"{block} {label}: per-rank weight bytes {ratio} of the full"
        # Row-parallel with a nonlinear activation: reduce first, then the activation (one all-reduce).
        torch.manual_seed(8)
        for label, lin, kw in variants:
            kind = "bf16" if lin is Linear else "fp8"
            layer = lin(h, d, activation="silu", **kw).to(dev, torch.bfloat16)
            xi = randn(2, 24, h)
            with torch.no_grad():
                want = layer(xi, residual=x)
                tp = parallelize_module(copy.deepcopy(layer), mesh, RowwiseParallel())
                tp(xi_shard(xi, mesh), residual=x)  # the first call shards the FP8 copy (K-sharded amax: one all-reduce)
                out, c = _comm_counts(lambda: tp(xi_shard(xi, mesh), residual=x))
            check(f"row-parallel + silu {label}", out, want, kind, {"all_reduce": 1}, c, section="modules")
            # the residual skips the op on this path: a wrong one is the unsharded layer's error
            for bad, msg in ((x[0, 0], "expected residual of shape [2, 24, 256]"),
                             (x.float(), "expected residual of dtype bfloat16")):
                try:
                    tp(xi_shard(xi, mesh), residual=bad)
                except RuntimeError as e:
                    assert msg in str(e), (label, str(e))
                else:
                    raise AssertionError(f"row-parallel + silu {label}: a bad residual was accepted")
        # Row-parallel without an activation, the residual sharded (a DTensor): redistributing it is a
        # collective on every rank, then the first rank adds it (session 10: only rank 0 redistributed
        # and the ranks hung on different collectives).
        for label, lin, kw in variants:
            kind = "bf16" if lin is Linear else "fp8"
            layer = lin(h, d, **kw).to(dev, torch.bfloat16)
            xi = randn(2, 24, h)
            with torch.no_grad():
                want = layer(xi, residual=x)
                tp = parallelize_module(copy.deepcopy(layer), mesh, RowwiseParallel())
                out = tp(xi_shard(xi, mesh), residual=distribute_tensor(x, mesh, [Shard(2)]))
            check(f"row-parallel, residual sharded {label}", out, want, kind, None, {}, section="modules")
        if rank == 0:
            with open(report_path, "w") as f:
                json.dump(report, f, indent=1)
        dist.barrier()  # no rank tears down its sockets while the other still has work in flight
    finally:
        dist.destroy_process_group()
    exit_worker()


def exit_worker() -> None:
    """End a spawned worker that succeeded without interpreter finalization: gloo worker threads that
    still hold tensors can abort it with SIGABRT ("terminate called without an active exception",
    pytorch#179291), which mp.spawn reports as a failure."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def xi_shard(x, mesh):
    """This rank's K-slice of x, as a row-parallel layer receives it from a column-parallel one."""
    world, rank = mesh.size(), mesh.get_local_rank()
    return x.chunk(world, dim=-1)[rank].contiguous()
