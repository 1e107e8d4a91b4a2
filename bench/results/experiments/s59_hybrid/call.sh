# Session 59: the M x N ladder (tools/derive_rules.py's default since this session) head to head with the M-only
# ladder shipped until session 58 (rules_m_ladder.json, cutlass_gemm/default_rules.json at 4cc19eb) at the 20 shapes
# of ../s58_unseen, then ours against torch there with the shipped rules; on an H200 the README's tables instead.
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s59_hybrid/call.sh      (repo root, on the device)
# Out: $OUT/ab_*.json|txt (bench.ab --against: every shape whose launch differs), $OUT/bench_*/ (python -m bench).
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit whose rules and code the build runs}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU, commit $CUTLASS_GEMM_COMMIT"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=. CUTLASS_GEMM_GPU_OVERLAY=0  # the derivations alone: no H100 overlay on either side
H=bench/results/experiments/s59_hybrid
S=""
for nk in 1024,4096 6144,4096 4096,4096 4096,14336 14336,4096 1024,2048; do
  for m in 512 2048 4096; do S="$S $m,$nk"; done
done
S="$S 1024,1024,4096 1024,1024,2048"
FAMS=("bf16:--op gemm --dtype bf16 --epilogue none" "bf16_fused:--op gemm --dtype bf16 --epilogue bias_gelu_residual"
      "row_fast:--op scaled_mm --scale row --accumulate fast --epilogue bias")
for f in "${FAMS[@]}"; do
  n=${f%%:*}; a=${f#*:}
  timeout ${TAB:-100} python -m bench.ab $a --against $H/rules_m_ladder.json --shapes $S --rounds ${ROUNDS:-5} \
    --json $OUT/ab_$n.json > $OUT/ab_$n.txt 2>&1; echo "ab $n rc $? ${SECONDS}s: $(head -1 $OUT/ab_$n.txt)"
done
for f in "${FAMS[@]}"; do
  n=${f%%:*}; a=${f#*:}
  timeout ${TBENCH:-80} python -m bench $a --shapes $S --no-compile --out $OUT/bench_$n > $OUT/bench_$n.txt 2>&1
  echo "bench $n rc $? ${SECONDS}s"
done
python $H/report.py $OUT 2>&1 | tail -40
