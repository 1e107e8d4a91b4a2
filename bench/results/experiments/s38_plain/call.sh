# Blockwise `_plain` c2x1 / c1x2 coop into the rules: one device call (~300 s; QUICK=1 ~250 s), from the repository
# root, with a full build that has them carried (cutlass_gemm/_C.abi3.so, cutlass_gemm/_build_info.py):
#   CUTLASS_GEMM_COMMIT=<sha> [QUICK=1] bash bench/results/experiments/s38_plain/call.sh
# Results under $OUT/r (tarred to $OUT/r.tgz): forced float64 tests, two blockwise sweep rounds of deepseek_v3 and of
# square + llama3_70b with every compiled blockwise kernel, the re-derived rules, the A/B of every launch they change
# against the shipped rules, the rules re-derived with that A/B, both rules' A/B scores, and the deepseek_v3 table
# under the final rules. This copy's cutlass_gemm/default_rules.json is rewritten; the checkout's is not.
# QUICK=1 (for a lease with ~300 s left): no tests (session 39 ran test_gpu_fp8 on this table: results_s39), the
# deepseek_v3 sweeps only, its A/B in 3 rounds and its table in 3 rounds.
set -u
cd "$(dirname "$0")/../../../.."
: "${OUT:?run on the device (OUT unset)}"
export CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:?name the commit of the carried build}
QUICK=${QUICK:-0}
R=$OUT/r; mkdir -p $R/sweeps $R/ab $R/tables
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "expected an H200 (the rules' sweeps are)"; exit 3; }
# Fail fast when the carried build is not one with the blockwise _plain kernels.
python -c "
from cutlass_gemm import configs, kernel_table as kt
want = {k.name for k in kt._sm90_blockwise_plain()}
missing = want - set(configs.compiled_kernels())
assert not missing, sorted(missing)" \
  || { echo "expected a full build with kernel_table._sm90_blockwise_plain compiled (carry cutlass_gemm/_C.abi3.so)"; exit 2; }
if [ "$QUICK" = 0 ]; then
  timeout 200 python -m pytest tests/test_kernel_table.py tests/test_gpu_fp8.py -q -p no:cacheprovider > $R/tests.txt 2>&1
  echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
fi
FAM="--op scaled_mm --scale blockwise --accumulate accurate"
for i in 1 2; do
  timeout 120 python -m bench.sweep $FAM --suite deepseek_v3 --json $R/sweeps/sweep_blockwise_s38_$i.json > $R/sw_ds_$i.txt 2>&1
  echo "deepseek_v3 sweep $i rc $? ${SECONDS}s"
  [ "$QUICK" = 0 ] || continue
  timeout 150 python -m bench.sweep $FAM --json $R/sweeps/sweep_blockwise_sq_llama_s38_$i.json > $R/sw_sl_$i.txt 2>&1
  echo "square+llama3_70b sweep $i rc $? ${SECONDS}s"
done
SWEEPS="$(ls bench/results/sweeps/*blockwise*.json) $(ls $R/sweeps/*.json)"
cp cutlass_gemm/default_rules.json $R/rules_old.json
python tools/derive_rules.py $SWEEPS > $R/derive_1.txt 2>&1; echo "derive 1 rc $?"
cp cutlass_gemm/default_rules.json $R/rules_derived.json
# Every suite shape whose plain launch the derived rules change, head to head with the old rules' launch.
if [ "$QUICK" = 0 ]; then AB="--suite deepseek_v3,square,llama3_70b"; else AB="--suite deepseek_v3 --rounds 3"; fi
timeout 240 python -m bench.ab $FAM --epilogue none $AB --against $R/rules_old.json \
  --json $R/ab/s38_blockwise_none.json > $R/ab.txt 2>&1
echo "ab rc $? ${SECONDS}s: $(head -1 $R/ab.txt)"
if [ -f $R/ab/s38_blockwise_none.json ]; then
  cp $R/ab/s38_blockwise_none.json bench/results/ab/
  python tools/derive_rules.py $SWEEPS > $R/derive_2.txt 2>&1; echo "derive 2 (with the A/B) rc $?"
  { echo "## old rules"; python -m bench.ab_score --rules $R/rules_old.json $R/ab/s38_blockwise_none.json
    echo "## derived from the sweeps"; python -m bench.ab_score --rules $R/rules_derived.json $R/ab/s38_blockwise_none.json
    echo "## re-derived with the A/B"; python -m bench.ab_score $R/ab/s38_blockwise_none.json; } > $R/ab_score.txt 2>&1
fi
cp cutlass_gemm/default_rules.json $R/rules_new.json
python - $R/rules_old.json $R/rules_new.json > $R/rules_diff.txt <<'PY'
import json, sys
fam = lambda p: {(f["family"], f.get("epilogue", "any")): f["rules"] for f in json.load(open(p))["families"] if "blockwise" in f["family"]}
old, new = fam(sys.argv[1]), fam(sys.argv[2])
for key in sorted(set(old) | set(new)):
    print(f"## {key}: {len(old.get(key, []))} -> {len(new.get(key, []))} rules")
    for r in new.get(key, []):
        print(("  " if r in old.get(key, []) else "+ ") + json.dumps(r))
PY
tar czf $OUT/r.tgz -C $OUT r  # what the table below may not leave time for
if [ "$QUICK" = 0 ]; then TR="--rounds 3 --max-rounds 8"; else TR="--rounds 3 --max-rounds 3"; fi
timeout 200 python -m bench --suite deepseek_v3 $FAM --epilogue none --no-compile $TR --out $R/tables > $R/table.txt 2>&1
echo "deepseek_v3 table rc $? ${SECONDS}s"
tar czf $OUT/r.tgz -C $OUT r
grep -h "geomean\|^## \|rules\b" $R/ab_score.txt $R/rules_diff.txt 2>/dev/null | head -30
tail -25 $R/table.txt
