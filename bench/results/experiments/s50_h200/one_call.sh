# Session 50, when device starts keep failing: the H200 work in a single call (s44_twins_tables/call.sh a: session
# 43's twin A/B, the rules re-derived with it on the device, the README's tables with those rules, the host time),
# cut at 585 s (CALL_S + 10) so that only the two archives come back (at most 8 files do):
#   bash bench/results/experiments/s50_h200/one_call.sh   (repo root, on the device; carry the build)
# Out: $OUT/s43t.tgz, $OUT/a.tgz. On any GPU but an H200 it stops at once.
set -u
: "${OUT:?run on the device (OUT unset)}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
[[ "$GPU" == *H200* ]] || { echo "not an H200: stopping"; exit 0; }
C=${CALL_S:-575}  # CALL_S: less where less device time is left
CALL_S=$C timeout $((C + 10)) bash bench/results/experiments/s44_twins_tables/call.sh a; echo "call.sh rc $? ${SECONDS}s"
[ -f $OUT/a.tgz ] || tar czf $OUT/a.tgz -C $OUT a
rm -rf $OUT/s43t $OUT/a
