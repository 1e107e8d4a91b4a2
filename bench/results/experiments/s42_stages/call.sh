# Fewer mainloop stages than the carveout (stages.patch, kernel_table._sm90_stages_s42), head to head against the
# shipped build of each tile (bench.ab, 5 rounds, the order reversed every other round), one device call, from the
# repository root:   X=gpu_sNN/y bash bench/results/experiments/s42_stages/call.sh
# FULL=1 first runs the GPU tests of the full build in the checkout (prologue.sh).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/prologue.sh" s42st _sm90_stages_s42 "the s42 stages.patch subset build" \
  "(test_every_fp8_kernel_forced or test_every_kernel_forced) and (pingpong or coop)"
# shape list, kernel prefix, twin suffix, candidate suffixes -> bench.ab --pair arguments
trio() { local s=$1 k=$2 twin=$3; shift 3; local l="$k$twin"; for c in "$@"; do l="$l,$k$c"; done; for x in $s; do printf '%s ' "$x=$l"; done; }
PP=sm90_bf16_t64x128x64_c1x1_pingpong_plain CO=sm90_bf16_t128x256x64_c2x1_coop_noact
FP=sm90_e4m3_scaled_fast_t128x128x128_c2x1_pingpong_plain AC=sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop_plain
ab() { local n=$1; shift; timeout 170 python -m bench.ab "$@" --rounds 5 --json $R/ab_$n.json > $R/ab_$n.txt 2>&1
  echo "$n rc $? ${SECONDS}s"; }
ab bf16_pp --op gemm --pair $(trio "1024,1024,1024 128,8192,8192 128,8192,28672 1024,1024,4096" $PP _st8 _st6 _st7)
ab bf16_coop --op gemm --pair $(trio "2048,2048,2048 4096,4096,4096 2048,8192,8192 512,57344,8192" $CO "" _st3)
ab fast --op scaled_mm --scale tensor --accumulate fast --pair $(trio "8192,8192,8192 4096,8192,4096 2048,8192,8192" $FP "" _st4 _st5)
ab accurate --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair $(trio "8192,8192,8192 4096,4096,4096 2048,8192,8192" $AC "" _st4 _st5)
python $HERE/../s41_fast_twins_ab/summarize.py $R/ab_*.json > $R/summary.txt 2>&1
tar czf $OUT/s42st.tgz -C $OUT s42st
cat $R/summary.txt
