# `_plain` twins at their twin's mainloop stage count (stages.patch), head to head (bench.ab, 5 rounds, the order
# reversed every other round), one device call (~200 s), from the repository root:
#   X=gpu_sNN/x bash bench/results/experiments/s41_stages/call.sh
# X holds the subset build of stages.patch (README: how). Results under $OUT/st (tarred to $OUT/st.tgz): forced
# float64 tests of the new kernels and their twins, then per shape each candidate against the row's first launch.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../s38_plain/enter_subset.sh" _sm90_stages_s41 "the stages.patch subset build"
R=$OUT/st; mkdir -p $R
timeout 150 python -m pytest tests/test_gpu_fp8.py tests/test_gpu_gemm.py -q -p no:cacheprovider \
  -k "(test_every_fp8_kernel_forced or test_every_kernel_forced) and (pingpong or coop)" > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep -q " passed" $R/tests.txt && ! grep -q "failed" $R/tests.txt || { tar czf $OUT/st.tgz -C $OUT st; exit 1; }
trio() { local s=$1 k=$2 twin=$3; shift 3; local l="$k$twin"; for c in "$@"; do l="$l,$k$c"; done; for x in $s; do printf '%s ' "$x=$l"; done; }
BF=sm90_bf16_t64x128x64_c1x1_pingpong
FA=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop
ab() { local n=$1; shift; timeout 170 python -m bench.ab "$@" --rounds 5 --json $R/ab_$n.json > $R/ab_$n.txt 2>&1
  echo "$n rc $? ${SECONDS}s"; }
ab bf16 --op gemm --pair $(trio "1024,1024,1024 512,8192,8192 1024,8192,8192 2048,8192,1024 1024,1024,4096" $BF _noact _plain _plain_st8)
ab fast --op scaled_mm --scale tensor --accumulate fast --pair $(trio "2048,2048,2048 4096,4096,4096 512,8192,8192 2048,8192,8192" $FA _plain _plain_st3)
python $HERE/../s41_fast_twins_ab/summarize.py $R/ab_*.json > $R/summary.txt 2>&1
tar czf $OUT/st.tgz -C $OUT st
cat $R/summary.txt
