# Sourced by the s42_stages call scripts (call.sh, call_b.sh, call_c.sh):
#   source "$HERE/prologue.sh" <results name> <kernel_table function> <what X holds> <pytest -k expression>
# Sets R=$OUT/<results name>; with FULL=1 first runs the GPU tests of the full build in the checkout (test_kernel_table,
# every kernel forced); then enters the subset build $X (../s38_plain/enter_subset.sh), runs its forced float64 tests
# selected by the expression, and exits 1 (results tarred) unless they passed.
R=$OUT/$1; mkdir -p $R
if [ "${FULL:-0}" = 1 ]; then
  PYTHONPATH=. timeout 200 python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py -q \
    -p no:cacheprovider > $R/full_tests.txt 2>&1
  echo "full build tests rc $? ${SECONDS}s: $(tail -1 $R/full_tests.txt)"
fi
source "$(dirname "${BASH_SOURCE[0]}")/../s38_plain/enter_subset.sh" "$2" "$3"
timeout 150 python -m pytest tests/test_gpu_fp8.py tests/test_gpu_gemm.py -q -p no:cacheprovider -k "$4" > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep -q " passed" $R/tests.txt && ! grep -q "failed" $R/tests.txt || { tar czf $OUT/$1.tgz -C $OUT $1; exit 1; }
