"""The approval dialog: one side-effecting tool call, the exact command or diff, and six choices.

Everything stays on screen down to 80×24: the command scrolls inside an area of bounded height,
so it can never push the choices off. Labels are `Content`, never markup, so the key hints
(`a`, `s`, ...) always show. The safe choice, deny, has the focus.

Keys (contract): `a` allow once, `s` allow for the session, `p` always allow the proposed
pattern (saved to `.tui-assist/settings.toml`), `d` deny, `f` deny with a line of feedback for
the model, `escape` deny and stop the turn. While the feedback line has the focus, letters type
into it, `enter` sends it, and `escape` goes back to the choices.
"""

from __future__ import annotations

import json

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, ScreenResultType
from textual.widgets import Button, Input, Static

from tui_assist.core.observer import ApprovalDecision, ToolApproval
from tui_assist.core.permissions import EDITOR_TOOL


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


def one_line_summary(request: ToolApproval) -> str:
    """What the call does, in one line (the exact text is in the scrolling area below it)."""
    data = request.input
    if request.tool == "bash":
        command = str(data.get("command") or "")
        lines = command.strip().splitlines()
        if not lines:
            return "Restart the shell"
        more = f"  (+{len(lines) - 1} more lines)" if len(lines) > 1 else ""
        return f"Run {lines[0].strip()}{more}"
    if request.tool == EDITOR_TOOL:
        path = str(data.get("path") or "?")
        match data.get("command"):
            case "create":
                return f"Write the file {path}"
            case "str_replace":
                return f"Edit {path}: replace text"
            case "insert":
                return f"Edit {path}: insert after line {data.get('insert_line')}"
            case _:
                return f"Use the editor on {path}"
    if request.mcp_server is not None:
        return f"Call {request.mcp_tool or request.tool} on the MCP server {request.mcp_server}"
    first = (request.summary.strip().splitlines() or [""])[0]
    return first or f"Call {request.tool}"


_RESERVED_LINES = 14
"""Every line of the dialog but the command's: border 2, title 1, summary 1, pattern 1, choices 2,
feedback line 1, margins 4, and 2 of air so the screen behind still shows."""
_MIN_COMMAND_LINES = 3
_MAX_COMMAND_LINES = 20


def choice(key: str, label: str) -> Content:
    """`[a] Allow once`: a `Content`, so the brackets are text, not markup that would vanish."""
    return Content.assemble((f"[{key}]", "bold"), f" {label}")


class WarningDialog(ModalScreen[ScreenResultType]):
    """The look of a dialog that asks before something runs: approval, project trust.

    A centred `#dialog` with a warning border, its bold `#title`, and a grid of `#choices`
    buttons of equal width (a subclass sets how many a row holds: `grid-size`).
    """

    DEFAULT_CSS = """
    WarningDialog {
        align: center middle;
        background: $background 60%;
    }
    WarningDialog > #dialog {
        width: 100%;
        max-width: 120;
        height: auto;
        max-height: 100%;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    WarningDialog #title {
        text-style: bold;
        color: $warning;
    }
    WarningDialog #choices {
        grid-gutter: 0 1;
        grid-rows: 1;
        height: auto;
        margin-top: 1;
    }
    WarningDialog #choices Button {
        width: 1fr;
    }
    """


class ApprovalScreen(WarningDialog[ApprovalDecision]):
    """Asks whether one tool call may run."""

    DEFAULT_CSS = """
    ApprovalScreen .one-line {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ApprovalScreen #reason {
        color: $text-muted;
    }
    ApprovalScreen #summary-scroll {
        height: auto;
        min-height: 3;
        max-height: 12;
        background: $background;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    ApprovalScreen #pattern {
        color: $text-muted;
        margin-top: 1;
    }
    ApprovalScreen #choices {
        grid-size: 3;
    }
    ApprovalScreen #feedback {
        display: none;
        margin-top: 1;
    }
    ApprovalScreen.-feedback #feedback {
        display: block;
    }
    """
    BINDINGS = [
        Binding("a,y", "allow_once", "Allow once", id="approve-once", show=False),
        Binding("s", "allow_session", "Allow for session", id="approve-session", show=False),
        Binding("p", "allow_pattern", "Always allow pattern", id="approve-pattern", show=False),
        Binding("d,n", "deny", "Deny", id="deny", show=False),
        Binding("f", "feedback", "Deny with feedback", id="deny-feedback", show=False),
        Binding("escape", "stop", "Deny and stop the turn", id="deny-stop", show=False),
    ]

    def __init__(self, request: ToolApproval) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        summary = request.summary or json.dumps(request.input, indent=2, ensure_ascii=False)
        patterns = ", ".join(request.proposed_rules)
        with Vertical(id="dialog"):
            yield Static(
                Content.assemble("Allow ", (request.tool, "bold"), "?"), id="title", classes="one-line"
            )
            yield Static(Content(one_line_summary(request)), id="one-line-summary", classes="one-line")
            if request.reason:
                yield Static(Content(request.reason), id="reason", classes="one-line")
            with VerticalScroll(id="summary-scroll"):
                yield Static(summary_content(summary), id="summary")
            pattern_text = f"p saves: {patterns}" if patterns else "p: no pattern to save for this call"
            yield Static(Content(pattern_text), id="pattern", classes="one-line")
            with Grid(id="choices"):
                yield Button(choice("a", "Allow once"), id="allow-once", compact=True)
                yield Button(choice("s", "Allow this session"), id="allow-session", compact=True)
                yield Button(
                    choice("p", "Always allow"), id="allow-pattern", compact=True, disabled=not patterns
                )
                yield Button(choice("d", "Deny"), id="deny", variant="error", compact=True)
                yield Button(choice("f", "Deny + feedback"), id="deny-feedback", compact=True)
                yield Button(choice("esc", "Deny + stop turn"), id="deny-stop", compact=True)
            yield Input(
                placeholder="Tell the model why, or what to do instead; enter sends",
                id="feedback",
                compact=True,
            )

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Bound the command's area by what the rest of the dialog leaves of the screen's height."""
        reserved = _RESERVED_LINES + (1 if self.request.reason else 0)
        room = max(_MIN_COMMAND_LINES, min(_MAX_COMMAND_LINES, self.size.height - reserved))
        self.query_one("#summary-scroll").styles.max_height = room

    def action_allow_once(self) -> None:
        self.dismiss(ApprovalDecision.allow_once())

    def action_allow_session(self) -> None:
        self.dismiss(ApprovalDecision.allow_session())

    def action_allow_pattern(self) -> None:
        if not self.request.proposed_rules:
            self.app.bell()
            return
        self.dismiss(ApprovalDecision.allow_pattern())

    def action_deny(self) -> None:
        self.dismiss(ApprovalDecision.deny())

    def action_feedback(self) -> None:
        self.add_class("-feedback")
        self.query_one("#feedback", Input).focus()

    def action_stop(self) -> None:
        feedback = self.query_one("#feedback", Input)
        if feedback.has_focus:
            # Escape while typing leaves the line, it does not stop the turn by surprise.
            self.remove_class("-feedback")
            self.query_one("#deny", Button).focus()
            return
        self.dismiss(ApprovalDecision.stop())

    @on(Input.Submitted, "#feedback")
    def _send_feedback(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(ApprovalDecision.deny_with_feedback(text) if text else ApprovalDecision.deny())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        match event.button.id:
            case "allow-once":
                self.action_allow_once()
            case "allow-session":
                self.action_allow_session()
            case "allow-pattern":
                self.action_allow_pattern()
            case "deny":
                self.action_deny()
            case "deny-feedback":
                self.action_feedback()
            case "deny-stop":
                self.action_stop()
            case _:
                pass
