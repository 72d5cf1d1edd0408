#!/usr/bin/env python3
"""Team memory (issue 34) against a local PostgreSQL: write latency team vs solo, paired,
and a cold sync of 10,000 revisions into a fresh checkout.

    team_bench.py --loci PATH [--n 40] [--revisions 10000]

Starts a throwaway cluster (initdb + pg_ctl from /usr/lib/postgresql/*/bin, as the user
`loci-pg` when run as root, on a free loopback port, password authentication) and stops it
at the end. Two checkouts of one small repository: one solo, one team-backed. Writes are
`loci remember` processes (the whole command: start, open, sync, write, pull), alternating
solo and team (S T S T ...); each pair gives a ratio team / solo. Prints JSON lines:
solo and team p50 / p95 in ms, the median of the per-pair ratios with min and max, and the
load average before and after (`uptime`). The cold sync appends `--revisions` events to
the server's log in SQL (1,000 topic pages, each revision naming a real function in backticks),
then times `loci team sync` in a fresh, scanned checkout.

`context` latency, team vs solo, after the writes (both checkouts then hold the same
pages): `--contexts` questions, each asked of the solo and the team checkout in turn
(S T S T ...), two ways: a `loci context` process (for the team it answers from the
replica and starts a detached catch-up at most every 2 s), and a `context` tool call to a long-running
`loci mcp` in each checkout (warmed by one call; for the team it answers from the replica
that its listener keeps current). Prints p50 / p95 of each and the median per-pair ratio.
"""
import argparse, glob, json, os, shutil, socket, statistics, subprocess, tempfile, time

PASSWORD = "bench-pw"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Cluster:
    def __init__(self):
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        self.dir = tempfile.mkdtemp(prefix="loci-pg-bench-")
        self.user = None
        if os.geteuid() == 0:
            self.user = "loci-pg"
            if subprocess.run(["id", self.user], capture_output=True).returncode != 0:
                subprocess.run(["useradd", "--system", "--no-create-home", self.user], check=True)
            subprocess.run(["chown", "-R", self.user, self.dir], check=True)
        s = socket.socket(); s.bind(("127.0.0.1", 0)); self.port = s.getsockname()[1]; s.close()
        self.run("initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth-local=trust",
                 "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8")
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-w", "-o",
                 f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1", "start")
        self.psql(f"CREATE ROLE loci_writer LOGIN PASSWORD '{PASSWORD}'", db="postgres")
        self.psql("CREATE DATABASE team OWNER loci_writer", db="postgres")

    def run(self, prog, *args):
        cmd = [f"{self.bin}/{prog}", *args]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, cwd=self.dir)

    def psql(self, sql, db="team"):
        self.run("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-p", str(self.port),
                 "-U", "postgres", "-d", db, "-c", sql)

    def stop(self):
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self):
        return f"postgres://loci_writer@127.0.0.1:{self.port}/team"


def checkout(a, cluster=None):
    root = tempfile.mkdtemp(prefix="loci-team-bench-")
    os.makedirs(f"{root}/src")
    for i in range(50):
        with open(f"{root}/src/m{i}.py", "w") as f:
            f.write(f"def f{i}(x):\n    return x + {i}\n\n\nclass C{i}:\n    def run(self):\n        return f{i}(1)\n")
    os.makedirs(f"{root}/.loci")
    if cluster:
        with open(f"{root}/.loci/config.toml", "w") as f:
            f.write(f'[team]\nurl = "{cluster.url()}"\n')
    loci(a, root, "scan")
    return root


def loci(a, root, *args, out=None, ok=(0,)):
    env = dict(os.environ, PGPASSWORD=PASSWORD, LOCI_AUTHOR="agent:bench")
    env.pop("LOCI_TEAM_URL", None)
    t = time.perf_counter()
    r = subprocess.run([a.loci, *args], cwd=root, env=env, capture_output=True, text=True)
    ms = (time.perf_counter() - t) * 1000
    if r.returncode not in ok:
        raise SystemExit(f"loci {args}: {r.returncode}: {r.stderr[-800:]}")
    if out is not None:
        out.append(r.stdout)
    return ms


class Mcp:
    """A `loci mcp` over stdio, spoken to in JSON-RPC lines (no SDK needed)."""

    def __init__(self, a, root):
        env = dict(os.environ, PGPASSWORD=PASSWORD, LOCI_AUTHOR="agent:bench")
        env.pop("LOCI_TEAM_URL", None)
        self.p = subprocess.Popen([a.loci, "mcp"], cwd=root, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  bufsize=1)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "team-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("loci mcp closed its stdout")
            msg = json.loads(line)
            if msg.get("id") == self.id:
                return msg

    def context(self, query):
        t = time.perf_counter()
        r = self.request("tools/call", {"name": "context", "arguments": {"query": query}})
        ms = (time.perf_counter() - t) * 1000
        if r.get("error") or r["result"].get("isError"):
            raise SystemExit(f"context {query!r}: {r}")
        return ms

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def summary(name, s_ms, t_ms):
    ratios = [t / s for s, t in zip(s_ms, t_ms)]
    return {
        "what": name, "pairs": len(s_ms),
        "solo_p50_ms": round(pct(s_ms, 50), 1), "solo_p95_ms": round(pct(s_ms, 95), 1),
        "team_p50_ms": round(pct(t_ms, 50), 1), "team_p95_ms": round(pct(t_ms, 95), 1),
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_min": round(min(ratios), 2), "ratio_max": round(max(ratios), 2),
        "load_after": uptime(),
    }


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", required=True)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--revisions", type=int, default=10000)
    ap.add_argument("--contexts", type=int, default=60)
    a = ap.parse_args()
    a.loci = os.path.abspath(a.loci)
    cluster = Cluster()
    try:
        solo, team = checkout(a), checkout(a, cluster)
        loci(a, team, "team", "init")
        print(json.dumps({"load_before": uptime()}), flush=True)
        s_ms, t_ms, ratios = [], [], []
        for i in range(a.n):
            text = f"`f{i % 50}()` adds {i} to its argument."
            s = loci(a, solo, "remember", f"src/m{i % 50}.py", "--text", text)
            t = loci(a, team, "remember", f"src/m{i % 50}.py", "--text", text)
            s_ms.append(s); t_ms.append(t); ratios.append(t / s)
        print(json.dumps({
            "writes": a.n,
            "solo_p50_ms": round(pct(s_ms, 50), 1), "solo_p95_ms": round(pct(s_ms, 95), 1),
            "team_p50_ms": round(pct(t_ms, 50), 1), "team_p95_ms": round(pct(t_ms, 95), 1),
            "ratio_median": round(statistics.median(ratios), 2),
            "ratio_min": round(min(ratios), 2), "ratio_max": round(max(ratios), 2),
            "load_after": uptime(),
        }), flush=True)
        # `context`, team vs solo, on the same memory.
        questions = [f"what does f{i % 50} add to its argument" for i in range(a.contexts)]
        print(json.dumps({"load_before": uptime()}), flush=True)
        s_ms, t_ms = [], []
        for q in questions:
            # Exit 1 is an abstention (nothing cleared the floor): an answer all the same.
            s_ms.append(loci(a, solo, "context", q, ok=(0, 1)))
            t_ms.append(loci(a, team, "context", q, ok=(0, 1)))
        print(json.dumps(summary("loci context (process)", s_ms, t_ms)), flush=True)
        servers = {"solo": Mcp(a, solo), "team": Mcp(a, team)}
        for m in servers.values():
            m.context(questions[0])
        s_ms, t_ms = [], []
        for q in questions:
            s_ms.append(servers["solo"].context(q))
            t_ms.append(servers["team"].context(q))
        for m in servers.values():
            m.close()
        print(json.dumps(summary("context via loci mcp", s_ms, t_ms)), flush=True)
        # Cold sync: the log gets `revisions` more events, straight in SQL.
        n = a.revisions
        cluster.psql(f"""
            INSERT INTO loci.events(op_id, request_hash, kind, event_kind, subject, page_kind,
                                    version, body, summary, author, written_at)
            SELECT 'bench:' || g, 'h', 'revision', 'remember', 'topic:bench' || (g % 1000), 'topic',
                   row_number() OVER (PARTITION BY g % 1000 ORDER BY g), 'Revision ' || g || ': `f' || (g % 50) || '()` and `C' || (g % 50) || '.run()`.',
                   NULL, 'agent:bench', '2026-12-05T00:00:00.000Z'
              FROM generate_series(1, {n}) g;""")
        fresh = checkout(a, cluster)
        print(json.dumps({"load_before": uptime()}), flush=True)
        said = []
        ms = loci(a, fresh, "team", "sync", "--json", out=said)
        pulled = json.loads(said[0])["result"]["pulled"]
        import sqlite3
        c = sqlite3.connect(f"{fresh}/.loci/loci.db")
        revisions = c.execute("SELECT count(*) FROM revisions").fetchone()[0]
        claims = c.execute("SELECT count(*) FROM claims WHERE resolved IS NOT NULL").fetchone()[0]
        c.close()
        print(json.dumps({
            "cold_sync_events": n + a.n, "pulled": pulled, "revisions_in_replica": revisions,
            "claims_resolved": claims, "cold_sync_ms": round(ms), "load_after": uptime(),
        }), flush=True)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
