# Session 43: one device call on the full build in the checkout (carry cutlass_gemm/{_C.abi3.so,_build_info.py}).
#   [TESTS=0] [TABLES=1] [PROFILE=1] [NCU=1] bash bench/results/experiments/s43_tables/call.sh NAME   (repo root, on the device)
# On an H200: (TESTS=1, the default) the kernel table's tests and every 16-bit kernel forced; then the README's tables
# (bench/regenerate.sh core fused odd, MAX_ROUNDS=8) into $OUT/NAME/results and the host time (bench/host_overhead.py).
# Called twice in one lease (NAME a, then b with TESTS=0), the two runs are the issue #5 reproducibility pair.
# On any other GPU (or with PROFILE=1 on any): the GPU tests of the kernel table and of every kernel forced (bf16 and FP8), or with TABLES=1 the
# short test run and the same tables; then, with NCU=1 and time left in the call, bench/probes/ncu_fused_epilogue.py
# under ncu (where the bf16 64x128 ping-pong's bias + GELU + residual time goes at 1024^3), exported as CSV.
# TABLES_S: the tables' limit in s (default 450 on an H200, 420 with TABLES=1 elsewhere).
set -u
case "${TABLES_S:-450}" in ''|*[!0-9]*) echo "call.sh: TABLES_S must be whole seconds, got '$TABLES_S'" >&2; exit 2;; esac
: "${OUT:?run on the device (OUT unset)}"
N=${1:?name the run}; R=$OUT/$N; mkdir -p $R
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU, commit $CUTLASS_GEMM_COMMIT"
tests() {  # $1: short (so that the tables fit the call) or full
  local files="tests/test_kernel_table.py tests/test_gpu_gemm.py" k="test_kernel_table or forced" x=-x
  [ "$1" = full ] && { files="$files tests/test_gpu_fp8.py"; k=""; x=""; }
  timeout 200 python -m pytest $files -q -p no:cacheprovider $x ${k:+-k "$k"} > $R/tests.txt 2>&1
  echo "tests ($1) rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
}
tables() {
  MAX_ROUNDS=8 timeout $1 bash bench/regenerate.sh $R/results core fused odd > $R/regenerate.log 2>&1
  echo "regenerate rc $? ${SECONDS}s"
}
if [[ "$GPU" == *H200* ]] && [ "${PROFILE:-0}" = 0 ]; then
  [ "${TESTS:-1}" = 1 ] && tests short
  tables ${TABLES_S:-450}
  timeout 40 python bench/host_overhead.py --out $R/host_overhead.json > $R/host.txt 2>&1
  echo "host rc $? ${SECONDS}s"; cat $R/host.txt
else
  if [ "${TABLES:-0}" = 1 ]; then tests short; tables ${TABLES_S:-420}; else tests full; fi
  E=${NCU_END:-530}  # the second of the call by which ncu must have ended (the call limit less the export)
  if [ "${NCU:-0}" = 1 ] && [ $SECONDS -lt $((E - 90)) ]; then
    timeout $((E - SECONDS)) ncu --clock-control none --profile-from-start off --set full --import-source no -f \
      -o /tmp/fused python bench/probes/ncu_fused_epilogue.py > $R/ncu_run.txt 2>&1
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
