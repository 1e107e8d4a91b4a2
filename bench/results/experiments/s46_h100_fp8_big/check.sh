# Session 46, H100, after the overlay (default_rules.json "gpu_overlays", from ab.sh's A/Bs in bench/results/ab_gpu):
# (1) the A/Bs ab.sh could not use (it timed the `_plain` twins where the rules launch the act kernels):
# the rules' own launches against the 128x256 fast coop / 128x192 promoted coop; (2) python -m bench at the
# overlay's shapes with the overlay and without it (CUTLASS_GEMM_GPU_OVERLAY=0), ours and the competitor in each run.
#   bash bench/results/experiments/s46_h100_fp8_big/check.sh      (repo root, on the device; carry the build)
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/chk; mkdir -p $R
export PYTHONPATH=.
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
F=sm90_e4m3_scaled_fast_ P=sm90_e4m3_scaled_promoted_
timeout 100 python -m bench.ab --rounds 5 --json $R/ab_h100_fast_act.json --op scaled_mm --scale row --accumulate fast \
  --epilogue bias --pair 8192,10240,8192=${F}t128x128x128_c1x2_pingpong,${F}t128x256x128_c2x1_coop_plain \
  2048,8192,8192=${F}t128x128x128_c1x2_pingpong,${F}t128x256x128_c2x1_coop_plain > $R/ab_fast_act.txt 2>&1
echo "ab fast rc $? ${SECONDS}s"
timeout 100 python -m bench.ab --rounds 5 --json $R/ab_h100_promoted_act.json --op scaled_mm --scale row --accumulate accurate \
  --epilogue bias --pair 8192,57344,8192=${P}t128x128x128_c1x2_coop,${P}t128x192x128_c1x2_coop > $R/ab_promoted_act.txt 2>&1
echo "ab promoted rc $? ${SECONDS}s"
tar czf $OUT/chk.tgz -C $OUT chk
for ov in 1 0; do
  CUTLASS_GEMM_GPU_OVERLAY=$ov timeout 120 python -m bench --shapes 8192,57344,8192 2048,57344,8192 --op scaled_mm \
    --scale row,tensor --accumulate fast --epilogue bias --rounds 3 --no-compile --out $R/fast_ov$ov > $R/fast_ov$ov.txt 2>&1
  echo "bench fast overlay=$ov rc $? ${SECONDS}s"
  CUTLASS_GEMM_GPU_OVERLAY=$ov timeout 60 python -m bench --shapes 8192,10240,8192 --op gemm --epilogue bias_gelu_residual \
    --rounds 3 --no-compile --out $R/bf16_ov$ov > $R/bf16_ov$ov.txt 2>&1
  echo "bench bf16 fused overlay=$ov rc $? ${SECONDS}s"
done
find $R -name "*.png" -delete; tar czf $OUT/chk.tgz -C $OUT chk
tail -n 3 $R/ab_*.txt | cut -c1-220; grep -h "^| [0-9]" $R/*_ov*/custom_*.md | cut -c1-200
