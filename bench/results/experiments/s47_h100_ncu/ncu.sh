# Session 47, on an H100: bench/probes/ncu_h100_tiles.py under ncu (--set full, clocks not locked, one launch per
# case), exported as CSV (details page). Repo root, on the device; carry cutlass_gemm/{_C.abi3.so,_build_info.py}.
#   bash bench/results/experiments/s47_h100_ncu/ncu.sh        -> $OUT/ncu/{details.csv.gz,ncu_run.txt}
# Prints the table (also $OUT/ncu/table.md): one column per case of the probe, in its order.
set -u
: "${OUT:?run on the device (OUT unset)}"
R=$OUT/ncu; mkdir -p $R
export PYTHONPATH=.
X="sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum"
X="$X,lts__t_sector_hit_rate.pct"
timeout ${NCU_S:-400} ncu --clock-control none --profile-from-start off --set full --metrics $X -f -o /tmp/tiles \
  python bench/probes/ncu_h100_tiles.py > $R/ncu_run.txt 2>&1
echo "ncu rc $? ${SECONDS}s"; tail -4 $R/ncu_run.txt
ncu -i /tmp/tiles.ncu-rep --page details --csv 2>$R/details.err | gzip > $R/details.csv.gz
echo "export ${SECONDS}s"
N=$(cd bench/probes && python -c 'from ncu_h100_tiles import NAMES; print(",".join(NAMES))')
python bench/probes/ncu_table.py $R/details.csv.gz --names "$N" --metrics "Duration,SM Frequency,DRAM Throughput,L2 Hit Rate,${X}" \
  | tee $R/table.md
