#!/usr/bin/env python3
"""Memory growth: `decide`, `learn` and `remember` writes into a scanned repository through
one long-running `loci mcp` server (the official MCP Python SDK as the agent, over stdio),
as an agent writes memory.

    memory_growth.py --loci PATH --corpus DIR [--n 5000] [--db COPY.db]

The corpus's store (`DIR/.loci/loci.db`, scanned) is copied to `--db` (default: a
temporary file) and never written. Then `n` decisions, `n` lessons and `n` page rewrites
(spread over `n / 10` files of the corpus, ten revisions each) are written in that order,
each naming a real symbol of the corpus in backticks, with a subject. Prints JSON lines:
- per phase: bytes the database grew per write (pages in use after a checkpoint, minus
  the text written), and write round trips p50 / p95 in ms over the phase's first and last
  500 writes;
- at 0, n and 3n entries: `loci lint` wall time in ms, its first run after the writes
  (which checks them), then the median of 3 (what changed since: nothing), and one run
  made to check every claim; `loci check` and `loci context` (median of 3 runs each);
  fresh processes; and the machine's load average.
"""
import argparse, asyncio, json, os, shutil, sqlite3, statistics, subprocess, tempfile, time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

QUESTION = "how does shlex quote a string for the shell"


def size(db):
    """Bytes of the database in use: its pages less the free list (free pages that a
    migration or a deletion left are reused before the file grows)."""
    c = sqlite3.connect(db)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages, free, page = (c.execute(f"PRAGMA {p}").fetchone()[0]
                         for p in ("page_count", "freelist_count", "page_size"))
    c.close()
    return (pages - free) * page


def timed_cli(a, db, args, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run([a.loci, *args, "--db", db], cwd=a.corpus, capture_output=True, text=True)
        times.append((time.perf_counter() - t) * 1000)
        if r.returncode not in (0, 1):
            raise SystemExit(f"loci {args}: {r.returncode}: {r.stderr[-500:]}")
    return round(statistics.median(times), 1)


def lint_everything_ms(a, db):
    """One `loci lint` that checks every claim, as the first lint of a store does (the row
    `*` of `map_changes`), however little changed."""
    c = sqlite3.connect(db)
    c.execute("INSERT OR IGNORE INTO map_changes(name) VALUES ('*')")
    c.commit()
    c.close()
    return timed_cli(a, db, ["lint"], runs=1)


def probe(a, db, entries):
    print(json.dumps({
        "entries": entries,
        # The first lint after the writes checks them; the next ones what changed since.
        "lint_first_ms": timed_cli(a, db, ["lint"], runs=1),
        "lint_ms": timed_cli(a, db, ["lint"]),
        "lint_everything_ms": lint_everything_ms(a, db),
        "check_ms": timed_cli(a, db, ["check"]),
        "context_ms": timed_cli(a, db, ["context", QUESTION]),
        "db_bytes": size(db),
        "load": os.getloadavg()[0],
    }), flush=True)


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))], 1)


def symbols(db, n):
    """Up to `n` (file, qualified name) pairs of top-level functions, spread over the
    corpus (the writes cycle through them when there are fewer)."""
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = c.execute(
        "SELECT f.path, s.qualified_name FROM symbols s JOIN files f USING (file_id) "
        "WHERE s.kind = 'function' AND s.qualified_name NOT LIKE '%.%' AND f.path NOT LIKE 'test%' "
        "ORDER BY s.symbol_id").fetchall()
    c.close()
    step = max(1, len(rows) // n)
    return rows[::step][:n]


async def phase(session, name, calls):
    times, text = [], 0
    for tool, args in calls:
        t = time.perf_counter()
        r = await session.call_tool(tool, args)
        times.append((time.perf_counter() - t) * 1000)
        if r.is_error:
            raise SystemExit(f"{tool} {args}: {r.content}")
        text += len((args.get("text") or args.get("body")).encode())
    return times, text


async def main(a):
    db = a.db or os.path.join(tempfile.mkdtemp(), "loci.db")
    src = os.path.join(a.corpus, ".loci", "loci.db")
    c = sqlite3.connect(src)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    shutil.copy(src, db)
    # Migrate and settle before measuring: the first open may upgrade the schema, and a map
    # from an older analysis is made again by the first command that reads it.
    subprocess.run([a.loci, "scan", "--db", db], cwd=a.corpus, capture_output=True, check=True)
    probe(a, db, 0)
    found = symbols(db, a.n)
    targets = [found[i % len(found)] for i in range(a.n)]
    files = sorted({f for f, _ in found})[: max(1, a.n // 10)]
    decide = [("decide", {"text": f"Keep `{q}()` free of I/O; callers rely on it ({i})", "subject": f})
              for i, (f, q) in enumerate(targets)]
    learn = [("learn", {"text": f"`{q}()` surprised us once: read it before changing it ({i})", "subject": f})
             for i, (f, q) in enumerate(targets)]
    remember = [("remember", {"subject": files[i % len(files)],
                              "body": f"Notes, revision {i}: the entry points are `{targets[i][1]}()`."})
                for i in range(a.n)]
    params = StdioServerParameters(command=os.path.abspath(a.loci), args=["mcp"], cwd=a.corpus,
                                   env={**os.environ, "LOCI_DB": db})
    written = 0
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for name, calls in (("decide", decide), ("learn", learn), ("remember", remember)):
                before = size(db)
                times, text = await phase(session, name, calls)
                grown = size(db) - before
                written += len(calls)
                print(json.dumps({
                    "phase": name, "writes": len(calls),
                    "growth_per_write_bytes": round((grown - text) / len(calls)),
                    "text_per_write_bytes": round(text / len(calls)),
                    "first500_p50_ms": pct(times[:500], 0.5), "first500_p95_ms": pct(times[:500], 0.95),
                    "last500_p50_ms": pct(times[-500:], 0.5), "last500_p95_ms": pct(times[-500:], 0.95),
                    "load": os.getloadavg()[0],
                }), flush=True)
                if name == "decide":
                    probe(a, db, written)
    probe(a, db, written)


ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--n", type=int, default=5000)
ap.add_argument("--db")
args = ap.parse_args()
args.loci = os.path.abspath(args.loci)
asyncio.run(main(args))
