# Session 44: session 43's twin A/B (experiments/s43_twins), the rules re-derived with its verdicts, and on an H200
# the README's tables with those rules, all in one device call (machines were scarce: one start instead of two).
#   bash bench/results/experiments/s44_twins_tables/call.sh [NAME]   (repo root, on the device; carry
#   cutlass_gemm/{_C.abi3.so,_build_info.py}). NAME (default a) names the tables' run; TWINS=0 skips the A/B and
#   the derivation and runs with the rules the last TWINS=1 call derived on this machine (kept in /tmp: the device's
#   tree is copied anew each call), for a second run in the same lease (the issue #5 reproducibility pair).
#   CALL_S: the call's limit in s (default 600). TABLES=0: the GPU tests instead of the tables on an H200 too.
# The tables, host time and tests are s43_tables/call.sh's (on another GPU: every kernel forced against float64).
# Out: $OUT/s43t.tgz (the A/B), $OUT/NAME.tgz (rules, derivation log, tables, host time or tests).
set -u
: "${OUT:?run on the device (OUT unset)}"
for v in "TWINS=${TWINS:-1}" "TABLES=${TABLES:-1}"; do
  case "${v#*=}" in 0|1) ;; *) echo "call.sh: ${v%%=*} must be 0 or 1, got '${v#*=}'" >&2; exit 2;; esac
done
case "${CALL_S:-600}" in ''|*[!0-9]*) echo "call.sh: CALL_S must be whole seconds, got '$CALL_S'" >&2; exit 2;; esac
N=${1:-a}; R=$OUT/$N; mkdir -p $R
H=bench/results/experiments KEEP=/tmp/s44_default_rules.json
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
# 60 s of the call kept for the host time (~15 s with the imports) and the packing.
if [ "${TABLES:-1}" = 1 ]; then
  TESTS=0 TABLES=0 TABLES_S=$(( ${CALL_S:-600} - SECONDS - 60 )) bash $H/s43_tables/call.sh $N
else
  PROFILE=1 TABLES=0 bash $H/s43_tables/call.sh $N
fi
