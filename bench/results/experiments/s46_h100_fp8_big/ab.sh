# Session 46, H100: A/B (bench.ab, 5 rounds, order reversed every other round) of the H200 rules' 128x128 launches
# against the wider tiles of the same family at the suite shapes where the H100 tables (bench/results/h100_s46) put us
# below 0.95x the competitor; the sweep of probe.sh had the 128x256 fast coop 1.24x faster than the H200's pick at
# 8192x57344x8192 on the H100 (5898 vs 7331 us; on the H200 the two are within 2%).
#   bash bench/results/experiments/s46_h100_fp8_big/ab.sh      (repo root, on the device; carry the build)
# STAGE=2 (not run in session 46: its device time was spent): the H100's other rows below 0.95x that a wider or
# narrower tile may take, each pair led by the launch the H200 rules make (configs.explain, no overlay) -> $OUT/ab100b.
# STAGE=3 (session 47): the promoted and bf16 fused rows of the power-capped sizes -> $OUT/ab100c.
# Then here: copy the JSONs into bench/results/ab_gpu/ and python tools/derive_rules.py bench/results/sweeps/*.json.
set -u
: "${OUT:?run on the device (OUT unset)}"
case "${STAGE:-1}" in 1) R=$OUT/ab100;; 2) R=$OUT/ab100b;; 3) R=$OUT/ab100c;;
  *) echo "ab.sh: STAGE must be 1, 2 or 3, got '$STAGE'" >&2; exit 2;; esac
mkdir -p $R
export PYTHONPATH=.
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
F=sm90_e4m3_scaled_fast_ P=sm90_e4m3_scaled_promoted_ B=sm90_bf16_
ab() { local name=$1 t=$2; shift 2
  timeout $t python -m bench.ab --rounds 5 --json $R/ab_h100_$name.json "$@" > $R/ab_$name.txt 2>&1
  echo "$name rc $? ${SECONDS}s"; tar czf $R.tgz -C $OUT $(basename $R); }
if [ "${STAGE:-1}" = 3 ]; then
  # Session 47: the H100 is power-capped at these sizes (experiments/s47_h100_ncu), so wider tiles may win where the
  # H100 tables (bench/results/h100) are below 0.95x: each rules' launch against its family's widest tiles.
  ab promoted_big 240 --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair \
    4096,4096,4096=${P}t128x128x128_c2x1_coop,${P}t128x192x128_c1x2_coop,${P}t128x160x128_c2x1_coop \
    8192,8192,8192=${P}t128x128x128_c2x1_coop_plain,${P}t128x192x128_c1x2_coop,${P}t128x160x128_c2x1_coop \
    8192,10240,8192=${P}t128x128x128_c1x2_coop_plain,${P}t128x192x128_c1x2_coop,${P}t128x160x128_c2x1_coop \
    8192,8192,28672=${P}t128x128x128_c1x1_coop_plain,${P}t128x192x128_c1x2_coop,${P}t128x160x128_c2x1_coop
  ab bf16_fused_sq 120 --op gemm --dtype bf16 --epilogue bias_gelu_residual --pair \
    2048,2048,2048=${B}t128x256x64_c2x1_coop,${B}t256x128x64_c2x1_coop,${B}t128x128x64_c1x2_pingpong \
    4096,4096,4096=${B}t128x256x64_c2x1_coop,${B}t256x128x64_c2x1_coop,${B}t128x128x64_c1x2_pingpong \
    8192,8192,8192=${B}t128x256x64_c2x1_coop,${B}t256x128x64_c2x1_coop
  tail -n 5 $R/ab_*.txt | cut -c1-300; exit 0
fi
if [ "${STAGE:-1}" = 2 ]; then
  ab bf16_fused_512 120 --op gemm --dtype bf16 --epilogue bias_gelu_residual --pair \
    512,10240,8192=${B}t128x160x64_c2x1_coop,${B}t128x256x64_c2x1_coop,${B}t128x128x64_c1x2_pingpong,${B}t64x128x64_c1x1_pingpong_st7 \
    512,8192,8192=${B}t128x256x64_c2x1_coop,${B}t128x160x64_c2x1_coop,${B}t128x128x64_c1x2_pingpong,${B}t64x128x64_c1x1_pingpong_st7
  ab promoted_512 120 --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair \
    512,8192,8192=${P}t128x128x128_c2x1_coop,${P}t128x192x128_c1x2_coop,${P}t128x112x128_c1x2_coop,${P}t64x160x128_c2x1_pingpong \
    512,57344,8192=${P}t128x128x128_c1x2_coop,${P}t128x192x128_c1x2_coop,${P}t128x112x128_c1x2_coop
  tail -n 4 $R/ab_*.txt | cut -c1-260; exit 0
fi
ab fast 150 --op scaled_mm --scale row --accumulate fast --epilogue bias --pair \
  8192,57344,8192=${F}t128x128x128_c1x2_pingpong_plain,${F}t128x256x128_c2x1_coop_plain \
  2048,57344,8192=${F}t128x128x128_c1x2_pingpong_plain,${F}t128x256x128_c2x1_coop_plain \
  8192,8192,8192=${F}t128x128x128_c2x1_pingpong_plain,${F}t128x256x128_c2x1_coop_plain \
  8192,10240,8192=${F}t128x128x128_c1x2_pingpong_plain,${F}t128x256x128_c2x1_coop_plain \
  2048,8192,8192=${F}t128x128x128_c1x2_pingpong_plain,${F}t128x256x128_c2x1_coop_plain
ab promoted 150 --op scaled_mm --scale row --accumulate accurate --epilogue bias --pair \
  8192,57344,8192=${P}t128x128x128_c1x2_coop_plain,${P}t128x192x128_c1x2_coop,${P}t128x160x128_c2x1_coop \
  2048,57344,8192=${P}t128x128x128_c1x1_coop_plain,${P}t128x192x128_c1x2_coop,${P}t128x160x128_c2x1_coop \
  512,57344,8192=${P}t128x128x128_c1x2_coop_plain,${P}t128x160x128_c2x1_coop
ab bf16_fused 60 --op gemm --dtype bf16 --epilogue bias_gelu_residual --pair \
  8192,10240,8192=sm90_bf16_t128x128x64_c1x2_pingpong,sm90_bf16_t128x256x64_c2x1_coop
tail -n 8 $R/ab_*.txt | cut -c1-200
