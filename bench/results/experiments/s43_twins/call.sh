# Session 43: the plain rules that name a kernel with the activation node where its lean twin (`_plain`, or `_noact`
# for bf16) is compiled: 33 rules, whose sweeps (single rounds, fixed order before session 42) put the act kernel 0-9%
# ahead of the twin at the shapes below (every sweep row of such a rule where the act kernel was ahead, at most its
# first and last M). A head-to-head A/B of each pair (bench.ab, 5 rounds, the order reversed every other round) into
# $OUT/s43t/ab_s43_twins_<family>.json (the pairs: pairs.py); tools/derive_rules.py reads them from bench/results/ab/. One device call on the full build:
#   bash bench/results/experiments/s43_twins/call.sh        (repository root, on the device: $OUT set)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/s43t; mkdir -p $R
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
ab() {  # $1 name, $2 seconds, $3 the family as default_rules.json names it, then bench.ab's arguments
  local name=$1 t=$2 fam=$3; shift 3
  timeout $t python -m bench.ab --rounds 5 --json $R/ab_s43_twins_$name.json "$@" \
    --pair $(python "$HERE/pairs.py" --pairs "$fam") > $R/ab_$name.txt 2>&1
  echo "$name rc $? ${SECONDS}s"; tar czf $OUT/s43t.tgz -C $OUT s43t  # after each step: a call cut short keeps what ran
}
ab bf16 30 "sm90 bf16" --op gemm --dtype bf16 --epilogue none
ab fast 60 "sm90 e4m3 scaled fast" --op scaled_mm --scale row --accumulate fast --epilogue bias
ab promoted 60 "sm90 e4m3 scaled promoted" --op scaled_mm --scale row --accumulate accurate --epilogue bias
ab blockwise 90 "sm90 e4m3 blockwise" --op scaled_mm --scale blockwise --accumulate accurate --epilogue none  # 56 s on an H100 (session 44: cut at 50)
tail -n 4 $R/ab_*.txt
