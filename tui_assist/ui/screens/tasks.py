"""`/tasks`: the background shells, live; `k` kills the highlighted one, `escape` closes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_assist.ui.widgets.tasks import TasksList

if TYPE_CHECKING:
    from tui_assist.tools.background import BackgroundShells


class TasksScreen(ModalScreen[None]):
    """The session's background shells; kill one from the list."""

    DEFAULT_CSS = """
    TasksScreen { align: center middle; background: $background 60%; }
    TasksScreen > #tasks { width: 90%; max-width: 120; height: 60%; border: thick $accent;
        background: $surface; padding: 0 1; }
    TasksScreen #tasks-title { text-style: bold; color: $accent; }
    TasksScreen #tasks-list { height: 1fr; }
    TasksScreen #tasks-keys { color: $foreground 70%; }
    """
    BINDINGS = [
        Binding("escape", "dismiss_tasks", "Close", id="tasks-close"),
        Binding("k", "kill", "Kill", id="tasks-kill"),
    ]

    def __init__(self, shells: BackgroundShells | None) -> None:
        super().__init__()
        self.shells = shells

    def compose(self) -> ComposeResult:
        with Vertical(id="tasks"):
            yield Static("Background shells", id="tasks-title")
            yield TasksList(self.shells, id="tasks-list")
            yield Static("k kill · escape close", id="tasks-keys")

    def action_dismiss_tasks(self) -> None:
        self.dismiss(None)

    async def action_kill(self) -> None:
        """Kill the highlighted shell (and what it started)."""
        shell_id = self.query_one(TasksList).highlighted_id
        if self.shells is not None and shell_id is not None and await self.shells.kill(shell_id):
            self.notify(f"{shell_id} killed")
