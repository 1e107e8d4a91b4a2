# Session 42's second call (results_s42/ab10_*): more rounds at the shapes call.sh left in doubt, same subset build.
#   X=gpu_sNN/x bash bench/results/experiments/s41_stages/call_more.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../s38_plain/enter_subset.sh" _sm90_stages_s41 "the stages.patch subset build"
R=$OUT/r; mkdir -p $R
BF=sm90_bf16_t64x128x64_c1x1_pingpong FA=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop
pairs() { local a=$1 b=$2; shift 2; for s in "$@"; do printf '%s ' "$s=$a,$b"; done; }
python -m bench.ab --op gemm --pair $(pairs ${BF}_noact ${BF}_plain_st8 1024,1024,1024 1024,1024,2048 1024,2048,1024) \
  --rounds 10 --json $R/bf.json > $R/bf.txt 2>&1
python -m bench.ab --op scaled_mm --scale tensor --accumulate fast --pair $(pairs ${FA}_plain ${FA}_plain_st3 4096,4096,4096 \
  8192,8192,8192 4096,8192,4096 4096,4096,8192) --rounds 8 --json $R/fa.json > $R/fa.txt 2>&1
python -m bench.ab --op scaled_mm --scale row --accumulate fast --epilogue bias --pair $(pairs ${FA}_plain ${FA}_plain_st3 \
  4096,4096,4096 2048,2048,2048) --rounds 8 --json $R/fr.json > $R/fr.txt 2>&1
python $HERE/../s41_fast_twins_ab/summarize.py $R/*.json
