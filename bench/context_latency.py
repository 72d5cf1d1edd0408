#!/usr/bin/env python3
"""Whole-process latency of `loci context` on a scanned corpus, over a case set's questions.

    context_latency.py --loci PATH --corpus DIR --cases FILE.jsonl [--rounds 3]

Runs every question `rounds` times (`loci context QUESTION --json`, output discarded) and
prints p50 / p95 / max in ms and the machine's load average.
"""
import argparse, json, os, subprocess, time

ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--cases", required=True)
ap.add_argument("--rounds", type=int, default=3)
a = ap.parse_args()
a.loci = os.path.abspath(a.loci)
qs = [json.loads(l)["query"] for l in open(a.cases) if l.strip()]
times = []
for _ in range(a.rounds):
    for q in qs:
        t = time.perf_counter()
        subprocess.run([a.loci, "context", q, "--json"], cwd=a.corpus, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
times.sort()
pick = lambda p: times[min(len(times) - 1, int(p * len(times)))]
print(json.dumps({"runs": len(times), "p50_ms": round(pick(0.5), 1), "p95_ms": round(pick(0.95), 1),
                  "max_ms": round(times[-1], 1), "load": os.getloadavg()[0]}))
