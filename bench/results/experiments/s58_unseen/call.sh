# Session 58: how the shipped rules do at shapes no sweep measured (model (N, K) the suites lack, GQA's narrow N, the
# mid shapes of ../s45_coop128x64/README.md). Every kernel of the family forced at each shape (bench.sweep, one round,
# the torch competitor in the same run); tools here compare the rules' pick with the best kernel and with cuBLAS.
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s58_unseen/call.sh      (repo root, on the device)
# Out: $OUT/sweep_*.json, $OUT/sw_*.txt.
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit whose rules and code the build runs}"
export PYTHONPATH=.
echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), commit $CUTLASS_GEMM_COMMIT"
S=""
for nk in 1024,4096 6144,4096 4096,4096 4096,14336 14336,4096 1024,2048; do
  for m in 512 2048 4096; do S="$S $m,$nk"; done
done
S="$S 1024,1024,4096 1024,1024,2048"
sw() { local n=$1 t=$2; shift 2; timeout $t python -m bench.sweep "$@" --shapes $S --json $OUT/sweep_${n}.json \
  > $OUT/sw_${n}.txt 2>&1; echo "$n rc $? ${SECONDS}s"; }
sw bf16_unseen_s58 ${T1:-190} --op gemm --dtype bf16 --epilogue none
sw bf16_fused_unseen_s58 ${T2:-190} --op gemm --dtype bf16 --epilogue bias_gelu_residual
sw row_fast_unseen_s58 ${T3:-170} --op scaled_mm --scale row --accumulate fast --epilogue bias
