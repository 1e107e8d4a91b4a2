# For an H100 lease (not run in session 46: its device time was spent): the other H100 rows below 0.95x in
# bench/results/h100_s46 that a wider or narrower tile of the same family may take. Each pair starts with the launch
# the H200 rules make (check with configs.explain on the H100 first: an overlay may already cover it).
#   bash bench/results/experiments/s46_h100_fp8_big/ab2.sh      (repo root, on an H100; carry the build)
# Then here: copy $OUT/ab100b/ab_h100_*.json into bench/results/ab_gpu/ and run
# python tools/derive_rules.py bench/results/sweeps/*.json (the overlay takes winners > 1.03x the rules' launch).
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/ab100b; mkdir -p $R
export PYTHONPATH=.
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
B=sm90_bf16_ P=sm90_e4m3_scaled_promoted_
ab() { local name=$1 t=$2; shift 2
  timeout $t python -m bench.ab --rounds 5 --json $R/ab_h100_$name.json "$@" > $R/ab_$name.txt 2>&1
  echo "$name rc $? ${SECONDS}s"; tar czf $OUT/ab100b.tgz -C $OUT ab100b; }
ab bf16_fused_512 120 --op gemm --dtype bf16 --epilogue bias_gelu_residual --pair \
  512,10240,8192=${B}t128x160x64_c2x1_coop,${B}t128x256x64_c2x1_coop,${B}t128x128x64_c1x2_pingpong,${B}t64x128x64_c1x1_pingpong_st7 \
  512,8192,8192=${B}t128x256x64_c2x1_coop,${B}t128x160x64_c2x1_coop,${B}t128x128x64_c1x2_pingpong,${B}t64x128x64_c1x1_pingpong_st7
ab promoted_512 120 --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair \
  512,8192,8192=${P}t128x128x128_c2x1_coop,${P}t128x192x128_c1x2_coop,${P}t128x112x128_c1x2_coop,${P}t64x160x128_c2x1_pingpong \
  512,57344,8192=${P}t128x128x128_c1x2_coop,${P}t128x192x128_c1x2_coop,${P}t128x112x128_c1x2_coop
tail -n 4 $R/ab_*.txt | cut -c1-260
