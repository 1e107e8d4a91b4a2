# Session 46: on an H100 the FP8 fast tables put our 128x128 c1x2 ping-pong (the H200's pick) at 0.80-0.87x
# `_scaled_mm` at M x 57344 x 8192 (bench/results/h100_s46), where the H200 tables had it at 0.97-1.00x and cuBLAS
# runs at the same TFLOP/s on both cards. This sweeps every FP8 fast kernel and `_scaled_mm` at those shapes on
# whatever GPU runs it, with SM clock, power and throttle reasons sampled every 200 ms.
#   bash bench/results/experiments/s46_h100_fp8_big/probe.sh      (repo root, on the device; carry the build)
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/fp8big; mkdir -p $R
export PYTHONPATH=.
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 200 > $R/clocks.csv 2>&1 &
P=$!
timeout ${SWEEP_S:-200} python -m bench.sweep --op scaled_mm --scale row --accumulate fast --epilogue bias \
  --shapes 8192,57344,8192 2048,57344,8192 8192,8192,8192 --json $R/sweep_row_fast_big.json > $R/sweep.txt 2>&1
echo "sweep rc $? ${SECONDS}s"; kill $P
tar czf $OUT/fp8big.tgz -C $OUT fp8big
tail -n 30 $R/sweep.txt | cut -c1-200
