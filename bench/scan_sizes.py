#!/usr/bin/env python3
"""First scans of growing parts of one corpus: is a scan's time linear in files, and its
peak memory bounded? (issue 32).

    scan_sizes.py --loci LOCI --corpus DIR [--sizes 5000,10000,25000] [--work DIR]

Each part is the first N files of the corpus in path order (`.loci/` left out), made as
hard links under WORK/part-N (no copy of the data; WORK must be on the corpus's file
system) and reused by later runs. The whole corpus is the last size. Each part gets one
first scan into a fresh store, as a whole process: wall and CPU seconds and peak RSS from
wait4, the files the scan mapped (its report's totals) and mapped files per second of wall
time. Prints one line per part, then the whole as JSON with the load average at the start
and the end.
"""
import argparse, json, os, shutil, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--sizes", default="5000,10000,25000")
ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "loci-scan-sizes"))
args = ap.parse_args()

corpus = os.path.abspath(args.corpus)
files = []
for dirpath, dirnames, filenames in os.walk(corpus):
    dirnames[:] = sorted(d for d in dirnames if d != ".loci")
    files.extend(os.path.relpath(os.path.join(dirpath, f), corpus) for f in sorted(filenames))


def part(n):
    """The first `n` files of the corpus, hard-linked under WORK/part-N."""
    if n >= len(files):
        return corpus
    root = os.path.join(args.work, f"part-{n}")
    if not os.path.isdir(root):
        for rel in files[:n]:
            dest = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.link(os.path.join(corpus, rel), dest)
    return root


def scan(root):
    folder = tempfile.mkdtemp()
    db = os.path.join(folder, "scan.db")
    out = os.path.join(folder, "report.json")
    start = time.perf_counter()
    with open(out, "w") as sink:
        child = subprocess.Popen([os.path.abspath(args.loci), "scan", root, "--db", db, "--json"],
                                 stdout=sink, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"scan of {root} failed: status {status}")
    with open(out) as f:
        mapped = json.load(f)["result"]["totals"]["files"]
    shutil.rmtree(folder)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, mapped


rows = []
load = [os.getloadavg()[0]]
for n in [int(s) for s in args.sizes.split(",")] + [len(files)]:
    wall, cpu, rss, mapped = scan(part(n))
    row = {"walked": min(n, len(files)), "mapped": mapped, "wall_s": round(wall, 1),
           "cpu_s": round(cpu, 1), "peak_rss_mib": round(rss), "mapped_per_s": round(mapped / wall)}
    print(row, flush=True)
    rows.append(row)
load.append(os.getloadavg()[0])
print(json.dumps({"parts": rows, "load_start_end": [round(x, 2) for x in load]}))
