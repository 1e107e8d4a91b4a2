# call.sh cut to fit ~300 s of device time (session 39: an H200 came late): two deepseek_v3 blockwise sweep rounds,
# derive, the A/B of the deepseek_v3 launches the new rules change (3 rounds), re-derive, scores, the deepseek_v3
# table (3 rounds). No tests (session 39 ran test_gpu_fp8 on an H100 with the same build: 334 passed).
#   CUTLASS_GEMM_COMMIT=<sha> bash bench/results/experiments/s38_plain/call_c.sh
set -u
cd "$(dirname "$0")/../../../.."
: "${OUT:?run on the device (OUT unset)}"
export CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:?name the commit of the carried build}
R=$OUT/r; mkdir -p $R/sweeps $R/ab $R/tables
FAM="--op scaled_mm --scale blockwise --accumulate accurate"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "expected an H200"; exit 3; }
for i in 1 2; do
  timeout 60 python -m bench.sweep $FAM --suite deepseek_v3 --json $R/sweeps/sweep_blockwise_s39_$i.json > $R/sw_ds_$i.txt 2>&1
  echo "deepseek_v3 sweep $i rc $? ${SECONDS}s"
done
SWEEPS="$(ls bench/results/sweeps/*blockwise*.json) $(ls $R/sweeps/*.json)"
cp cutlass_gemm/default_rules.json $R/rules_old.json
python tools/derive_rules.py $SWEEPS > $R/derive_1.txt 2>&1; echo "derive 1 rc $?"
cp cutlass_gemm/default_rules.json $R/rules_derived.json
timeout 100 python -m bench.ab $FAM --epilogue none --suite deepseek_v3 --against $R/rules_old.json --rounds 3 \
  --json $R/ab/s39_blockwise_none.json > $R/ab.txt 2>&1
echo "ab rc $? ${SECONDS}s: $(head -1 $R/ab.txt)"
if [ -f $R/ab/s39_blockwise_none.json ]; then
  cp $R/ab/s39_blockwise_none.json bench/results/ab/
  python tools/derive_rules.py $SWEEPS > $R/derive_2.txt 2>&1; echo "derive 2 rc $?"
  { echo "## old rules"; python -m bench.ab_score --rules $R/rules_old.json $R/ab/s39_blockwise_none.json
    echo "## derived from the sweeps"; python -m bench.ab_score --rules $R/rules_derived.json $R/ab/s39_blockwise_none.json
    echo "## re-derived with the A/B"; python -m bench.ab_score $R/ab/s39_blockwise_none.json; } > $R/ab_score.txt 2>&1
fi
cp cutlass_gemm/default_rules.json $R/rules_new.json
tar czf $OUT/r.tgz -C $OUT r
timeout 90 python -m bench --suite deepseek_v3 $FAM --epilogue none --no-compile --rounds 3 --max-rounds 3 --out $R/tables \
  > $R/table.txt 2>&1
echo "deepseek_v3 table rc $? ${SECONDS}s"
tar czf $OUT/r.tgz -C $OUT r
grep -h "geomean\|^## " $R/ab_score.txt 2>/dev/null | head -12
tail -22 $R/table.txt
