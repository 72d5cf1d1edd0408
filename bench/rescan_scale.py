#!/usr/bin/env python3
"""First scan, no-op rescan, touch 100, edit 100 and `loci lint` of one `loci` binary on
a large corpus (issue 37: the 48,000-file corpus).

    rescan_scale.py [LOCI] [--dir DIR] [--rounds 3] [--files 100] [--keep-store]

The corpus, made once in DIR/corpus and reused: a copy of CPython's standard library
with its site-packages and of `~/.cargo/registry/src` (the crates cargo downloaded), under
`crates/`; plus `docs/rescan-bench.md`, 60 claims of misspelt names of the corpus's own
Python functions (`urlsplti()`), so every lint computes 60 "did you mean" suggestions, as
`bench/rescan_ab.py` does. The store is DIR/loci.db (`--db`), made anew unless
`--keep-store`.

Runs, each a whole process with wall, CPU (user + sys) and peak RSS from wait4: the
first scan; then per round a no-op rescan, a rescan after touching `--files` Python
files (mtime moved, content the same), one after editing `--files` others (a comment
appended), and `loci lint`. A rescan that changed files lints before it returns, so its
figures include the lint. Prints each run, then a JSON summary with the load average
at the start and the end.
"""
import argparse, json, os, random, shutil, subprocess, sys, sysconfig, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rescan_common  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))

ap = argparse.ArgumentParser()
ap.add_argument("loci", nargs="?", default=os.path.join(TARGET, "release", "loci"))
ap.add_argument("--dir", default="/tmp/loci-rescan-scale")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--files", type=int, default=100)
ap.add_argument("--keep-store", action="store_true")
args = ap.parse_args()
loci = os.path.abspath(args.loci)
corpus = os.path.join(args.dir, "corpus")
db = os.path.join(args.dir, "loci.db")

if not os.path.isdir(corpus):
    os.makedirs(args.dir, exist_ok=True)
    shutil.copytree(sysconfig.get_paths()["stdlib"], corpus, symlinks=True)
    registry = os.path.expanduser("~/.cargo/registry/src")
    for index in sorted(os.listdir(registry)):
        shutil.copytree(os.path.join(registry, index), os.path.join(corpus, "crates"),
                        symlinks=True, dirs_exist_ok=True)


def run(*argv):
    return rescan_common.run(loci, db, corpus, *argv)


py = rescan_common.python_files(corpus)
rng = random.Random(37)
rescan_common.plant_claims(corpus, py, rng)

load = [os.getloadavg()[0]]
results = {"first": None, "noop": [], "touch": [], "edit": [], "lint": []}
if not args.keep_store or not os.path.exists(db):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    results["first"] = run("scan", ".")
    print("first scan", results["first"], flush=True)
run("scan", ".")  # settles what the first scan left (the claims' first lint)
for r in range(args.rounds):
    sample = rng.sample(py, 2 * args.files)
    results["noop"].append(run("scan", "."))
    now = time.time()
    for rel in sample[:args.files]:
        os.utime(os.path.join(corpus, rel), (now, now))
    results["touch"].append(run("scan", "."))
    for rel in sample[args.files:]:
        with open(os.path.join(corpus, rel), "a") as f:
            f.write(f"\n# rescan_scale round {r}\n")
    results["edit"].append(run("scan", "."))
    results["lint"].append(run("lint"))
    for what in ("noop", "touch", "edit", "lint"):
        print(r, what, results[what][-1], flush=True)
load.append(os.getloadavg()[0])
files = subprocess.run(["sqlite3", db, "SELECT count(*) FROM files"], capture_output=True,
                       text=True).stdout.strip()
print(json.dumps({"loci": loci, "corpus": corpus, "files_mapped": files,
                  "files_per_round": args.files, "rounds": args.rounds,
                  "load_start_end": [round(x, 2) for x in load], "runs": results}, indent=1))
