#!/usr/bin/env python3
"""Peak memory of `loci scan` on a large generated workspace.

The workspace is N copies of the CPython standard library's `.py` files (without
`site-packages`, 1,790 files and ~858K lines per copy) under renamed top folders
(`copy_00/`, `copy_01/`, ...), so every copy is real code and every copy's modules
resolve among themselves. `--files 50000` makes 28 copies (50,120 files).

Runs, each as a whole process with its peak RSS taken from wait4 (ru_maxrss):
  1. a first scan into a fresh store (the worst case: every file parsed and written),
  2. a no-op rescan (nothing changed),
  3. a rescan after touching one file per copy (content changed).
Reports wall time, peak RSS, the map's size and the store's size, and fails (exit 1)
when any run's peak RSS exceeds --max-rss-mib.

Prints one line per run (wall time and peak RSS), then the whole report as JSON.

Usage: bench/scale_scan.py [LOCI] [--files N] [--max-rss-mib M] [--dir DIR] [--json OUT]
  LOCI  the loci binary to measure (default: target/release/loci)
The generated workspace is kept in DIR (default $TMPDIR/loci-scale) and reused by the next
run with the same --files; the store is recreated every run.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
STDLIB = sysconfig.get_paths()["stdlib"]


def stdlib_files():
    out = []
    for dirpath, dirnames, filenames in os.walk(STDLIB):
        rel = os.path.relpath(dirpath, STDLIB)
        if rel == "site-packages" or rel.startswith("site-packages" + os.sep):
            continue
        out.extend(os.path.join(rel, f) for f in filenames if f.endswith(".py"))
    return sorted(out)


def generate(dest, files):
    """N copies of the stdlib's .py files, enough for `files` files; reuses a finished one."""
    src = stdlib_files()
    copies = -(-files // len(src))
    marker = os.path.join(dest, ".generated")
    if os.path.exists(marker) and open(marker).read() == str(copies):
        return copies, copies * len(src)
    shutil.rmtree(dest, ignore_errors=True)
    for c in range(copies):
        top = os.path.join(dest, f"copy_{c:02d}")
        for rel in src:
            target = os.path.join(top, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(STDLIB, rel), target)
    with open(marker, "w") as f:
        f.write(str(copies))
    return copies, copies * len(src)


def run_measured(argv):
    """(wall s, peak RSS MiB, stdout) of one process, from wait4; exits on failure."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {err.read().decode(errors='replace')}")
        out.seek(0)
        stdout = out.read().decode(errors="replace")
    return wall, usage.ru_maxrss / 1024, stdout


def say(what, run):
    print(f"{what}: {run['wall_s']} s, peak RSS {run['peak_rss_mib']} MiB", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("loci", nargs="?", default=os.path.join(TARGET, "release", "loci"),
                    help="the loci binary (default: target/release/loci)")
    ap.add_argument("--files", type=int, default=50_000, help="files in the workspace (default 50,000)")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "loci-scale"))
    ap.add_argument("--max-rss-mib", type=float, default=1024,
                    help="the documented bound on every run's peak RSS (default 1024, docs/reliability.md)")
    ap.add_argument("--json", help="write the report here too")
    args = ap.parse_args()
    loci = os.path.realpath(args.loci)
    if not os.access(loci, os.X_OK):
        sys.exit(f"scale_scan: {args.loci} is not an executable; build it (cargo build --release -p loci-cli) or pass its path")
    ws = os.path.join(args.dir, f"ws-{args.files}")
    copies, files = generate(ws, args.files)
    db = os.path.join(args.dir, f"scan-{args.files}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    print(f"workspace: {files} files ({copies} copies of {STDLIB}) in {ws}", flush=True)
    report = {"files": files, "copies": copies, "loci": loci}
    # 1. First scan.
    wall, rss, out = run_measured([loci, "-C", ws, "--db", db, "--json", "scan"])
    scanned = json.loads(out)["result"]
    report["first_scan"] = {"wall_s": round(wall, 1), "peak_rss_mib": round(rss, 1),
                            "added": len(scanned["added"]),
                            "skipped": scanned.get("skipped")}
    say("first scan", report["first_scan"])
    # 2. No-op rescan.
    wall, rss, _ = run_measured([loci, "-C", ws, "--db", db, "--json", "scan"])
    report["noop_rescan"] = {"wall_s": round(wall, 2), "peak_rss_mib": round(rss, 1)}
    say("no-op rescan", report["noop_rescan"])
    # 3. One file changed per copy.
    for c in range(copies):
        path = os.path.join(ws, f"copy_{c:02d}", "textwrap.py")
        with open(path, "a") as f:
            f.write(f"\n\ndef scale_probe_{int(time.time())}():\n    return {c}\n")
    wall, rss, _ = run_measured([loci, "-C", ws, "--db", db, "--json", "scan"])
    report["rescan_after_edits"] = {"changed_files": copies, "wall_s": round(wall, 2), "peak_rss_mib": round(rss, 1)}
    say(f"rescan after {copies} edits", report["rescan_after_edits"])
    stats = json.loads(subprocess.run([loci, "-C", ws, "--db", db, "--json", "stats"],
                                      capture_output=True, check=True).stdout)
    report["map"] = stats["result"]["totals"]
    report["store_mib"] = round(sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s)) / 2**20, 1)
    report["bound_mib"] = args.max_rss_mib
    peak = max(report[k]["peak_rss_mib"] for k in ("first_scan", "noop_rescan", "rescan_after_edits"))
    ok = peak <= args.max_rss_mib
    report["within_bound"] = ok
    print(f"peak RSS {peak} MiB (the first scan's is {report['first_scan']['peak_rss_mib']} MiB) "
          f"{'within' if ok else 'OVER'} the bound of {args.max_rss_mib:g} MiB", flush=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
