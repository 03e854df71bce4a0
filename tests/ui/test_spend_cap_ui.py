"""The spend cap in the chat: the meter shows `$spent/$cap`, the turn stops with one line, and
`/budget N` raises the cap. Through the real SDK against the loopback fake."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse, Usage
from tests.ui.helpers import screen_text, wait_until
from tests.ui.test_meter import _settle, workdir  # noqa: F401 - the fixture
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.ui.app import TuiAssistApp

COSTLY = Usage(input_tokens=5_000, output_tokens=0, cache_creation_input_tokens=0, cache_read_input_tokens=0)
"""$0.0150 at the default Sonnet price."""


async def test_a_capped_turn_stops_and_budget_raises_the_cap(fake: FakeAnthropic, workdir: Path) -> None:  # noqa: F811
    fake.add(Reply([ToolUse("bash", {"command": "echo hi"})], usage=COSTLY))
    approval = ApprovalSettings(default="allow")  # pyright: ignore[reportArgumentType]
    app = TuiAssistApp(
        Settings(provider="anthropic", workdir=workdir, approval=approval, max_budget_usd=0.01)
    )
    async with app.run_test(size=(160, 30)) as pilot:
        await _settle(app, pilot)
        assert "$0.0000/$0.0100" in screen_text(app)
        await pilot.press(*"say hi", "enter")
        await wait_until(pilot, lambda: "spend cap reached" in screen_text(app), timeout=10)
        assert "$0.0150/$0.0100" in screen_text(app)
        assert len(fake.requests) == 1
        await pilot.press(*"/budget 1", "enter")
        await wait_until(pilot, lambda: "$0.0150/$1.00" in screen_text(app), timeout=5)
