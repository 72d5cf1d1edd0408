#!/usr/bin/env python3
"""Latency of `context` answered by a long-running `loci mcp` server (the official MCP
Python SDK as the agent, over stdio): what an agent or editor waits for once the server
holds the store, the term statistics and, with `[embeddings]`, the model and vectors.

    context_mcp_latency.py --loci PATH --corpus DIR --cases FILE.jsonl [--rounds 3]

Each question is asked once to warm the server (not timed), then `rounds` times; prints
p50 / p95 / max of the tool call's round trip in ms (protocol overhead included, so an
upper bound of the in-process time) and the machine's load average. Set
LOCI_EMBEDDINGS_MODEL to measure with dense retrieval.
"""
import argparse, asyncio, json, os, time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(a):
    qs = [json.loads(l)["query"] for l in open(a.cases) if l.strip()]
    params = StdioServerParameters(command=os.path.abspath(a.loci), args=["mcp"], cwd=a.corpus,
                                   env=dict(os.environ))
    times = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for q in qs:
                await session.call_tool("context", {"query": q})
            for _ in range(a.rounds):
                for q in qs:
                    t = time.perf_counter()
                    r = await session.call_tool("context", {"query": q})
                    times.append((time.perf_counter() - t) * 1000)
                    if r.is_error:
                        raise SystemExit(f"error for {q!r}: {r.content}")
    times.sort()
    pick = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    print(json.dumps({"calls": len(times), "p50_ms": round(pick(0.5), 1), "p95_ms": round(pick(0.95), 1),
                      "max_ms": round(times[-1], 1), "load": os.getloadavg()[0]}))


ap = argparse.ArgumentParser()
ap.add_argument("--loci", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--cases", required=True)
ap.add_argument("--rounds", type=int, default=3)
asyncio.run(main(ap.parse_args()))
