"""Best committed-sweep time per shape (any kernel, same case) against the wscoop candidates' best in a new sweep."""
import glob, json, os, sys, math
NEW = os.environ.get("NEW", "wscoop")
import re
isnew = lambda k: re.search(NEW, k) is not None
def key(c): return (c['op'], c.get('scale'), c.get('accumulate'), c.get('epilogue'), c.get('dtype'))
old = {}
for f in glob.glob('bench/results/sweeps/*.json'):
    d = json.load(open(f))
    for r in d['rows']:
        for k, v in r['us'].items():
            if v and not isnew(k):
                s = old.setdefault((key(d['case']), r['m'], r['n'], r['k']), {})
                s[k] = min(v, s.get(k, 1e9))
for f in sys.argv[1:]:
    d = json.load(open(f)); print(os.path.basename(f)); lg = []; lgc = []
    for r in d['rows']:
        o = old.get((key(d['case']), r['m'], r['n'], r['k']))
        new = min(((v, k) for k, v in r['us'].items() if v and isnew(k)), default=None)
        sub = min(((v, k) for k, v in r['us'].items() if v and not isnew(k)), default=None)
        c = r['competitor']['us']
        ob = min(((v, k) for k, v in o.items()), default=None) if o else None
        best_old = min([x for x in (ob, sub) if x], default=None)
        ratio = new[0] / best_old[0] if new and best_old else float('nan')
        if new and best_old: lg.append(math.log(min(1.0, ratio)))
        if new and c: lgc.append(math.log(c / min(new[0], best_old[0] if best_old else 1e9)))
        print(f"  {r['m']:>4}x{r['n']}x{r['k']:<6} comp {c:6.1f} | new {new[1].split('_t')[-1][:26] if new else '-':26} {new[0] if new else 0:6.1f}"
              f" | same-run other {sub[0] if sub else 0:6.1f} | committed {ob[1].split('_t')[-1][:24] if ob else '-':24} {ob[0] if ob else 0:6.1f} | new/old {ratio:.3f} comp/best {c/min(new[0], best_old[0] if best_old else 1e9) if new else 0:.2f}")
    if lg: print(f"  geomean min(1,new/old-best) {math.exp(sum(lg)/len(lg)):.3f} over {len(lg)}; comp/best {math.exp(sum(lgc)/len(lgc)):.3f}")
