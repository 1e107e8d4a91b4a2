# Session 55: TMA L2 promotion 128 B (CUTLASS's) against 256 B over every M <= 512 cell of llama3_70b (bf16, FP8 row
# fast + bias) and the M <= 128 cells of deepseek_v3 (blockwise), 3 rounds, settings alternating in child processes,
# each child timing the competitor too. Session 54 (s54_l2_promotion) had 3 shapes and 2 rounds.
#   bash bench/results/experiments/s55_l2_promotion/ab.sh   (repo root, on the device; carry the build)
set -u
: "${OUT:?run on the device (OUT unset)}"
export PYTHONPATH=.
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader
python -c "import cutlass_gemm._build_info as b; print('build', b.GIT_COMMIT)"
R=${ROUNDS:-3}
L=""; for nk in 10240,8192 8192,8192 57344,8192 8192,28672; do for m in 16 64 128 512; do L="$L $m,$nk"; done; done
D=""; for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do for m in 64 128; do D="$D $m,$nk"; done; done
timeout ${T1:-330} python bench/scheduler_knobs.py --case op=scaled_mm,scale=row,accumulate=fast,epilogue=bias \
  --case op=gemm,dtype=bf16,epilogue=none --shapes $L --settings 0:0:128,0:0:256 --rounds $R \
  --out $OUT/l2_llama.json > $OUT/l2_llama.md 2> $OUT/l2_llama.err
echo "llama rc $? ${SECONDS}s"
timeout $(( ${T:-585} - SECONDS )) python bench/scheduler_knobs.py \
  --case op=scaled_mm,scale=blockwise,accumulate=accurate,epilogue=none --shapes $D --settings 0:0:128,0:0:256 --rounds $R \
  --out $OUT/l2_deepseek.json > $OUT/l2_deepseek.md 2> $OUT/l2_deepseek.err
echo "deepseek rc $? ${SECONDS}s"
tail -n 2 $OUT/l2_llama.err $OUT/l2_deepseek.err
