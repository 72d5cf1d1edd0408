#!/usr/bin/env python3
"""A rescan with much memory, two binaries paired: each round edits one function's body
(`shlex.quote` in CORPUS/shlex.py, restored at the end), then runs `loci scan` and `loci
lint` with binary A on store A and binary B on store B, alternated (A B A B) after one
warm-up round. Each store holds the same memory (e.g. two copies, or the stores two
`bench/memory_growth.py` runs leave with `--db`, one per binary: a store a newer binary
migrated cannot be opened by an older one).

    rescan_memory_ab.py CORPUS A_LOCI A_DB B_LOCI B_DB ROUNDS

Prints, for the scan and for the lint, each side's median wall time in ms and the median
(min, max) of the per-pair ratios B/A, with the load average."""
import os, statistics, subprocess, sys, time
corpus, a_bin, a_db, b_bin, b_db, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
target = os.path.join(corpus, "shlex.py")
orig = open(target).read()
def run(b, db, args):
    t = time.perf_counter()
    r = subprocess.run([b, *args, "--db", db], cwd=corpus, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{b} {args}: {r.returncode} {r.stderr[-400:]}")
    return (time.perf_counter() - t) * 1000
for b, db in ((a_bin, a_db), (b_bin, b_db)):
    run(b, db, ["scan"]); run(b, db, ["lint"])
res = {"A": {"scan": [], "lint": []}, "B": {"scan": [], "lint": []}}
for i in range(rounds):
    for name, b, db in (("A", a_bin, a_db), ("B", b_bin, b_db)):
        body = orig.replace("def quote(s):", f"def quote(s):\n    _ = {i}", 1)
        with open(target, "w") as f: f.write(body)
        res[name]["scan"].append(run(b, db, ["scan"]))
        res[name]["lint"].append(run(b, db, ["lint"]))
with open(target, "w") as f: f.write(orig)
for k in ("scan", "lint"):
    ratios = [bb / aa for aa, bb in zip(res["A"][k], res["B"][k])]
    print(f"{k}: A median {statistics.median(res['A'][k]):.0f} ms, B median {statistics.median(res['B'][k]):.0f} ms; "
          f"B/A per pair median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}); load {os.getloadavg()[0]:.1f}")
