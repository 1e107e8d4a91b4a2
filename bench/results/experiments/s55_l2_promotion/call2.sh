# Session 55, call 2: on an H200 the README's tables (s50_h200/tables.sh a); on any other GPU the float64 forced test
# of every compiled kernel on the rebuilt extension (a refused TMA encode is now an op error; the descriptor counter
# counts only encodes the driver accepted), then ab_kernel.sh.
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s55_l2_promotion/call2.sh
set -u
: "${OUT:?run on the device (OUT unset)}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=.
python -c "import torch, cutlass_gemm._build_info as b; print(torch.__version__, 'build', b.GIT_COMMIT, len(b.KERNELS))"
timeout ${TESTS_S:-240} python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py \
  -q -p no:cacheprovider -rfE > $OUT/tests.txt 2>&1; echo "tests rc $? ${SECONDS}s: $(tail -n 1 $OUT/tests.txt)"
grep -i "worst" $OUT/tests.txt | head -12
T2=$(( ${T:-585} - SECONDS )) bash bench/results/experiments/s55_l2_promotion/ab_kernel.sh
