# The FP8 / bf16 `_plain` twins (candidates.patch), one device call (~350 s), from the repository root:
#   X=gpu_sNN/x bash bench/results/experiments/s38_plain/call_b.sh
# X holds the subset build of candidates.patch (README: how): its cutlass_gemm/ (with _C.abi3.so, _build_info.py),
# bench/ and tests/. Results under $OUT/r (tarred to $OUT/r.tgz): forced float64 tests of the candidates and their
# `_noact` twins, two sweep rounds per family of a K scan at fixed (M, N) (the s36 scan's plain families), each
# fitted by bench.kfit, and each candidate against its twin in the same rows (s36's twins.py).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
S36=$HERE/../s36_store_stages
cd "${X:?set X to the copy of the subset build}"
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(cat ../.commit 2>/dev/null || echo unknown)}
R=$OUT/r; mkdir -p $R
python $HERE/require_twins.py _sm90_plain_twins \
  || { echo "X=$X: expected the subset build of candidates.patch (the _plain twins and their _noact kernels); see README"; exit 2; }
timeout 200 python -m pytest tests/test_gpu_fp8.py tests/test_gpu_gemm.py -q -p no:cacheprovider \
  -k "(test_every_fp8_kernel_forced or test_every_kernel_forced) and (coop_plain or coop_noact)" > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
shapes() { local s=""; for m in $1; do for n in $2; do for k in $3; do s="$s $m,$n,$k"; done; done; done; echo $s; }
SQ=$(shapes "2048 4096" 8192 "1024 2048 4096 8192")
FP=$(shapes "2048 4096" 8192 "1024 2048 4096 8192 16384")
sw() { local n=$1; shift; for i in 1 2; do
  timeout 120 python -m bench.sweep "$@" --json $R/kscan_${n}_s38_$i.json > $R/sw_${n}_$i.txt 2>&1
  echo "$n round $i rc $? ${SECONDS}s"; done; }
sw bf16 --op gemm --shapes $SQ 2048,2048,2048 4096,4096,4096
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate --shapes $FP 2048,2048,2048 4096,4096,4096
sw row_acc --op scaled_mm --scale row --accumulate accurate --epilogue bias --shapes $FP
sw row_fast --op scaled_mm --scale row --accumulate fast --shapes $FP
for f in $R/kscan_*_s38_1.json; do
  b=${f%_1.json}; python -m bench.kfit --pool --all ${b}_*.json 2>&1 | sed "s|^|$(basename $b) |" ; done > $R/kfit.txt
python $S36/twins.py $R/kscan_*.json > $R/twins.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r
grep geomean $R/twins.txt
