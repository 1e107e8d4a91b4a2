# Session 43: one device call on the full build in the checkout (carry cutlass_gemm/{_C.abi3.so,_build_info.py}).
#   bash bench/results/experiments/s43_tables/call.sh NAME     (repository root, on the device: $OUT set)
# On an H200: (TESTS=1, the default) the kernel table's tests and every bf16 kernel forced; then the README's tables
# (bench/regenerate.sh core fused odd, MAX_ROUNDS=8) into $OUT/NAME/results and the host time (bench/host_overhead.py).
# Called twice in one lease (NAME a, then b with TESTS=0), the two runs are the issue #5 reproducibility pair.
# On any other GPU: the GPU tests of the kernel table and of every kernel forced (bf16 and FP8), then, with NCU=1,
# bench/probes/ncu_fused_epilogue.py under ncu (where the bf16 64x128 ping-pong's bias + GELU + residual time goes).
set -u
: "${OUT:?run on the device (OUT unset)}"
N=${1:?name the run}; R=$OUT/$N; mkdir -p $R
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU, commit $CUTLASS_GEMM_COMMIT"
if [[ "$GPU" == *H200* ]]; then
  if [ "${TESTS:-1}" = 1 ]; then  # a short test run, so that the tables fit the call
    timeout 100 python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py -q -p no:cacheprovider -x \
      -k "test_kernel_table or forced" > $R/tests.txt 2>&1
    echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
  fi
  MAX_ROUNDS=8 timeout 450 bash bench/regenerate.sh $R/results core fused odd > $R/regenerate.log 2>&1
  echo "regenerate rc $? ${SECONDS}s"
  timeout 40 python bench/host_overhead.py --out $R/host_overhead.json > $R/host.txt 2>&1
  echo "host rc $? ${SECONDS}s"; cat $R/host.txt
else
  timeout 200 python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py -q \
    -p no:cacheprovider > $R/tests.txt 2>&1
  echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
  if [ "${NCU:-0}" = 1 ]; then
    timeout 240 ncu --clock-control none --profile-from-start off --set full --import-source no -f -o /tmp/fused \
      python bench/probes/ncu_fused_epilogue.py > $R/ncu_run.txt 2>&1
    echo "ncu rc $? ${SECONDS}s"
    ncu -i /tmp/fused.ncu-rep --page details --csv > $R/details.csv 2>$R/details.err
    for i in 0 1 2; do  # per-instruction warp stall samples of our three launches (SASS)
      ncu -i /tmp/fused.ncu-rep --page source --csv --print-source sass --launch-skip $i --launch-count 1 \
        > $R/source_$i.csv 2>$R/source_$i.err
    done
    echo "ncu export ${SECONDS}s"
  fi
fi
tar czf $OUT/$N.tgz -C $OUT $N
