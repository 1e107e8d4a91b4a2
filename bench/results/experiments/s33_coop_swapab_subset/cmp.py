"""Best committed-sweep time per shape (any kernel, same case) against the candidates' best in a new sweep."""
import glob, json, os, sys, math
def key(c): return (c['op'], c.get('scale'), c.get('accumulate'), c.get('epilogue'), c.get('dtype'))
old = {}
for f in glob.glob('bench/results/sweeps/*.json'):
    d = json.load(open(f))
    for r in d['rows']:
        for k, v in r['us'].items():
            if v and 'coop_swapab' not in k or (v and k.endswith('streamk')):
                s = old.setdefault((key(d['case']), r['m'], r['n'], r['k']), {})
                s[k] = min(v, s.get(k, 1e9))
for f in sys.argv[1:]:
    d = json.load(open(f)); print(os.path.basename(f)); lg = []
    for r in d['rows']:
        o = old.get((key(d['case']), r['m'], r['n'], r['k']))
        new = min(((v, k) for k, v in r['us'].items() if v and 'coop_swapab' in k and 'streamk' not in k), default=None)
        sub = min(((v, k) for k, v in r['us'].items() if v and 'coop_swapab' not in k), default=None)
        c = r['competitor']['us']
        ob = min(((v, k) for k, v in o.items()), default=None) if o else None
        ratio = new[0] / ob[0] if new and ob else float('nan')
        if new and ob: lg.append(math.log(ratio))
        sel = r.get('selected')
        print(f"  {r['m']:>4}x{r['n']}x{r['k']:<6} comp {c:6.1f} | new {new[1].split('_t')[-1][:22] if new else '-':22} {new[0] if new else 0:6.1f}"
              f" | subset-other {sub[0] if sub else 0:6.1f} | committed best {ob[1].split('_t')[-1][:24] if ob else '-':24} {ob[0] if ob else 0:6.1f} | new/best {ratio:.3f} comp/new {c/new[0] if new else 0:.2f}")
    if lg: print(f"  geomean new/committed-best {math.exp(sum(lg)/len(lg)):.3f} over {len(lg)}")
