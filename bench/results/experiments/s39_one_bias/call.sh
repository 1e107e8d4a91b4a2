# One bias node in the `_plain` kernels (one_bias.patch) against the shipped two-node `_plain` epilogue, one device
# call (~300 s), from the repository root, with two subset builds of the `_plain` kernels (README: how): main's in XA
# (a), the patch's in XB (b):
#   XA=gpu_sNN/a XB=gpu_sNN/b bash bench/results/experiments/s39_one_bias/call.sh
# Results under $OUT/r (tarred to $OUT/r.tgz): the candidate's forced float64 tests (every `_plain` kernel, bias in
# the output dtype, in float32 and none, N off the tile), then sweeps of the same shapes with a and b in alternation
# (two rounds each) and compare.py's b / a per kernel.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../../.."
: "${OUT:?run on the device (OUT unset)}"
XA=$(cd "${XA:?set XA to the copy of the subset build of main}" && pwd)
XB=$(cd "${XB:?set XB to the copy of the subset build of the candidate}" && pwd)
R=$OUT/r; mkdir -p $R
in_copy() { local x=$1; shift; (cd $x && CUTLASS_GEMM_COMMIT=$(cat $x/.commit) PYTHONPATH=. "$@"); }
in_copy $XB timeout 120 python -m pytest tests/test_gpu_fp8.py -q -p no:cacheprovider -k "coop_plain" > $R/tests.txt 2>&1
echo "candidate tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep -q " passed" $R/tests.txt && ! grep -q "failed" $R/tests.txt || { tar czf $OUT/r.tgz -C $OUT r; exit 1; }
shapes() { local s=""; for m in $1; do for n in $2; do for k in $3; do s="$s $m,$n,$k"; done; done; done; echo $s; }
FP=$(shapes "2048 4096" 8192 "1024 2048 4096 8192")
sw() { local n=$1; shift; for i in 1 2; do
  in_copy $XA timeout 60 python -m bench.sweep "$@" --json $R/kscan_${n}_a_$i.json > $R/sw_${n}_a_$i.txt 2>&1
  in_copy $XB timeout 60 python -m bench.sweep "$@" --json $R/kscan_${n}_b_$i.json > $R/sw_${n}_b_$i.txt 2>&1
  echo "$n round $i ${SECONDS}s"; done; }
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate --shapes $FP 2048,2048,2048
sw row_acc --op scaled_mm --scale row --accumulate accurate --epilogue bias --shapes $FP
sw blockwise --op scaled_mm --scale blockwise --accumulate accurate --suite deepseek_v3
python $HERE/compare.py $R/kscan_*_a_*.json > $R/compare.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r
grep geomean $R/compare.txt
