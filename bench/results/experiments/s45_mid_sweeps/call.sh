# Session 45 (for the next H200 lease): bf16 sweep points between the swept shapes, where the shipped rules' ranges
# reach shapes no sweep measured (session 45, ../s45_coop128x64/README.md: 2048x1024x2048 fused ran the 128x256 c2x1
# coop at 28.1 us, 0.52x cuBLAS, where the 64x128 ping-pong takes 18.9; plain 1024x1024x4096 the 128x128 c1x1 coop at
# 23.9 us against `_plain_st7`'s 16.1). One device call on the checkout's full build (carry
# cutlass_gemm/{_C.abi3.so,_build_info.py}):
#   bash bench/results/experiments/s45_mid_sweeps/call.sh      (repo root, on the device)
# (1) bench.sweep of the bf16 family at these shapes, plain and bias + GELU + residual, two rounds each; (2) the rules
# re-derived with them (tools/derive_rules.py over every committed sweep and these); (3) python -m bench at the same
# shapes with the shipped rules and then the derived ones (ours and cuBLAS, same run, 3 rounds).
# Then here: copy $OUT/mid/sweep_*.json into bench/results/sweeps/, re-derive (it must give $OUT/mid/default_rules.json),
# and check the suites' launches did not move (python -m bench.ab --against OLD_RULES.json, or regenerate the tables).
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/mid; mkdir -p $R
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), commit $CUTLASS_GEMM_COMMIT"
S="1024,1024,2048 1024,1024,4096 2048,1024,2048 2048,1024,4096 1024,2048,2048 1024,2048,4096 1536,1536,1536 3072,3072,3072 1000,1000,1000"
sw() { local n=$1; shift; timeout 110 python -m bench.sweep --op gemm --dtype bf16 "$@" --shapes $S \
  --json $R/sweep_${n}.json > $R/sw_${n}.txt 2>&1; echo "$n rc $? ${SECONDS}s"; }
for i in 1 2; do
  sw bf16_mid_s45_$i --epilogue none
  sw bf16_fused_mid_s45_$i --epilogue bias_gelu_residual
done
cp cutlass_gemm/default_rules.json $R/shipped_rules.json
cp $R/sweep_*.json bench/results/sweeps/
python tools/derive_rules.py bench/results/sweeps/*.json > $R/derive.txt 2>&1; echo "derive rc $? ${SECONDS}s"
cp cutlass_gemm/default_rules.json $R/default_rules.json
for rules in shipped derived; do
  [ $rules = shipped ] && cp $R/shipped_rules.json cutlass_gemm/default_rules.json
  [ $rules = derived ] && cp $R/default_rules.json cutlass_gemm/default_rules.json
  timeout 100 python -m bench --shapes $S --op gemm --epilogue none,bias_gelu_residual --rounds 3 --no-compile \
    --out $R/bench_$rules > $R/bench_$rules.txt 2>&1; echo "bench ($rules rules) rc $? ${SECONDS}s"
done
find $R -name "*.png" -delete
tar czf $OUT/mid.tgz -C $OUT mid
grep -h "^|" $R/bench_*/custom_*.md | grep -v -- "---" | cut -c1-160
