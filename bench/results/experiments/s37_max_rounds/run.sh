# Issue #5, the --max-rounds rule on the H200: one full `core fused odd` regeneration with up to 8 rounds per
# shape, into $OUT/$NAME (tarred to $OUT/$NAME.tgz). Run it twice in one lease (NAME=a, then NAME=b), then here:
#   python -m bench.compare_runs A B --from-rounds
# From the repository root of a full build (a copied tree: name the commit):
#   NAME=a CUTLASS_GEMM_COMMIT=<sha> bash bench/results/experiments/s37_max_rounds/run.sh
set -u
cd "$(dirname "$0")/../../../.."
D=$OUT/${NAME:?set NAME}
mkdir -p $D
MAX_ROUNDS=${MAX_ROUNDS:-8} timeout ${LIMIT:-560} bash bench/regenerate.sh $D ${PARTS:-core fused odd} > $D/log.txt 2>&1
echo "regenerate rc $? ${SECONDS}s"
tar czf $OUT/$NAME.tgz -C $OUT $NAME
# How many shapes took how many rounds, per table.
python - "$D" <<'PY'
import collections, glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    rows = json.load(open(f)).get("rows", [])
    c = collections.Counter(len(r["ours"].get("us_rounds") or []) for r in rows if isinstance(r.get("ours"), dict))
    print(os.path.basename(f), dict(sorted(c.items())))
PY
