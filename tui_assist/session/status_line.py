"""The user's status line: `[status_line] command`, fed the session's state, shows its first line.

As Claude Code's `statusLine`: the command gets the state as one JSON object on stdin and prints
what the status bar shows (its first line, control characters dropped). It is the user's own
setting: it is read only from the user's config file (a project's files never set it, trusted or
not), and it runs as the user's hooks do, outside the sandbox, without the providers' keys.

This module runs it and builds the state; the UI decides when (`ui/status_line.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_assist.core.terminal_signals import plain

TIMEOUT = 5.0
"""Seconds the command may take before it is killed (and its failure reported)."""
MAX_OUTPUT = 64 * 1024
"""Bytes of its stdout read at most."""
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
"""Colour (CSI) and OSC sequences: the bar has its own colours, and a sequence must not reach the terminal."""


class StatusLineError(Exception):
    """The command failed (exit status, timeout, not found); the message is one line."""


@dataclass(frozen=True, slots=True)
class StatusState:
    """What the status line is told (the JSON's fields are Claude Code's where it has them)."""

    conversation_id: str | None
    model: str
    workdir: Path
    state: str
    """`idle`, `running` or `loading`."""
    mode: str
    refine: bool
    cost_usd: float | None
    max_budget_usd: float | None
    input_tokens: int
    output_tokens: int
    context: float | None
    version: str

    def to_json(self) -> str:
        """The object sent on stdin (keys sorted, so an unchanged state is the same text)."""
        data: dict[str, Any] = {
            "hook_event_name": "Status",
            "session_id": self.conversation_id,
            "cwd": str(self.workdir),
            "model": {"id": self.model, "display_name": self.model},
            "workspace": {"current_dir": str(self.workdir), "project_dir": str(self.workdir)},
            "version": self.version,
            "cost": {"total_cost_usd": self.cost_usd, "max_budget_usd": self.max_budget_usd},
            "state": self.state,
            "mode": self.mode,
            "refine": self.refine,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
            "context_fill": self.context,
        }
        return json.dumps(data, sort_keys=True)


async def run_status_line(command: str, state_json: str, *, cwd: Path, env: dict[str, str]) -> str:
    """Run `command` (through the shell) with `state_json` on stdin; its first line of output.

    Raises:
        StatusLineError: when it cannot start, exits non-zero, or outlasts `TIMEOUT`.
    """
    try:
        proc = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its children end with it on a timeout
        )
    except OSError as exc:
        raise StatusLineError(f"cannot start it: {exc.strerror or exc}") from exc
    try:
        out, err = await asyncio.wait_for(proc.communicate(state_json.encode()), TIMEOUT)
    except (TimeoutError, asyncio.CancelledError) as exc:
        _kill_group(proc.pid)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise StatusLineError(f"it took over {TIMEOUT:g}s") from exc
    if proc.returncode != 0:
        said = plain(err.decode(errors="replace"), 120)
        raise StatusLineError(f"exit status {proc.returncode}" + (f": {said}" if said else ""))
    text = _ANSI.sub("", out[:MAX_OUTPUT].decode(errors="replace"))
    return plain(text.splitlines()[0] if text.strip() else "", 200)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
