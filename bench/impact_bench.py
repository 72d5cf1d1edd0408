#!/usr/bin/env python3
"""`loci impact PATH --depth 3` as whole processes over files drawn at random.

The issue's target (<= 5 ms) names no file; a file's blast radius decides the cost, so
this draws --files files of a scanned workspace at random (fixed --seed), runs the
command --runs times per file, and reports the median of each file's runs: their median,
p90 and max over the files, and the same for files with at most 50 dependents.

Usage: bench/impact_bench.py LOCI DIR [--files 40] [--runs 7] [--seed 7]
  DIR  a workspace already scanned by LOCI (e.g. /tmp/loci-bench-stdlib after
       bench/scan_bench.py, with `loci scan` run in it)
"""
import argparse, json, os, random, statistics, subprocess, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("loci")
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    out = subprocess.run([args.loci, "-C", args.dir, "stats", "--json"], capture_output=True, text=True, check=True)
    del out  # the map must exist: `stats` fails on an unscanned workspace
    listing = subprocess.run(
        ["sqlite3", os.path.join(args.dir, ".loci", "loci.db"),
         "SELECT path FROM files WHERE language IS NOT NULL ORDER BY path"],
        capture_output=True, text=True, check=True).stdout.split()
    random.seed(args.seed)
    sample = random.sample(listing, min(args.files, len(listing)))
    devnull = open(os.devnull, "w")
    rows = []
    for path in sample:
        cmd = [args.loci, "-C", args.dir, "impact", path, "--depth", "3"]
        answer = json.loads(subprocess.run(cmd + ["--json"], capture_output=True, text=True).stdout)
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run(cmd, stdout=devnull, stderr=devnull)
            times.append((time.perf_counter() - t) * 1000)
        rows.append((len(answer["result"]["nodes"]), statistics.median(times)))
    ms = sorted(r[1] for r in rows)
    small = sorted(r[1] for r in rows if r[0] <= 50)
    deps = sorted(r[0] for r in rows)
    print(f"{len(rows)} files (seed {args.seed}); dependents at depth 3: median {statistics.median(deps):.0f}, max {deps[-1]}")
    print(f"impact, ms (median of {args.runs} runs per file): median {statistics.median(ms):.2f}, "
          f"p90 {ms[int(len(ms) * 0.9)]:.2f}, max {ms[-1]:.2f}")
    if small:
        print(f"files with <= 50 dependents ({len(small)}): median {statistics.median(small):.2f}, max {small[-1]:.2f}")


if __name__ == "__main__":
    main()
