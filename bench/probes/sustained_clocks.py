# Session 47: each case of ncu_h100_tiles.py (or --cases FP8 / bf16; since session 53 --probe tensor_vs_row runs that
# probe's) launched back to back for --seconds, with the SM clock, power and throttle reasons sampled by NVML every
# 50 ms: do the tiles the H100 loses with run at a lower clock under sustained load (single launches under ncu: 128x128
# ping-pong 5.69 ms, 128x256 coop 5.18; graph replay 7.39 / 5.94 ms)?
#   PYTHONPATH=. python bench/probes/sustained_clocks.py [--probe MODULE] [--seconds 4] [--cases 0,1,2]
import argparse
import importlib.util
import os
import sys
import threading
import time

PROBES = ("ncu_h100_tiles", "tensor_vs_row")  # modules of this folder with NAMES (torch-free) and cases()


def load_probe(name):
    """The probe module by its file beside this one: no sys.path change, whether run as a script or imported."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sample(handle, out, stop):
    import pynvml

    while not stop.is_set():
        out.append((time.perf_counter(), pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
                    pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                    pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle),
                    pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)))
        time.sleep(0.05)


def main(argv=None):
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--probe", default="ncu_h100_tiles", choices=PROBES,
                     help="the module of bench/probes/ whose NAMES and cases() to run")
    probe, _ = pre.parse_known_args(argv)
    ap = argparse.ArgumentParser(parents=[pre])
    mod = load_probe(probe.probe)
    NAMES, cases = mod.NAMES, mod.cases
    ap.add_argument("--seconds", type=float, default=4.0, help="per case, > 0.5 (the first half second is dropped)")
    ap.add_argument("--cases", default=",".join(str(i) for i in range(len(NAMES))),
                    help=f"indices into {probe.probe}.NAMES: {'; '.join(f'{i} {n}' for i, n in enumerate(NAMES))}")
    a = ap.parse_args(argv)
    if not a.seconds > 0.5:
        ap.error(f"--seconds: expected more than 0.5 (the first half second is dropped), got {a.seconds}")
    picked = a.cases.split(",")
    if not all(x.strip().isdigit() and int(x) < len(NAMES) for x in picked):
        ap.error(f"--cases: expected indices from 0 to {len(NAMES) - 1} separated by ',', got {a.cases!r}")
    import torch  # after the arguments: the cases' inputs take seconds and GBs to make

    if not torch.cuda.is_available():
        sys.exit("sustained_clocks: expected a CUDA GPU (the cases run on it and NVML samples it); torch sees none")
    try:
        import pynvml
    except ImportError:
        sys.exit("sustained_clocks: expected the NVML bindings (`pip install nvidia-ml-py`, module pynvml)")

    CASES = cases()
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    samples, stop = [], threading.Event()
    t = threading.Thread(target=sample, args=(h, samples, stop), daemon=True)
    t.start()
    print("| case | launches | ms per launch (events) | SM MHz (median of samples) | W (median) | throttle reasons seen | max C |")
    print("|---|---|---|---|---|---|---|")
    for i in (int(x) for x in picked):
        name, fn = CASES[i]
        fn(); torch.cuda.synchronize()
        t0 = time.perf_counter(); n = 0
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        while time.perf_counter() - t0 < a.seconds:
            for _ in range(8):
                fn()
            n += 8
            torch.cuda.synchronize()
        e1.record(); torch.cuda.synchronize()
        t1 = time.perf_counter()
        win = [s for s in samples if t0 + 0.5 <= s[0] <= t1]  # the first half second: the clock settling
        med = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
        reasons = 0
        for s in win:
            reasons |= s[3]
        print(f"| {name} | {n} | {e0.elapsed_time(e1) / n:.3f} | {med([s[1] for s in win])} | "
              f"{med([s[2] for s in win]):.0f} | {hex(reasons)} | {max([s[4] for s in win], default=0)} |", flush=True)
        time.sleep(1.0)
    stop.set()


if __name__ == "__main__":
    main()
