# Session 56: on an H200 the README's tables (s50_h200/tables.sh a, whatever the phase); on any other GPU, in two calls
# of one lease (the per-call limit):
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s56/call1.sh tests    (repo root, on the device)
#     every compiled kernel forced against float64 (the kernel table's, bf16 and FP8 GPU tests) and the host time;
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s56/call1.sh tables
#     the H100 tables of bench/results/h100/ again (session 52's command) at session 55's TMA L2 promotion default.
# Out: $OUT/a.tgz (H200), $OUT/h100_tests.tgz or $OUT/h100.tgz (the tables, tests.txt, regenerate.log).
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit whose rules and code the build runs}"
PHASE=${1:?tests or tables}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=.
case "$PHASE" in
  tests) R=$OUT/h100_tests; mkdir -p $R
         timeout 300 python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py \
           -q -p no:cacheprovider -rfE > $R/tests.txt 2>&1
         echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"; grep -i "worst" $R/tests.txt | head -12
         timeout 60 python bench/host_overhead.py --out $R/host_overhead.json > $R/host.txt 2>&1
         echo "host rc $? ${SECONDS}s"; cat $R/host.txt
         tar czf $OUT/h100_tests.tgz -C $OUT h100_tests; rm -rf $R ;;
  tables) TABLES=1 TABLES_S=${TABLES_S:-440} bash bench/results/experiments/s43_tables/call.sh h100
          rm -rf $OUT/h100 ;;  # at most 8 files come back: the archive holds it all
  *) echo "call1.sh: the phase is tests or tables, got '$PHASE'" >&2; exit 2 ;;
esac
