#!/usr/bin/env python3
"""Edges by language and confidence (issue 32, items 3 and 4) on a scanned workspace.

Prints, for the map in DIR (scanned by LOCI):

1. resolved references by kind, provenance and confidence;
2. resolved references whose file and target are in languages of different link groups
   (JavaScript/TypeScript/TSX and C/C++ link; every other pair must be 0), and those whose
   target is in another package (the nearest folder holding a Cargo.toml, package.json,
   go.mod or pyproject.toml) that the file imports nothing from (must be 0);
3. `loci impact TARGET --depth 3` at the default confidence, at `--min-confidence 0`
   and with `--hard`: dependent files, what only weaker edges reach, and the least
   confidence of any edge listed with `--limit 0` (must not be below the default);
4. with --sample N, N random calls at each confidence (fixed --seed), each with its line
   and target, to judge by hand (the precision behind the default).

Usage: bench/edges_bench.py LOCI DIR [--target urllib/parse.py] [--sample 15] [--seed 7]
  DIR  a workspace scanned by LOCI (`loci scan` run in it), e.g. a copy of the stdlib.
"""
import argparse, json, os, random, sqlite3, subprocess

GROUP = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}
MANIFESTS = ("Cargo.toml", "package.json", "go.mod", "pyproject.toml")


def cross_package(db):
    """Resolved references into a package the referring file imports nothing from."""
    paths = dict(db.execute("SELECT file_id, path FROM files"))
    roots = {os.path.dirname(p) for p in paths.values() if os.path.basename(p) in MANIFESTS}

    def package(path):
        d = os.path.dirname(path)
        while d and d not in roots:
            d = os.path.dirname(d)
        return d

    pkg = {f: package(p) for f, p in paths.items()}
    imported = {}
    for f, t in db.execute("SELECT from_file_id, to_file_id FROM deps WHERE to_file_id IS NOT NULL"):
        imported.setdefault(f, set()).add(pkg[t])
    return sum(1 for f, t in db.execute(
        "SELECT r.file_id, s.file_id FROM refs r JOIN symbols s ON s.symbol_id = r.target_id")
        if pkg[f] != pkg[t] and pkg[t] not in imported.get(f, ()))


def impact(loci, d, target, *extra):
    out = subprocess.run([loci, "-C", d, "impact", target, "--depth", "3", "--limit", "0",
                          "--json", *extra], capture_output=True, text=True)
    if out.returncode not in (0, 1):  # a loci from before the flag
        return None, None, out.stderr.strip().splitlines()[-1]
    r = json.loads(out.stdout)["result"]
    least = min((n["via"]["confidence"] for n in r["nodes"]), default=None)
    return r["dependents"], r.get("weaker"), least


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("loci")
    ap.add_argument("dir")
    ap.add_argument("--target", default="urllib/parse.py")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    db = sqlite3.connect(os.path.join(args.dir, ".loci", "loci.db"))
    print("resolved references (kind, provenance, confidence: count)")
    for kind, prov, conf, n in db.execute(
            "SELECT kind, provenance, round(confidence, 2), count(*) FROM refs"
            " WHERE target_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"):
        print(f"  {kind} {prov} {conf:.2f}: {n}")
    crossing = 0
    for a, b, n in db.execute(
            "SELECT f.language, g.language, count(*) FROM refs r"
            " JOIN files f ON f.file_id = r.file_id"
            " JOIN symbols s ON s.symbol_id = r.target_id"
            " JOIN files g ON g.file_id = s.file_id GROUP BY 1, 2"):
        if GROUP.get(a, a) != GROUP.get(b, b):
            crossing += n
            print(f"  crossing: {a} -> {b}: {n}")
    print(f"references resolved across unlinked languages: {crossing}")
    print(f"references resolved into a package the file imports nothing from: {cross_package(db)}")
    for label, extra in [("default", []), ("--min-confidence 0", ["--min-confidence", "0"]),
                         ("--hard", ["--hard"])]:
        n, weaker, least = impact(args.loci, args.dir, args.target, *extra)
        print(f"impact {args.target} --depth 3 {label}: {n} dependent files, "
              f"{weaker} more only through weaker edges, least confidence listed {least}")
    if args.sample:
        random.seed(args.seed)
        for conf in (0.2, 0.3, 0.5, 0.7, 0.9):
            rows = db.execute(
                "SELECT f.path, r.line, t.key FROM refs r JOIN files f ON f.file_id = r.file_id"
                " JOIN symbols t ON t.symbol_id = r.target_id"
                " WHERE r.kind = 'call' AND round(r.confidence, 2) = ? ORDER BY r.ref_id",
                (conf,)).fetchall()
            print(f"sample at {conf:.2f} ({len(rows)} calls)")
            for path, line, key in random.sample(rows, min(args.sample, len(rows))):
                with open(os.path.join(args.dir, path), errors="replace") as f:
                    text = f.read().split("\n")[line].strip()[:90]
                print(f"  {path}:{line + 1} {text!r} -> {key}")


if __name__ == "__main__":
    main()
