"""The command palette: the commands that have a palette title (`area: verb`, `ui/command_bindings.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui_assist.session.config_source import MAX_ROUNDS
from tui_assist.ui.command_bindings import bound_commands

if TYPE_CHECKING:
    from tui_assist.ui.app import TuiAssistApp


class TuiAssistCommands(Provider):
    """Everything the app can do from the palette."""

    def _commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        app: TuiAssistApp = self.app  # type: ignore[assignment]
        screen = app.main_screen
        for command, bound in bound_commands():
            if bound.palette:
                yield bound.palette, command.description, partial(app.run_action, bound.action, screen)
        # Variants with an argument: searched for, not listed. Every budget `/rounds` accepts.
        for rounds in range(1, MAX_ROUNDS + 1):
            yield (
                f"refine: set rounds to {rounds}",
                f"Refine round budget: {rounds}",
                partial(screen.set_rounds, rounds),
            )
        manager = screen.session.mcp
        for name in manager.names if manager is not None else ():
            yield (
                f"mcp: restart server {name}",
                f"Restart the MCP server {name}",
                partial(screen.action_restart_mcp, name),
            )

    async def discover(self) -> Hits:
        for title, help_text, command in self._commands():
            if title.startswith(("refine: set rounds", "mcp: restart server ")):
                continue
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, text=title, help=help_text)
