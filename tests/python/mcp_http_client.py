"""The official MCP Python SDK over streamable HTTP against `loci mcp --http`.

Usage: python3 tests/python/mcp_http_client.py <url> <token>

Initializes a session with the bearer token, calls `symbol` for `a`, and leaves, which
sends the session `DELETE`. Fails if the SDK logged any warning or error (it logged
"Session termination failed: 202" when loci answered `DELETE` 202; it expects 200 or
204). Run by `server/cli/tests/it/mcp_python.rs`.
"""

import asyncio
import logging
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.name}: {record.getMessage()}")


async def run(url: str, token: str, logged: Collect) -> None:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                r = await session.call_tool("symbol", {"name": "a"})
                text = r.content[0].text
                if not text.startswith("a.rs:1: function a"):
                    raise AssertionError(f"symbol a: {text!r}")
    if logged.records:
        raise AssertionError(f"the SDK logged: {logged.records}")
    print("python mcp http client: ok")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    logged = Collect()
    logging.getLogger().addHandler(logged)
    logging.getLogger().setLevel(logging.WARNING)
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1], sys.argv[2], logged), timeout=120))
    except Exception as e:  # noqa: BLE001 - report any failure with its type
        print(f"python mcp http client: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
