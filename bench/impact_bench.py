#!/usr/bin/env python3
"""`loci impact PATH --depth 3` as whole processes over files drawn at random.

The issue's target (<= 5 ms) names no file; a file's blast radius decides the cost, so
this draws --files files of a scanned workspace at random (fixed --seed), runs the
command --runs times per file, and reports the median of each file's runs: their median,
p90 and max over the files, and the same for files with at most 50 dependents.

With --against OTHER, each run of LOCI is followed by one of OTHER on the same file (A B
A B: the machine's noise falls on both), and the per-file ratio LOCI/OTHER of the medians
is reported too (median, min, max over the files). Extra arguments after `--` are passed
to both (e.g. `-- --limit 0`).

Usage: bench/impact_bench.py LOCI DIR [--files 40] [--runs 7] [--seed 7] [--against OTHER]
                             [-- ARGS...]
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
    ap.add_argument("--against")
    ap.add_argument("extra", nargs="*")
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
    ratios = []
    bins = [args.loci] + ([args.against] if args.against else [])
    for path in sample:
        cmd = ["-C", args.dir, "impact", path, "--depth", "3"] + args.extra
        answer = json.loads(subprocess.run([args.loci] + cmd + ["--json"], capture_output=True, text=True).stdout)
        result = answer["result"]
        # `dependents` counts them all; before the listing limit, every one was a node.
        dependents = result.get("dependents", len(result["nodes"]))
        times = {b: [] for b in bins}
        for _ in range(args.runs):
            for b in bins:
                t = time.perf_counter()
                subprocess.run([b] + cmd, stdout=devnull, stderr=devnull)
                times[b].append((time.perf_counter() - t) * 1000)
        rows.append((dependents, statistics.median(times[args.loci])))
        if args.against:
            ratios.append(statistics.median(times[args.loci]) / statistics.median(times[args.against]))
    ms = sorted(r[1] for r in rows)
    small = sorted(r[1] for r in rows if r[0] <= 50)
    deps = sorted(r[0] for r in rows)
    print(f"{len(rows)} files (seed {args.seed}); dependents at depth 3: median {statistics.median(deps):.0f}, max {deps[-1]}")
    print(f"impact, ms (median of {args.runs} runs per file): median {statistics.median(ms):.2f}, "
          f"p90 {ms[int(len(ms) * 0.9)]:.2f}, max {ms[-1]:.2f}")
    if small:
        print(f"files with <= 50 dependents ({len(small)}): median {statistics.median(small):.2f}, max {small[-1]:.2f}")
    if ratios:
        ratios.sort()
        print(f"per-file ratio {args.loci} / {args.against}: median {statistics.median(ratios):.2f}, "
              f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}")

if __name__ == "__main__":
    main()
