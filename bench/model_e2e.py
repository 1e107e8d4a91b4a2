"""Forward throughput of a Llama-style model: unconverted vs cutlass_gemm.convert (bf16) vs
convert(fp8=True), eager and torch.compile(fullgraph=True), same run, same inputs.

    python bench/model_e2e.py [--batch 8] [--seq 512] [--layers 4] [--hidden 2048]
                              [--intermediate 5632] [--fp8 row 128x128] [--no-compile] [--out r.json]

The model is built from a transformers LlamaConfig with random weights (nothing downloaded; needs
`pip install transformers`), bf16, SDPA attention, prefill of batch x seq random tokens with
use_cache=False. Every variant is a deep copy of the same base model (same weights), converted
in place; the LM head stays bf16 (convert's default). Compiled variants use the default Inductor
mode (no CUDA graphs). Timing: CUDA events around each forward (host launch overhead included,
as a user sees it, no CUDA graphs), warm-up first, median of --iters; tokens/s = batch * seq /
median. Each variant's logits are compared to the unconverted eager model's (relative Frobenius
error; FP8 is expected around 5-10% on random weights, bf16 below 1e-2).
Prints a markdown table; --out writes JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time

import torch

DEVICE = "cuda"


def _time_forward(fn, ids, iters: int, warmup: int = 3):
    with torch.no_grad():
        for _ in range(warmup):
            out = fn(ids)
        torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(ids)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--intermediate", type=int, default=5632)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--fp8", nargs="*", default=["row"], choices=["row", "128x128"],
                    help="FP8 weight granularities to run (none: skip FP8)")
    ap.add_argument("--no-compile", action="store_true", help="eager variants only")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()
    if DEVICE == "cuda" and not torch.cuda.is_available():
        sys.exit("bench/model_e2e.py needs a CUDA GPU")
    try:
        import transformers
    except ImportError:
        sys.exit("bench/model_e2e.py needs transformers (pip install transformers)")
    import cutlass_gemm

    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=args.hidden, intermediate_size=args.intermediate, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, num_key_value_heads=args.kv_heads, vocab_size=args.vocab,
        max_position_embeddings=max(2 * args.seq, 128), attn_implementation="sdpa")
    base = transformers.LlamaForCausalLM(config).to(device=DEVICE, dtype=torch.bfloat16).eval()
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), device=DEVICE)
    tokens = args.batch * args.seq

    variants = [("torch (unconverted)", None)] + [("cutlass_gemm bf16", dict(fp8=False))]
    variants += [(f"cutlass_gemm fp8 {g}", dict(fp8=True, weight_granularity=g)) for g in args.fp8]
    modes = ["eager"] + ([] if args.no_compile else ["compiled"])

    rows, ref = [], None
    print(f"Llama {args.layers} layers, hidden {args.hidden}, intermediate {args.intermediate}, "
          f"vocab {args.vocab}; prefill batch {args.batch} x seq {args.seq} = {tokens} tokens; "
          f"{torch.cuda.get_device_name()}, torch {torch.__version__}\n")
    print("| model | mode | ms / forward | tokens/s | vs torch eager | vs torch compiled | logits rel. err | compile s |")
    print("|---|---|---|---|---|---|---|---|")
    base_ms = {}
    for name, conv in variants:
        model = base if conv is None else copy.deepcopy(base)
        if conv is not None:
            cutlass_gemm.convert(model, **conv)
        for mode in modes:
            compile_s = 0.0
            if mode == "compiled":
                torch._dynamo.reset()
                fn_model = torch.compile(model, fullgraph=True)
                t0 = time.perf_counter()
                with torch.no_grad():
                    fn_model(input_ids=ids, use_cache=False)
                torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0
            else:
                fn_model = model
            ms, out = _time_forward(lambda x: fn_model(input_ids=x, use_cache=False).logits, ids, args.iters)
            if ref is None:
                ref = out.float()
            err = ((out.float() - ref).norm() / ref.norm()).item()
            if conv is None:
                base_ms[mode] = ms
            rec = {"model": name, "mode": mode, "ms": ms, "tokens_per_s": tokens / ms * 1e3,
                   "speedup_vs_torch_eager": base_ms["eager"] / ms,
                   "speedup_vs_torch_compiled": (base_ms["compiled"] / ms) if "compiled" in base_ms else None,
                   "logits_rel_err": err, "compile_s": compile_s}
            rows.append(rec)
            vc = f"{rec['speedup_vs_torch_compiled']:.2f}x" if rec["speedup_vs_torch_compiled"] else "-"
            print(f"| {name} | {mode} | {ms:.2f} | {rec['tokens_per_s']:,.0f} | {rec['speedup_vs_torch_eager']:.2f}x | "
                  f"{vc} | {err:.2e} | {compile_s:.0f} |", flush=True)
        if model is not base:
            del model
        torch.cuda.empty_cache()
    if args.out:
        meta = {"torch": torch.__version__, "transformers": transformers.__version__,
                "gpu": torch.cuda.get_device_name(), "commit": os.environ.get("CUTLASS_GEMM_COMMIT", ""),
                "args": vars(args), "tokens": tokens}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
