"""The plan in the TUI: each `todo_write` is a live checklist, drawn again when the conversation resumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.ui.helpers import screen_text, wait_until
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import StartOptions
from tui_assist.ui.widgets.plan import PlanView


def todo(*statuses: str) -> ToolUse:
    steps = ("Read the code", "Run the tests")
    return ToolUse(
        "todo_write", {"todos": [{"content": c, "status": s} for c, s in zip(steps, statuses, strict=True)]}
    )


def checklists(app: TuiAssistApp) -> list[list[str]]:
    return [[item.status for item in view.items] for view in app.query(PlanView)]


async def test_the_plan_ticks_off_live_and_comes_back_on_resume(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    work = tmp_path / "work"
    work.mkdir()
    fake.add(
        Reply([todo("in_progress", "pending")]), Reply([todo("completed", "in_progress")]), Reply("Done.")
    )

    def make(start: StartOptions | None = None) -> TuiAssistApp:
        settings = Settings(
            provider="anthropic",
            workdir=work,
            data_dir=tmp_path / "data",
            approval=ApprovalSettings(default="ask"),  # pyright: ignore[reportArgumentType]
            sandbox="off",
            checkpoints=False,
        )
        return TuiAssistApp(settings, chat_start=start)

    app = make()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"plan it", "enter")  # never asked: the plan changes nothing
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: len(checklists(app)) == 2)
        assert checklists(app) == [["in_progress", "pending"], ["completed", "in_progress"]]
        await wait_until(pilot, lambda: "Plan 1/2 done" in screen_text(app))
        assert "☑ Read the code" in screen_text(app) and "◐ Run the tests" in screen_text(app)
        conversation_id = app.session.conversation_id
    assert conversation_id is not None

    resumed = make(StartOptions(resume=conversation_id))
    async with resumed.run_test(size=(120, 40)) as pilot:
        await resumed.session.wait_ready()
        await wait_until(pilot, lambda: len(checklists(resumed)) == 2)
        assert checklists(resumed)[-1] == ["completed", "in_progress"]
