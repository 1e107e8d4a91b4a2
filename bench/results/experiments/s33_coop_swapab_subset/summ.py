import json, os, sys, math
for f in sys.argv[1:]:
    d = json.load(open(f)); lg = []; print(os.path.basename(f))
    for r in d['rows']:
        us = {k: v for k, v in r['us'].items() if v}
        new = min(((v, k) for k, v in us.items() if 'coop_swapab' in k and 'streamk' not in k), default=None)
        old = min(((v, k) for k, v in us.items() if not ('coop_swapab' in k and 'streamk' not in k)), default=None)
        c = r['competitor']['us']
        if new and old: lg.append(math.log(min(new[0], old[0]) / old[0]))
        nm = lambda x: x[1].split('_t')[-1][:24] if x else '-'
        print(f"{r['m']}x{r['n']}x{r['k']} comp {c:.1f} | new {nm(new)} {new[0] if new else 0:.1f} | old {nm(old)} {old[0] if old else 0:.1f}"
              f" | best/old {min(new[0], old[0]) / old[0] if new and old else 0:.3f} comp/best {c / min(new[0], old[0]) if new and old else 0:.2f}")
    print(f"  geomean best/old-best {math.exp(sum(lg) / max(1, len(lg))):.3f} over {len(lg)}")
