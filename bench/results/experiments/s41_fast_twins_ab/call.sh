# The three fast FP8 `_plain` twins (one bias node) against their `_noact` builds, head to head (bench.ab: same
# inputs, 5 rounds, the order reversed every other round), at the shapes where session 41's H100 K scans and tables
# left doubt: N = 57344 and the 137-GFLOP shapes for the ping-pongs, the one-wave square shapes for the 128x256 coop.
#   X=gpu_sNN/x bash bench/results/experiments/s41_fast_twins_ab/call.sh      (~200 s)
# X holds the subset build of ../s40_plain_twins/plain_twins.patch (both builds of each tile). Results: $OUT/ab.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../s38_plain/enter_subset.sh" _sm90_plain_twins_s40 "the plain_twins subset build"
R=$OUT/ab; mkdir -p $R
F=sm90_e4m3_scaled_fast_t128x128x128
C=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop
pair() { echo "$1=$2_noact,$2_plain"; }
PAIRS="$(pair 8192,57344,8192 ${F}_c1x2_pingpong) $(pair 2048,57344,8192 ${F}_c1x2_pingpong)
 $(pair 4096,8192,4096 ${F}_c1x2_pingpong) $(pair 2048,8192,4096 ${F}_c1x2_pingpong) $(pair 2048,8192,8192 ${F}_c1x2_pingpong)
 $(pair 4096,8192,4096 ${F}_c2x1_pingpong) $(pair 8192,8192,8192 ${F}_c2x1_pingpong) $(pair 1024,1024,1024 ${F}_c2x1_pingpong)
 $(pair 2048,2048,2048 $C) $(pair 4096,4096,4096 $C) $(pair 512,8192,8192 $C) $(pair 512,57344,8192 $C) $(pair 8192,8192,28672 $C)"
for fam in "row bias" "tensor none"; do set -- $fam
  timeout 150 python -m bench.ab --op scaled_mm --scale $1 --accumulate fast --epilogue $2 --pair $PAIRS --rounds 5 \
    --json $R/ab_$1_fast_$2.json > $R/ab_$1_fast_$2.txt 2>&1
  echo "$1 fast $2: rc $? ${SECONDS}s"; done
python $HERE/summarize.py $R/ab_*.json | tee $R/summary.txt
