"""Snapshots of a turn that thinks, edits a file and was given an image, at 80x24 and 120x36;
and Pilot checks of the thinking block and the diff folding.

Update on purpose with `pytest tests/ui/test_transcript_snapshots.py --snapshot-update`, then look.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.session.test_images import png_bytes
from tui_assist.core.conversation import TextBlock, ThinkingBlock, ToolUseBlock
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.tools.registry import toolbox_factory
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.diff_view import FOLD_LINES, DiffView
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.turn_parts import ThinkingView, ToolCallView, UserMessage

from .helpers import screen_text, settings, settled

WORK = Path("/tmp/tui-assist-transcript-snapshots")
EDITOR = "str_replace_based_edit_tool"
THOUGHT = "The screenshot shows 41 where 42 is expected.\nanswer() returns a constant: changing it fixes the display."


def _script(long: bool = False) -> list[Any]:
    new = "\n".join(f"    line {i}" for i in range(30)) + "\n    return 42" if long else "    return 42"
    edit = {"command": "str_replace", "path": "app.py", "old_str": "    return 41", "new_str": new}
    return [
        [
            ThinkingBlock(THOUGHT, "sig-1"),
            TextBlock("The value is hard-coded."),
            ToolUseBlock("t1", EDITOR, edit),
        ],
        [ThinkingBlock("The edit applied.", "sig-2"), TextBlock("Fixed: `answer()` now returns **42**.")],
    ]


def _app(long: bool = False) -> TuiAssistApp:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    (WORK / "app.py").write_text('"""The app."""\n\n\ndef answer():\n    return 41\n')
    (WORK / "shot.png").write_bytes(png_bytes())
    provider = ScriptedProvider(_script(long))
    app = TuiAssistApp(
        settings(WORK),
        provider_factory=lambda: provider,
        toolbox_factory=toolbox_factory(WORK, bash_timeout=10),
        use_store=False,
    )
    app.session.approvals.default = "allow"
    return app


async def _run_turn(pilot: Any) -> None:
    app = pilot.app
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    app.query_one(Prompt).cursor_blink = False
    await pilot.press(*"why does @shot.png say 41?", "enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await settled(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
def test_a_turn_with_thinking_a_diff_and_an_image(snap_compare, fixed_clock, size) -> None:
    assert snap_compare(_app(), run_before=_run_turn, terminal_size=size)


async def test_thinking_folds_the_diff_shows_and_the_prompt_has_its_chip(fixed_clock) -> None:
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press(*"why does @shot.png say 41?")
        await pilot.pause()
        assert "▣ shot.png · 69 B" in screen_text(app)  # the chip, before sending
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await settled(pilot)
        [user] = app.query(UserMessage)
        assert user.images == [("shot.png", 69)]
        thinking = list(app.query(ThinkingView))
        assert [t.text for t in thinking] == [THOUGHT, "The edit applied."]
        assert all(t.finished and not t.expanded for t in thinking)
        text = screen_text(app)
        assert "▸ thought (17 words)" in text and "answer() returns a constant" not in text
        thinking[0].action_toggle_details()
        await pilot.pause()
        assert "answer() returns a constant" in screen_text(app)
        [call] = app.query(ToolCallView)
        assert "edit app.py (+1 −1)" in str(call._header.render())
        [diff] = app.query(DiffView)
        assert [r.sign for r in diff.rows] == ["@", " ", " ", " ", "-", "+"] and not diff.folded
        assert "agent · thought" in screen_text(app)  # the tree says the model thought
        assert (WORK / "app.py").read_text().endswith("return 42\n")


async def test_a_long_diff_folds_past_twenty_lines_and_unfolds(fixed_clock) -> None:
    app = _app(long=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await _run_turn(pilot)
        [diff] = app.query(DiffView)
        assert len(diff.rows) > FOLD_LINES and diff.folded
        assert "more lines (click to show)" in str(diff.render())
        [call] = app.query(ToolCallView)
        call.action_toggle_details()  # enter on the call unfolds its diff first
        await pilot.pause()
        assert not diff.folded and "more lines" not in str(diff.render())
