#!/usr/bin/env python3
"""What `loci mcp` does when the client goes away or sends unbounded input (issue 31,
items 2 and 6), measured on the real binary over stdio in raw JSON-RPC lines:

1. stdin closed during a long call: the seconds from closing stdin to the process's exit.
   The long call is the first `symbol` on a copy of ROOT without a store, which waits for
   the startup refresh (a full scan).
2. a `remember` whose body is 1 MiB: the bytes of the response line.
3. `context` with a 50,000-word question: the seconds to the answer and the bytes of the
   response line.

Usage: bench/mcp_bounded.py --loci target/release/loci --root /tmp/loci-bench-stdlib
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time


class Mcp:
    def __init__(self, loci, root):
        env = dict(os.environ)
        env.pop("LOCI_DB", None)
        self.proc = subprocess.Popen(
            [loci, "-C", root, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lines = []
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.proc.stdout:
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def response(self, rid, timeout=600):
        deadline = time.time() + timeout
        with self.cv:
            while True:
                for line in self.lines:
                    if json.loads(line).get("id") == rid:
                        return line
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(f"no response to {rid}")
                self.cv.wait(left)

    def initialize(self):
        rid = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "bench", "version": "1"}},
        )
        self.response(rid)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool, args):
        return self.request("tools/call", {"name": tool, "arguments": args})


def stdin_close(loci, root):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "w")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".loci"))
        mcp = Mcp(loci, copy)
        mcp.initialize()
        rid = mcp.call("symbol", {"name": "urlsplit"})
        time.sleep(1.0)
        answered = any(json.loads(l).get("id") == rid for l in mcp.lines)
        closed = time.time()
        mcp.proc.stdin.close()
        mcp.proc.wait()
        return time.time() - closed, answered


def big_remember(loci, root):
    mcp = Mcp(loci, root)
    mcp.initialize()
    body = ("The parser reads one line at a time. " * 30000)[: 1 << 20]
    rid = mcp.call("remember", {"subject": "topic:bench-big-body", "body": body})
    line = mcp.response(rid)
    mcp.proc.stdin.close()
    mcp.proc.wait()
    return len(line)


def long_question(loci, root):
    mcp = Mcp(loci, root)
    mcp.initialize()
    rid = mcp.call("symbol", {"name": "urlsplit"})
    mcp.response(rid)
    words = " ".join(f"word{random.randrange(100000)}" for _ in range(50000))
    started = time.time()
    rid = mcp.call("context", {"query": words})
    line = mcp.response(rid)
    took = time.time() - started
    mcp.proc.stdin.close()
    mcp.proc.wait()
    return took, len(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    took, answered = stdin_close(a.loci, a.root)
    print(f"stdin closed during the first call (answered before close: {answered}): exit after {took:.2f} s")
    print(f"remember with a 1 MiB body: response line {big_remember(a.loci, a.root)} bytes")
    took, size = long_question(a.loci, a.root)
    print(f"context with 50,000 words: {took:.2f} s, response line {size} bytes")


if __name__ == "__main__":
    main()
