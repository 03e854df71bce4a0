"""The command palette: session, refine, theme and panel commands, titled `area: verb`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from tui_assist.ui.app import TuiAssistApp

MAX_ROUNDS_OFFERED = 10


class TuiAssistCommands(Provider):
    """Everything the app can do from the palette."""

    def _commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        app: TuiAssistApp = self.app  # type: ignore[assignment]
        screen = app.main_screen
        yield (
            "session: new conversation",
            "Start over with an empty conversation",
            screen.action_new_conversation,
        )
        yield "session: resume", "Open a stored conversation", screen.action_resume_conversation
        yield (
            "session: export markdown",
            "Write the conversation to a Markdown file",
            screen.action_export_markdown,
        )
        yield (
            "answer: copy last",
            "Copy the last answer to the clipboard",
            partial(screen.action_copy_answer, last=True),
        )
        yield "refine: toggle", "Turn Refine mode on or off", screen.action_toggle_refine
        for rounds in range(1, MAX_ROUNDS_OFFERED + 1):
            yield (
                f"refine: set rounds to {rounds}",
                f"Refine round budget: {rounds}",
                partial(screen.set_rounds, rounds),
            )
        yield "round: review latest", "Open the latest round's transcript", screen.action_review_round
        yield "panels: toggle tree", "Show or hide the agent tree", screen.action_toggle_tree
        yield "panels: toggle flow", "Show or hide the flow panel", screen.action_toggle_flow
        yield "turn: cancel", "Cancel the running turn", screen.action_cancel_turn
        yield (
            "flow: grounded question",
            "Answer a question from a folder of documents, with citations",
            screen.action_ask_grounded,
        )
        yield "flow: approve held run", "Release the held grounded run", screen.action_approve_flow
        yield "flow: explore help-desk patterns", "Open the Workflow Explorer", app.open_explorer
        yield "mcp: list servers", "MCP servers, their state and their tools", screen.action_list_mcp
        yield "mcp: restart server", "Restart every configured MCP server", screen.action_restart_mcp
        manager = app.session.mcp
        for name in manager.names if manager is not None else ():
            yield (
                f"mcp: restart server {name}",
                f"Restart the MCP server {name}",
                partial(screen.action_restart_mcp, name),
            )
        yield "theme: choose", f"Switch theme ({len(app.theme_names)} installed)", app.action_choose_theme

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
                yield Hit(score, matcher.highlight(title), command, help=help_text)
