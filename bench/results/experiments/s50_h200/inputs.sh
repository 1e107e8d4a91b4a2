# Session 50, call 1 on an H200: every input the H200 rules still lack, in one call (machines are scarce):
#   bash bench/results/experiments/s50_h200/inputs.sh   (repo root, on the device; carry cutlass_gemm/{_C.abi3.so,_build_info.py})
# 1. session 43's twin A/B (s43_twins/call.sh: each act kernel against its lean twin, 5 rounds) -> $OUT/s43t/;
# 2. session 48's blockwise sweep over deepseek_v3 (every compiled blockwise kernel, the 64x32 swapped tile included)
#    and its A/B of that tile against the shipped rules' launch at the 12 shapes of M <= 128 -> $OUT/s48/.
# Out: $OUT/s50_inputs.tgz (s43t/, s48/).
# Nothing derived here: the rules are derived and committed before the tables run (s50_h200/tables.sh).
# On any GPU but an H200 it stops at once: these are the H200 rules' inputs.
set -u
: "${OUT:?run on the device (OUT unset)}"
H=bench/results/experiments
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
[[ "$GPU" == *H200* ]] || { echo "not an H200: stopping"; exit 0; }
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
bash $H/s43_twins/call.sh
R=$OUT/s48; mkdir -p $R
timeout 150 python -m bench.sweep --op scaled_mm --scale blockwise --suite deepseek_v3 \
  --json $R/sweep_blockwise_ds_s48.json > $R/sweep.txt 2>&1
echo "sweep rc $? ${SECONDS}s"
python $H/s48_swap64/pairs.py > $R/pairs.txt
timeout $(( 575 - SECONDS )) python -m bench.ab --op scaled_mm --scale blockwise --pair $(cat $R/pairs.txt) --rounds 5 \
  --json $R/ab_s48_swap64.json > $R/ab.txt 2>&1
echo "ab rc $? ${SECONDS}s"
tail -16 $R/ab.txt
# At most 8 files come back from $OUT: one archive of both folders.
tar czf $OUT/s50_inputs.tgz -C $OUT s43t s48 && rm -rf $OUT/s43t $OUT/s48 $OUT/s43t.tgz
