#!/usr/bin/env python3
"""Latency of tool calls answered by a long-running `loci mcp` server (the official MCP
Python SDK as the agent): what an agent or editor waits for once the server holds the
store, the term statistics and, with `[embeddings]`, the model and vectors.

    context_mcp_latency.py --loci PATH --corpus DIR --cases FILE.jsonl [--rounds 3]
    context_mcp_latency.py --loci PATH --corpus DIR --cases FILE.jsonl --tools \
        [--calls 50] [--transport stdio|http|both] [--only TOOL,...]

Default: each question of `--cases` is asked once to warm the server (not timed), then
`rounds` times; prints p50 / p95 / max of `context`'s round trip in ms (protocol overhead
included, so an upper bound of the in-process time) and the machine's load average. Set
LOCI_EMBEDDINGS_MODEL to measure with dense retrieval.

`--tools`: every tool of `TOOL_CALLS` (reads, writes, `context` over the questions of
`--cases`), each called `--calls` times after one warm-up call, over stdio and/or
streamable HTTP (`loci mcp --http`, with the bearer token of `<corpus>/.loci/mcp-token`);
prints one JSON line per transport and tool (p50 / p95 / max ms, whether it met its
target: reads p95 ≤ 20 ms, writes ≤ 150 ms, `context` ≤ 50 ms), then the size of
`tools/list` and of the median `context` answer's text in bytes and tokens (tiktoken's
cl100k_base when `tiktoken` or `bpe-openai` can load it, else bytes / 4, saying which).
`--only` keeps the named tools (`context` among them only if named). Writes go to the
store: run it on a copy.
"""
import argparse, asyncio, json, os, socket, statistics, subprocess, time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# Arguments per tool, on the scanned CPython stdlib (`Lib/`). `{i}` is the call's number,
# so that each write writes something new.
TOOL_CALLS = {
    "symbol": {"name": "urllib.parse.urlsplit"},
    "source": {"name": "logging.getLogger"},
    "outline": {"path": "json/decoder.py"},
    "references": {"name": "urlsplit"},
    "callers": {"symbol": "urllib.parse.urlsplit"},
    "callees": {"symbol": "urllib.parse.urlsplit"},
    "deps": {"path": "json/decoder.py"},
    "impact": {"target": "json/scanner.py"},
    "search": {"query": "percent encoding"},
    "why": {"target": "json/decoder.py:10"},
    "show": {"subject": "json/decoder.py"},
    "history": {"subject": "json/decoder.py"},
    "memory_list": {"prefix": "json"},
    "topics": {},
    "stats": {},
    "recap": {},
    "fact_list": {},
    "drift": {},
    "remember": {"subject": "json/decoder.py",
                 "body": "Decoding errors are `JSONDecodeError` (revision {i})."},
    "decide": {"text": "Keep the scanner pure Python in the benchmark (call {i}).",
               "subject": "json"},
    "learn": {"text": "A benchmark lesson, call {i}.", "subject": "json"},
    "pin": {"subject": "json/decoder.py"},
}
WRITES = {"remember", "decide", "learn", "pin"}
TARGET_MS = {"read": 20, "write": 150, "context": 50}


def tokenizer():
    for mod in ("tiktoken", "bpe_openai"):
        try:
            enc = __import__(mod).get_encoding("cl100k_base")
            enc.encode("probe")
            return f"{mod} cl100k_base", lambda s: len(enc.encode(s))
        except Exception:  # noqa: BLE001 - not installed, or its data cannot be fetched
            continue
    return "bytes / 4", lambda s: len(s.encode("utf-8")) // 4


def fill(args, i):
    return {k: v.replace("{i}", str(i)) if isinstance(v, str) else v for k, v in args.items()}


def pick(times, p):
    times = sorted(times)
    return times[min(len(times) - 1, int(p * len(times)))]


async def context_only(session, qs, rounds):
    for q in qs:
        await session.call_tool("context", {"query": q})
    times = []
    for _ in range(rounds):
        for q in qs:
            t = time.perf_counter()
            r = await session.call_tool("context", {"query": q})
            times.append((time.perf_counter() - t) * 1000)
            if r.is_error:
                raise SystemExit(f"error for {q!r}: {r.content}")
    return times


async def per_tool(session, qs, calls, transport, count, sizes, only=None):
    listing = await session.list_tools()
    names = {t.name for t in listing.tools}
    if sizes is not None:
        # What a client puts before the model: the tools as JSON, compact.
        data = json.dumps({"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                                     for t in listing.tools]},
                          ensure_ascii=False, separators=(",", ":"))
        sizes["tools"] = len(listing.tools)
        sizes["tools_list_bytes"] = len(data.encode("utf-8"))
        sizes["tools_list_tokens"] = count(data)
    plan = [("context", None)] + [(n, a) for n, a in TOOL_CALLS.items() if n in names]
    if only:
        plan = [(n, a) for n, a in plan if n in only]
    texts = []
    for name, args in plan:
        times = []
        for i in range(calls + 1):
            a = {"query": qs[i % len(qs)]} if name == "context" else fill(args, i)
            t = time.perf_counter()
            r = await session.call_tool(name, a)
            ms = (time.perf_counter() - t) * 1000
            if r.is_error and name not in ("why", "history", "show"):
                raise SystemExit(f"{transport} {name} {a}: {r.content[0].text}")
            if i == 0:
                continue  # warm-up
            times.append(ms)
            if name == "context":
                texts.append(r.content[0].text)
        kind = "context" if name == "context" else "write" if name in WRITES else "read"
        p95 = pick(times, 0.95)
        print(json.dumps({"transport": transport, "tool": name, "kind": kind, "calls": len(times),
                          "p50_ms": round(pick(times, 0.5), 1), "p95_ms": round(p95, 1),
                          "max_ms": round(max(times), 1), "target_ms": TARGET_MS[kind],
                          "met": p95 <= TARGET_MS[kind]}), flush=True)
    if sizes is not None and texts:
        lengths = sorted(texts, key=len)
        median = lengths[len(lengths) // 2]
        sizes["context_median_text_bytes"] = len(median.encode("utf-8"))
        sizes["context_median_text_tokens"] = count(median)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def main(a):
    cases = [json.loads(l) for l in open(a.cases) if l.strip() and not l.startswith("//")]
    qs = [c["query"] for c in cases if "query" in c]
    loci = os.path.abspath(a.loci)
    if not a.tools:
        params = StdioServerParameters(command=loci, args=["mcp"], cwd=a.corpus, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                times = sorted(await context_only(session, qs, a.rounds))
        print(json.dumps({"calls": len(times), "p50_ms": round(pick(times, 0.5), 1),
                          "p95_ms": round(pick(times, 0.95), 1), "max_ms": round(times[-1], 1),
                          "load": os.getloadavg()[0]}))
        return
    name, count = tokenizer()
    sizes = {"tokens": name}
    if a.transport in ("stdio", "both"):
        params = StdioServerParameters(command=loci, args=["mcp"], cwd=a.corpus, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await per_tool(session, qs, a.calls, "stdio", count, sizes, a.only)
    if a.transport in ("http", "both"):
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
        port = free_port()
        server = subprocess.Popen([loci, "-C", a.corpus, "mcp", "--http", f"127.0.0.1:{port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            token_file = os.path.join(a.corpus, ".loci", "mcp-token")
            for _ in range(600):
                if os.path.exists(token_file):
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                        break
                    except OSError:
                        pass
                time.sleep(0.1)
            token = open(token_file).read().strip()
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with client:
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp",
                                                  http_client=client) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await session.initialize()
                        await per_tool(session, qs, a.calls, "http", count,
                                       sizes if a.transport == "http" else None, a.only)
        finally:
            server.terminate()
            server.wait(timeout=30)
    sizes["load"] = os.getloadavg()
    print(json.dumps(sizes))


ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--cases", required=True)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--tools", action="store_true", help="every tool, not only context")
ap.add_argument("--calls", type=int, default=50, help="timed calls per tool (--tools)")
ap.add_argument("--only", type=lambda v: set(v.split(",")),
                help="with --tools: only these tools (comma-separated names)")
ap.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
asyncio.run(main(ap.parse_args()))
