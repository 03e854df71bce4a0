"""Background shells as ACP tool calls: one `execute` call per shell that updates while it runs.

A shell's call (id `background-SHELL_ID`) starts `in_progress` when `bash` starts it; while it runs,
its output's tail is sent again at most once per `REFRESH_SECONDS` (only when it printed more), so a
chatty dev server costs the editor one update a second; when it ends, the call is `completed`
(exit 0) or `failed` (a non-zero exit, or killed), with its last output.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp import helpers

if TYPE_CHECKING:
    from tui_assist.tools.background import BackgroundShell, BackgroundShells, ShellInfo

__all__ = ["REFRESH_SECONDS", "ShellUpdates"]

REFRESH_SECONDS = 1.0
MAX_OUTPUT_BYTES = 20_000
"""The tail of a shell's output sent as its call's content."""


def call_id(shell_id: str) -> str:
    """The ACP tool call id of a background shell."""
    return f"background-{shell_id}"


class ShellUpdates:
    """Follows a session's background shells and sends their tool calls through `send`."""

    def __init__(self, send: Callable[[Any], None]) -> None:
        """Send each update with `send` (the session's ordered outbox)."""
        self._send = send
        self._shells: BackgroundShells | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._sent: dict[str, int] = {}
        """Per running shell: how much of its output was sent."""
        self._ticker: asyncio.Task[None] | None = None

    def follow(self, shells: BackgroundShells | None) -> None:
        """Start following `shells` (once; the session's parts are loaded by the first prompt)."""
        if shells is None or self._shells is not None:
            return
        self._shells = shells
        self._unsubscribe = shells.subscribe(self._changed)

    def _changed(self, info: ShellInfo) -> None:
        assert self._shells is not None
        shell = self._shells.get(info.shell_id)
        if shell is None:
            return
        if info.status == "running":
            self._sent[info.shell_id] = 0
            self._send(
                helpers.start_tool_call(
                    call_id(info.shell_id),
                    f"{info.command} (background {info.shell_id})",
                    kind="execute",
                    status="in_progress",
                    raw_input={"command": info.command, "run_in_background": True},
                )
            )
            if self._ticker is None or self._ticker.done():
                self._ticker = asyncio.ensure_future(self._tick())
            return
        self._sent.pop(info.shell_id, None)
        status = "completed" if info.status == "completed" else "failed"
        self._send(
            helpers.update_tool_call(
                call_id(info.shell_id),
                status=status,
                content=self._content(shell),
                raw_output={"status": info.status, "exit_code": info.exit_code},
            )
        )

    @staticmethod
    def _content(shell: BackgroundShell) -> list[Any] | None:
        tail = shell.output.tail(MAX_OUTPUT_BYTES)
        if not tail:
            return None
        text = tail.decode("utf-8", errors="replace")
        return [helpers.tool_content(helpers.text_block(text))]

    async def _tick(self) -> None:
        """Send the running shells' new output once a second, until none runs."""
        while self._sent:
            await asyncio.sleep(REFRESH_SECONDS)
            assert self._shells is not None
            for shell_id, sent in list(self._sent.items()):
                shell = self._shells.get(shell_id)
                if shell is None or not shell.running or shell.output.total == sent:
                    continue
                self._sent[shell_id] = shell.output.total
                self._send(helpers.update_tool_call(call_id(shell_id), content=self._content(shell)))

    def close(self) -> None:
        """Stop following (the session ends; its shells are killed by its parts)."""
        if self._ticker is not None:
            self._ticker.cancel()
        if self._unsubscribe is not None:
            with contextlib.suppress(ValueError):
                self._unsubscribe()
