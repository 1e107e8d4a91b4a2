# Session 57: on an H200 the README's tables (s50_h200/tables.sh a, whatever the phase); on any other GPU the whole
# test suite at this commit's build, in two calls of one lease (the per-call limit):
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s57/call.sh suite   (repo root, on the device)
#     every test but the two AOTI cases (session 54: 377 s on an H100);
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s57/call.sh aoti    the two AOTI cases (session 54: 272 s;
#     session 57: over 400 s, the cpu case alone passed before the call's limit); aoti_cuda: the CUDA case alone.
# Out: $OUT/a.tgz (H200) or $OUT/tests_{suite,aoti}.txt.
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit whose rules and code the build runs}"
PHASE=${1:?suite, aoti or aoti_cuda}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=.
case "$PHASE" in
  suite) SEL="not aoti"; DUR=15 ;;
  aoti) SEL="aoti"; DUR=5 ;;
  aoti_cuda) SEL="aoti and cuda"; DUR=5 ;;
  *) echo "call.sh: the phase is suite, aoti or aoti_cuda, got '$PHASE'" >&2; exit 2 ;;
esac
timeout ${LIMIT:-570} python -m pytest tests -q -p no:cacheprovider -rfE -k "$SEL" --durations=$DUR \
  > $OUT/tests_$PHASE.txt 2>&1
echo "pytest rc $? ${SECONDS}s: $(tail -1 $OUT/tests_$PHASE.txt)"
grep -iE "worst|FAILED|ERROR" $OUT/tests_$PHASE.txt | head -20
