#!/usr/bin/env python3
"""`loci context` as a whole process, team-backed vs solo, on a scanned corpus (issue 34:
"`context` latency with team memory within 10% of solo").

    team_context_ab.py --loci PATH --corpus DIR [--cases FILE.jsonl] [--pages 40] [--rounds 2]

Starts a throwaway PostgreSQL cluster (team_bench.py's `Cluster`: initdb + pg_ctl, password
authentication on loopback) and stops it at the end. The corpus is scanned once into a solo
store (`DIR/.loci/loci.db`), `--pages` pages of memory are written on its files, and the
store is copied to a second file that joins the team (`--db`, `LOCI_TEAM_URL`): both stores
then hold the same map and the same memory, and differ only in being team-backed. Each
question of `--cases` is asked as a `loci context QUESTION --json` process of the solo and
then of the team store (A B A B ...), `--rounds` times; each pair gives a ratio team / solo.
Prints JSON: p50 / p95 of each, the median per-pair ratio with min and max, and the load
average before and after. The team answers start their background catch-ups (at most one
every 2 s) as they would for a user; those run beside the next pairs.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from team_bench import Cluster, PASSWORD, pct  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(a, args, env=None, ok=(0, 1)):
    p = subprocess.run([a.loci, *args], cwd=a.corpus, env=env, capture_output=True, text=True)
    if p.returncode not in ok:
        raise SystemExit(f"loci {args}: exit {p.returncode}: {p.stderr}")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--cases", default=os.path.join(REPO, "fixtures/eval/dev/stdlib-dev.jsonl"))
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    a.loci = os.path.abspath(a.loci)
    a.corpus = os.path.abspath(a.corpus)
    solo_db = os.path.join(a.corpus, ".loci", "loci.db")
    team_db = os.path.join(a.corpus, ".loci", "team.db")
    base = dict(os.environ, PGPASSWORD=PASSWORD, LOCI_AUTHOR="agent:bench")
    base.pop("LOCI_TEAM_URL", None)
    base.pop("LOCI_DB", None)
    run(a, ["scan"], env=base, ok=(0,))
    files = sorted(
        os.path.relpath(os.path.join(d, f), a.corpus)
        for d, _, fs in os.walk(a.corpus) if ".loci" not in d
        for f in fs if f.endswith(".py")
    )
    # Written once: a rerun finds the first page there.
    if run(a, ["show", files[0]], env=base).returncode == 1:
        for f in files[: a.pages]:
            run(a, ["remember", f, "--text", f"How `{f}` is used, and what to watch for."], env=base, ok=(0,))
    cluster = Cluster()
    try:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(team_db + suffix):
                os.remove(team_db + suffix)
        run(a, ["backup", team_db], env=base, ok=(0,))
        team = dict(base, LOCI_TEAM_URL=cluster.url())
        run(a, ["--db", team_db, "team", "init"], env=team, ok=(0,))
        joined = json.loads(run(a, ["--db", team_db, "team", "join", "--json"], env=team, ok=(0,)).stdout)
        qs = [json.loads(l)["query"] for l in open(a.cases) if l.strip()]
        load_before = open("/proc/loadavg").read().split()[:3]
        solo_ms, team_ms, ratios = [], [], []
        for _ in range(a.rounds):
            for q in qs:
                pair = []
                for env, db in ((base, solo_db), (team, team_db)):
                    t = time.perf_counter()
                    run(a, ["--db", db, "context", q, "--json"], env=env)
                    pair.append((time.perf_counter() - t) * 1000)
                solo_ms.append(pair[0])
                team_ms.append(pair[1])
                ratios.append(pair[1] / pair[0])
        load_after = open("/proc/loadavg").read().split()[:3]
        print(json.dumps({
            "corpus": a.corpus, "questions": len(qs), "pairs": len(ratios),
            "uploaded_revisions": joined["result"]["revisions"],
            "solo_p50_ms": round(pct(solo_ms, 50), 1), "solo_p95_ms": round(pct(solo_ms, 95), 1),
            "team_p50_ms": round(pct(team_ms, 50), 1), "team_p95_ms": round(pct(team_ms, 95), 1),
            "ratio_median": round(statistics.median(ratios), 3),
            "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3),
            "load_before": load_before, "load_after": load_after,
        }))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
