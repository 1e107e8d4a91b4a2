# bf16 64x128 ping-pong `_plain_st7` against the shipped `_plain_st8` at a shape of every rule that names the tile
# (9 rules: 1024^3 with PDL, M = 33-221 decode / prefill rows), epilogue none and bias, 8 rounds; same subset build:
#   X=gpu_sNN/y bash bench/results/experiments/s42_stages/call_st7.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../s38_plain/enter_subset.sh" _sm90_stages_s42 "the s42 stages.patch subset build"
R=$OUT/st7; mkdir -p $R
PP=sm90_bf16_t64x128x64_c1x1_pingpong_plain
pairs() { for s in "$@"; do printf '%s ' "$s=${PP}_st8,${PP}_st7"; done; }
SH="96,7168,16384 128,8192,8192 200,8192,8192 100,8192,28672 112,14336,4096 96,24576,1536 112,32768,512 48,10240,8192
    160,10240,8192 48,4096,4096 1024,1024,4096 2048,1024,2048"
timeout 200 python -m bench.ab --op gemm --pair 1024,1024,1024=${PP}_st8+pdl,${PP}_st7+pdl $(pairs $SH) --rounds 8 \
  --json $R/none.json > $R/none.txt 2>&1; echo "none rc $? ${SECONDS}s"
timeout 120 python -m bench.ab --op gemm --epilogue bias --pair 1024,1024,1024=${PP}_st8+pdl,${PP}_st7+pdl \
  $(pairs 128,8192,8192 48,10240,8192 1024,1024,4096) --rounds 8 --json $R/bias.json > $R/bias.txt 2>&1; echo "bias rc $? ${SECONDS}s"
python $HERE/../s41_fast_twins_ab/summarize.py $R/*.json | tee $R/summary.txt
tar czf $OUT/st7.tgz -C $OUT st7
