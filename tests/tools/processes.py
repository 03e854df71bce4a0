from __future__ import annotations

import asyncio
from pathlib import Path


def process_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (an unreaped zombie counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


async def wait_for_file(path: Path, timeout: float = 5.0) -> str:
    """Poll until a file exists with content; return the content."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if path.exists() and (text := path.read_text().strip()):
            return text
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


async def wait_until_dead(pid: int, timeout: float = 3.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if not process_alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False
