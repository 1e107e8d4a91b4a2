# Session 48, third call: does splitting K rescue the blockwise M <= 128 rows? The 64-row tiles showed the blockwise
# mainloop's ~170 ns per k-block is per CTA, not per byte (README.md), so fewer k-blocks per CTA is the lever; CUTLASS
# 4.2 splits K only in cooperative kernels. The retired 128x32 coop swap-AB stream-K blockwise tile, rebuilt for this
# call only (gpu_s48/cutlass_gemm: kernel_table.py with it un-retired and its build; not in main), under each
# decomposition, against the launch the rules (with the H100 overlay) make, one bench.ab process per decomposition
# (the knobs are read once per process). Repo root, on the device; carry gpu_s48.
#   bash bench/results/experiments/s48_swap64/splitk.sh     -> $OUT/s48c/ab_<mode>.{json,txt}
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/s48c; mkdir -p $R
# python -m puts the working directory first on sys.path: run from gpu_s48 so that its cutlass_gemm wins, bench from
# the repo root through PYTHONPATH.
ROOT=$PWD; export PYTHONPATH=$ROOT; cd gpu_s48
P=sm90_e4m3_blockwise_promoted_
SK=${P}t128x32x128_c1x1_coop_swapab_streamk
PAIRS="64,2112,7168=$SK,${P}t64x32x128_c1x1_pingpong_swapab+pdl
128,2112,7168=$SK,${P}t64x32x128_c1x1_pingpong_swapab+pdl
64,4096,7168=$SK,${P}t128x16x128_c1x1_pingpong_swapab
128,4096,7168=$SK,${P}t128x32x128_c1x1_pingpong_swapab+pdl
64,7168,2048=$SK,${P}t128x32x128_c1x1_coop_swapab+pdl
64,7168,16384=$SK,${P}t128x32x128_c1x1_pingpong_swapab"
for mode in dp splitk2 splitk3 splitk4 streamk; do  # CUTLASS's decomposition: data-parallel, split-K 2-4, stream-K
  case $mode in dp) E="CUTLASS_GEMM_DECOMPOSITION=1";; streamk) E="CUTLASS_GEMM_DECOMPOSITION=3";;
    *) E="CUTLASS_GEMM_SPLITS=${mode#splitk}";; esac
  env $E timeout 100 python -m bench.ab --op scaled_mm --scale blockwise --rounds 5 --json $R/ab_$mode.json \
    --pair $PAIRS > $R/ab_$mode.txt 2>&1
  echo "$mode rc $? ${SECONDS}s"
done
for mode in dp splitk2 splitk3 splitk4 streamk; do echo "== $mode"; grep -E "^[0-9]+x" $R/ab_$mode.txt | sed "s/$P//g"; done
