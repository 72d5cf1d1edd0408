#!/usr/bin/env python3
"""Sizes of what a `loci mcp` server sends an agent: the `tools/list` result and the
`context` answers to a set of questions, over stdio, in raw JSON-RPC lines.

    mcp_answer_size.py --loci PATH --root DIR --db FILE --cases FILE.jsonl [--budget N]

`--cases` is an eval file (`fixtures/eval/loci.jsonl`): every line with a `query` is asked
once. Per answer it counts the bytes of the first response's text content, the bytes of
text an agent reads to get the whole answer (following `next_cursor` until the last page)
and the calls that takes, and the bytes of the first response's JSON-RPC line; it prints
the medians and maxima as JSON. Tokens are estimated as loci estimates them: characters / 4;
`tools_list_cl100k_tokens` counts the list with tiktoken's cl100k_base when `tiktoken` or
`bpe-openai` can load it (null otherwise).
"""
import argparse, json, os, statistics, subprocess


class Server:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
        self.next_id = 0

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("the server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return line, reply

    def notify(self, method):
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.p.stdin.flush()

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def cl100k(text):
    for mod in ("tiktoken", "bpe_openai"):
        try:
            return len(__import__(mod).get_encoding("cl100k_base").encode(text))
        except Exception:  # noqa: BLE001 - not installed, or its data cannot be fetched
            continue
    return None


def text_of(reply):
    return "".join(c.get("text", "") for c in reply["result"]["content"])


def next_cursor(reply):
    s = reply["result"].get("structuredContent") or {}
    return (s.get("page") or {}).get("next_cursor")


def main(a):
    queries = []
    for line in open(a.cases, encoding="utf-8"):
        line = line.strip()
        if line and not line.startswith("//"):
            case = json.loads(line)
            if "query" in case:
                queries.append(case["query"])
    server = Server([a.loci, "-C", a.root, "--db", a.db, "mcp"])
    server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "1"}})
    server.notify("notifications/initialized")
    listing, _ = server.request("tools/list")
    listing_result = json.dumps(json.loads(listing)["result"], ensure_ascii=False)
    first_text, whole_text, calls, line_bytes = [], [], [], []
    for q in queries:
        args = {"query": q}
        if a.budget:
            args["budget"] = a.budget
        line, reply = server.request("tools/call", {"name": "context", "arguments": args})
        if reply["result"].get("isError"):
            raise SystemExit(f"error for {q!r}: {text_of(reply)}")
        first = text_of(reply)
        first_text.append(len(first))
        line_bytes.append(len(line.encode("utf-8")))
        total, n = len(first), 1
        while (cursor := next_cursor(reply)) is not None:
            _, reply = server.request("tools/call", {"name": "context",
                                                     "arguments": {**args, "cursor": cursor}})
            total += len(text_of(reply))
            n += 1
        whole_text.append(total)
        calls.append(n)
    server.close()
    med = lambda xs: int(statistics.median(xs))
    print(json.dumps({
        "questions": len(queries),
        "tools_list_bytes": len(listing_result.encode("utf-8")),
        "tools_list_tokens": len(listing_result) // 4,
        "tools_list_cl100k_tokens": cl100k(listing_result),
        "context_first_text_chars_median": med(first_text),
        "context_first_text_tokens_median": med(first_text) // 4,
        "context_whole_text_chars_median": med(whole_text),
        "context_whole_text_chars_max": max(whole_text),
        "context_calls_max": max(calls),
        "answers_paged": sum(1 for n in calls if n > 1),
        "context_response_line_bytes_median": med(line_bytes),
        "context_response_line_bytes_max": max(line_bytes),
    }, indent=1))


ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--root", required=True)
ap.add_argument("--db", required=True)
ap.add_argument("--cases", required=True)
ap.add_argument("--budget", type=int)
main(ap.parse_args())
