"""The chat's glue to the user's status line (`session/status_line.py` runs it).

The status bar's state is watched; a change runs the command `PERIOD` seconds after the last run
ended at the soonest, one run at a time, and only when the JSON it would get differs from the
last sent. Its first line is
shown in the bar; a failing command is reported once (a toast) and its line cleared.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tui_assist import __version__
from tui_assist.session.status_line import StatusLineError, StatusState, run_status_line

if TYPE_CHECKING:
    from pathlib import Path

    from textual.timer import Timer

    from tui_assist.ui.screens.main import MainScreen

PERIOD = 0.3
"""Seconds between two runs at least, however fast the state changes (a streamed answer's tokens)."""

WATCHED = ("state", "model", "usage", "cost", "cost_cap", "mode", "refine", "context", "workdir")
"""The status bar's fields whose change is a new state for the command."""


class StatusLineGlue:
    """Runs the user's status line command for the main screen when the state changes."""

    def __init__(self, screen: MainScreen, command: str, env: dict[str, str]) -> None:
        self.screen = screen
        self.command = command
        self.env = env
        self.runs = 0
        """How many times the command ran (tests and the bench read it)."""
        self._sent: str | None = None
        self._last_run = 0.0
        self._timer: Timer | None = None
        self._running = False
        self._reported = False

    @property
    def idle(self) -> bool:
        """No run is due or under way (tests wait for it rather than for a clock)."""
        return self._timer is None and not self._running

    def start(self) -> None:
        status = self.screen.status
        for name in WATCHED:
            self.screen.watch(status, name, lambda _value: self.changed(), init=False)
        self.changed()

    def state(self) -> StatusState:
        """The state the command is told, from the status bar and the session."""
        status, session = self.screen.status, self.screen.session
        return StatusState(
            conversation_id=session.conversation_id,
            model=status.model,
            workdir=status.workdir,
            state=status.state,
            mode=status.mode,
            refine=status.refine,
            cost_usd=status.cost,
            max_budget_usd=status.cost_cap,
            input_tokens=status.usage.total_input_tokens if status.usage else 0,
            output_tokens=status.usage.output_tokens if status.usage else 0,
            context=status.context,
            version=__version__,
        )

    def changed(self) -> None:
        """The state may have changed: run the command now, or once `PERIOD` has passed."""
        if self._timer is not None or self._running:
            return  # the run already due (or under way, which looks again after it) will see it
        wait = self._last_run + PERIOD - time.monotonic()
        self._timer = self.screen.set_timer(max(0.01, wait), self._due)  # a zero delay is refused

    def _due(self) -> None:
        self._timer = None
        sent = self.state().to_json()
        if sent == self._sent:
            return
        self._running = True
        self._sent = sent
        self.screen.run_worker(self._run(sent), group="status-line", exit_on_error=False)

    async def _run(self, sent: str) -> None:
        workdir: Path = self.screen.status.workdir
        try:
            line = await run_status_line(self.command, sent, cwd=workdir, env=self.env)
        except StatusLineError as exc:
            line = ""
            if not self._reported:
                self._reported = True
                self.screen.notify(f"status line command failed: {exc}", severity="warning", timeout=6)
        finally:
            self._running = False
            self._last_run = time.monotonic()  # spaced from its end: a slow command never piles up
            self.runs += 1
        self.screen.status.user_line = line
        self.changed()  # a change during the run is sent now (an unchanged state is not)


def start_status_line(screen: MainScreen) -> StatusLineGlue | None:
    """Start the `[status_line]` command of the user's settings, if there is one."""
    from tui_assist.session.factory import provider_key_variables
    from tui_assist.tools.shell import shell_env

    settings = screen.session.settings
    command = settings.status_line.command
    if not command or not command.strip():
        return None
    env = shell_env(
        settings.workdir, frozenset(settings.tools.bash.pass_env), provider_key_variables(settings)
    )
    glue = StatusLineGlue(screen, command, env)
    glue.start()
    return glue
