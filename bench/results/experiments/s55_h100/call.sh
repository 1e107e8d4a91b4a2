# Session 55: on an H200 the README's tables (s50_h200/tables.sh a); on any other GPU, the float64 forced test of
# every compiled kernel on the TMA-L2-hooked build (session 54 could not run it) and the eager host time.
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s55_h100/call.sh   (repo root, on the device)
# Out: $OUT/s55.tgz (tests.txt, host.txt, host_overhead.json, gpu.txt).
set -u
: "${OUT:?run on the device (OUT unset)}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=.; D=$OUT/s55; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv
  python -c "import torch, cutlass_gemm._build_info as b; print(torch.__version__, b.GIT_COMMIT, len(b.KERNELS))"; } > $D/gpu.txt 2>&1
cat $D/gpu.txt
timeout ${TESTS_S:-420} python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py \
  -q -p no:cacheprovider -rfE > $D/tests.txt 2>&1; echo "tests rc $? ${SECONDS}s: $(tail -1 $D/tests.txt)"
grep -i "worst" $D/tests.txt | head -12
timeout 90 python bench/host_overhead.py --out $D/host_overhead.json > $D/host.txt 2>&1; echo "host rc $?"; cat $D/host.txt
tar czf $OUT/s55.tgz -C $OUT s55; rm -rf $D
