"""Per kernel of a cuobjdump -sass listing: instructions in all, and in the consumer's per-tile epilogue (from the
last warpgroup wait before the first STSM to the branch back to the tile loop), by opcode."""
import collections, re, sys

def functions(path):
    name, ins = None, []
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name: yield name, ins
            name, ins = m.group(1), []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m and name:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    if name: yield name, ins

def branch_target(text):
    """A BRA's target address, or None for a form without a literal one."""
    m = re.search(r"BRA(?:\.\w+)*\s+(?:`\(\.L_x_\d+\)\s*)?(0x[0-9a-f]+)", text)
    return int(m.group(1), 16) if m else None

def opcode(text):
    t = text.split()
    if t[0].startswith("@"): t = t[1:]
    return t[0].split(".")[0]

for name, ins in functions(sys.argv[1]):
    ops = [opcode(t) for _, t in ins]
    first_stsm = ops.index("STSM") if "STSM" in ops else None
    if first_stsm is None:
        print(name[-60:], len(ins), "no STSM"); continue
    start = max(i for i in range(first_stsm) if ops[i] in ("WARPGROUP", "QGMMA", "HGMMA"))
    last_st = max(i for i, o in enumerate(ops) if o == "UTMASTG")
    # the epilogue ends at the loop's back branch (a BRA to an earlier address) after the last store
    end = next((i for i in range(last_st, len(ins)) if ops[i] == "BRA" and (branch_target(ins[i][1]) or 1 << 62) < ins[i][0]),
               len(ins) - 1)
    c = collections.Counter(ops[start:end + 1])
    top = ", ".join(f"{o} {n}" for o, n in c.most_common(14))
    print(f"{len(ins):5d} total, epilogue {end - start + 1:4d}: {top}")
