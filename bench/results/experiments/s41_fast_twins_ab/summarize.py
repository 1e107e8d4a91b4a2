"""Each launch of a bench.ab row against the row's first launch: the ratio of medians over the rounds and the range
of the per-round ratios (< 1: faster than the first).   python summarize.py ab_*.json
(s41_fast_twins_ab pairs `_noact`,`_plain`; s41_stages names the twin first, then the candidates.)"""
import json
import statistics
import sys

for path in sys.argv[1:]:
    doc = json.load(open(path))
    print(f"{path}: {doc['gpu']}, {doc['case']['title'] if isinstance(doc.get('case'), dict) else doc.get('case')}")
    for row in doc["rows"]:
        rounds = row["us_rounds"]
        first, *others = list(rounds)
        for other in others:
            if not rounds.get(first) or not rounds.get(other):
                print(f"  {row['m']}x{row['n']}x{row['k']} {other}: not timed ({row.get('rel_err')})")
                continue
            per = [p / q for p, q in zip(rounds[other], rounds[first])]
            med = statistics.median(rounds[other]) / statistics.median(rounds[first])
            print(f"  {row['m']}x{row['n']}x{row['k']} {other.split('_t', 1)[1]} vs {first.split('_t', 1)[1]}: "
                  f"{statistics.median(rounds[first]):.1f} -> {statistics.median(rounds[other]):.1f} us, {med:.3f} "
                  f"(rounds {min(per):.3f}-{max(per):.3f})")
