"""Serve tests/fakes/mcp_server.py over HTTP (streamable HTTP or SSE) on a free loopback port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

SERVER = str(Path(__file__).with_name("mcp_server.py"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(transport: Literal["http", "sse"] = "http", *, token: str | None = None) -> Iterator[str]:
    """Run the test server in a subprocess; yield its endpoint URL once it accepts connections."""
    port = free_port()
    args = [sys.executable, SERVER, f"--{transport}", str(port)]
    if token is not None:
        args += ["--token", token]
    proc = subprocess.Popen(args, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("the MCP test server did not start listening")
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}"
    finally:
        proc.terminate()
        proc.wait(10)
