#!/usr/bin/env python3
"""Whole-process `loci context` A/B: two binaries, each on its own store, alternated.

Every question of a case file is run by A then B, and on the next round by B then A, so
the machine's noise falls on both. A first round warms the page cache and is not counted.
Reports, per side, wall-clock and CPU (user + system, from wait4) p50 and p95 in ms, and
the per-pair ratios B/A (median, min, max), with the load average at the end.

Usage: bench/context_ab.py ROUNDS BIN_A DB_A BIN_B DB_B [--root DIR] [--cases FILE] [--top]
  DB_A, DB_B  stores of the same tree, e.g. each kept by its own code's
              `context_bench --corpus stdlib --keep DIR` (DIR/stdlib.db)
  --root      the tree they map (default: $TMPDIR/loci-bench-stdlib, context_bench's copy)
  --cases     the questions (default: fixtures/eval/stdlib.jsonl)
  --top       also print A's eight most costly questions (CPU p50)
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", type=int)
    ap.add_argument("bin_a")
    ap.add_argument("db_a")
    ap.add_argument("bin_b")
    ap.add_argument("db_b")
    ap.add_argument("--root", default=os.path.join(tempfile.gettempdir(), "loci-bench-stdlib"))
    ap.add_argument("--cases", default=os.path.join(REPO, "fixtures/eval/stdlib.jsonl"))
    ap.add_argument("--top", action="store_true")
    args = ap.parse_args()

    cases = []
    for line in open(args.cases):
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        case = json.loads(line)
        if "query" in case:
            cases.append((case["query"], case.get("open_files", [])))

    def run(binary, db, query, open_files):
        argv = [binary, "--db", db, "-C", args.root, "context", query]
        for f in open_files:
            argv += ["--open", f]
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            sys.exit("failed: " + " ".join(argv))
        return (time.perf_counter() - start) * 1000, (usage.ru_utime + usage.ru_stime) * 1000

    sides = [(args.bin_a, args.db_a), (args.bin_b, args.db_b)]
    wall, cpu = ([], []), ([], [])
    wall_ratio, cpu_ratio, per_query = [], [], {}
    for r in range(args.rounds + 1):
        for query, open_files in cases:
            order = (0, 1) if r % 2 == 0 else (1, 0)
            got = {i: run(*sides[i], query, open_files) for i in order}
            if r == 0:
                continue  # warm-up round
            for i in (0, 1):
                wall[i].append(got[i][0])
                cpu[i].append(got[i][1])
            wall_ratio.append(got[1][0] / got[0][0])
            cpu_ratio.append(got[1][1] / max(got[0][1], 1e-3))
            per_query.setdefault(query, []).append(got[0][1])

    def p95(xs):
        return statistics.quantiles(xs, n=20)[18]

    for name, i in (("A", 0), ("B", 1)):
        print(
            f"{name} {sides[i][0]}: wall p50 {statistics.median(wall[i]):.2f} p95 {p95(wall[i]):.2f}"
            f" | cpu p50 {statistics.median(cpu[i]):.2f} p95 {p95(cpu[i]):.2f}"
        )
    load = open("/proc/loadavg").read().split()[0]
    print(
        f"B/A wall ratio median {statistics.median(wall_ratio):.3f} (min {min(wall_ratio):.3f}"
        f" max {max(wall_ratio):.3f}); cpu ratio median {statistics.median(cpu_ratio):.3f}"
        f" (min {min(cpu_ratio):.3f} max {max(cpu_ratio):.3f}); n={len(wall_ratio)} load {load}"
    )
    if args.top:
        costly = sorted(per_query.items(), key=lambda kv: -statistics.median(kv[1]))[:8]
        for query, xs in costly:
            print(f"  A cpu {statistics.median(xs):.2f} ms  {query}")


if __name__ == "__main__":
    main()
