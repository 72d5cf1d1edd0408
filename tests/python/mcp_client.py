"""A real MCP client (the official Python SDK) driving `loci mcp` over stdio.

Usage: python3 tests/python/mcp_client.py <path-to-loci-binary> <workspace>

The workspace must hold `src/app.py` defining `main()`. Lists the tools, calls
`symbol`, `remember`, `why` (and `context` when the server offers it), checks an invalid
call is refused naming the argument, and exits non-zero with a message on any failure.
Run by `server/cli/tests/mcp_python.rs`.
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


async def run(binary: str, workspace: str) -> None:
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
            check(field(tools["remember"].annotations, "read_only_hint", "readOnlyHint") is False, "remember writes")
            check(field(tools["remember"].annotations, "destructive_hint", "destructiveHint") is False, "remember is not destructive")
            props = field(tools["remember"], "input_schema", "inputSchema")["properties"]
            for arg in ("subject", "body", "session", "author", "summary", "expect_version", "operation_id"):
                check(arg in props and props[arg].get("description"), f"remember.{arg} documented")

            r = await session.call_tool("symbol", {"name": "main"})
            check(not field(r, "is_error", "isError"), f"symbol: {r.content}")
            hits = field(r, "structured_content", "structuredContent")["result"]
            check(len(hits) == 1 and hits[0]["path"] == "src/app.py", f"symbol hits: {hits}")
            check("src/app.py:" in r.content[0].text, f"symbol text: {r.content[0].text}")

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

            if "context" in tools:
                r = await session.call_tool("context", {"query": "how does the server start"})
                check(not field(r, "is_error", "isError"), f"context: {r.content}")

            r = await session.call_tool("why", {"query": "nothing mentions this phrase"})
            check(field(r, "is_error", "isError"), "a question with no answer is a tool error")

            try:
                await session.call_tool("symbol", {"nam": "main"})
                raise AssertionError("a misspelled argument must be refused")
            except MCPError as e:
                check(e.error.code == -32602, f"code: {e.error.code}")
                check("`nam`" in e.error.message, f"message names the argument: {e.error.message}")

            r = await session.call_tool("session_end", {"session": session_id, "summary": "done"})
            check(not field(r, "is_error", "isError"), f"session_end: {r.content}")
    print("python mcp client: ok")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1], sys.argv[2]), timeout=180))
    except Exception as e:  # noqa: BLE001 - report any failure with its type
        print(f"python mcp client: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
