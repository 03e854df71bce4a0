"""The approval modal: the exact command or diff of a side-effecting tool call, and a decision."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui_assist.core.observer import ApprovalDecision, ToolApproval


def summary_content(summary: str) -> Content:
    """The summary, with diff lines coloured by theme variables."""
    lines: list[Content] = []
    for line in summary.splitlines() or [""]:
        if line.startswith(("+++", "---")):
            lines.append(Content.styled(line, "bold"))
        elif line.startswith("+"):
            lines.append(Content.styled(line, "$success"))
        elif line.startswith("-"):
            lines.append(Content.styled(line, "$error"))
        elif line.startswith("@@"):
            lines.append(Content.styled(line, "$secondary"))
        else:
            lines.append(Content(line))
    return Content("\n").join(lines)


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Asks whether one tool call may run: allow once, allow for the session, or deny."""

    DEFAULT_CSS = """
    ApprovalScreen {
        align: center middle;
        background: $background 60%;
    }
    ApprovalScreen > #dialog {
        width: 90%;
        max-width: 120;
        height: auto;
        max-height: 90%;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    ApprovalScreen #title {
        text-style: bold;
        color: $warning;
        margin-bottom: 1;
    }
    ApprovalScreen #summary-scroll {
        height: auto;
        max-height: 20;
        background: $background;
        padding: 0 1;
    }
    ApprovalScreen #buttons {
        height: auto;
        margin-top: 1;
    }
    ApprovalScreen Button {
        margin-right: 2;
    }
    """
    BINDINGS = [
        Binding("a,y", "decide('allow_once')", "Allow once", id="approve-once"),
        Binding("s", "decide('allow_session')", "Allow for session", id="approve-session"),
        Binding("d,n,escape", "decide('deny')", "Deny", id="deny"),
    ]

    def __init__(self, request: ToolApproval) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        summary = request.summary or json.dumps(request.input, indent=2, ensure_ascii=False)
        with Vertical(id="dialog"):
            yield Static(Content(f"Allow this {request.tool} call?"), id="title")
            with VerticalScroll(id="summary-scroll"):
                yield Static(summary_content(summary), id="summary")
            with Horizontal(id="buttons"):
                yield Button("Allow once [a]", id="allow_once", variant="primary")
                yield Button("Allow for session [s]", id="allow_session", variant="warning")
                yield Button("Deny [d]", id="deny", variant="error")

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()

    def action_decide(self, decision: ApprovalDecision) -> None:
        self.dismiss(decision)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        match event.button.id:
            case "allow_once" | "allow_session" | "deny" as decision:
                self.dismiss(decision)
            case _:
                pass
