# Session 33 call A (subset build of s33-coop-swap in gpu_s33/cs: units holding the swap-AB coop 128 x 64/88/96/192
# candidates and the 64x160/192 ws tiles): forced float64 tests of the candidates, one sweep round per FP8 family at
# M = 128-256 x 7 (N, K) against _scaled_mm in the same run (other kernels' full-build times: sweeps/*_m192_s32_1.json).
# To reproduce on main: put Kernel(tile=(128, W, 128), cluster=(1, 2)) for W = 64, 88, 96 and (128, 192, 128) with
# (2, 1) in kernel_table._sm90_coop_swapab (promoted + fast), `python tools/generate.py`, then
# CUTLASS_GEMM_KERNELS='t128x(64|88|96|192)x128_c[12]x[12]_coop_swapab$' CUTLASS_GEMM_ARCHS=90a python setup.py build_ext --inplace
# and run this from the repository root (the session ran it from an untracked copy of that build's tree).
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${SHA:?pass SHA=<commit> (git on the device copy reads a stale HEAD)}
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $R/smi.txt
timeout 120 python -m pytest tests/test_gpu_fp8.py -q -x -p no:cacheprovider -k "coop_swapab and not streamk and not blockwise" > $R/tests_a.txt 2>&1; echo "tests rc $? $SECONDS"; tail -1 $R/tests_a.txt
S=""; for m in 128 176 192 256; do for nk in 8192,8192 8192,28672 10240,8192 57344,8192 28672,8192 14336,4096 7168,16384; do S="$S $m,$nk"; done; done
sw() { n=$1; shift; timeout 110 python -m bench.sweep "$@" --shapes $S --json $R/sweep_${n}_coopswap_s33.json > $R/sw_${n}.txt 2>&1; echo "$n rc $? $SECONDS"; }
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate
sw tensor_fast --op scaled_mm --scale tensor --accumulate fast
sw row_acc --op scaled_mm --scale row --accumulate accurate
sw row_fast --op scaled_mm --scale row --accumulate fast
tar czf $OUT/r.tgz -C $OUT r
python bench/results/experiments/s33_coop_swapab_subset/summ.py $R/sweep_*.json
