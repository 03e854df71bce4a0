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


def shell_pids(command: str) -> list[int]:
    """Host PIDs of the live shells running `command` (`bash ... -c SCRIPT bash COMMAND`), not
    their forks (a subshell keeps its parent's command line).

    A sandboxed shell's `$$` is its PID in the sandbox's own PID namespace, so tests find it here.
    """
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")[:-1]
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if args and args[-1] == command.encode() and Path(args[0].decode()).name == "bash":
            if process_alive(int(entry.name)):
                found[int(entry.name)] = parent
    return [pid for pid, parent in found.items() if parent not in found]
