#!/usr/bin/env python3
"""What two maps of one tree resolve differently: every reference, joined on its file,
position, name and kind.

    refs_ab.py A.db B.db [SAMPLES]

Scan the same folder with each binary into its own store (`loci scan . --db A.db`), then
compare: prints how many references changed, grouped by what changed (resolved to
another target, newly resolved, now unresolved, same target with another provenance or
confidence) and kind, and SAMPLES random examples of each group (default 6) as
(path, line, column, name, kind), A's (target, provenance, confidence), B's.
"""
import collections, random, sqlite3, sys


def load(db):
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute(
        """SELECT f.path, r.line, r.column, r.name, r.kind, t.symbol_id, tf.path,
                  t.qualified_name, r.provenance, r.confidence
           FROM refs r JOIN files f ON f.file_id = r.file_id
           LEFT JOIN symbols t ON t.symbol_id = r.target_id
           LEFT JOIN files tf ON tf.file_id = t.file_id""")
    return {(p, l, c, n, k): (f"{tp}#{tq}" if tid else None, prov, round(conf, 2))
            for p, l, c, n, k, tid, tp, tq, prov, conf in rows}


a, b = load(sys.argv[1]), load(sys.argv[2])
samples = int(sys.argv[3]) if len(sys.argv) > 3 else 6
print(f"references A {len(a)} B {len(b)}; only in A {len(a.keys() - b.keys())}, "
      f"only in B {len(b.keys() - a.keys())}")
groups = collections.defaultdict(list)
for key in a.keys() & b.keys():
    if a[key] == b[key]:
        continue
    ta, tb = a[key][0], b[key][0]
    what = ("resolved to another target" if ta and tb and ta != tb else
            "newly resolved" if tb and not ta else
            "now unresolved" if ta and not tb else
            "same target, other provenance or confidence")
    groups[(what, key[4])].append((key, a[key], b[key]))
random.seed(1)
for (what, kind), changed in sorted(groups.items(), key=lambda g: -len(g[1])):
    print(f"{len(changed):7} {what} ({kind})")
for (what, kind), changed in sorted(groups.items(), key=lambda g: -len(g[1])):
    if samples:
        print(f"== {what} ({kind})")
        for example in random.sample(changed, min(samples, len(changed))):
            print("  ", example)
