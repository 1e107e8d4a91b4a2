# The 8-stage tiles at 7 stages (stages_b.patch, kernel_table._sm90_stages_s42b) against their shipped builds, at a
# shape of the rules naming each (bench.ab, 5 rounds, the order reversed every other round), one device call:
#   [FULL=1] X=gpu_sNN/z bash bench/results/experiments/s42_stages/call_b.sh
# FULL=1 first runs the GPU tests of the full build in the checkout (prologue.sh).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/prologue.sh" s42b _sm90_stages_s42b "the s42 stages_b.patch subset build" \
  "(test_every_fp8_kernel_forced or test_every_kernel_forced) and (pingpong or coop)"
# kernel, then shapes (M,N,K or M,N,K+pdl for a PDL rule) -> "shape=kernel,kernel_st7" pairs
pairs() { local k=$1; shift; for s in "$@"; do local p=""; [[ $s == *+pdl ]] && p=+pdl; printf '%s ' "${s%+pdl}=$k$p,${k}_st7$p"; done; }
BP=sm90_bf16_t64x128x64_c1x1_pingpong BC=sm90_bf16_t128x80x64_c1x2_coop
FF=sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong FA=sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong
ab() { local n=$1; shift; timeout 170 python -m bench.ab "$@" --rounds 5 --json $R/ab_$n.json > $R/ab_$n.txt 2>&1
  echo "$n rc $? ${SECONDS}s"; }
ab bf16_fused --op gemm --epilogue bias_gelu_residual --pair $(pairs $BP 1024,1024,1024+pdl 200,8192,8192 100,8192,28672 \
  160,10240,8192 48,8192,8192 100,4096,4096 128,57344,8192) $(pairs $BC 100,10240,8192 200,4096,4096)
ab bf16 --op gemm --pair $(pairs $BP 200,10240,8192) $(pairs $BC 112,10240,8192+pdl)
ab acc --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair $(pairs $FA 1024,1024,1024+pdl 200,4096,7168 \
  100,7168,16384 100,8192,8192 100,8192,28672 48,57344,8192 100,4096,4096 1024,4096,4096)
ab acc_fused --op scaled_mm --scale row --accumulate accurate --epilogue bias_gelu_residual --pair $(pairs $FA \
  1024,1024,1024+pdl 100,8192,8192 200,4096,7168)
ab fast --op scaled_mm --scale row --accumulate fast --epilogue bias --pair $(pairs $FF 1024,1024,1024+pdl 200,4096,7168 \
  100,6144,4096 100,8192,8192 100,8192,28672 200,10240,8192 100,14336,4096 240,28672,8192 48,57344,8192+pdl 48,4096,4096 300,4096,4096)
python $HERE/../s41_fast_twins_ab/summarize.py $R/ab_*.json > $R/summary.txt 2>&1
tar czf $OUT/s42b.tgz -C $OUT s42b
cat $R/summary.txt
