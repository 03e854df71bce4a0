"""Running one hook: its process, its environment, its timeout, and what it left running."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from tui_assist.session.hook_table import HookDefinition
    from tui_assist.tools.processes import ProcessScope

BLOCK_EXIT: Final = 2
"""The exit status with which a hook blocks what it was asked about."""
OUTPUT_CHARS: Final = 4_000
"""How much of a hook's stdout and stderr is kept (for the model, the tree and warnings)."""


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one run of a hook did."""

    exit_status: int | None
    """None after a timeout (or when it could not start)."""
    stdout: str = ""
    stderr: str = ""
    problem: str | None = None
    """Why it did not run to an exit status (a timeout, a command that could not start)."""
    survivors: ProcessScope | None = None
    """What the hook left running (a daemon), to end with the session; None: nothing."""

    @property
    def blocked(self) -> bool:
        """It exited with 2."""
        return self.exit_status == BLOCK_EXIT


async def run_hook(
    hook: HookDefinition,
    payload: Mapping[str, Any],
    workdir: Path,
    pass_env: frozenset[str],
    *,
    key_variables: frozenset[str] = frozenset(),
) -> HookRun:
    """Run `hook` once: `payload` as JSON on stdin, in `workdir`, with the shell's environment.

    `$CLAUDE_PROJECT_DIR` is the workdir and `$CLAUDE_PLUGIN_ROOT` a plugin hook's folder, in
    the environment, so the shell expands them in the command as Claude Code's does.

    The hook runs in a process group of its own and in a `ProcessScope`: a timeout (at most
    `HOOK_TIMEOUT_MAX`) or a cancelled turn kills all it started, a `setsid` daemon too. A daemon
    left running by a hook that exited is handed back in `HookRun.survivors` (the session ends it
    when it ends; the program's exit at the latest).
    """
    from tui_assist.session.config import HOOK_TIMEOUT_MAX
    from tui_assist.tools.processes import ProcessScope, end_at_exit
    from tui_assist.tools.shell import shell_env

    end_at_exit()
    scope = ProcessScope("hook")
    env = scope.environ(shell_env(workdir, pass_env, key_variables))
    env["TUI_ASSIST_PROJECT_DIR"] = env["CLAUDE_PROJECT_DIR"] = str(workdir)
    if hook.plugin_root is not None:
        env["CLAUDE_PLUGIN_ROOT"] = str(hook.plugin_root)
    timeout = min(hook.timeout, HOOK_TIMEOUT_MAX)
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
    )
    try:
        # Shielded: a turn cancelled while the hook starts would otherwise leave it running
        # (asyncio kills only the shell it started, not the group); here it is ended once started.
        process = await asyncio.shield(starting)
    except asyncio.CancelledError:
        try:
            _end(await starting, scope)
        except OSError:
            scope.release()
        raise
    except OSError as exc:
        scope.release()
        return HookRun(None, problem=f"could not start: {exc.strerror or exc}")
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        out, err = await asyncio.wait_for(process.communicate(data), timeout)
    except TimeoutError:
        await asyncio.to_thread(_kill_group, process)  # reads /proc: off the event loop
        await asyncio.to_thread(scope.close, started=(process.pid,))
        await process.wait()
        return HookRun(None, problem=f"timed out after {timeout:g} s")
    except asyncio.CancelledError:
        _end(process, scope)
        raise
    if not await asyncio.to_thread(scope.pids):  # reads /proc: off the event loop
        scope.release()
        return HookRun(process.returncode, _text(out), _text(err))
    return HookRun(process.returncode, _text(out), _text(err), survivors=scope)


def _text(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "\n[... hook output truncated]"


def _end(process: asyncio.subprocess.Process, scope: ProcessScope) -> None:
    """Kill the hook's group and whatever else of its scope lives; asyncio reaps the hook."""
    _kill_group(process)
    scope.close(started=(process.pid,))


def _kill_group(process: asyncio.subprocess.Process) -> None:
    from tui_assist.tools.processes import kill_group

    kill_group(process.pid, started=(process.pid,))
