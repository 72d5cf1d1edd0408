#!/usr/bin/env python3
"""Soak test: a real `loci lsp` and a real `loci mcp` on one workspace, driven with edits
and queries for a set time, while their memory and open file handles are sampled.

The language server gets didOpen/didChange edits (a definition inserted, then removed, so
the documents stay the same size), hover, documentSymbol, codeLens and the loci.context /
loci.why / loci.remember commands; files written on disk with didChangeWatchedFiles make
it rescan. The MCP server gets context, search, symbol, references, impact, why, show,
recap and remember tool calls, and sees the same disk writes (it rescans changed files
before answering). Every request must be answered within --timeout seconds, without an
error unless the request was meant to fail.

Every --interval seconds each server's VmRSS, VmHWM, RssAnon, RssFile and RssShmem
(/proc/PID/status), open file descriptors (/proc/PID/fd) and threads are sampled, and
the size of the store (.loci/loci.db and its WAL). The store grows with every write, and
SQLite's page cache (--page-cache-mib per connection) fills with it: that much RSS growth
is the cache, not a leak. So the memory bounds are judged on RSS minus the store's size
up to --page-cache-mib ("judged" in the report; the raw figures are reported too). After
a warm-up (the first 20% of the run, at least 10 s) the run fails when, per server:
  - judged RSS grew by more than --max-rss-growth-mib (mean of the last 20% of samples
    minus the mean of the first 20% after warm-up), or
  - over runs with at least 10 minutes after warm-up, the least-squares slope of judged
    RSS exceeds --max-rss-slope-mib-per-hour (shorter runs report the slope without
    judging it, as allocator noise over a minute extrapolates to nonsense), or
  - open file descriptors or threads grew by more than --max-fd-growth / --max-thread-growth
    (the least of the last 20% of samples minus the largest value seen during warm-up).

Usage: bench/soak.py [--duration SECONDS] [--loci PATH] [--json OUT]
Exit status 0 when every bound holds, 1 otherwise (the report says which), 2 on a
protocol failure (a request unanswered or refused).
"""
import argparse
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))

WORDS = ["scan", "memory", "revision", "context", "overlay", "diagnostic", "hover",
         "migration", "claim", "budget", "workspace", "symbol", "import", "session"]


class ProtocolError(Exception):
    pass


def sample(pid):
    """(VmRSS KiB, VmHWM KiB, open fds, threads, RssAnon KiB, RssFile KiB, RssShmem KiB) of
    a live process. RssAnon is the heap (malloc, SQLite's page cache); RssShmem includes
    the mapped WAL index (`loci.db-shm`); RssFile the binary's and libraries' pages."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    kib = lambda k: int(fields[k].split()[0])
    return (kib("VmRSS"), kib("VmHWM"), fds, int(fields["Threads"]),
            kib("RssAnon"), kib("RssFile"), kib("RssShmem"))


class Server:
    """A child process speaking JSON-RPC; a reader thread queues what it says."""

    def __init__(self, argv, framing, cwd, timeout):
        self.framing = framing  # "lsp" (Content-Length) or "lines" (MCP stdio)
        self.timeout = timeout
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, "RUST_LOG": "warn"})
        self.incoming = queue.Queue()
        self.next_id = 1
        self.requests = 0
        self.errors = 0
        self.latencies = []
        self.stderr_tail = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        try:
            while True:
                if self.framing == "lsp":
                    length = None
                    while True:
                        line = out.readline()
                        if not line:
                            self.incoming.put(None)
                            return
                        line = line.strip()
                        if not line:
                            break
                        name, _, value = line.partition(b":")
                        if name.lower() == b"content-length":
                            length = int(value)
                    body = out.read(length)
                else:
                    body = out.readline()
                    if not body:
                        self.incoming.put(None)
                        return
                self.incoming.put(json.loads(body))
        except Exception as e:  # a malformed frame is a protocol failure
            self.incoming.put(e)

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + [line.decode(errors="replace")])[-20:]

    def send(self, message):
        body = json.dumps(message).encode()
        if self.framing == "lsp":
            data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        else:
            data = body + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, expect_error=False):
        rid = self.next_id
        self.next_id += 1
        started = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = started + self.timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise ProtocolError(f"{method} #{rid}: no answer within {self.timeout} s")
            try:
                msg = self.incoming.get(timeout=remaining)
            except queue.Empty:
                continue
            if msg is None:
                raise ProtocolError(f"{method} #{rid}: the server exited: {''.join(self.stderr_tail)}")
            if isinstance(msg, Exception):
                raise ProtocolError(f"{method} #{rid}: unreadable output: {msg}")
            if "method" in msg:
                if "id" in msg:  # a server-to-client request: answer it
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                continue
            if msg.get("id") != rid:
                raise ProtocolError(f"{method} #{rid}: answer for id {msg.get('id')}")
            self.requests += 1
            self.latencies.append(time.perf_counter() - started)
            if "error" in msg:
                self.errors += 1
                if not expect_error:
                    raise ProtocolError(f"{method} #{rid}: {msg['error']}")
                return None
            result = msg.get("result")
            if self.framing == "lines" and isinstance(result, dict) and result.get("isError") and not expect_error:
                raise ProtocolError(f"{method} #{rid}: tool error {result.get('content')}")
            return result

    def stop(self, shutdown):
        try:
            shutdown()
        except (ProtocolError, OSError, BrokenPipeError):
            pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def make_workspace(dest):
    """A copy of loci's own server/ and docs/ trees (Rust and markdown, ~30K lines)."""
    for part in ("server", "docs"):
        shutil.copytree(os.path.join(ROOT, part), os.path.join(dest, part),
                        ignore=shutil.ignore_patterns("target", ".loci"))
    os.makedirs(os.path.join(dest, "scratch"), exist_ok=True)
    with open(os.path.join(dest, "scratch", "disk.rs"), "w") as f:
        f.write("pub fn disk_0() {}\n")
    return dest


def uri(path):
    return "file://" + path


def drive_lsp(server, ws, stop_at, pace, rng, failures):
    s = server
    s.request("initialize", {
        "processId": os.getpid(), "rootUri": uri(ws),
        "workspaceFolders": [{"uri": uri(ws), "name": "soak"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}, "workspaceFolders": True},
            "window": {"workDoneProgress": True},
            "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True}},
        },
    })
    s.notify("initialized", {})
    s.request("workspace/executeCommand", {"command": "loci.scan", "arguments": [{}]})
    files = [os.path.join(ws, p) for p in (
        "server/engine/src/map/scan.rs", "server/engine/src/memory/memory.rs", "server/lsp/src/server/documents.rs",
        "server/core/src/claims.rs", "docs/architecture.md")]
    docs = {}
    for path in files:
        with open(path) as f:
            text = f.read()
        lang = "markdown" if path.endswith(".md") else "rust"
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri(path), "languageId": lang, "version": 1, "text": text}})
        docs[path] = {"version": 1, "lines": text.count("\n"), "inserted": None}
    i = 0
    while time.monotonic() < stop_at:
        i += 1
        path = rng.choice(files)
        d = docs[path]
        d["version"] += 1
        if d["inserted"] is None:
            line = rng.randrange(0, max(1, d["lines"]))
            text = f"`soak_{i}()` note\n" if path.endswith(".md") else f"fn soak_{i}() {{ let x = {i}; }}\n"
            change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": text}
            d["inserted"] = line
        else:
            line = d["inserted"]
            change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}, "text": ""}
            d["inserted"] = None
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri(path), "version": d["version"]}, "contentChanges": [change]})
        pos = {"line": rng.randrange(0, max(1, d["lines"])), "character": rng.randrange(0, 30)}
        s.request("textDocument/hover", {"textDocument": {"uri": uri(path)}, "position": pos})
        if i % 3 == 0:
            s.request("textDocument/documentSymbol", {"textDocument": {"uri": uri(path)}})
        if i % 7 == 0:
            s.request("textDocument/codeLens", {"textDocument": {"uri": uri(path)}})
        if i % 5 == 0:
            s.request("workspace/executeCommand", {"command": "loci.context", "arguments": [{"query": " ".join(rng.sample(WORDS, 2))}]})
        if i % 11 == 0:
            rel = os.path.relpath(path, ws)
            s.request("workspace/executeCommand", {"command": "loci.why", "arguments": [{"target": rel}]}, expect_error=True)
        if i % 50 == 0:
            rel = os.path.relpath(path, ws)
            s.request("workspace/executeCommand", {"command": "loci.remember", "arguments": [{"subject": rel, "body": f"Soak note {i} about `{rel}`.", "replace": True}]})
        if i % 25 == 0:
            disk = os.path.join(ws, "scratch", "disk.rs")
            with open(disk, "w") as f:
                f.write("".join(f"pub fn disk_{i}_{k}() {{}}\n" for k in range(rng.randrange(1, 40))))
            s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(disk), "type": 2}]})
        time.sleep(pace)
    return i


def drive_mcp(server, ws, stop_at, pace, rng, failures):
    s = server
    s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "soak", "version": "1"}})
    s.notify("notifications/initialized", {})
    s.request("tools/list", {})
    calls = 0
    while time.monotonic() < stop_at:
        calls += 1
        word = rng.choice(WORDS)
        tool, args, may_fail = rng.choice([
            ("context", {"query": f"how does the {word} work"}, False),
            ("search", {"query": word}, False),
            ("symbol", {"name": rng.choice(["scan", "remember", "Workspace", "open", "context"])}, False),
            ("references", {"name": rng.choice(["scan", "remember", "envelope"])}, False),
            ("impact", {"target": "server/engine/src/lib.rs", "depth": 2}, False),
            ("why", {"target": "server/engine/src/map/scan.rs"}, True),
            ("show", {"subject": "server/engine/src/map/scan.rs"}, True),
            ("recap", {"n": 3}, False),
            ("remember", {"subject": "server/engine/src/map/scan.rs", "body": f"Soak {calls}: `scan()` walks and parses."}, False),
        ])
        s.request("tools/call", {"name": tool, "arguments": args}, expect_error=may_fail)
        time.sleep(pace)
    return calls


def slope_kib_per_s(ts, rs):
    """Least-squares slope of rs over ts."""
    tm, rm = sum(ts) / len(ts), sum(rs) / len(rs)
    var = sum((t - tm) ** 2 for t in ts)
    return (sum((t - tm) * (r - rm) for t, r in zip(ts, rs)) / var) if var else 0.0


def judge(name, samples, store, warmup_s, args):
    """Bounds on one server's samples; returns (summary dict, list of failures).

    `store` maps a sampling time to the database file's size (KiB). The memory bounds are
    judged on RSS minus the part of the store SQLite's page cache can hold (the store's
    size, up to --page-cache-mib): the cache fills as the soak's writes grow the store,
    which is bounded growth, not a leak. Growth beyond what the store's growth explains
    still counts in full, and the raw RSS figures are reported too."""
    t0 = samples[0][0]
    warm = [x for x in samples if x[0] - t0 < warmup_s]
    post = [x for x in samples if x[0] - t0 >= warmup_s]
    if len(post) < 5:
        return {"samples": len(samples)}, [f"{name}: too few samples after warm-up ({len(post)})"]
    k = max(1, len(post) // 5)
    mean = lambda xs: sum(xs) / len(xs)
    cap = args.page_cache_mib * 1024
    cache = lambda x: min(store.get(x[0], 0), cap)  # KiB the page cache may hold at x
    ts = [x[0] for x in post]
    rs = [x[1] for x in post]
    judged = [x[1] - cache(x) for x in post]
    rss_start, rss_end = mean(rs[:k]), mean(rs[-k:])
    judged_start, judged_end = mean(judged[:k]), mean(judged[-k:])
    raw_slope = slope_kib_per_s(ts, rs)
    slope = slope_kib_per_s(ts, judged)  # KiB/s
    window = ts[-1] - ts[0]
    fd_warm = max(x[3] for x in warm) if warm else post[0][3]
    th_warm = max(x[4] for x in warm) if warm else post[0][4]
    # What the process holds at the end is the least of the last fifth of the samples: a
    # leak raises that floor, while a store connection or worker that a request holds for
    # a moment (the language server's peaks 13 -> 16 fds, at any time of the run) does not.
    fd_end = min(x[3] for x in post[-k:])
    th_end = min(x[4] for x in post[-k:])
    summary = {
        "rss_mib_after_warmup": round(rss_start / 1024, 1),
        "rss_mib_end": round(rss_end / 1024, 1),
        "rss_growth_mib": round((rss_end - rss_start) / 1024, 2),
        "rss_slope_mib_per_hour": round(raw_slope * 3600 / 1024, 2),
        "page_cache_credit_mib": round((mean([cache(x) for x in post[-k:]]) - mean([cache(x) for x in post[:k]])) / 1024, 2),
        "judged_growth_mib": round((judged_end - judged_start) / 1024, 2),
        "judged_slope_mib_per_hour": round(slope * 3600 / 1024, 2),
        "hwm_mib": round(samples[-1][2] / 1024, 1),
        "anon_mib_after_warmup": round(mean([x[5] for x in post[:k]]) / 1024, 1),
        "anon_mib_end": round(mean([x[5] for x in post[-k:]]) / 1024, 1),
        "shmem_mib_end": round(samples[-1][7] / 1024, 1),
        "fds_warmup_max": fd_warm, "fds_end": fd_end, "fds_max": max(x[3] for x in samples),
        "threads_warmup_max": th_warm, "threads_end": th_end,
        "judged_window_s": round(window, 1), "samples": len(samples),
    }
    failures = []
    if (judged_end - judged_start) / 1024 > args.max_rss_growth_mib:
        failures.append(f"{name}: RSS grew {summary['judged_growth_mib']} MiB after warm-up beyond the page cache's share of the store's growth (raw {summary['rss_growth_mib']}; bound {args.max_rss_growth_mib})")
    if window >= 600 and slope * 3600 / 1024 > args.max_rss_slope_mib_per_hour:
        failures.append(f"{name}: RSS slope {summary['judged_slope_mib_per_hour']} MiB/h beyond the page cache's share of the store's growth (raw {summary['rss_slope_mib_per_hour']}; bound {args.max_rss_slope_mib_per_hour})")
    if fd_end - fd_warm > args.max_fd_growth:
        failures.append(f"{name}: open fds {fd_warm} -> {fd_end} (bound +{args.max_fd_growth})")
    if th_end - th_warm > args.max_thread_growth:
        failures.append(f"{name}: threads {th_warm} -> {th_end} (bound +{args.max_thread_growth})")
    return summary, failures


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=60, help="seconds of load (default 60)")
    ap.add_argument("--loci", default=os.path.join(TARGET, "release", "loci"), help="the loci binary")
    ap.add_argument("--interval", type=float, default=None, help="seconds between samples (default duration/120, 0.5..10)")
    ap.add_argument("--pace", type=float, default=0.02, help="seconds between one driver's requests")
    ap.add_argument("--timeout", type=float, default=60, help="seconds a request may take")
    ap.add_argument("--max-rss-growth-mib", type=float, default=16)
    ap.add_argument("--max-rss-slope-mib-per-hour", type=float, default=16)
    ap.add_argument("--page-cache-mib", type=float, default=16,
                    help="SQLite's page cache per connection (PRAGMA cache_size = -16384 in "
                         "server/store/src/lib.rs): up to this much of the store's growth is "
                         "not counted against the RSS bounds")
    ap.add_argument("--max-fd-growth", type=int, default=2)
    ap.add_argument("--max-thread-growth", type=int, default=4)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--json", help="write the report here too")
    args = ap.parse_args()
    args.loci = os.path.realpath(args.loci)  # the servers run in the workspace
    if not os.path.exists(args.loci):
        sys.exit(f"soak: {args.loci} does not exist; build it (cargo build --release -p loci-cli) or pass --loci")
    interval = args.interval or min(10.0, max(0.5, args.duration / 120))
    warmup = max(10.0, args.duration * 0.2)

    tmp = tempfile.mkdtemp(prefix="loci-soak-")
    ws = os.path.realpath(make_workspace(os.path.join(tmp, "ws")))
    subprocess.run([args.loci, "-C", ws, "init"], check=True, capture_output=True)
    # Both servers start on a scanned store: two first scans of a fresh store racing in two
    # processes can fail with `UNIQUE constraint failed: files.path` (an open fault of
    # concurrent writers, docs/reliability.md section 6), which is not what this measures.
    subprocess.run([args.loci, "-C", ws, "scan"], check=True, capture_output=True)
    lsp = Server([args.loci, "lsp"], "lsp", ws, args.timeout)
    mcp = Server([args.loci, "-C", ws, "mcp"], "lines", ws, args.timeout)
    samples = {"lsp": [], "mcp": [], "store": []}
    db = os.path.join(ws, ".loci", "loci.db")

    def store_kib():
        """Sizes of the database and its WAL, KiB (the store grows with every write)."""
        size = lambda p: os.path.getsize(p) // 1024 if os.path.exists(p) else 0
        return size(db), size(db + "-wal")
    stop_at = time.monotonic() + args.duration
    done = threading.Event()
    failures, counts = [], {}

    def sampler():
        while not done.is_set():
            now = time.monotonic()
            for name, srv in (("lsp", lsp), ("mcp", mcp)):
                try:
                    samples[name].append((now,) + sample(srv.proc.pid))
                except (FileNotFoundError, ProcessLookupError):
                    pass
            samples["store"].append((now,) + store_kib())
            done.wait(interval)

    def run(name, fn, srv, seed):
        try:
            counts[name] = fn(srv, ws, stop_at, args.pace, random.Random(seed), failures)
        except ProtocolError as e:
            failures.append(f"{name}: {e}")
            counts[name] = -1

    started = time.monotonic()
    threads = [threading.Thread(target=sampler, daemon=True),
               threading.Thread(target=run, args=("lsp", drive_lsp, lsp, args.seed)),
               threading.Thread(target=run, args=("mcp", drive_mcp, mcp, args.seed + 1))]
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join()
    done.set()
    threads[0].join()
    elapsed = time.monotonic() - started
    protocol_failed = bool(failures)
    lsp.stop(lambda: (lsp.request("shutdown", None), lsp.notify("exit", None)))
    mcp.stop(lambda: None)

    report = {"duration_s": round(elapsed, 1), "interval_s": interval, "warmup_s": warmup,
              "workspace_files": sum(len(f) for _, _, f in os.walk(ws)),
              "store_mib_start": round(samples["store"][0][1] / 1024, 1) if samples["store"] else None,
              "store_mib_end": round(store_kib()[0] / 1024, 1), "servers": {}}
    for name, srv in (("lsp", lsp), ("mcp", mcp)):
        store = {x[0]: x[1] for x in samples["store"]}
        summary, bad = judge(name, samples[name], store, warmup, args) if samples[name] else ({}, [f"{name}: no samples"])
        failures.extend(bad)
        summary.update({"iterations": counts.get(name), "requests": srv.requests, "error_replies": srv.errors,
                        "latency_ms_p50": round(percentile(srv.latencies, 0.5) * 1000, 1),
                        "latency_ms_p99": round(percentile(srv.latencies, 0.99) * 1000, 1)})
        report["servers"][name] = summary
    report["failures"] = failures
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
        with open(args.json + ".samples", "w") as f:
            json.dump({k: [[round(x[0] - v[0][0], 2)] + list(x[1:]) for x in v] for k, v in samples.items() if v}, f)
    shutil.rmtree(tmp, ignore_errors=True)
    if protocol_failed:
        sys.exit(2)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
