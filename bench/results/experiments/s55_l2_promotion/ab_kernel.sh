# Session 55, second A/B: is 256 B's gain at FP8 row fast 128x57344x8192 (0.968x the time, ab.sh) the kernel's or the
# shape's? Two fast kernels forced, 128 B against 256 B, 3 rounds, at the shapes whose rules name the first one
# (sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong: M 65-128 at N 57344, 80-119 at N 28672, 80-103 at 32768x512,
# 225-362 at 8192x28672, compute-bound M at 4096^2 / 8192^2 / 8192x10240).
#   bash bench/results/experiments/s55_l2_promotion/ab_kernel.sh   (repo root, on the device; carry the build)
set -u
: "${OUT:?run on the device (OUT unset)}"
export PYTHONPATH=.
timeout ${T2:-300} python bench/scheduler_knobs.py --case op=scaled_mm,scale=row,accumulate=fast,epilogue=bias \
  --configs sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong,sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop \
  --shapes 128,57344,8192 80,57344,8192 112,28672,8192 96,32768,512 240,7168,16384 256,8192,28672 \
           2048,8192,8192 4096,4096,4096 8192,10240,8192 \
  --settings 0:0:128,0:0:256 --rounds ${ROUNDS:-3} --out $OUT/l2_kernel.json > $OUT/l2_kernel.md 2> $OUT/l2_kernel.err
echo "kernel ab rc $? ${SECONDS}s"; tail -n 2 $OUT/l2_kernel.err
