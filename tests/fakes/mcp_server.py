"""A real MCP server for tests, written with the `mcp` SDK: stdio by default, or streamable HTTP.

    python tests/fakes/mcp_server.py                  # stdio
    python tests/fakes/mcp_server.py --http PORT      # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/fakes/mcp_server.py --sse PORT       # HTTP+SSE on 127.0.0.1:PORT/sse
    ... --token T                                     # HTTP: refuse (401) without `Authorization: Bearer T`
    python tests/fakes/mcp_server.py --fail-start     # writes to stderr and exits before serving
    python tests/fakes/mcp_server.py --hang-start     # never answers the handshake

Tools: `echo`, `add`, `pid` (which process answers: tells a restart apart), `getenv`, `crash` (kills the
process in the middle of the call), `slow` (sleeps, then answers), `fail` (raises), `shout.loud`
(a name that needs sanitizing), `counter` (state that lives as long as the process), `where` (its cwd and arguments).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

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
def getenv(name: str) -> str:
    """The server's environment variable `name` (`<unset>` when it has none)."""
    return os.environ.get(name, "<unset>")


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
def where() -> str:
    """The folder the server runs in, and its argv after the script."""
    return f"{os.getcwd()} {' '.join(sys.argv[1:])}".strip()


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
    for flag in ("--http", "--sse"):
        if flag in argv:
            import uvicorn

            port = int(argv[argv.index(flag) + 1])
            token = argv[argv.index("--token") + 1] if "--token" in argv else None
            app = server.streamable_http_app() if flag == "--http" else server.sse_app()
            uvicorn.run(_bearer_required(app, token), host="127.0.0.1", port=port, log_level="warning")
            return
    server.run("stdio")


def _bearer_required(app: Any, token: str | None) -> Any:
    """The ASGI app, answering 401 to any HTTP request without `Authorization: Bearer TOKEN`."""
    if token is None:
        return app
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send(
                {"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]}
            )
            await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
            return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    main(sys.argv[1:])
