# Session 33 call A (subset build of s33-coop-swap in gpu_s33/cs: units holding the swap-AB coop 128 x 64/88/96/192
# candidates and the 64x160/192 ws tiles): forced float64 tests of the candidates, one sweep round per FP8 family at
# M = 128-256 x 7 (N, K) against _scaled_mm in the same run (other kernels' full-build times: sweeps/*_m192_s32_1.json).
cd gpu_s33/cs
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=$(cat ../.commit)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $R/smi.txt
timeout 120 python -m pytest tests/test_gpu_fp8.py -q -x -p no:cacheprovider -k "coop_swapab and not streamk" > $R/tests_a.txt 2>&1; echo "tests rc $? $SECONDS"; tail -1 $R/tests_a.txt
S=""; for m in 128 176 192 256; do for nk in 8192,8192 8192,28672 10240,8192 57344,8192 28672,8192 14336,4096 7168,16384; do S="$S $m,$nk"; done; done
sw() { n=$1; shift; timeout 110 python -m bench.sweep "$@" --shapes $S --json $R/sweep_${n}_coopswap_s33.json > $R/sw_${n}.txt 2>&1; echo "$n rc $? $SECONDS"; }
sw tensor_acc --op scaled_mm --scale tensor --accumulate accurate
sw tensor_fast --op scaled_mm --scale tensor --accumulate fast
sw row_acc --op scaled_mm --scale row --accumulate accurate
sw row_fast --op scaled_mm --scale row --accumulate fast
tar czf $OUT/r.tgz -C $OUT r
python ../summ.py $R/sweep_*.json
