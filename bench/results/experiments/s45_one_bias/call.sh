# Session 45, one device call: (1) the GPU tests of the one-bias build (one_bias.patch, full 90a build copied to $Z:
# every compiled SM90 kernel forced against float64); (2) its act kernels against the shipped build's (the checkout's
# carried build), 3 rounds of alternating processes (time_cases.py, order reversed every other round; compare.py);
# (3) ../s45_coop128x64/call.sh on the subset build in $X, if the call has time left.
#   Z=gpu_s45/z X=gpu_s45/y bash bench/results/experiments/s45_one_bias/call.sh   (repo root, on the device; carry both
#   builds' cutlass_gemm/{_C.abi3.so,_build_info.py} and the checkout's; Z needs tools/ too, for test_kernel_table)
# ROUNDS (default 3), MATCH (only the time_cases.py labels containing it), TEST_FILES (default the three GPU test files).
set -u
: "${OUT:?run on the device (OUT unset)}"
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$PWD; R=$OUT/s45b; mkdir -p $R
[ -d "${Z:?set Z to the one-bias build}/cutlass_gemm" ] || { echo "Z=$Z: no build there"; exit 2; }
for v in "ROUNDS=${ROUNDS:-3}" "COOP_BY=${COOP_BY:-300}"; do
  case "${v#*=}" in ''|*[!0-9]*|0) echo "call.sh: ${v%%=*} must be a whole number above 0, got '${v#*=}'" >&2; exit 2;; esac
done
echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
(cd $Z && PYTHONPATH=. timeout 170 python -m pytest ${TEST_FILES:-tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py} \
  -q -p no:cacheprovider > $R/tests.txt 2>&1)
echo "one-bias build tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
for i in $(seq ${ROUNDS:-3}); do
  order="old new"; [ $((i % 2)) = 0 ] && order="new old"
  for b in $order; do
    d=$ROOT; [ $b = new ] && d=$ROOT/$Z
    (cd $d && PYTHONPATH=. timeout 90 python $HERE/time_cases.py --match "${MATCH:-}" --out $R/t_${b}_$i.json) >> $R/time.log 2>&1
    echo "$b round $i rc $? ${SECONDS}s"
  done
done
python $HERE/compare.py $R > $R/summary.txt 2>&1
tar czf $OUT/s45b.tgz -C $OUT s45b
cat $R/summary.txt
if [ -n "${X:-}" ] && [ $SECONDS -lt ${COOP_BY:-300} ]; then bash $HERE/../s45_coop128x64/call.sh; fi
