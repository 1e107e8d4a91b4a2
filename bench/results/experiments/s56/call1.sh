# Session 56, call 1: on an H200 the README's tables (s50_h200/tables.sh a); on any other GPU the H100 tables of
# bench/results/h100/ again at this commit (session 55's TMA L2 promotion default; the same command as session 52's).
#   CUTLASS_GEMM_COMMIT=<HEAD> bash bench/results/experiments/s56/call1.sh     (repo root, on the device)
# Out: $OUT/a.tgz (H200) or $OUT/h100.tgz (the tables, tests.txt, regenerate.log, host_overhead.json).
set -u
: "${OUT:?run on the device (OUT unset)}"
: "${CUTLASS_GEMM_COMMIT:?name the commit whose rules and code the build runs}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
if [[ "$GPU" == *H200* ]]; then exec bash bench/results/experiments/s50_h200/tables.sh a; fi
export PYTHONPATH=.
mkdir -p $OUT/h100
timeout 40 python bench/host_overhead.py --out $OUT/h100/host_overhead.json > $OUT/h100/host.txt 2>&1
echo "host rc $? ${SECONDS}s"; cat $OUT/h100/host.txt
TABLES=1 TABLES_S=${TABLES_S:-440} bash bench/results/experiments/s43_tables/call.sh h100
rm -rf $OUT/h100  # at most 8 files come back: the archive holds it all
