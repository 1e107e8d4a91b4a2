# Session 46, call A (the rules' inputs at the one-bias build, fd13a03's csrc; carry cutlass_gemm/{_C.abi3.so,_build_info.py}):
#   bash bench/results/experiments/s46_rules_tables/rules.sh      (repo root, on the device)
# Any GPU: s45_one_bias/errors.py (per-kernel float64 error figures of the kernels the one-bias change touched).
# H200 only (the rules are the H200's): session 43's twin A/B (s43_twins/call.sh: the act kernels are now the one-bias
# ones) and the bf16 sweeps between swept shapes (s45_mid_sweeps' shapes, plain and bias + GELU + residual, two rounds).
# Out: $OUT/err/errors.txt, $OUT/s43t.tgz, $OUT/mid.tgz. Then here: copy $OUT/s43t/ab_s43_twins_*.json into
# bench/results/ab/ and $OUT/mid/sweep_*.json into bench/results/sweeps/, python tools/derive_rules.py
# bench/results/sweeps/*.json (it must give $OUT/mid/default_rules.json). In the same lease, next:
#   TWINS=0 bash bench/results/experiments/s44_twins_tables/call.sh a   (the tables with the rules derived here)
set -u
: "${OUT:?run on the device (OUT unset)}"
H=bench/results/experiments
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU, commit $CUTLASS_GEMM_COMMIT"
mkdir -p $OUT/err $OUT/mid
timeout 60 python $H/s45_one_bias/errors.py > $OUT/err/errors.txt 2>&1; echo "errors rc $? ${SECONDS}s: $(tail -1 $OUT/err/errors.txt)"
[[ "$GPU" == *H200* ]] || { echo "not an H200: the rules' inputs are the H200's; stopping"; exit 0; }
[ "${TWINS:-1}" = 1 ] && bash $H/s43_twins/call.sh  # TWINS=0: the mid sweeps only
S="1024,1024,2048 1024,1024,4096 2048,1024,2048 2048,1024,4096 1024,2048,2048 1024,2048,4096 1536,1536,1536 3072,3072,3072 1000,1000,1000"
sw() { local n=$1 t=$(( 540 - SECONDS < 110 ? 540 - SECONDS : 110 )); shift
  [ $t -ge 40 ] || { echo "$n skipped: ${SECONDS}s"; return; }
  timeout $t python -m bench.sweep --op gemm --dtype bf16 "$@" --shapes $S \
  --json $OUT/mid/sweep_${n}.json > $OUT/mid/sw_${n}.txt 2>&1; echo "$n rc $? ${SECONDS}s"
  tar czf $OUT/mid.tgz -C $OUT mid; }  # after each sweep: a call cut short keeps what ran
for i in 1 2; do
  sw bf16_mid_s46_$i --epilogue none
  sw bf16_fused_mid_s46_$i --epilogue bias_gelu_residual
done
# Time left (the call's limit is 600 s): the rules re-derived with the A/B verdicts and these sweeps, and the mid
# shapes timed with the shipped and the derived rules (ours and cuBLAS, same run), the pick check of the mid shapes.
cp $OUT/s43t/ab_s43_twins_*.json bench/results/ab/ 2>/dev/null; cp $OUT/mid/sweep_*.json bench/results/sweeps/
cp cutlass_gemm/default_rules.json $OUT/mid/shipped_rules.json
python tools/derive_rules.py bench/results/sweeps/*.json > $OUT/mid/derive.txt 2>&1; echo "derive rc $? ${SECONDS}s"
cp cutlass_gemm/default_rules.json $OUT/mid/default_rules.json
for rules in shipped derived; do
  [ $SECONDS -lt 430 ] || { echo "bench ($rules rules) skipped: ${SECONDS}s"; continue; }
  cp $OUT/mid/${rules/derived/default}_rules.json cutlass_gemm/default_rules.json
  timeout 75 python -m bench --shapes $S --op gemm --epilogue none,bias_gelu_residual --rounds 3 --no-compile \
    --out $OUT/mid/bench_$rules > $OUT/mid/bench_$rules.txt 2>&1; echo "bench ($rules rules) rc $? ${SECONDS}s"
done
find $OUT/mid -name "*.png" -delete; tar czf $OUT/mid.tgz -C $OUT mid
cp $OUT/mid/default_rules.json /tmp/s44_default_rules.json  # TWINS=0 s44_twins_tables/call.sh in this lease runs with them
diff <(python -m json.tool $OUT/mid/shipped_rules.json) <(python -m json.tool $OUT/mid/default_rules.json) | grep -c "^[<>]"
