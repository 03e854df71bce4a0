"""The approval dialog on its own: every key, the safe focus, and what fits at 80×24.

A tiny app pushes the screen, so these tests do not depend on the main screen's wiring.
Snapshots: update on purpose with `pytest tests/ui/test_approval_dialog.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, Input, Static

from tests.ui.helpers import screen_text
from tui_assist.core.observer import ApprovalDecision, ToolApproval
from tui_assist.ui.screens.approval import ApprovalScreen, one_line_summary
from tui_assist.ui.themes import discover_themes

LONG_COMMAND = "\n".join(
    [
        "set -euo pipefail",
        *(
            f"python -m pytest -q tests/test_part_{i:02}.py --maxfail=1 --durations=5 -p no:cacheprovider"
            for i in range(24)
        ),
        "git status --short && echo 'all parts ran: LAST LINE OF THE COMMAND'",
    ]
)


def request(command: str = "touch notes.txt", **extra: object) -> ToolApproval:
    values: dict[str, object] = {
        "workdir": Path("/work/project"),
        "proposed_rules": ("bash(touch *)",),
    }
    values.update(extra)
    return ToolApproval("node-1", "bash", {"command": command}, command, **values)  # type: ignore[arg-type]


class DialogApp(App[None]):
    """Something to sit behind the dialog, and the decision it returned."""

    def __init__(self, approval: ToolApproval) -> None:
        super().__init__()
        self.approval = approval
        self.decisions: list[ApprovalDecision | None] = []
        specs, _ = discover_themes()
        for spec in specs.values():
            self.register_theme(spec.theme)
        self.theme = "tui-dark"

    def compose(self) -> ComposeResult:
        yield Static("the conversation behind the dialog")

    def on_mount(self) -> None:
        self.push_screen(ApprovalScreen(self.approval), self.decisions.append)


async def decide(
    *keys: str, approval: ToolApproval | None = None, size=(80, 24)
) -> list[ApprovalDecision | None]:
    app = DialogApp(approval or request())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
    return app.decisions


@pytest.mark.parametrize(
    ("key", "decision"),
    [
        ("a", ApprovalDecision.allow_once()),
        ("s", ApprovalDecision.allow_session()),
        ("p", ApprovalDecision.allow_pattern()),
        ("d", ApprovalDecision.deny()),
        ("escape", ApprovalDecision.stop()),
        ("enter", ApprovalDecision.deny()),  # the focused, safe choice
    ],
)
async def test_each_key_decides(key: str, decision: ApprovalDecision) -> None:
    assert await decide(key) == [decision]


async def test_f_takes_a_line_of_feedback_for_the_model() -> None:
    assert await decide("f", *"use make", "enter") == [ApprovalDecision.deny_with_feedback("use make")]


async def test_letters_in_the_feedback_line_are_text_not_choices() -> None:
    assert await decide("f", *"a sad", "enter") == [ApprovalDecision.deny_with_feedback("a sad")]


async def test_escape_in_the_feedback_line_goes_back_to_the_choices() -> None:
    app = DialogApp(request())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f", "x", "escape")
        await pilot.pause()
        assert app.decisions == [] and isinstance(app.focused, Button) and app.focused.id == "deny"
        assert not app.screen.query_one("#feedback", Input).display
        await pilot.press("escape")
        await pilot.pause()
    assert app.decisions == [ApprovalDecision.stop()]


async def test_p_does_nothing_without_a_pattern_to_save() -> None:
    app = DialogApp(request("case x in x) ls;; esac", proposed_rules=()))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "p: no pattern to save for this call" in screen_text(app)  # type: ignore[arg-type]
        await pilot.press("p")
        await pilot.pause()
        assert app.decisions == [] and isinstance(app.screen, ApprovalScreen)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 60)])
async def test_everything_is_visible_with_a_long_command(size: tuple[int, int]) -> None:
    approval = request(LONG_COMMAND, proposed_rules=("bash(python -m pytest *)", "bash(git status *)"))
    app = DialogApp(approval)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = screen_text(app)  # type: ignore[arg-type]
        for shown in (
            "Allow bash?",
            "Run set -euo pipefail",
            "p saves: bash(python -m pytest *), bash(git status *)",
            "[a] Allow once",
            "[s] Allow this session",
            "[p] Always allow",
            "[d] Deny",
            "[f] Deny + feedback",
            "[esc] Deny + stop turn",
        ):
            assert shown in text, shown
        assert isinstance(app.focused, Button) and app.focused.id == "deny"
        scroll = app.screen.query_one("#summary-scroll")
        assert scroll.region.bottom <= app.screen.query_one("#choices").region.y
        # The command's last line is reachable inside its bounded area.
        scroll.scroll_end(animate=False)
        await pilot.pause()
        assert "LAST LINE OF THE COMMAND" in screen_text(app)  # type: ignore[arg-type]


async def test_markup_like_text_shows_as_written() -> None:
    command = "echo '[b]not bold[/b] [a] [link=x]y[/link]'"
    app = DialogApp(request(command))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert command in screen_text(app)  # type: ignore[arg-type]


def test_one_line_summaries() -> None:
    assert one_line_summary(request("ls\npwd\nwhoami")) == "Run ls  (+2 more lines)"
    edit = ToolApproval("n", "str_replace_based_edit_tool", {"command": "str_replace", "path": "a.py"}, "")
    assert one_line_summary(edit) == "Edit a.py: replace text"
    mcp = ToolApproval("n", "files__read", {}, "MCP files: read {}", mcp_server="files", mcp_tool="read")
    assert one_line_summary(mcp) == "Call read on the MCP server files"


# --------------------------------------------------------------------------- snapshots


def _snapshot_app() -> DialogApp:
    return DialogApp(
        request(
            LONG_COMMAND,
            sandbox="escape",
            proposed_rules=("bash(python -m pytest *)", "bash(git status *)"),
            reason="asks to run outside the sandbox: full access to your files and the network",
        )
    )


def test_dialog_with_a_long_command_at_80x24(snap_compare) -> None:
    assert snap_compare(_snapshot_app(), terminal_size=(80, 24))


def test_dialog_with_a_long_command_at_100x30(snap_compare) -> None:
    assert snap_compare(_snapshot_app(), terminal_size=(100, 30))


def test_dialog_asking_for_feedback_at_80x24(snap_compare) -> None:
    async def type_feedback(pilot) -> None:
        await pilot.pause()
        pilot.app.screen.query_one("#feedback", Input).cursor_blink = False
        await pilot.press("f", *"not now")
        await pilot.pause()

    assert snap_compare(_snapshot_app(), run_before=type_feedback, terminal_size=(80, 24))
