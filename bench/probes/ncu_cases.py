"""What the ncu probes share: run each case a few times (warm-up), then once between profiler start and stop, so that
`ncu --profile-from-start off` profiles one launch per case."""
import torch


def profile_each(cases, warmup: int = 5) -> None:
    """cases: [(name, fn)]; fn() launches the case's kernel(s)."""
    for name, f in cases:
        for _ in range(warmup):
            f()
        torch.cuda.synchronize()
        torch.cuda.profiler.start(); f(); torch.cuda.synchronize(); torch.cuda.profiler.stop()
        print("profiled", name, flush=True)
