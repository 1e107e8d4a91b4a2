# The bf16 ping-pongs at fewer stages than the carveout (stages_c.patch, kernel_table._sm90_stages_s42c), against the
# shipped pick at the bf16 bar's worst shapes and the rules naming each tile (bench.ab, 5 rounds), one device call:
#   X=gpu_sNN/c bash bench/results/experiments/s42_stages/call_c.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/prologue.sh" s42c _sm90_stages_s42c "the s42 stages_c.patch subset build" \
  "test_every_kernel_forced and pingpong"
CO=sm90_bf16_t128x256x64_c2x1_coop_noact PP=sm90_bf16_t128x128x64_c1x2_pingpong W=sm90_bf16_t64x256x64_c2x1_pingpong_noact
each() { local l=$1; shift; for s in "$@"; do printf '%s ' "$s=$l"; done; }
timeout 150 python -m bench.ab --op gemm --rounds 5 --json $R/ab_pp.json --pair \
  $(each $CO,$PP,${PP}_st5,${PP}_st4 2048,2048,2048 4096,4096,4096 2048,8192,8192) \
  $(each $PP,${PP}_st5,${PP}_st4 300,8192,8192 3000,2048,2048 3000,10240,8192) > $R/ab_pp.txt 2>&1; echo "pp rc $? ${SECONDS}s"
timeout 100 python -m bench.ab --op gemm --rounds 5 --json $R/ab_w.json --pair \
  $(each $W,${W}_st4 200,8192,28672 100,14336,4096 100,28672,8192 100,57344,8192) > $R/ab_w.txt 2>&1; echo "w rc $? ${SECONDS}s"
python $HERE/../s41_fast_twins_ab/summarize.py $R/ab_*.json > $R/summary.txt 2>&1
tar czf $OUT/s42c.tgz -C $OUT s42c
cat $R/summary.txt
