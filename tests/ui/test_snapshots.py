"""SVG snapshots: the main screen in every shipped theme and at 80x24 and 100x30, the round review,
and the resume picker.

Update on purpose with `pytest tests/ui --snapshot-update`, then look at the report.
"""

from __future__ import annotations

import time as time_module
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.ui.helpers import FakeToolbox, make_app, review_app, settings, settled, tool_use, wait_until
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.store.db import Store
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.resume import ResumeScreen
from tui_assist.ui.widgets.prompt import Prompt

SIZE = (110, 34)
ANSWER = """## Result

The file holds **42**. Steps taken:

1. read `answer.txt`
2. compared it with the draft

```python
print(42)
```
"""
SCRIPT = [
    tool_use("cat answer.txt"),
    "It is 41.",
    "REVISE\nThe evidence shows 42, not 41.",
    ANSWER,
    "PASS\nMatches the evidence.",
]


def _app(theme: str):
    from pathlib import Path

    toolbox = FakeToolbox(Path("/work/project"))
    app = make_app(SCRIPT, refine=True, rounds=3, theme=theme, toolbox_factory=lambda: toolbox)
    app.session.approvals.default = "allow"
    return app


async def _run_turn(pilot) -> None:
    app = pilot.app
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    app.query_one(Prompt).cursor_blink = False
    await pilot.press(*"what does answer.txt say?", "enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await settled(pilot)


@pytest.mark.parametrize("theme", ["tui-dark", "tui-light", "tui-high-contrast"])
def test_main_screen_after_a_refine_turn(snap_compare, fixed_clock, theme: str) -> None:
    assert snap_compare(_app(theme), run_before=_run_turn, terminal_size=SIZE)


def test_round_review(snap_compare, fixed_clock) -> None:
    async def open_review(pilot) -> None:
        await _run_turn(pilot)
        await pilot.press("f4", "left")
        await settled(pilot)

    assert snap_compare(_app("tui-dark"), run_before=open_review, terminal_size=SIZE)


def test_narrow_terminal_keeps_refine_visible(snap_compare, fixed_clock) -> None:
    async def settle(pilot) -> None:
        await pilot.app.session.wait_ready()
        await pilot.app.workers.wait_for_complete()
        pilot.app.query_one(Prompt).cursor_blink = False
        await pilot.pause()

    assert snap_compare(_app("tui-dark"), run_before=settle, terminal_size=(60, 20))


async def _review_round(pilot, round_number: int) -> None:
    """Run the two-round review script, open the review on `round_number`."""
    app = pilot.app
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    app.query_one(Prompt).cursor_blink = False
    await pilot.press(*"fix the failing test", "enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await settled(pilot)
    await pilot.press("f4", *(["left"] if round_number == 1 else []))
    await settled(pilot)


def test_round_review_first_round_at_80_columns(snap_compare, fixed_clock) -> None:
    async def run_before(pilot) -> None:
        await _review_round(pilot, 1)

    assert snap_compare(review_app(), run_before=run_before, terminal_size=(80, 24))


def test_round_review_verdict_and_diff_at_80_columns(snap_compare, fixed_clock) -> None:
    async def run_before(pilot) -> None:
        await _review_round(pilot, 2)
        pilot.app.screen.query_one("#review-body").scroll_end(animate=False)
        await settled(pilot)

    assert snap_compare(review_app(), run_before=run_before, terminal_size=(80, 24))


def test_round_review_second_round_at_100_columns(snap_compare, fixed_clock) -> None:
    async def run_before(pilot) -> None:
        await _review_round(pilot, 2)

    assert snap_compare(review_app(), run_before=run_before, terminal_size=(100, 30))


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
def test_main_screen_after_a_refine_turn_at_common_sizes(snap_compare, fixed_clock, size) -> None:
    """Below 100 columns the panels wait behind f2 / f3; at 100 they are open beside the chat."""
    assert snap_compare(_app("tui-dark"), run_before=_run_turn, terminal_size=size)


def test_main_screen_with_the_panels_opened_at_80_columns(snap_compare, fixed_clock) -> None:
    async def open_panels(pilot) -> None:
        await _run_turn(pilot)
        await pilot.press("f2")
        await settled(pilot)

    assert snap_compare(_app("tui-dark"), run_before=open_panels, terminal_size=(80, 24))


class _StoreClock:
    """Store timestamps a minute apart from a fixed moment, so listed dates are deterministic."""

    def __init__(self) -> None:
        self.now = 1_736_942_400.0  # 2025-01-15 12:00 UTC

    def __call__(self) -> float:
        self.now += 60
        return self.now


@pytest.fixture
def fixed_store_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Store.open.__func__  # type: ignore[attr-defined]
    clock = _StoreClock()

    async def open_with_clock(cls, data_dir, **kwargs):
        kwargs["clock"] = clock
        return await original(cls, data_dir, **kwargs)

    monkeypatch.setattr(Store, "open", classmethod(open_with_clock))
    monkeypatch.setenv("TZ", "UTC")
    time_module.tzset()
    yield
    monkeypatch.undo()
    time_module.tzset()


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
def test_resume_picker(snap_compare, fixed_clock, fixed_store_clock, size) -> None:
    """The newest conversation highlighted, turn counts, dates, and the highlighted one's preview."""
    script = [
        "Use `git rebase -i`.",
        "Squash the fixups into their commits.",
        "Check the flux capacitor first.",
    ]
    app = TuiAssistApp(
        settings(),
        provider_factory=lambda: ScriptedProvider(script),
        toolbox_factory=lambda: FakeToolbox(Path("/work/project")),  # the prompt (and its tokens) fixed
    )

    async def open_picker(pilot) -> None:
        await pilot.app.session.wait_ready()
        await pilot.app.workers.wait_for_complete()
        pilot.app.query_one(Prompt).cursor_blink = False
        for prompt in ("how do I rebase", "and the fixups?"):
            await pilot.press(*prompt, "enter")
            await pilot.app.workers.wait_for_complete()
        await pilot.press("ctrl+n")
        await pilot.press(*"deploy checklist", "enter")
        await pilot.app.workers.wait_for_complete()
        await settled(pilot)  # the main screen, behind the picker, settled after the turn
        await pilot.press("ctrl+o")
        await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, ResumeScreen) and len(pilot.app.screen.found) == 2
        )
        picker = pilot.app.screen
        picker.query_one("#query").cursor_blink = False
        await wait_until(pilot, lambda: "flux capacitor" in str(picker.query_one("#preview", Static).content))
        await settled(pilot)

    assert snap_compare(app, run_before=open_picker, terminal_size=size)
