# Session 44: session 43's twin A/B (experiments/s43_twins), the rules re-derived with its verdicts, and on an H200
# the README's tables with those rules, all in one device call (machines were scarce: one start instead of two).
#   bash bench/results/experiments/s44_twins_tables/call.sh [NAME]   (repo root, on the device; carry
#   cutlass_gemm/{_C.abi3.so,_build_info.py}). NAME (default a) names the tables' run; TWINS=0 skips the A/B and
#   the derivation and runs with the rules the last TWINS=1 call derived on this machine (kept in /tmp: the device's
#   tree is copied anew each call), for a second run in the same lease (the issue #5 reproducibility pair).
#   CALL_S: the call's limit in s (default 600). TABLES=0: the GPU tests instead of the tables on an H200 too.
# Out: $OUT/s43t.tgz (the A/B), $OUT/NAME.tgz (rules, derivation log, tables, host time) or, on another GPU, the GPU
# tests of every kernel forced instead of the tables.
set -u
: "${OUT:?run on the device (OUT unset)}"
N=${1:-a}; R=$OUT/$N; mkdir -p $R
H=bench/results/experiments KEEP=/tmp/s44_default_rules.json
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU, commit $CUTLASS_GEMM_COMMIT"
pack() { tar czf $OUT/$N.tgz -C $OUT $N; }
if [ "${TWINS:-1}" = 1 ]; then
  bash $H/s43_twins/call.sh
  cp $OUT/s43t/ab_s43_twins_*.json bench/results/ab/
  python tools/derive_rules.py bench/results/sweeps/*.json > $R/derive.txt 2>&1
  echo "derive rc $? ${SECONDS}s: $(grep -c . $R/derive.txt) lines"
  cp cutlass_gemm/default_rules.json $KEEP
elif [ -f $KEEP ]; then
  cp $KEEP cutlass_gemm/default_rules.json; echo "rules of the last derivation here ($KEEP)"
fi
cp cutlass_gemm/default_rules.json $R/  # the rules the tables ran with
left=$((${CALL_S:-600} - SECONDS))
if [[ "$GPU" == *H200* ]] && [ "${TABLES:-1}" = 1 ]; then
  MAX_ROUNDS=8 timeout $((left - 60)) bash bench/regenerate.sh $R/results core fused odd > $R/regenerate.log 2>&1
  echo "regenerate rc $? ${SECONDS}s"  # 60 s kept for the host time (~15 s with the imports) and the packing
  timeout 40 python bench/host_overhead.py --out $R/host_overhead.json > $R/host.txt 2>&1
  echo "host rc $? ${SECONDS}s"; cat $R/host.txt
else
  timeout $((left - 15)) python -m pytest tests/test_kernel_table.py tests/test_gpu_gemm.py tests/test_gpu_fp8.py -q \
    -p no:cacheprovider > $R/tests.txt 2>&1
  echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
fi
pack
