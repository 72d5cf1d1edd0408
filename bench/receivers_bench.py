#!/usr/bin/env python3
"""Receiver types (issue 32 item 5): where the calls of a method name went.

Lists every `.NAME(` written in the tree's `.rs`/`.py` files outside comments (as grep
finds them), joins each with the reference loci stored at that place (`loci refs NAME
--limit 0 --json`), and prints how many resolved at confidence 0.5 or more to each
definition, how many stayed below or unresolved, and the unresolved places (to judge by
hand which are calls on the type asked about). With --sample N --target KEY_SUFFIX, prints
N of the calls resolved to that definition, drawn with a fixed seed, with their line, to
judge precision by hand.

    bench/receivers_bench.py LOCI TREE block_on [--sample 50 --target Runtime.block_on@method]
"""

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys


def sites(tree, name, extensions):
    pattern = re.compile(r"\." + re.escape(name) + r"\(")
    found = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in (".loci", ".git", "target"))
        for f in sorted(files):
            if not f.endswith(extensions):
                continue
            path = os.path.join(root, f)
            try:
                with open(path, encoding="utf-8") as handle:
                    lines = handle.read().split("\n")
            except (UnicodeDecodeError, OSError):
                continue
            for i, line in enumerate(lines):
                stripped = line.strip()
                if stripped.startswith(("//", "#", "*")):
                    continue
                for m in pattern.finditer(line):
                    rel = os.path.relpath(path, tree)
                    # The name's own column: one past the dot.
                    found.append((rel, i + 1, m.start() + 1, stripped))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("loci")
    parser.add_argument("tree")
    parser.add_argument("name")
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--target", default=None)
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--unresolved", action="store_true")
    args = parser.parse_args()
    out = subprocess.run(
        [os.path.abspath(args.loci) if os.sep in args.loci else args.loci, "refs", args.name, "--limit", "0", "--json"],
        cwd=args.tree,
        capture_output=True,
        text=True,
        check=False,
    )
    refs = json.loads(out.stdout)["result"]
    by_place = {
        (r["path"], r["line"] + 1, r["column"]): r for r in refs if r["kind"] == "call"
    }
    places = sites(args.tree, args.name, (".rs", ".py"))
    counts = collections.Counter()
    resolved = []
    unresolved = []
    for path, line, column, text in places:
        r = by_place.get((path, line, column))
        if r is None:
            counts["(no reference: inside a macro's arguments or not parsed)"] += 1
            unresolved.append((path, line, text, "no reference"))
            continue
        target = r["target_key"].split("#", 1)[1] if r["target_key"] else None
        if target and r["confidence"] >= 0.5:
            counts[target] += 1
            resolved.append((path, line, text, target, r["confidence"]))
        else:
            label = f"below 0.5 ({target})" if target else "unresolved"
            counts[label] += 1
            unresolved.append((path, line, text, label))
    print(f"{len(places)} `.{args.name}(` sites outside comments")
    for label, n in counts.most_common():
        print(f"{n:6}  {label}")
    if args.unresolved:
        print("\nnot resolved at 0.5 or more:")
        for path, line, text, label in unresolved:
            print(f"  {path}:{line}: {text[:100]}  [{label}]")
    if args.sample and args.target:
        chosen = [r for r in resolved if r[3] == args.target]
        random.Random(args.seed).shuffle(chosen)
        print(f"\n{min(args.sample, len(chosen))} of {len(chosen)} resolved to {args.target}:")
        for path, line, text, target, confidence in sorted(chosen[: args.sample]):
            print(f"  {path}:{line}: {text[:100]}  ({confidence:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
