# Session 47, on an H100: does the tile scheduler's order explain the H100's DRAM traffic? (ncu.sh: at
# 8192x57344x8192 FP8 fast our 128x128 c1x2 ping-pong reads 10.3 GB from DRAM, the 128x256 coop 6.3, `_scaled_mm` 4.2,
# and the SM clock under ncu follows it: 1.37 / 1.52 / 1.47 GHz.) Each swizzle:raster setting in its own process:
#  1. the probe's FP8 and bf16 cases under ncu with few metrics (DRAM bytes, L2 hit rate, time, SM clock);
#  2. bench/scheduler_knobs.py: the same kernels timed by the harness (graph replay) against the competitor.
#   bash bench/results/experiments/s47_h100_ncu/knobs.sh   (repo root, on the device; carry the build) -> $OUT/knobs
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/knobs; mkdir -p $R
export PYTHONPATH=.
SETTINGS=${SETTINGS:-0:0 8:2 4:0 4:2 1:0}
X=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second
for s in $SETTINGS; do
  sw=${s%:*} ra=${s#*:}
  env $( [ $sw != 0 ] && echo CUTLASS_GEMM_SWIZZLE=$sw ) $( [ $ra != 0 ] && echo CUTLASS_GEMM_RASTER=$ra ) \
    timeout 120 ncu --clock-control none --profile-from-start off --metrics $X --csv \
    python bench/probes/ncu_h100_tiles.py > $R/ncu_$sw-$ra.csv 2> $R/ncu_$sw-$ra.err
  echo "ncu $s rc $? ${SECONDS}s"
done
tar czf $OUT/knobs.tgz -C $OUT knobs
F=sm90_e4m3_scaled_fast_
timeout ${KNOBS_S:-300} python bench/scheduler_knobs.py --out $R/knobs_fp8.json \
  --case op=scaled_mm,scale=row,accumulate=fast,epilogue=bias --shapes 8192,57344,8192 \
  --configs ${F}t128x128x128_c1x2_pingpong_plain,${F}t128x256x128_c2x1_coop_plain --settings "$(echo $SETTINGS | tr ' ' ,)" \
  > $R/knobs_fp8.md 2> $R/knobs_fp8.err
echo "knobs fp8 rc $? ${SECONDS}s"; cat $R/knobs_fp8.md
tar czf $OUT/knobs.tgz -C $OUT knobs
