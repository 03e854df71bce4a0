"""SVG snapshots: the main screen in every shipped theme, and the round review.

Update on purpose with `pytest tests/ui --snapshot-update`, then look at the report.
"""

from __future__ import annotations

import pytest

from tests.ui.helpers import FakeToolbox, make_app, review_app, tool_use
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
    await pilot.pause(0.1)


@pytest.mark.parametrize("theme", ["tui-dark", "tui-light", "tui-high-contrast"])
def test_main_screen_after_a_refine_turn(snap_compare, fixed_clock, theme: str) -> None:
    assert snap_compare(_app(theme), run_before=_run_turn, terminal_size=SIZE)


def test_round_review(snap_compare, fixed_clock) -> None:
    async def open_review(pilot) -> None:
        await _run_turn(pilot)
        await pilot.press("f4", "left")
        await pilot.pause(0.1)

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
    await pilot.pause(0.1)
    await pilot.press("f4", *(["left"] if round_number == 1 else []))
    await pilot.pause(0.1)


def test_round_review_first_round_at_80_columns(snap_compare, fixed_clock) -> None:
    async def run_before(pilot) -> None:
        await _review_round(pilot, 1)

    assert snap_compare(review_app(), run_before=run_before, terminal_size=(80, 24))


def test_round_review_verdict_and_diff_at_80_columns(snap_compare, fixed_clock) -> None:
    async def run_before(pilot) -> None:
        await _review_round(pilot, 2)
        pilot.app.screen.query_one("#review-body").scroll_end(animate=False)
        await pilot.pause(0.1)

    assert snap_compare(review_app(), run_before=run_before, terminal_size=(80, 24))


def test_round_review_second_round_at_100_columns(snap_compare, fixed_clock) -> None:
    async def run_before(pilot) -> None:
        await _review_round(pilot, 2)

    assert snap_compare(review_app(), run_before=run_before, terminal_size=(100, 30))
