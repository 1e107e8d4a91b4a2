#!/usr/bin/env bash
# Regenerates bench/results/ on an SM90 GPU: every suite with its same-run competitors.
#   bash bench/regenerate.sh [OUT] [PART...]      PART: core fused odd compile (default: all four)
# core: square, llama3_70b (gemm, fused; FP8 tensor/row at both accumulations), deepseek_v3 blockwise,
#   no torch.compile column. fused: FP8 row-scaled bias+GELU+residual against the eager pipeline
#   (_scaled_mm + gelu + add). odd: the shapes no tile divides (fallback paths), same competitors.
# compile: square gemm bias_gelu_residual with the torch.compile max-autotune column (minutes per
#   shape, so one suite), written to OUT/compile so that it never overwrites core's table of that suite.
# Every shape is timed in ROUNDS rounds (default 3) on new inputs, the contender order reversed every
# other round, geometric mean of the rounds per contender (python -m bench --rounds; notes/timing.md);
# MAX_ROUNDS=N (default 8) adds rounds, up to N, to shapes whose ratio is still uncertain after them (--max-rounds);
# session 37: two such runs in one lease agreed within 5% at 323 of 324 ratios (experiments/s37_max_rounds).
# Parts fit one 10-minute call each on the H200. On a machine that got a copied tree, name the
# commit: CUTLASS_GEMM_COMMIT=<sha> bash bench/regenerate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-bench/results}"
shift || true
PARTS="${*:-core fused odd compile}"
ROUNDS=${ROUNDS:-3}
MAX_ROUNDS=${MAX_ROUNDS:-$(( ROUNDS > 8 ? ROUNDS : 8 ))}
R="--rounds $ROUNDS --max-rounds $MAX_ROUNDS"
for part in $PARTS; do
  case "$part" in
    core)
      python -m bench --suite square,llama3_70b --op gemm --epilogue none,bias_gelu_residual --no-compile $R --out "$OUT"
      python -m bench --suite square,llama3_70b --op scaled_mm --scale tensor,row --accumulate accurate,fast --epilogue bias --no-compile $R --out "$OUT"
      python -m bench --suite deepseek_v3 --op scaled_mm --scale blockwise --accumulate accurate --epilogue none --no-compile $R --out "$OUT"
      ;;
    fused)
      python -m bench --suite square,llama3_70b --op scaled_mm --scale row --accumulate accurate --epilogue bias_gelu_residual --no-compile $R --out "$OUT"
      ;;
    odd)
      python -m bench --suite odd --op gemm --epilogue bias_gelu_residual --no-compile $R --out "$OUT"
      python -m bench --suite odd --op scaled_mm --scale row --accumulate accurate --epilogue bias --no-compile $R --out "$OUT"
      ;;
    compile)
      # torch.compile timing is minutes per shape: fixed rounds only.
      python -m bench --suite square --op gemm --epilogue bias_gelu_residual --rounds $ROUNDS --out "$OUT/compile"
      ;;
    *)
      echo "regenerate.sh: unknown part '$part' (expected core, fused, odd or compile)" >&2
      exit 2
      ;;
  esac
done
