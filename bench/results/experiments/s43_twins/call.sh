# Session 43: the plain rules that name a kernel with the activation node where its lean twin (`_plain`, or `_noact`
# for bf16) is compiled: 33 rules, whose sweeps (single rounds, fixed order before session 42) put the act kernel 0-9%
# ahead of the twin at the shapes below (every sweep row of such a rule where the act kernel was ahead, at most its
# first and last M). A head-to-head A/B of each pair (bench.ab, 5 rounds, the order reversed every other round) into
# $OUT/s43t/ab_<family>.json; tools/derive_rules.py reads them from bench/results/ab/. One device call on the full build:
#   bash bench/results/experiments/s43_twins/call.sh        (repository root, on the device: $OUT set)
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/s43t; mkdir -p $R
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(python -c 'import cutlass_gemm._build_info as b; print(b.GIT_COMMIT)')}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
ab() {  # $1 family name, $2 seconds, then bench.ab's arguments
  local name=$1 t=$2; shift 2
  timeout $t python -m bench.ab --rounds 5 --json $R/ab_s43_twins_$name.json "$@" > $R/ab_$name.txt 2>&1
  echo "$name rc $? ${SECONDS}s"; tar czf $OUT/s43t.tgz -C $OUT s43t  # after each step: a call cut short keeps what ran
}
ab bf16 30 --op gemm --dtype bf16 --epilogue none --pair \
  512,8192,28672=sm90_bf16_t128x256x64_c2x1_coop,sm90_bf16_t128x256x64_c2x1_coop_noact \
  8192,8192,28672=sm90_bf16_t128x256x64_c2x1_coop,sm90_bf16_t128x256x64_c2x1_coop_noact \
  2048,10240,8192=sm90_bf16_t128x256x64_c2x1_coop,sm90_bf16_t128x256x64_c2x1_coop_noact
ab fast 60 --op scaled_mm --scale row --accumulate fast --epilogue bias --pair \
  256,7168,16384=sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong,sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong_plain \
  2048,8192,8192=sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong,sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong_plain \
  512,8192,28672=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop,sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop_plain \
  2048,8192,28672=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop,sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop_plain \
  2048,10240,8192=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop,sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop_plain \
  8192,10240,8192=sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong,sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong_plain \
  256,24576,1536=sm90_e4m3_scaled_fast_t128x128x128_c2x1_pingpong,sm90_e4m3_scaled_fast_t128x128x128_c2x1_pingpong_plain \
  80,57344,8192=sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong,sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong_plain \
  128,57344,8192=sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong,sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong_plain \
  512,57344,8192=sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop,sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop_plain
ab promoted 60 --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair \
  4096,4096,4096=sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop,sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop_plain \
  512,8192,8192=sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop,sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop_plain \
  256,8192,28672=sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain \
  512,8192,28672=sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain \
  256,14336,4096=sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain \
  80,28672,8192=sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop_plain \
  128,28672,8192=sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop_plain \
  512,57344,8192=sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop_plain \
  8192,57344,8192=sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop_plain \
  512,8192,8192=sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop,sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain
ab blockwise 50 --op scaled_mm --scale blockwise --accumulate accurate --epilogue none --pair \
  4096,2112,7168=sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop_plain \
  4096,4096,7168=sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop_plain \
  8192,8192,8192=sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop_plain \
  512,8192,28672=sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop_plain \
  8192,8192,28672=sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c2x1_coop_plain \
  512,57344,8192=sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop_plain \
  8192,57344,8192=sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop,sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop_plain
tail -n 4 $R/ab_*.txt
