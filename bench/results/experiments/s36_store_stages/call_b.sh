# Optional second call (~150 s), after call_a.sh, from the repository root with the same X:
#   X=gpu_sNN/x bash bench/results/experiments/s36_store_stages/call_b.sh
# ncu of each candidate, its twin and the competitor (ncu_twins.py); the stall breakdown says where the
# per-tile time goes. Output: $OUT/ncu.txt (details page) and $OUT/ncu_raw.csv.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "${X:?set X to the copy of the subset build}"
export PYTHONPATH=.
timeout 400 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats \
  --section SchedulerStats -f -o $OUT/twins python $HERE/ncu_twins.py > $OUT/ncu_log.txt 2>&1
echo "ncu rc $? ${SECONDS}s"; tail -3 $OUT/ncu_log.txt
ncu -i $OUT/twins.ncu-rep --page details > $OUT/ncu.txt 2>&1
ncu -i $OUT/twins.ncu-rep --page raw --csv > $OUT/ncu_raw.csv 2>&1
grep -E "^  [a-z_]|Duration|Issue Slots Busy|Warp Cycles Per Issued|Stall" $OUT/ncu.txt | head -80
