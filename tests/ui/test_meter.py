"""The meter tells the truth: cache writes beside reads and in the cost, a cancelled call's tokens,
and a resumed conversation's stored usage. Through the real SDK against the loopback fake, with
a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text
from tests.fakes.anthropic import Usage as FakeUsage
from tests.ui.helpers import screen_text, wait_until
from tui_assist.core.conversation import Usage
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.resume import ResumeScreen
from tui_assist.ui.widgets.status_bar import StatusBar

SPENT = FakeUsage(
    input_tokens=1000, output_tokens=200, cache_creation_input_tokens=4000, cache_read_input_tokens=10000
)
COST = "$0.0240"
"""At the default price: 1000 x 3 + 200 x 15 + 4000 x 3.75 (writes) + 10000 x 0.30 (reads), per million."""


@pytest.fixture
def workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


def _app(workdir: Path) -> TuiAssistApp:
    approval = ApprovalSettings(default="allow")  # pyright: ignore[reportArgumentType]
    return TuiAssistApp(Settings(provider="anthropic", workdir=workdir, approval=approval))


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_cache_writes_show_beside_reads_and_count_in_the_cost(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Reply("Cached.", usage=SPENT))
    app = _app(workdir)
    async with app.run_test(size=(200, 30)) as pilot:  # wide: the bar shows the long form
        await _settle(app, pilot)
        await pilot.press(*"hi", "enter")
        await _settle(app, pilot)
        status = app.query_one(StatusBar)
        assert status.usage == Usage(1000, 200, 4000, 10000)
        line = screen_text(app)
        assert "in 1.0k out 200 cache read 10k write 4.0k" in line
        assert COST in line


async def test_a_cancelled_call_counts_what_the_api_reported_once(fake: FakeAnthropic, workdir: Path) -> None:
    reported = FakeUsage(input_tokens=500, cache_read_input_tokens=2000)
    streaming = Reply(
        [Text("Working through it step by step " * 4, deltas=40)], hold_after=12, usage=reported
    )
    fake.add(streaming)
    app = _app(workdir)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"long task", "enter")
        await wait_until(pilot, lambda: "Working through it" in screen_text(app), timeout=10)
        await pilot.press("escape")
        await _settle(app, pilot)
        streaming.release()

        meter = app.session.meter.usage
        assert (meter.input_tokens, meter.cache_read_input_tokens) == (500, 2000)
        assert meter.output_tokens <= 1  # message_start's count: the cut came before any delta's
        assert app.query_one(StatusBar).usage == meter
        store = app.session.store
        assert store is not None and app.session.conversation_id is not None
        [turn] = await store.turns_page(app.session.conversation_id)
        assert turn.outcome == "cancelled" and turn.usage == meter  # stored as counted, once


async def test_a_resumed_conversation_shows_what_it_spent(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(Reply("First.", usage=SPENT), Reply("Second.", usage=SPENT))
    first = _app(workdir)
    async with first.run_test(size=(120, 30)) as pilot:
        await _settle(first, pilot)
        for prompt in ("one", "two"):
            await pilot.press(*prompt, "enter")
            await _settle(first, pilot)

    second = _app(workdir)
    async with second.run_test(size=(120, 30)) as pilot:
        await _settle(second, pilot)
        assert second.query_one(StatusBar).usage == Usage()
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(second.screen, ResumeScreen))
        await wait_until(pilot, lambda: "2 turns" in screen_text(second))
        await pilot.press("enter")
        await _settle(second, pilot)
        status = second.query_one(StatusBar)
        assert status.usage == Usage(2000, 400, 8000, 20000)
        assert status.cost == pytest.approx(0.048)

        await pilot.press("ctrl+n")  # a new conversation starts from zero
        await pilot.pause()
        assert status.usage == Usage() and status.cost == 0
