#!/usr/bin/env python3
"""Benchmark `loci scan` against a bare tree-sitter parse pass and universal-ctags.

Runs the three alternately (A B C A B C ...) on the same corpus, so load on a shared
machine hits them alike, and reports the median of the per-round ratios with min and
max, plus peak RSS (per child process, from wait4), map sizes, the no-op rescan, and
`loci symbol` / `loci impact --depth 3` as whole processes.

Usage: bench/scan_bench.py [--corpus stdlib|site] [--rounds N]
Needs: cargo build --release -p loci-cli -p loci-engine --bins --example parse_only; ctags.
(`--bins`: with only `--example` named, cargo builds the example and leaves `loci` as it was.)
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LOCI = os.path.join(TARGET, "release", "loci")
PARSE_ONLY = os.path.join(TARGET, "release", "examples", "parse_only")
STDLIB = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                        capture_output=True, text=True, check=True).stdout.strip()


def corpus(kind):
    """A scratch copy of the stdlib's .py files (with or without site-packages)."""
    dest = os.path.join(tempfile.gettempdir(), f"loci-bench-{kind}")
    if os.path.isdir(dest):
        return dest
    for dirpath, dirnames, filenames in os.walk(STDLIB):
        rel = os.path.relpath(dirpath, STDLIB)
        if kind == "stdlib" and (rel == "site-packages" or rel.startswith("site-packages" + os.sep)):
            continue
        for f in filenames:
            if f.endswith(".py"):
                os.makedirs(os.path.join(dest, rel), exist_ok=True)
                shutil.copy2(os.path.join(dirpath, f), os.path.join(dest, rel, f))
    return dest


def run(argv, cwd=None):
    """Runs a process; returns (wall seconds, peak RSS MiB, stdout)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{argv} failed: {status}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def summary(values):
    return f"{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="stdlib", choices=["stdlib", "site"])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    src = corpus(args.corpus)
    work = tempfile.mkdtemp(prefix="loci-bench-")
    rows = {"parse": [], "scan": [], "ctags": []}
    rss = {"parse": [], "scan": [], "ctags": []}
    db = os.path.join(work, "bench.db")
    for _ in range(args.rounds):
        w, m, _ = run([PARSE_ONLY, src])
        rows["parse"].append(w); rss["parse"].append(m)
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        w, m, _ = run([LOCI, "scan", src, "--db", db, "--json"])
        rows["scan"].append(w); rss["scan"].append(m)
        w, m, _ = run(["ctags", "-R", "--languages=Python", "-f", os.path.join(work, "tags"), src])
        rows["ctags"].append(w); rss["ctags"].append(m)
    scan_vs_parse = [s / p for s, p in zip(rows["scan"], rows["parse"])]
    scan_vs_ctags = [s / c for s, c in zip(rows["scan"], rows["ctags"])]
    _, _, out = run([LOCI, "stats", "--db", db, "--json", "-C", src])
    totals = json.loads(out)["result"]["totals"]
    noop = [run([LOCI, "scan", src, "--db", db, "--json"])[0] for _ in range(10)]
    symbol = [run([LOCI, "symbol", "urlopen", "--db", db, "-C", src])[0] for _ in range(20)]
    impact = [run([LOCI, "impact", "urllib/parse.py", "--depth", "3", "--db", db, "-C", src])[0] for _ in range(20)]
    with open(os.path.join(work, "tags"), errors="replace") as f:
        ctags_tags = sum(1 for line in f if not line.startswith("!_TAG"))
    print(f"corpus: {args.corpus} ({src}), {totals['files']} files, {totals['lines']} lines; {args.rounds} rounds, {os.cpu_count()} cores")
    print(f"| measure | loci scan | parse-only pass | ctags -R |")
    print(f"| --- | --- | --- | --- |")
    print(f"| wall time, s (median, min-max) | {summary(rows['scan'])} | {summary(rows['parse'])} | {summary(rows['ctags'])} |")
    print(f"| peak RSS, MiB (median) | {statistics.median(rss['scan']):.0f} | {statistics.median(rss['parse']):.0f} | {statistics.median(rss['ctags']):.0f} |")
    print(f"| output | {totals['symbols']} symbols, {totals['refs']} refs ({totals['refs_resolved']} resolved), {totals['deps']} deps, {totals['deps_unresolved']} unresolved imports | trees only | {ctags_tags} tags |")
    print()
    print(f"- scan / parse-only ratio: {summary(scan_vs_parse)}")
    print(f"- scan / ctags ratio: {summary(scan_vs_ctags)}")
    print(f"- no-op rescan (whole process), s: {summary(noop)}")
    print(f"- `loci symbol urlopen` (whole process), ms: {summary([x * 1000 for x in symbol])}")
    print(f"- `loci impact urllib/parse.py --depth 3` (whole process), ms: {summary([x * 1000 for x in impact])}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
