"""The project trust dialog: what a project folder would run, and the user's answer.

Shown once the session is loaded, before anything of the project runs, when the project has
hooks, MCP servers, agents, allow rules or scripts the user has not trusted (or that changed
since). Keys: `t` trust (remembered with the digest of the files as they were read and shown:
one changed while the dialog is open is asked about again), `n` or `escape` not now (nothing of
the project runs or takes effect this session). The safe choice has the focus.
"""

from __future__ import annotations

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from tui_assist.session.chat import ChatSession
from tui_assist.ui.screens.approval import WarningDialog, choice


class TrustScreen(WarningDialog[bool]):
    """Asks whether the project's hooks, MCP servers and agents may run."""

    DEFAULT_CSS = """
    TrustScreen > #dialog {
        max-width: 110;
    }
    TrustScreen #why {
        color: $text-muted;
    }
    TrustScreen #items {
        height: auto;
        max-height: 16;
        background: $background;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    TrustScreen #choices {
        grid-size: 2;
    }
    """
    AUTO_FOCUS = "#not-now"
    BINDINGS = [
        Binding("t", "trust", "Trust this project", id="trust-project", show=False),
        Binding("n,escape", "not_now", "Not now", id="trust-not-now", show=False),
    ]

    def __init__(self, workdir: str, items: list[str], *, changed: bool) -> None:
        super().__init__()
        self.workdir = workdir
        self.items = items
        self.changed = changed

    def compose(self) -> ComposeResult:
        why = (
            "Its files changed since you trusted it. Once trusted, this runs or applies on your machine:"
            if self.changed
            else "This folder brings its own code. Once trusted, this runs or applies on your machine:"
        )
        with Vertical(id="dialog"):
            yield Static(Content.assemble("Trust the project ", (self.workdir, "bold"), "?"), id="title")
            yield Static(Content(why), id="why")
            with VerticalScroll(id="items"):
                yield Static(Content("\n".join(f"• {item}" for item in self.items)), id="item-list")
            with Grid(id="choices"):
                yield Button(choice("t", "Trust"), id="trust", variant="warning", compact=True)
                yield Button(choice("n", "Not now"), id="not-now", compact=True)

    def action_trust(self) -> None:
        self.dismiss(True)

    def action_not_now(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust")


async def ask_project_trust(app: App[object], session: ChatSession) -> bool | None:
    """Ask (when the project has something untrusted) and trust it if the user says so.

    Returns:
        The user's answer, or None when there was nothing to ask.
    """
    found = session.extensions
    if found is None or not found.pending():
        return None
    shown = found.digest  # of the files as read for the items shown, never read again
    screen = TrustScreen(str(found.workdir), found.pending(), changed=found.trust == "changed")
    trusted = await app.push_screen_wait(screen)
    if trusted:
        saved = session.trust_project(shown)
        app.notify(
            "Project trusted: its hooks, agents, MCP servers and allow rules apply from now on."
            if saved
            else "Project trusted for this session (the choice could not be saved).",
            timeout=4,
        )
        for problem in await session.start_project_mcp():
            app.notify(problem, severity="warning", timeout=8)
    return trusted
