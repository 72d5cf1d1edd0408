#!/usr/bin/env python3
"""Paired incremental-rescan comparison of two `loci` binaries on one corpus (issue 37).

    rescan_ab.py --a OLD_LOCI --b NEW_LOCI --corpus DIR [--rounds 3] [--files 100] [--work DIR]
                 [--touch]

Setup: writes `docs/rescan-bench.md` into DIR, 60 claims of misspelt names of DIR's own
Python functions (`urlsplti()` for `urlsplit`), so every lint computes 60 "did you mean"
suggestions, as a repository's docs and memory do; then scans DIR into one store per
binary (`--db`, so a newer schema never meets an older binary).

Each round edits `--files` Python files (appends a comment line: content changed), then
rescans with A and B (the order alternating by round, so load and caches hit both
alike), each as a whole process with wall, CPU (user + sys) and peak RSS from wait4;
then runs `loci lint` with each. A rescan that changed files lints before it returns, so
its figures include the lint. With `--touch`, each round first touches `--files` other
Python files (mtime moved, content the same) and rescans with each (`touch`). A store
already in `--work` is brought up to the corpus by one rescan before the rounds (not
measured). Prints each run, then the median of the per-round ratios B / A with min and
max, and the load average at the start and end, as JSON.
"""
import argparse, json, os, random, statistics, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rescan_common  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--a", required=True)
ap.add_argument("--b", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--files", type=int, default=100)
ap.add_argument("--touch", action="store_true", help="also rescan after touching files")
ap.add_argument("--work", help="keep the stores here; a store already there is reused "
                "(no first scan): A B rounds again without two first scans")
args = ap.parse_args()
corpus = os.path.abspath(args.corpus)
work = args.work or tempfile.mkdtemp(prefix="rescan-ab-")
os.makedirs(work, exist_ok=True)


def run(loci, db, *argv):
    return rescan_common.run(loci, db, corpus, *argv)


py = rescan_common.python_files(corpus)
rng = random.Random(37)
rescan_common.plant_claims(corpus, py, rng)

dbs = {k: os.path.join(work, f"{k}.db") for k in ("a", "b")}
first = {k: run(getattr(args, k), dbs[k], "scan", ".") for k in ("a", "b")
         if not os.path.exists(dbs[k])}
print("first scan", json.dumps(first), flush=True)
for k in ("a", "b"):
    if k not in first:
        run(getattr(args, k), dbs[k], "scan", ".")  # up to the corpus; not measured
results = {k: {"rescan": [], "lint": [], "noop": [], "touch": []} for k in ("a", "b")}
load = [os.getloadavg()[0]]
edited = 0
for r in range(args.rounds):
    order = ("a", "b") if r % 2 == 0 else ("b", "a")
    sample = rng.sample(py, 2 * args.files)
    steps = [("noop", ("scan", "."))]
    if args.touch:
        steps.append(("touch", ("scan", ".")))
    steps += [("rescan", ("scan", ".")), ("lint", ("lint",))]
    for what, argv in steps:
        if what == "touch":
            now = time.time()
            for rel in sample[args.files:]:
                os.utime(os.path.join(corpus, rel), (now, now))
        if what == "rescan":
            for rel in sample[:args.files]:
                with open(os.path.join(corpus, rel), "a") as f:
                    f.write(f"\n# rescan_ab round {r}\n")
                edited += 1
        for k in order:
            m = run(getattr(args, k), dbs[k], *argv)
            results[k][what].append(m)
            print(r, k, what, m, flush=True)
load.append(os.getloadavg()[0])


def ratios(what, i):
    rs = [b[i] / a[i] for a, b in zip(results["a"][what], results["b"][what])]
    return {"median": round(statistics.median(rs), 3), "min": round(min(rs), 3),
            "max": round(max(rs), 3)}


summary = {"corpus": corpus, "files_edited_per_round": args.files, "rounds": args.rounds,
           "load_start_end": [round(x, 2) for x in load], "runs": results}
for what in ("rescan", "noop", "lint") + (("touch",) if args.touch else ()):
    summary[f"{what}_ratio_b_over_a"] = {
        "wall": ratios(what, 0), "cpu": ratios(what, 1), "rss": ratios(what, 2)}
print(json.dumps(summary, indent=1))
