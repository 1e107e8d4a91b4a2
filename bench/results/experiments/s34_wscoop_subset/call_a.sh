# Session 34 call A, run from the repository root of a checkout of 0cb8bb6 (the wscoop kernels; reverted on main in
# dfd6a67) built as `CUTLASS_GEMM_KERNELS=wscoop CUTLASS_GEMM_ARCHS=90a python setup.py build_ext --inplace` (units 8 + 9:
# the six wscoop kernels and the 128 x 96 fast / 112 / 192 swap-AB coop tiles), with SHA=0cb8bb6 in gpu_s34/.commit:
# forced float64 tests of the candidates, one sweep round per FP8 family at M = 128-224 x 7 (N, K) against _scaled_mm
# in the same run (other kernels' full-build times: the committed sweeps).
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=$(cat gpu_s34/.commit)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $R/smi.txt
timeout 150 python -m pytest tests/test_gpu_fp8.py tests/test_kernel_table.py -q -p no:cacheprovider -s -k "wscoop or host_probe or worst_errors or ws_kernels_refuse" > $R/tests_a.txt 2>&1; echo "tests rc $? $SECONDS"; tail -3 $R/tests_a.txt
S=""; for m in 128 160 176 192 224; do for nk in 8192,8192 8192,28672 10240,8192 57344,8192 28672,8192 14336,4096 7168,16384; do S="$S $m,$nk"; done; done
sw() { n=$1; shift; timeout 100 python -m bench.sweep "$@" --shapes $S --json $R/sweep_${n}_wscoop_s34.json > $R/sw_${n}.txt 2>&1; echo "$n rc $? $SECONDS"; }
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate
sw tensor_fast --op scaled_mm --scale tensor --accumulate fast
sw row_acc --op scaled_mm --scale row --accumulate accurate
sw row_fast --op scaled_mm --scale row --accumulate fast
tar czf $OUT/r.tgz -C $OUT r
NEW=wscoop python bench/results/experiments/s34_onewave_subset/cmp.py $R/sweep_*.json
