# Session 55, call 4: on an H200 the README's tables (s50_h200/tables.sh a); on any other GPU the L2 promotion A/B at
# the square suite's bar shapes (bf16 bias+GELU+residual, FP8 row accurate + bias): 128 B against 256 B, 3 rounds.
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s55_l2_promotion/call4.sh
set -u
: "${OUT:?run on the device (OUT unset)}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=.
timeout ${T4:-200} python bench/scheduler_knobs.py --case op=gemm,dtype=bf16,epilogue=bias_gelu_residual \
  --case op=scaled_mm,scale=row,accumulate=accurate,epilogue=bias --shapes 1024,1024,1024 2048,2048,2048 \
  4096,4096,4096 8192,8192,8192 --settings 0:0:128,0:0:256 --rounds ${ROUNDS:-3} \
  --out $OUT/l2_square.json > $OUT/l2_square.md 2> $OUT/l2_square.err
echo "square ab rc $? ${SECONDS}s"; cat $OUT/l2_square.md; tail -n 2 $OUT/l2_square.err
