# Session 49: the overlapped blockwise mainloop (fp8.cuh OverlappedBlockwiseMma: two k-blocks' MMAs in flight, the
# FP32 promotion of one under the next one's wgmmas) against CUTLASS's loop, on the small-M blockwise tiles.
#   bash bench/results/experiments/s49_overlap/call.sh   (repo root, on the device; carry cutlass_gemm/{_C.abi3.so,_build_info.py})
# A record of a finished experiment: the `_ovl` twins exist only in a build with overlap.diff applied (not main).
# 1. every blockwise kernel forced against float64 (test_kernel_table, test_gpu_fp8 -k blockwise), the `_ovl` twins included;
# 2. bench.ab at the 12 deepseek_v3 shapes of M <= 128: the rules' launch, each small-M tile and its `_ovl` twin (+PDL).
# Out: $OUT/s49/{tests.txt, pairs.txt, ab_s49_overlap.json, ab.txt}
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/s49; mkdir -p $R
export PYTHONPATH=.
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
[ "${TESTS:-1}" = 1 ] && timeout ${TESTS_S:-150} python -m pytest -q -p no:cacheprovider -rfE tests/test_kernel_table.py tests/test_gpu_fp8.py -k blockwise \
  > $R/tests.txt 2>&1
echo "tests rc $? ${SECONDS}s: $(tail -1 $R/tests.txt)"
grep -i "worst\|FAIL\|Error" $R/tests.txt | head -12
if [ "${AB:-1}" = 1 ]; then
python bench/results/experiments/s49_overlap/pairs.py > $R/pairs.txt
timeout ${AB_S:-400} python -m bench.ab --op scaled_mm --scale blockwise --pair $(cat $R/pairs.txt) --rounds ${ROUNDS:-5} \
  --json $R/ab_s49_overlap.json > $R/ab.txt 2>&1
echo "ab rc $? ${SECONDS}s"
python bench/results/experiments/s49_overlap/summary.py $R/ab_s49_overlap.json | tee $R/summary.md
fi
# NCU=1: then bench/probes/ncu_blockwise_overlap.py under ncu (--set full), its per-launch details and warp-state
# sampling exported as CSV ($OUT/s49/{details.csv, ncu_run.txt}).
# PKG: a folder holding the experimental package (cutlass_gemm/ with the `_ovl` build) put first on the probe's path.
if [ "${NCU:-0}" = 1 ]; then
  PYTHONPATH=${PKG:-.} timeout 300 ncu --clock-control none --profile-from-start off --set full --import-source no -f -o /tmp/bw \
    python bench/probes/ncu_blockwise_overlap.py > $R/ncu_run.txt 2>&1
  echo "ncu rc $? ${SECONDS}s"
  ncu -i /tmp/bw.ncu-rep --page details --csv > $R/details.csv 2>$R/details.err
  python bench/probes/ncu_table.py $R/details.csv --metrics "Duration,DRAM Throughput,L2 Hit Rate,L1/TEX Hit Rate,Memory Throughput,Executed Instructions,Issue Slots Busy,Warp Cycles Per Issued Instruction,Dynamic Shared Memory Per Block,Registers Per Thread" | tee $R/ncu_table.md
  ncu -i /tmp/bw.ncu-rep --page raw --csv --metrics smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_math_pipe_throttle,smsp__pcsamp_warps_issue_stalled_membar,smsp__pcsamp_warps_issue_stalled_sleeping,smsp__pcsamp_warps_issue_stalled_selected,smsp__pcsamp_warps_issue_stalled_dispatch_stall,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_lg_throttle,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_no_instructions,smsp__pcsamp_warps_issue_stalled_misc,smsp__pcsamp_warps_issue_stalled_branch_resolving,smsp__pcsamp_sample_count > $R/stalls.csv 2>&1
  cut -c1-3000 $R/stalls.csv | head -8
fi
