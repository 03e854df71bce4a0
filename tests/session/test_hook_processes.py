"""What a hook starts ends with its timeout, its session, or the program: real processes, real daemons."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.session.test_hooks import hook, open_session, opened, script, work, write_config
from tests.tools.processes import process_alive, wait_for_file, wait_until_dead
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.chat import ChatSession
from tui_assist.session.hooks import HookDefinition, SessionHooks, parse_hooks, run_hook

__all__ = ["opened", "work"]  # fixtures

DAEMON = "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $! > {pid}\n"
"""A daemon that leaves the hook's process group and session, and its pipes."""


def _kill(pid: int) -> None:
    if process_alive(pid):
        os.kill(pid, 9)


async def test_a_timeout_ends_the_daemon_a_hook_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    definition = HookDefinition("Stop", DAEMON.format(pid=pid_file) + "sleep 30\n", timeout=0.5)
    ran = await run_hook(definition, {}, tmp_path, frozenset())
    pid = int(await wait_for_file(pid_file))
    try:
        assert ran.problem == "timed out after 0.5 s"
        assert await wait_until_dead(pid), "the daemon outlived its hook's timeout"
    finally:
        _kill(pid)


async def test_a_daemon_ends_with_the_session(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    pid_file = tmp_path / "pid"
    starter = script(tmp_path, "start.sh", "#!/bin/sh\n" + DAEMON.format(pid=pid_file))
    write_config(tmp_path, hook("Stop", starter))
    fake.add(Reply("answer"))
    session = await open_session(work, tmp_path, opened)
    outcome = await session.run_turn("hi", RecordingObserver())
    pid = int(await wait_for_file(pid_file))
    try:
        assert outcome.result.outcome == "answered" and not outcome.warnings
        assert process_alive(pid)  # a hook may start a server for the session...
        await session.aclose()
        opened.remove(session)
        assert await wait_until_dead(pid), "the daemon outlived the session"  # ...not longer
    finally:
        _kill(pid)


async def test_session_hooks_hold_only_what_is_still_running(tmp_path: Path) -> None:
    quick = HookDefinition("Stop", "true")
    hooks = SessionHooks([quick], tmp_path)
    await hooks.run("Stop", RecordingObserver(), None)
    assert hooks.survivors == []


PROGRAM = """
import asyncio, sys
from pathlib import Path
from tui_assist.session.hooks import HookDefinition, run_hook

folder = Path(sys.argv[1])
command = (
    "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $! > {0}/marked; "
    "setsid env -i sleep 301 >/dev/null 2>&1 </dev/null & echo $! > {0}/unmarked"
).format(folder)
ran = asyncio.run(run_hook(HookDefinition("Stop", command), {}, folder, frozenset()))
print(ran.exit_status, ran.survivors is not None)
"""


def test_daemons_end_when_the_program_exits(tmp_path: Path) -> None:
    """Also one that cleared its environment: the program is their subreaper, and ends them at exit."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True"]
    pids = [int((tmp_path / name).read_text()) for name in ("marked", "unmarked")]
    try:
        assert [process_alive(pid) for pid in pids] == [False, False]
    finally:
        for pid in pids:
            _kill(pid)


def test_a_timeout_over_ten_minutes_is_an_invalid_entry(tmp_path: Path) -> None:
    origin = tmp_path / "config.toml"
    hooks, warnings = parse_hooks(
        {"Stop": [{"command": "a", "timeout": 601}, {"command": "b", "timeout": 600}]}, "user", origin
    )
    assert [h.command for h in hooks] == ["b"]
    assert len(warnings) == 1 and str(origin) in warnings[0] and "600" in warnings[0]
