# Session 50, calls 2 and 3: the README's H200 tables with the rules derived from inputs.sh's results and committed
# first, so the results name the commit that holds their rules:
#   CUTLASS_GEMM_COMMIT=<that commit> bash bench/results/experiments/s50_h200/tables.sh NAME [MODE]   (repo root, on the device)
# MODE tables (default): s43_tables/call.sh NAME on an H200: the short GPU tests, bench/regenerate.sh core fused odd
#   (MAX_ROUNDS=8), the host time. MODE again: the same with TESTS=0 (the issue #5 reproducibility run), then with the
#   time left every compiled kernel forced against float64 (tests of the kernel table, bf16 and FP8).
# On any GPU but an H200 it stops at once. Out: $OUT/NAME.tgz (and $OUT/tests.tgz in MODE again).
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit whose rules and code the build runs}"
N=${1:?name the run}; MODE=${2:-tables}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
[[ "$GPU" == *H200* ]] || { echo "not an H200: stopping"; exit 0; }
H=bench/results/experiments
case "$MODE" in
  tables) bash $H/s43_tables/call.sh $N ;;
  again) TESTS=0 TABLES_S=${TABLES_S:-400} bash $H/s43_tables/call.sh $N
         export PYTHONPATH=.; mkdir -p $OUT/tests
         t=$(( 585 - SECONDS )); [ $t -gt 30 ] || { echo "no time left for the tests"; t=0; }
         [ $t -gt 0 ] && { timeout $t python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py \
           -q -p no:cacheprovider -rfE > $OUT/tests/tests.txt 2>&1; echo "tests rc $? ${SECONDS}s: $(tail -1 $OUT/tests/tests.txt)"
           grep -i "worst" $OUT/tests/tests.txt | head -12; tar czf $OUT/tests.tgz -C $OUT tests; rm -rf $OUT/tests; } ;;
  *) echo "tables.sh: MODE is tables or again, got '$MODE'" >&2; exit 2 ;;
esac
rm -rf $OUT/$N  # at most 8 files come back: the archive holds it all
