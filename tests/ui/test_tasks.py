"""`/tasks` in the TUI: background shells listed live, one killed from the list, the rest at quit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.tools.processes import process_alive
from tests.ui.helpers import screen_text, wait_until
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.tasks import TasksScreen
from tui_assist.ui.widgets.tasks import TasksList


def server(name: str) -> ToolUse:
    script = f"echo $$ > {name}.pid; while true; do echo {name}-up; sleep 0.1; done"
    return ToolUse("bash", {"command": script, "run_in_background": True})


async def test_tasks_lists_background_shells_live_kills_one_and_quit_ends_the_rest(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    work = tmp_path / "work"
    work.mkdir()
    fake.add(Reply([server("web"), server("watch")]), Reply("Both run."))
    settings = Settings(
        provider="anthropic",
        workdir=work,
        approval=ApprovalSettings(default="allow"),  # pyright: ignore[reportArgumentType]
        sandbox="off",
    )
    app = TuiAssistApp(settings)
    async with app.run_test(size=(130, 40)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"start both", "enter")
        await wait_until(pilot, lambda: (work / "watch.pid").exists())
        await app.workers.wait_for_complete()
        pids = [int((work / f"{name}.pid").read_text()) for name in ("web", "watch")]

        # The live view above the status bar: each running shell and its last line.
        await wait_until(pilot, lambda: "⚙ bash_2" in screen_text(app) and "watch-up" in screen_text(app))
        assert "⚙ bash_1" in screen_text(app)

        await pilot.press(*"/tasks", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TasksScreen))
        tasks = app.screen.query_one(TasksList)

        def lines() -> list[str]:
            return [str(tasks.get_option_at_index(i).prompt) for i in range(tasks.option_count)]

        # The last line arrives with the list's own refresh, while the shells print.
        await wait_until(pilot, lambda: "web-up" in lines()[0] and "watch-up" in lines()[1])
        assert lines()[0].startswith("bash_1  running")
        tasks.highlighted = 0
        await pilot.press("k")
        await wait_until(pilot, lambda: "killed" in lines()[0])
        assert not process_alive(pids[0]) and process_alive(pids[1])
        await pilot.press("escape")
        await wait_until(pilot, lambda: "⚙ bash_2" in screen_text(app) and "⚙ bash_1" not in screen_text(app))
    assert not process_alive(pids[1])
