# Session 34 call B, from the repository root (subset build of branch s34-cands e609548, copied into gpu_s34/cands: cutlass_gemm/,
# bench/, tests/; `CUTLASS_GEMM_KERNELS="t256x64x128_c[24]x1_coop_swapab|t128x160x128_c[24]x1_coop_swapab"`; units holding the swap-AB coop 256x64 and
# 128x160 c2x1 / c4x1 candidates): forced float64 tests, one sweep round per FP8 family at M = 128-256 x 7 (N, K).
cd gpu_s34/cands
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=e609548
R=$OUT/r; mkdir -p $R
timeout 150 python -m pytest tests/test_gpu_fp8.py -q -p no:cacheprovider -s -k "forced and (t256x64x128 or t128x160x128_c2x1_coop_swapab or t128x160x128_c4x1) and not streamk" > $R/tests_b.txt 2>&1; echo "tests rc $? $SECONDS"; tail -2 $R/tests_b.txt
S=""; for m in 128 160 176 192 224 256; do for nk in 8192,8192 8192,28672 10240,8192 57344,8192 28672,8192 14336,4096 7168,16384; do S="$S $m,$nk"; done; done
sw() { n=$1; shift; timeout 100 python -m bench.sweep "$@" --shapes $S --json $R/sweep_${n}_onewave_s34.json > $R/sw_${n}.txt 2>&1; echo "$n rc $? $SECONDS"; }
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate
sw tensor_fast --op scaled_mm --scale tensor --accumulate fast
sw row_acc --op scaled_mm --scale row --accumulate accurate
sw row_fast --op scaled_mm --scale row --accumulate fast
tar czf $OUT/r.tgz -C $OUT r
cd ../..
NEW='t256x64x128|t128x160x128_c[24]x1_coop_swapab' python bench/results/experiments/s34_onewave_subset/cmp.py $OUT/r/sweep_*.json | grep -E "sweep_|geomean|new/old 0"
