"""What the rescan benchmarks (`rescan_ab.py`, `rescan_scale.py`) share: one `loci`
process measured from wait4, and the claims every lint of the corpus checks."""
import os, re, subprocess, time


def run(loci, db, corpus, *argv):
    """(wall s, cpu s, peak RSS MiB) of `loci ARGV --db DB` in CORPUS."""
    start = time.perf_counter()
    proc = subprocess.Popen([os.path.abspath(loci), *argv, "--db", db], cwd=corpus,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # `lint` exits 1 when it finds contradictions
        raise SystemExit(f"{loci} {argv} exited {code}")
    return (round(wall, 2), round(usage.ru_utime + usage.ru_stime, 2),
            round(usage.ru_maxrss / 1024, 1))


def python_files(corpus):
    """The corpus's Python files (relative paths, sorted), outside `.loci`."""
    return sorted(os.path.relpath(os.path.join(d, f), corpus)
                  for d, _, fs in os.walk(corpus) if "/.loci" not in d
                  for f in fs if f.endswith(".py"))


def plant_claims(corpus, py, rng):
    """Writes `docs/rescan-bench.md`: 60 claims of misspelt names of the corpus's own
    Python functions (`urlsplti()` for `urlsplit`), read from a sample of `py` drawn with
    `rng`, so every lint computes 60 "did you mean" suggestions, as a repository's docs
    and memory do."""
    names = set()
    for rel in rng.sample(py, min(400, len(py))):
        try:
            text = open(os.path.join(corpus, rel), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        names.update(re.findall(r"^def ([A-Za-z_][A-Za-z0-9_]{5,})\(", text, re.M))
    claims = []
    for n in sorted(names)[:60]:
        i = len(n) // 2
        claims.append(f"- `{n[:i]}{n[i + 1]}{n[i]}{n[i + 2:]}()`")
    os.makedirs(os.path.join(corpus, "docs"), exist_ok=True)
    with open(os.path.join(corpus, "docs", "rescan-bench.md"), "w") as f:
        f.write("# Claims for the rescan benchmark\n\n" + "\n".join(claims) + "\n")
