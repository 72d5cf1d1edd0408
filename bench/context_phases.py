#!/usr/bin/env python3
"""Where `loci context`'s time goes, per phase, over a case set's questions.

    context_phases.py --loci PATH --corpus DIR --cases FILE.jsonl

Runs every question once as a whole process with `RUST_LOG=loci_engine::context=debug`,
which logs each phase's span on stderr as it closes (`close time.busy=…`), and prints per
span the total, p50, p95 and max in ms over the questions (a span entered several times
in one answer counts its sum), the slowest questions of the costliest spans, the whole
processes' p50 / p95 and the machine's load. Logging adds to the times: for the answer's
latency itself use context_latency.py.
"""
import argparse, json, os, re, subprocess, time

ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--cases", required=True)
a = ap.parse_args()
a.loci = os.path.abspath(a.loci)
qs = [json.loads(l)["query"] for l in open(a.cases) if l.strip()]
env = dict(os.environ, RUST_LOG="loci_engine::context=debug", NO_COLOR="1")
UNITS = {"s": 1000.0, "ms": 1.0, "µs": 1e-3, "ns": 1e-6}
CLOSE = re.compile(r"DEBUG (\S+): \S+: close time\.busy=([0-9.]+)(\S+)")


def pick(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


spans, walls = {}, []
for q in qs:
    t = time.perf_counter()
    p = subprocess.run([a.loci, "context", q, "--json"], cwd=a.corpus, env=env,
                       capture_output=True, text=True)
    walls.append((time.perf_counter() - t) * 1000)
    sums = {}
    for line in p.stderr.splitlines():
        m = CLOSE.search(line)
        if m:
            name = m.group(1).split(":")[-1]
            sums[name] = sums.get(name, 0.0) + float(m.group(2)) * UNITS[m.group(3)]
    for name, ms in sums.items():
        spans.setdefault(name, []).append((ms, q))
print(f"{len(qs)} questions, whole process p50 {pick(walls, .5):.1f} p95 {pick(walls, .95):.1f} ms, "
      f"load {os.getloadavg()[0]:.2f}")
ranked = sorted(spans.items(), key=lambda kv: -sum(ms for ms, _ in kv[1]))
for name, xs in ranked:
    ms = [m for m, _ in xs]
    print(f"{name:45} n={len(ms):3} total={sum(ms):7.1f} p50={pick(ms, .5):6.2f} "
          f"p95={pick(ms, .95):6.2f} max={max(ms):6.2f}")
for name, xs in ranked[:3]:
    for ms, q in sorted(xs, reverse=True)[:3]:
        print(f"slowest {name}: {ms:.1f} ms  {q[:100]}")
