#!/usr/bin/env python3
"""`loci check` on the CPython stdlib map with 1,000 memory pages of realistic claims.

Pages are generated from the map: one page per file for the 1,000 files with the most
symbols, each naming its file, two or three of its symbols and one file it imports, in
backticks (as an agent's note would). Then `loci check` runs as a whole process N times;
the median, min and max wall times are reported (target: <= 0.5 s).

Usage: bench/check_bench.py [--runs N]   (after cargo build --release; uses
/tmp/loci-bench-stdlib, created by bench/scan_bench.py)
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCI = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "loci")
CORPUS = os.path.join(tempfile.gettempdir(), "loci-bench-stdlib")


def loci(*args, check=True):
    p = subprocess.run([LOCI, *args], capture_output=True, text=True)
    if check and p.returncode not in (0, 1):
        sys.exit(f"loci {' '.join(args)}: {p.stderr}")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--pages", type=int, default=1000)
    args = ap.parse_args()
    if not os.path.isdir(CORPUS):
        sys.exit(f"{CORPUS} is missing: run bench/scan_bench.py first")
    work = tempfile.mkdtemp(prefix="loci-check-")
    db = os.path.join(work, "check.db")
    loci("scan", CORPUS, "--db", db)
    import sqlite3
    conn = sqlite3.connect(db)
    files = [r[0] for r in conn.execute(
        "SELECT f.path FROM files f JOIN symbols s USING (file_id) GROUP BY f.file_id ORDER BY count(*) DESC, f.path LIMIT ?",
        (args.pages,))]
    started = time.perf_counter()
    for path in files:
        syms = [r[0] for r in conn.execute(
            "SELECT s.qualified_name FROM symbols s JOIN files f USING (file_id) WHERE f.path = ? AND s.kind IN ('function','method','class') ORDER BY s.start_byte LIMIT 3",
            (path,))]
        dep = conn.execute(
            "SELECT b.path FROM deps d JOIN files a ON a.file_id = d.from_file_id JOIN files b ON b.file_id = d.to_file_id WHERE a.path = ? ORDER BY b.path LIMIT 1",
            (path,)).fetchone()
        claims = ", ".join(f"`{s}()`" for s in syms)
        body = f"`{path}` is where {claims} live."
        if dep:
            body += f" It leans on `{dep[0]}`."
        loci("-C", CORPUS, "--db", db, "remember", path, "--text", body, "--author", "bench:check")
    write_s = time.perf_counter() - started
    conn.close()
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        out = loci("-C", CORPUS, "--db", db, "check", "--json", check=False)
        times.append(time.perf_counter() - t)
    report = json.loads(out.stdout)["result"]["lint"]
    print(f"corpus: {CORPUS}; {len(files)} memory pages written in {write_s:.1f} s ({len(files) / write_s:.0f} writes/s, one CLI process each)")
    print(f"- `loci check` (whole process), s: {statistics.median(times):.3f} (min {min(times):.3f}, max {max(times):.3f}) over {args.runs} runs")
    print(f"- claims checked: {report['claims_checked']}; open contradictions: {len(report['contradictions'])}; stale marks: {len(report['stale'])}")


if __name__ == "__main__":
    main()
