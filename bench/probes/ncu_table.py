"""Per-launch metrics from an ncu details export (`ncu -i R.ncu-rep --page details --csv > details.csv`, gzipped or
not) as a markdown table, one column per launch in profiling order. Torch-free, for reading exports here.
    python bench/probes/ncu_table.py details.csv[.gz] [--names "a,b,..."] [--metrics "Duration,DRAM Throughput,..."]"""
import argparse
import csv
import gzip
import io

METRICS = ["Duration", "SM Frequency", "DRAM Throughput", "L2 Hit Rate", "Compute (SM) Throughput",
           "Executed Instructions", "Registers Per Thread", "Dynamic Shared Memory Per Block"]


def read_rows(path):
    """The CSV rows of an export; lines that are not CSV (a profiled program's own output and ncu's ==PROF== lines,
    when the CSV is ncu's stdout during the run) are left out."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return list(csv.reader(io.StringIO("".join(ln for ln in f if ln.startswith('"')))))


def per_launch(path, metrics):
    """{launch ID: {metric name: "value unit"}} for the named metrics (ncu's own names, or raw metric names)."""
    r = read_rows(path)
    need = ("ID", "Metric Name", "Metric Unit", "Metric Value")
    if not r or not all(c in r[0] for c in need):
        raise ValueError(f"ncu_table: {path}: expected an ncu details export (`ncu -i R --page details --csv`, or "
                         f"`ncu --csv` output) with the columns {', '.join(need)}; got {(r[0] if r else 'no CSV rows')!r:.200}")
    head, got = r[0], {}
    i_id, i_m, i_u, i_v = (head.index(c) for c in need)
    for x in r[1:]:
        if x[i_m] in metrics:
            got.setdefault(int(x[i_id]), {})[x[i_m]] = f"{x[i_v]} {x[i_u]}".strip()
    return got


def table(path, names, metrics=METRICS):
    got = per_launch(path, metrics)
    ids = sorted(got)
    names = list(names) + [f"launch {i}" for i in ids[len(names):]]
    lines = ["| metric | " + " | ".join(names[:len(ids)]) + " |", "|---" * (len(ids) + 1) + "|"]
    lines += [f"| {m} | " + " | ".join(got[i].get(m, "-") for i in ids) + " |" for m in metrics]
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("details")
    ap.add_argument("--names", default="")
    ap.add_argument("--metrics", default=",".join(METRICS))
    a = ap.parse_args()
    try:
        print(table(a.details, [n for n in a.names.split(",") if n], a.metrics.split(",")))
    except (OSError, ValueError) as e:
        ap.error(str(e))
