# Session 48: the swapped 64-row blockwise tiles (kernel_table._sm90_blockwise_swap64) on a Hopper GPU.
#   bash bench/results/experiments/s48_swap64/call.sh   (repo root, on the device; carry cutlass_gemm/{_C.abi3.so,_build_info.py})
# 1. every blockwise kernel forced against float64 (test_kernel_table, test_gpu_fp8 -k blockwise);
# 2. the blockwise family swept over deepseek_v3 (every compiled blockwise kernel against _scaled_mm, same run);
# 3. bench.ab at the 12 deepseek_v3 shapes of M <= 128: the shipped rules' launch against the new tile (pairs.py; its 64x16 twin is retired).
# Out: $OUT/s48/{tests.txt, sweep_blockwise_ds_s48.json, sweep.txt, ab_s48_swap64.json, ab.txt}
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/s48; mkdir -p $R
export PYTHONPATH=.
timeout ${TESTS_S:-150} python -m pytest -q -p no:cacheprovider -rfE tests/test_kernel_table.py tests/test_gpu_fp8.py -k blockwise \
  > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep -i "worst\|FAIL\|Error" $R/tests.txt | head -12
timeout ${SWEEP_S:-150} python -m bench.sweep --op scaled_mm --scale blockwise --suite deepseek_v3 \
  --json $R/sweep_blockwise_ds_s48.json > $R/sweep.txt 2>&1
echo "sweep rc $? ${SECONDS}s"
python bench/results/experiments/s48_swap64/pairs.py > $R/pairs.txt
timeout ${AB_S:-200} python -m bench.ab --op scaled_mm --scale blockwise --pair $(cat $R/pairs.txt) --rounds 5 \
  --json $R/ab_s48_swap64.json > $R/ab.txt 2>&1
echo "ab rc $? ${SECONDS}s"
tail -30 $R/ab.txt
