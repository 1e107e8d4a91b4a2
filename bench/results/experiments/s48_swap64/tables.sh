# Session 48, second call (after the H100 overlay took the 64x32 tile at N = 2112, K = 7168): the whole forced FP8 suite
# on the new build, an A/B of that overlay rule's M range beyond its A/B shapes (M = 256, 512: the range runs to 724),
# and the H100 deepseek_v3 table with the overlay. Repo root, on the device; carry cutlass_gemm/{_C.abi3.so,_build_info.py}.
#   CUTLASS_GEMM_COMMIT=<sha> bash bench/results/experiments/s48_swap64/tables.sh
# Out: $OUT/s48b/{tests.txt, ab_range.json, ab_range.txt, table.log, h100/deepseek_v3_scaled_mm_blockwise_accurate_none.*}
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit of this tree}"
R=$OUT/s48b; mkdir -p $R
export PYTHONPATH=.
timeout ${TESTS_S:-200} python -m pytest -q -p no:cacheprovider -rfE tests/test_kernel_table.py tests/test_gpu_fp8.py > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep "worst" $R/tests.txt | head -8
P=sm90_e4m3_blockwise_promoted_
timeout 120 python -m bench.ab --op scaled_mm --scale blockwise --rounds 5 --json $R/ab_range.json \
  --pair 256,2112,7168=${P}t128x32x128_c1x1_pingpong_swapab+pdl,${P}t64x32x128_c1x1_pingpong_swapab+pdl \
         512,2112,7168=${P}t128x32x128_c1x1_pingpong_swapab+pdl,${P}t64x32x128_c1x1_pingpong_swapab+pdl > $R/ab_range.txt 2>&1
echo "ab rc $? ${SECONDS}s"; tail -2 $R/ab_range.txt
timeout ${TABLE_S:-240} python -m bench --suite deepseek_v3 --op scaled_mm --scale blockwise --accumulate accurate --epilogue none \
  --no-compile --rounds 3 --max-rounds 8 --out $R/h100 > $R/table.log 2>&1
echo "table rc $? ${SECONDS}s"
head -28 $R/h100/deepseek_v3_scaled_mm_blockwise_accurate_none.md | tail -20 | cut -c1-200
