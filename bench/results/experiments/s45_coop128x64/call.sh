# Session 45: the bf16 128x64 cooperative tile (cuBLAS's 1024^3 tile and c1x2 cluster, as a coop kernel: both consumer
# warpgroups share a one-tile-per-CTA grid's exposed epilogue) against the shipped 64x128 ping-pong, one device call:
#   X=gpu_s45/y bash bench/results/experiments/s45_coop128x64/call.sh     (repo root, on the device; README.md: the build)
# (1) the subset build's forced float64 tests of every compiled 16-bit kernel (exits unless they pass); (2) bench.ab,
# 5 rounds, the order reversed every other round: fused (bias + GELU(tanh) + residual) and plain at the shapes whose
# shipped rules name the 64x128 ping-pong; (3) python -m bench (ours and cuBLAS, same run) with the shipped rules and
# then with candidate.json routing these shapes to the candidates, for the bar's ratio.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../s42_stages/prologue.sh" s45 _sm90_coop128x64_s45 "the s45 coop128x64.patch subset build" \
  "test_every_kernel_forced"
P=sm90_bf16_t64x128x64_c1x1_pingpong C2=sm90_bf16_t128x64x64_c1x2_coop C1=sm90_bf16_t128x64x64_c1x1_coop
# shapes (M,N,K or M,N,K+pdl for a PDL rule) -> "shape=a,b,..." with the given kernels
row() { local s=$1 p=""; shift; [[ $s == *+pdl ]] && p=+pdl; local out="${s%+pdl}="; for k in "$@"; do out+="$k$p,"; done
  printf '%s ' "${out%,}"; }
ab() { local n=$1; shift; timeout 150 python -m bench.ab "$@" --rounds 5 --json $R/ab_$n.json > $R/ab_$n.txt 2>&1
  echo "$n rc $? ${SECONDS}s"; }
ab fused --op gemm --epilogue bias_gelu_residual --pair $(row 1024,1024,1024+pdl ${P}_st7 $C2 $C1) \
  $(row 1024,1024,4096 ${P}_st7 $C2 $C1) $(row 2048,1024,2048 ${P}_st7 $C2 $C1) $(row 1000,1000,1000 ${P}_st7 $C2 $C1) \
  $(row 128,8192,8192 ${P}_st7 $C2 $C1) $(row 2048,2048,2048 sm90_bf16_t128x256x64_c2x1_coop $C2 $C1)
ab plain --op gemm --pair $(row 1024,1024,1024+pdl ${P}_plain_st7 ${C2}_plain) $(row 1024,1024,4096 ${P}_plain_st7 ${C2}_plain) \
  $(row 2048,1024,2048 ${P}_plain_st7 ${C2}_plain) $(row 128,8192,8192 ${P}_plain_st7 ${C2}_plain)
S="1024,1024,1024 1024,1024,4096 2048,1024,2048 128,8192,8192"
for rules in shipped candidate; do
  [ $rules = candidate ] && export CUTLASS_GEMM_CONFIG_FILE=$HERE/candidate.json
  timeout 120 python -m bench --shapes $S --op gemm --epilogue none,bias_gelu_residual --rounds 3 --no-compile \
    --out $R/bench_$rules > $R/bench_$rules.txt 2>&1
  echo "bench ($rules rules) rc $? ${SECONDS}s"
done
python $HERE/../s41_fast_twins_ab/summarize.py $R/ab_*.json > $R/summary.txt 2>&1
tar czf $OUT/s45.tgz -C $OUT s45
cat $R/summary.txt; grep -h "^|" $R/bench_*/custom_*.md | grep -v -- "---" | cut -c1-200
