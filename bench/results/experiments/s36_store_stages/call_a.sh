# Store-stage candidates, one device call (~500 s), from the repository root:
#   X=gpu_sNN/x bash bench/results/experiments/s36_store_stages/call_a.sh
# X holds the subset build's cutlass_gemm/ (with _C.abi3.so, _build_info.py), bench/ and tests/ (README: how).
# Results under $OUT/r (tarred to $OUT/r.tgz): forced float64 tests, two sweep rounds per family of a K scan
# at fixed (M, N), each fitted by bench.kfit, and the candidate / twin ratios.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "${X:?set X to the copy of the subset build}"
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(cat ../.commit 2>/dev/null || echo unknown)}
R=$OUT/r; mkdir -p $R
# Fail fast (seconds, not the call) when the carried build is not the patched subset build.
python -c "
from cutlass_gemm import configs, kernel_table as kt
want = {k.name for k in kt._sm90_store_stages()}
missing = want - set(configs.compiled_kernels())
assert not missing, sorted(missing)" \
  || { echo "X=$X: expected the subset build of candidates.patch (every kernel of _sm90_store_stages compiled); see README"; exit 2; }
CANDS="sd4 or sd5 or sd8 or blockwise_promoted_t128x128x128_c2x1_coop or blockwise_promoted_t128x128x128_c1x2_coop or blockwise_promoted_t128x128x128_c2x2_coop"
timeout 200 python -m pytest tests/test_gpu_fp8.py tests/test_gpu_gemm.py -q -p no:cacheprovider -s \
  -k "(test_every_fp8_kernel_forced or test_every_kernel_forced) and ($CANDS)" > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
shapes() { local s=""; for m in $1; do for n in $2; do for k in $3; do s="$s $m,$n,$k"; done; done; done; echo $s; }
SQ=$(shapes "2048 4096" 8192 "1024 2048 4096 8192")
FP=$(shapes "2048 4096" 8192 "1024 2048 4096 8192 16384")
BW="$(shapes 4096 "7168 24576" "512 1536 4096 7168 16384") $(shapes 2048 7168 "512 2048 7168")"
sw() { local n=$1; shift; for i in 1 2; do
  timeout 120 python -m bench.sweep "$@" --json $R/kscan_${n}_s36_$i.json > $R/sw_${n}_$i.txt 2>&1
  echo "$n round $i rc $? ${SECONDS}s"; done; }
sw bf16 --op gemm --shapes $SQ
sw bf16_fused --op gemm --epilogue bias_gelu_residual --shapes $SQ
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate --shapes $FP
sw row_fast --op scaled_mm --scale row --accumulate fast --shapes $FP
sw row_acc_fused --op scaled_mm --scale row --accumulate accurate --epilogue bias_gelu_residual --shapes $SQ
sw blockwise --op scaled_mm --scale blockwise --shapes $BW
for f in $R/kscan_*_s36_1.json; do
  b=${f%_1.json}; python -m bench.kfit --pool --all ${b}_*.json 2>&1 | sed "s|^|$(basename $b) |" ; done > $R/kfit.txt
python $HERE/twins.py $R/kscan_*.json > $R/twins.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r
grep geomean $R/twins.txt
