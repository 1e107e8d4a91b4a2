"""`_plain` / `_noact` time per shape from bench.ab JSONs: the ratio of medians over the rounds and the range of the
per-round ratios (< 1: the `_plain` build is faster).   python summarize.py ab_*.json"""
import json
import statistics
import sys

for path in sys.argv[1:]:
    doc = json.load(open(path))
    print(f"{path}: {doc['gpu']}, {doc['case']['title'] if isinstance(doc.get('case'), dict) else doc.get('case')}")
    for row in doc["rows"]:
        rounds = row["us_rounds"]
        plain = next(n for n in rounds if n.endswith("_plain"))
        noact = plain[: -len("_plain")] + "_noact"
        if not rounds.get(plain) or not rounds.get(noact):
            print(f"  {row['m']}x{row['n']}x{row['k']}: not timed ({row.get('rel_err')})")
            continue
        per = [p / q for p, q in zip(rounds[plain], rounds[noact])]
        med = statistics.median(rounds[plain]) / statistics.median(rounds[noact])
        print(f"  {row['m']}x{row['n']}x{row['k']} {plain[22:]}: {statistics.median(rounds[noact]):.1f} -> "
              f"{statistics.median(rounds[plain]):.1f} us, {med:.3f} (rounds {min(per):.3f}-{max(per):.3f})")
