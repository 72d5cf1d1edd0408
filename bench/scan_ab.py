#!/usr/bin/env python3
"""Paired first-scan comparison of two `loci` binaries on one corpus.

    scan_ab.py --a OLD_LOCI --b NEW_LOCI --corpus DIR [--rounds 3]

Each round scans DIR into a fresh store with A, then with B (A B A B ...), so load on a
shared machine hits both alike. Prints each binary's walls, CPU seconds and peak RSS (MiB,
from wait4), the median of the per-round ratios B / A with min and max, each store's size,
and the load average.
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--a", required=True)
ap.add_argument("--b", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()


def scan(loci):
    """One first scan into a fresh store: wall s, CPU s, peak RSS MiB, store bytes."""
    folder = tempfile.mkdtemp()
    db = os.path.join(folder, "scan.db")
    start = time.perf_counter()
    child = subprocess.Popen([os.path.abspath(loci), "scan", ".", "--db", db], cwd=args.corpus,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{loci} scan failed: status {status}")
    size = os.path.getsize(db)
    shutil.rmtree(folder)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, size


walls = {"a": [], "b": []}
cpus = {"a": [], "b": []}
rss = {"a": [], "b": []}
sizes = {}
load = [os.getloadavg()[0]]
for _ in range(args.rounds):
    for k in ("a", "b"):
        wall, cpu, peak, size = scan(getattr(args, k))
        walls[k].append(round(wall, 2))
        cpus[k].append(round(cpu, 2))
        rss[k].append(round(peak))
        sizes[k] = size
load.append(os.getloadavg()[0])
ratios = [b / a for a, b in zip(walls["a"], walls["b"])]
cpu_ratios = [b / a for a, b in zip(cpus["a"], cpus["b"])]
rss_ratios = [b / a for a, b in zip(rss["a"], rss["b"])]
spread = lambda r: [round(statistics.median(r), 3), round(min(r), 3), round(max(r), 3)]
print(json.dumps({"a_s": walls["a"], "b_s": walls["b"],
                  "ratio_median": round(statistics.median(ratios), 3),
                  "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3),
                  "a_cpu_s": cpus["a"], "b_cpu_s": cpus["b"], "cpu_ratio_median_min_max": spread(cpu_ratios),
                  "a_rss_mib": rss["a"], "b_rss_mib": rss["b"], "rss_ratio_median_min_max": spread(rss_ratios),
                  "a_db_mib": round(sizes["a"] / 2**20, 1), "b_db_mib": round(sizes["b"] / 2**20, 1),
                  "load_start_end": [round(x, 2) for x in load]}))
