# Session 54: CUTLASS's TMA L2 promotion (128 B) against 256 B (DeepGEMM's) at the memory-bound shapes of the
# unmet bars (FP8 row fast 128x57344x8192, M <= 64, blockwise 64x2112x7168) and one compute-bound control, in
# alternating processes (CUTLASS_GEMM_TMA_L2_PROMOTION, read once per process), each child timing the competitor too.
#   T=<seconds> bash bench/results/experiments/s54_l2_promotion/ab.sh   (repo root, on the device; carry the build)
# First the GPU tests of the knob (outputs bit for bit the default's; the descriptors counted by promotion).
set -u
: "${OUT:?run on the device (OUT unset)}"
export PYTHONPATH=.
T=${T:-280}
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader
timeout 60 python -m pytest tests/test_gpu_gemm.py tests/test_kernel_table.py -q -p no:cacheprovider \
  -k "tma_l2_promotion or tma_encode" > $OUT/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $OUT/tests.txt)"
timeout $((T - SECONDS - 5)) python bench/scheduler_knobs.py \
  --case op=scaled_mm,scale=row,accumulate=fast,epilogue=bias --case op=gemm,dtype=bf16,epilogue=none \
  --case op=scaled_mm,scale=blockwise,accumulate=accurate,epilogue=none \
  --shapes ${SHAPES:-64,8192,8192 128,57344,8192 64,2112,7168 4096,4096,4096} --settings 0:0:128,0:0:256 --rounds ${ROUNDS:-2} \
  --out $OUT/l2_ab.json > $OUT/l2_ab.md 2> $OUT/l2_ab.err
echo "ab rc $? ${SECONDS}s"; cat $OUT/l2_ab.md; tail -3 $OUT/l2_ab.err
