# The bf16 / fast FP8 `_plain` twins (one bias node, plain_twins.patch) against their `_noact` builds, one device call
# (~300 s), from the repository root:
#   X=gpu_sNN/x bash bench/results/experiments/s40_plain_twins/call.sh
# X holds the subset build of plain_twins.patch (README: how): its cutlass_gemm/ (with _C.abi3.so, _build_info.py),
# bench/ and tests/. Results under $OUT/r (tarred to $OUT/r.tgz): forced float64 tests of the twins, two sweep rounds
# per family (K scans at fixed M x N plus the square shapes) and each `_plain` kernel against its `_noact` twin in the
# same rows (s36's twins.py).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
S36=$HERE/../s36_store_stages
source "$HERE/../s38_plain/enter_subset.sh" _sm90_plain_twins_s40 \
  "the subset build of plain_twins.patch (the _plain twins and their _noact kernels)"
R=$OUT/r; mkdir -p $R
timeout 150 python -m pytest tests/test_gpu_fp8.py tests/test_gpu_gemm.py -q -p no:cacheprovider \
  -k "(test_every_fp8_kernel_forced or test_every_kernel_forced) and (_plain or _noact)" > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep -q " passed" $R/tests.txt && ! grep -q "failed" $R/tests.txt || { tar czf $OUT/r.tgz -C $OUT r; exit 1; }
shapes() { local s=""; for m in $1; do for n in $2; do for k in $3; do s="$s $m,$n,$k"; done; done; done; echo $s; }
KS=$(shapes "2048 4096" 8192 "1024 2048 4096 8192")
SQ="1024,1024,1024 2048,2048,2048 4096,4096,4096"
sw() { local n=$1; shift; for i in 1 2; do
  timeout 90 python -m bench.sweep "$@" --json $R/kscan_${n}_s40_$i.json > $R/sw_${n}_$i.txt 2>&1
  echo "$n round $i rc $? ${SECONDS}s"; done; }
sw bf16 --op gemm --shapes $KS $SQ
sw bf16_bias --op gemm --epilogue bias --shapes $KS $SQ
sw tensor_fast --op scaled_mm --scale tensor --accumulate fast --shapes $KS $SQ
sw row_fast_bias --op scaled_mm --scale row --accumulate fast --epilogue bias --shapes $KS $SQ
python $S36/twins.py $R/kscan_*.json > $R/twins.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r
grep geomean $R/twins.txt
