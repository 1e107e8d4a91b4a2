# Session 42: one device call on the full build in the checkout (carry cutlass_gemm/{_C.abi3.so,_build_info.py}):
# on an H200 the kernel table's tests and every bf16 kernel forced, then the README's tables (bench/regenerate.sh core
# fused odd); on any other GPU the GPU tests of the kernel table and of every kernel forced (bf16 and FP8).
#   bash bench/results/experiments/s42_tables/call.sh        (from the repository root, on the device: $OUT set)
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/s42; mkdir -p $R
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU, commit $CUTLASS_GEMM_COMMIT"
if [[ "$GPU" == *H200* ]]; then  # a short test run, so that the tables fit the call
  timeout 100 python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py -q -p no:cacheprovider -x \
    -k "test_kernel_table or forced" > $R/tests.txt 2>&1
  echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
  MAX_ROUNDS=8 timeout 420 bash bench/regenerate.sh $R/results core fused odd > $R/regenerate.log 2>&1
  echo "regenerate rc $? ${SECONDS}s"
else
  timeout 200 python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py -q \
    -p no:cacheprovider > $R/tests.txt 2>&1
  echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
fi
tar czf $OUT/s42.tgz -C $OUT s42
