"""A real MCP server for tests, written with the `mcp` SDK: stdio by default, or streamable HTTP.

    python tests/tools/mcp_server.py                  # stdio
    python tests/tools/mcp_server.py --http PORT      # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/tools/mcp_server.py --fail-start     # writes to stderr and exits before serving
    python tests/tools/mcp_server.py --hang-start     # never answers the handshake

Tools: `echo`, `add`, `pid` (which process answers: tells a restart apart), `crash` (kills the
process in the middle of the call), `slow` (sleeps, then answers), `fail` (raises), `shout.loud`
(a name that needs sanitizing), `counter` (state that lives as long as the process).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("testsrv")
_count = 0


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def crash() -> str:
    """Kill the server process mid-call."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def fail() -> str:
    """Raise an error."""
    raise ValueError("the tool failed on purpose")


@server.tool(name="shout.loud")
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
def counter() -> int:
    """Count calls within this process."""
    global _count
    _count += 1
    return _count


def main(argv: list[str]) -> None:
    if "--fail-start" in argv:
        sys.stderr.write("fatal: missing TESTSRV_TOKEN\n")
        sys.exit(2)
    if "--hang-start" in argv:
        # Read requests and never answer; leave as soon as the client closes stdin.
        for _ in sys.stdin:
            pass
        return
    if "--http" in argv:
        port = int(argv[argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
        return
    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
