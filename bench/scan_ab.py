#!/usr/bin/env python3
"""Paired first-scan comparison of two `loci` binaries on one corpus.

    scan_ab.py --a OLD_LOCI --b NEW_LOCI --corpus DIR [--rounds 3]

Each round scans DIR into a fresh store with A, then with B (A B A B ...), so load on a
shared machine hits both alike. Prints each binary's walls, the median of the per-round
ratios B / A with min and max, each store's size, and the load average.
"""
import argparse, json, os, statistics, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--a", required=True)
ap.add_argument("--b", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()


def scan(loci):
    db = os.path.join(tempfile.mkdtemp(), "scan.db")
    start = time.perf_counter()
    subprocess.run([os.path.abspath(loci), "scan", ".", "--db", db], cwd=args.corpus,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, os.path.getsize(db)


walls = {"a": [], "b": []}
sizes = {}
load = [os.getloadavg()[0]]
for _ in range(args.rounds):
    for k in ("a", "b"):
        wall, size = scan(getattr(args, k))
        walls[k].append(round(wall, 2))
        sizes[k] = size
load.append(os.getloadavg()[0])
ratios = [b / a for a, b in zip(walls["a"], walls["b"])]
print(json.dumps({"a_s": walls["a"], "b_s": walls["b"],
                  "ratio_median": round(statistics.median(ratios), 3),
                  "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3),
                  "a_db_mib": round(sizes["a"] / 2**20, 1), "b_db_mib": round(sizes["b"] / 2**20, 1),
                  "load_start_end": [round(x, 2) for x in load]}))
