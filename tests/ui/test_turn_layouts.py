"""How often the screen is laid out for one streamed answer (issue 43): a count, not a timing.

The real SDK against the loopback fake, as `bench/bench_tui_vs_headless.py` counts them for a
20 KB answer: each layout of the screen costs a frame, and the turn's start and end had several
that could be one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text
from tests.ui.helpers import settled, wait_until
from tui_assist.session.config import Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen

ANSWER = "".join(f"Paragraph {i} of a streamed answer, long enough to wrap once.\n\n" for i in range(40))


async def test_a_streamed_answer_lays_the_screen_out_a_bounded_number_of_times(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    app = TuiAssistApp(Settings(provider="anthropic", workdir=tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await settled(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        layouts: list[object] = []
        screen.screen_layout_refresh_signal.subscribe(screen, layouts.append)
        fake.add(Reply([Text(ANSWER, deltas=200)], delay=0.005))
        await pilot.press(*"explain", "enter")
        await wait_until(
            pilot, lambda: "Paragraph 39" in screen.conversation.last_answer and not screen.controller.running
        )
        await settled(pilot)
        # 13-14 (13-15 before the answer's mount stopped asking for its own): the turn's start
        # (the keys, the prompt, the agent tree's first rows, the answer) in a few, each growth
        # of the answer until it fills the pane, the end (the flow panel, the keys). How they
        # fall into frames depends a little on timing, hence the bound of issue 43's goal.
        assert len(layouts) <= 15
