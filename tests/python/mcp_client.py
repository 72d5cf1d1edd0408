"""A real MCP client (the official Python SDK) driving `loci mcp` over stdio.

Usage: python3 tests/python/mcp_client.py <path-to-loci-binary> <workspace> <context-file>

The workspace must hold `src/app.py` defining `main()`, scanned. `<context-file>` holds
what `loci context "how does the server start" --budget 300` printed on stdout. Lists
the tools (each declares an outputSchema, which the SDK checks every successful result
against), asks `context` (its text must be that CLI output: markdown, not JSON), calls
`symbol`, `remember`, `why`, checks that argument and domain errors are tool results
with `isError` and a message saying what to do, and that an unknown tool is a protocol
error. Exits non-zero with a message on any failure. Run by
`server/cli/tests/it/mcp_python.rs`.
"""

import asyncio
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

try:  # SDK 2.x
    from mcp.shared.exceptions import MCPError
except ImportError:  # SDK 1.x
    from mcp.shared.exceptions import McpError as MCPError


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def field(obj, snake, camel):
    """A model field by its SDK 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def error_of(r):
    """The text of a tool result that must be an error (`isError: true`)."""
    check(field(r, "is_error", "isError") is True, f"expected isError: {r.content}")
    return r.content[0].text


async def run(binary: str, workspace: str, cli_context: str) -> None:
    env = dict(os.environ)
    env["RUST_LOG"] = env.get("RUST_LOG", "warn")
    params = StdioServerParameters(command=binary, args=["-C", workspace, "mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(field(init, "server_info", "serverInfo").name == "loci", "server name")
            check("session_begin" in (init.instructions or ""), "instructions name session_begin")

            listing = await session.list_tools()
            tools = {t.name: t for t in listing.tools}
            for name in ("symbol", "remember", "why", "decide", "session_begin", "session_end"):
                check(name in tools, f"tool {name} listed: {sorted(tools)}")
            check(field(tools["symbol"].annotations, "read_only_hint", "readOnlyHint") is True, "symbol is read-only")
            check(field(tools["remember"].annotations, "read_only_hint", "readOnlyHint") in (None, False), "remember writes")
            check(field(tools["remember"].annotations, "destructive_hint", "destructiveHint") is False, "remember is not destructive")
            props = field(tools["remember"], "input_schema", "inputSchema")["properties"]
            for arg in ("subject", "body", "session", "author", "summary", "expect_version", "operation_id"):
                check(arg in props and props[arg].get("description"), f"remember.{arg} documented")

            for name, tool in tools.items():
                schema = field(tool, "output_schema", "outputSchema")
                check(schema is not None and schema["type"] == "object", f"{name} declares an outputSchema: {schema}")
                kind = "array" if name in ("search", "symbol", "references", "recap", "fact_list",
                                           "memory_list", "topics") else "object"
                check(schema["properties"]["result"] == {"type": kind}, f"{name} result is an {kind}: {schema}")
                check(schema["anyOf"] == [{"required": ["result"]}, {"required": ["error"]}], f"{name}: {schema}")

            # The answer in one read: the text content is what the CLI prints, markdown
            # within its budget; the envelope is the structured content.
            r = await session.call_tool("context", {"query": "how does the server start", "budget": 300})
            check(not field(r, "is_error", "isError"), f"context: {r.content}")
            check(len(r.content) == 1, f"one text block: {r.content}")
            answer = r.content[0].text
            check(answer == cli_context, f"context text is the CLI's:\n{answer!r}\n!=\n{cli_context!r}")
            check(answer.startswith("## Context for `how does the server start`\n"), f"markdown: {answer[:80]!r}")
            check('"result"' not in answer and '"markdown"' not in answer, f"no JSON envelope: {answer[:200]!r}")
            check(-(-len(answer) // 4) <= 300, f"within the budget of 300 tokens: {len(answer)} characters")
            envelope = field(r, "structured_content", "structuredContent")
            check(sorted(envelope) == ["capability", "freshness", "index", "limits", "result", "stale_warnings"],
                  f"envelope fields: {sorted(envelope)}")
            result = envelope["result"]
            for key in ("query", "abstained", "best_relevance", "floor", "items", "tokens_estimated", "markdown"):
                check(key in result, f"context result has {key}: {sorted(result)}")
            check(result["markdown"] == answer, "the structured markdown is the text")
            check(result["query"] == "how does the server start", f"query: {result['query']}")
            check(envelope["limits"]["budget"] == 300, f"limits: {envelope['limits']}")
            check(result["tokens_estimated"] <= 300, f"tokens: {result['tokens_estimated']}")

            r = await session.call_tool("symbol", {"name": "main"})
            check(not field(r, "is_error", "isError"), f"symbol: {r.content}")
            hits = field(r, "structured_content", "structuredContent")["result"]
            check(len(hits) == 1 and hits[0]["path"] == "src/app.py", f"symbol hits: {hits}")
            check(r.content[0].text == "src/app.py:4: function main  [src/app.py#main@function]\n    def main():\n",
                  f"symbol text: {r.content[0].text!r}")

            begun = await session.call_tool("session_begin", {"task": "python sdk test"})
            session_id = field(begun, "structured_content", "structuredContent")["result"]["session_id"]

            body = "`main()` parses the arguments and starts the server."
            r = await session.call_tool(
                "remember", {"subject": "src/app.py", "body": body, "session": session_id}
            )
            check(not field(r, "is_error", "isError"), f"remember: {r.content}")
            revision = field(r, "structured_content", "structuredContent")["result"]["revision"]
            check(revision["version"] == 1, f"revision: {revision}")
            check(revision["author"].startswith("agent:"), f"author: {revision['author']}")

            r = await session.call_tool("why", {"target": "src/app.py:1"})
            check(not field(r, "is_error", "isError"), f"why: {r.content}")
            why = field(r, "structured_content", "structuredContent")["result"]
            check(why["subject"] == "src/app.py", f"why subject: {why['subject']}")
            check(why["revision"]["body"] == body, "why returns the memory")
            check(why["session"]["session_id"] == session_id, "why names the session")

            # The tools agents reach for (issue 31, item 4), exactly, with a dotted name as
            # Python spells it (`app.main` is `main` in `src/app.py`).
            for name in ("callees", "outline", "source", "memory_list", "topics", "stats", "sync"):
                check(name in tools, f"tool {name} listed")
            r = await session.call_tool("callees", {"symbol": "app.main"})
            check(r.content[0].text == "definition src/app.py#main@function (src/app.py:4)\n"
                  "src/app.py:6:12: serve -> src/app.py#serve@function (derived, 0.90)\n",
                  f"callees text: {r.content[0].text!r}")
            calls = field(r, "structured_content", "structuredContent")["result"]["calls"]
            check([c["target_key"] for c in calls] == ["src/app.py#serve@function"], f"callees: {calls}")
            r = await session.call_tool("outline", {"path": "src/app.py"})
            check(r.content[0].text == "src/app.py (python, 2 definitions)\n"
                  "  4: function main  def main():\n  9: function serve  def serve(argv):\n",
                  f"outline text: {r.content[0].text!r}")
            r = await session.call_tool("source", {"name": "app.main"})
            source = field(r, "structured_content", "structuredContent")["result"]
            check(source["symbol"]["key"] == "src/app.py#main@function", f"source: {source['symbol']}")
            check(source["text"].startswith("def main():\n") and source["text"].endswith("return serve(sys.argv)\n"),
                  f"source text: {source['text']!r}")
            check([m["body"] for m in source["memory"]] == [body], f"source memory: {source['memory']}")
            check(r.content[0].text.startswith("src/app.py:4-6: function main  [src/app.py#main@function]\n"
                                               "    4  def main():\n"), f"source: {r.content[0].text!r}")
            r = await session.call_tool("memory_list", {"prefix": "src"})
            pages = field(r, "structured_content", "structuredContent")["result"]
            check([(p["subject"], p["kind"], p["version"], p["stale"]) for p in pages] == [("src/app.py", "file", 1, None)],
                  f"memory_list: {pages}")
            r = await session.call_tool("stats", {})
            totals = field(r, "structured_content", "structuredContent")["result"]["totals"]
            check((totals["files"], totals["symbols"]) == (1, 2), f"stats: {totals}")
            r = await session.call_tool("symbol", {"name": "serv"})
            check(not field(r, "is_error", "isError"), f"symbol serv: {r.content}")
            check("no symbol named `serv` in the map; did you mean `serve`?" in r.content[0].text,
                  f"an empty answer says why: {r.content[0].text!r}")

            r = await session.call_tool("why", {"query": "nothing mentions this phrase"})
            check(field(r, "is_error", "isError"), "a question with no answer is a tool error")

            # Argument and domain errors are tool results the model reads, each saying
            # what to do; the structured content is the schema's `error` branch.
            errors = [
                ("symbol", {"nam": "main"}, "nam",
                 "invalid_argument: invalid argument `nam`: unknown field `nam`, expected one of `name`, `limit`, `cursor` "
                 "(the tool's inputSchema in tools/list names every argument); fix `nam` and call `symbol` again"),
                ("rollback", {"subject": "src/app.py", "version": 1}, "version",
                 "invalid_argument: invalid argument `version`: `src/app.py` v1 already reads as version 1; nothing to roll back; "
                 "fix `version` and call `rollback` again"),
                ("why", {"target": "src/app.py:99"}, "target",
                 "invalid_argument: invalid argument `target`: `src/app.py:99`: line 99 is past the end of `src/app.py`, "
                 "which has 11 lines; fix `target` and call `why` again"),
                ("session_end", {"session": 999}, None,
                 "not_found: no session 999; pass the `session_id` that `session_begin` returned (`recap` lists recent sessions)"),
                ("remember", {"subject": "src/app.py", "body": "x", "session": 999}, "session",
                 "invalid_argument: invalid argument `session`: no session 999; begin one with `session_begin`; "
                 "fix `session` and call `remember` again"),
                ("remember", {"subject": "../outside.py", "body": "x"}, "subject",
                 "invalid_argument: invalid argument `subject`: `../outside.py` leaves the workspace (`..`); "
                 "fix `subject` and call `remember` again"),
                ("remember", {"subject": "src/app.py", "body": "token " + "ghp" + "_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"}, "body",
                 "invalid_argument: invalid argument `body`: contains a secret (github_token) at line 1, column 7; loci does "
                 "not store credentials in memory. Remove it (or put a placeholder such as <TOKEN> in its place) and write "
                 "again; fix `body` and call `remember` again"),
                ("symbol", {"name": "main", "cursor": "page:2"}, "cursor",
                 "invalid_argument: invalid argument `cursor`: `page:2` is not a cursor; pass the `next_cursor` of a previous "
                 "answer (`item:N` or `byte:N`), or leave `cursor` out for the first page; fix `cursor` and call `symbol` again"),
            ]
            for tool, args, argument, message in errors:
                r = await session.call_tool(tool, args)
                check(error_of(r) == message, f"{tool} {args}:\n{error_of(r)!r}\n!=\n{message!r}")
                error = field(r, "structured_content", "structuredContent")["error"]
                check(error.get("argument") == argument, f"{tool} {args}: argument {error}")
                check(f"{error['kind']}: {error['message']}" == message, f"{tool}: {error}")
                check(error["retryable"] is False, f"{tool}: {error}")

            # An unknown tool is a protocol error.
            try:
                await session.call_tool("no_such_tool", {})
                raise AssertionError("an unknown tool must be a protocol error")
            except MCPError as e:
                check(e.error.code == -32602, f"code: {e.error.code}")
                check(e.error.message == "unknown tool `no_such_tool`; call tools/list for the available tools",
                      f"message: {e.error.message}")

            r = await session.call_tool("session_end", {"session": session_id, "summary": "done"})
            check(not field(r, "is_error", "isError"), f"session_end: {r.content}")
    print("python mcp client: ok")


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[3], encoding="utf-8") as f:
        cli_context = f.read()
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1], sys.argv[2], cli_context), timeout=180))
    except Exception as e:  # noqa: BLE001 - report any failure with its type
        print(f"python mcp client: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
