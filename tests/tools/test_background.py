"""Background shells with real processes: output, status, kill, and nothing left when the session ends."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.tools.processes import process_alive, wait_for_file, wait_until_dead
from tests.wait import wait_until
from tui_assist.core.tooling import ToolContext
from tui_assist.session.tasks import runtime_text, tasks_markdown
from tui_assist.tools.background import BackgroundShells, OutputRing, ShellInfo
from tui_assist.tools.registry import Toolset, default_toolbox
from tui_assist.tools.shell import shell_env


@pytest.fixture
async def shells(tmp_path: Path) -> AsyncIterator[BackgroundShells]:
    manager = BackgroundShells(tmp_path, env=lambda: shell_env(tmp_path, frozenset()))
    try:
        yield manager
    finally:
        await manager.aclose()


@pytest.fixture
async def box(tmp_path: Path, shells: BackgroundShells) -> AsyncIterator[Toolset]:
    toolset = default_toolbox(tmp_path, background=shells)
    try:
        yield toolset
    finally:
        await toolset.aclose()


async def call(box: Toolset, ctx: ToolContext, name: str, **raw: object) -> str:
    tool = box.get(name)
    assert tool is not None, name
    output = await tool.run(tool.parse(dict(raw)), ctx)
    return output.content


def test_the_ring_keeps_the_newest_bytes_and_counts_what_it_dropped() -> None:
    ring = OutputRing(cap=10)
    ring.feed(b"0123456789")
    ring.feed(b"abcde")
    assert len(ring) == 10 and ring.total == 15
    assert ring.since(0) == (b"56789abcde", 5)
    assert ring.since(12) == (b"cde", 0)
    lines = OutputRing()
    lines.feed(b"first\r\nlast line\n\n")
    assert lines.last_line() == "last line"


async def test_a_background_command_answers_at_once_and_its_output_is_read_later(
    box: Toolset, ctx: ToolContext, shells: BackgroundShells
) -> None:
    bash = box.get("bash")
    assert bash is not None and bash.spec.native_type is None  # the API's bash has a fixed schema
    assert "run_in_background" in bash.spec.input_schema["properties"]
    args = bash.parse({"command": "npm run dev", "run_in_background": True})
    assert bash.summary(args) == "npm run dev\n(runs in the background)"  # what the dialog shows
    answer = await call(box, ctx, "bash", command="echo started; sleep 30", run_in_background=True)
    assert "bash_1" in answer
    shell = shells.get("bash_1")
    assert shell is not None and shell.running
    await wait_until(lambda: "started" in shell.output.last_line(), what="the first line")
    first = await call(box, ctx, "bash_output", shell_id="bash_1")
    assert "running" in first and "started" in first
    assert "(no new output)" in await call(box, ctx, "bash_output", shell_id="bash_1")
    pid = shell.pid
    killed = await call(box, ctx, "kill_shell", shell_id="bash_1")
    assert "killed" in killed
    assert await wait_until_dead(pid)
    assert shells.infos()[0].status == "killed"


async def test_an_ended_command_reports_its_exit_code(
    box: Toolset, ctx: ToolContext, shells: BackgroundShells
) -> None:
    await call(box, ctx, "bash", command="echo bye; exit 3", run_in_background=True)
    shell = shells.get("bash_1")
    assert shell is not None
    await asyncio.wait_for(shell.done.wait(), 10)
    assert (shell.status, shell.exit_code) == ("failed", 3)
    output = await call(box, ctx, "bash_output", shell_id="bash_1")
    assert "exited with status 3" in output and "bye" in output
    assert "no longer running" in await call(box, ctx, "kill_shell", shell_id="bash_1")
    assert "no background shell" in await call(box, ctx, "bash_output", shell_id="bash_9")


async def test_closing_the_session_ends_every_shell_and_what_escaped_its_group(
    tmp_path: Path, shells: BackgroundShells
) -> None:
    seen: list[ShellInfo] = []
    shells.subscribe(seen.append)
    daemon = tmp_path / "daemon.pid"
    first = await shells.start("sleep 60")
    # setsid: a session and group of its own, found again by the scope's mark.
    second = await shells.start(f"setsid sh -c 'echo $$ > {daemon}; exec sleep 60' & sleep 60")
    daemon_pid = int(await wait_for_file(daemon))
    pids = [first.pid, second.pid, daemon_pid]
    assert all(process_alive(pid) for pid in pids)
    await shells.aclose()
    assert [await wait_until_dead(pid) for pid in pids] == [True, True, True]
    assert [info.status for info in seen] == ["running", "running", "killed", "killed"]
    with pytest.raises(RuntimeError):
        await shells.start("true")


async def test_a_flood_of_output_stays_within_the_cap(shells: BackgroundShells) -> None:
    shell = await shells.start("head -c 3000000 /dev/zero | tr '\\0' x; echo; echo end")
    await asyncio.wait_for(shell.done.wait(), 30)
    assert shell.output.total > 3_000_000 and len(shell.output) == 1024 * 1024
    text, dropped = shell.read_new()
    assert dropped > 1_900_000 and text.rstrip().endswith("end")


_CRASHING_HOST = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from tui_assist.tools.background import BackgroundShells
    from tui_assist.tools.shell import shell_env

    async def main():
        workdir = Path(sys.argv[1])
        shells = BackgroundShells(workdir, env=lambda: shell_env(workdir, frozenset()))
        shell = await shells.start("sleep 60 & echo $! > child.pid; wait")
        print(shell.pid, flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
    """
)


async def test_a_crash_of_the_program_leaves_no_background_process(tmp_path: Path) -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_HOST, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert host.stdout is not None
        shell_pid = int(await asyncio.to_thread(host.stdout.readline))
        child_pid = int(await wait_for_file(tmp_path / "child.pid"))
        assert process_alive(child_pid)
        os.kill(host.pid, signal.SIGKILL)
        host.wait()
        assert await wait_until_dead(shell_pid) and await wait_until_dead(child_pid)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


async def test_tasks_lists_every_shell_in_one_line_each(shells: BackgroundShells) -> None:
    assert "No background shells" in tasks_markdown(shells)
    shell = await shells.start("echo ready; sleep 30")
    await wait_until(lambda: shell.output.last_line() == "ready", what="its first line")
    listed = tasks_markdown(shells)
    assert "bash_1  running" in listed and "echo ready; sleep 30  │ ready" in listed
    assert [runtime_text(s) for s in (5, 185, 3720)] == ["5s", "3m05s", "1h02m"]
