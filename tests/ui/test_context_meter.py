"""The context meter and a compaction as users see them: the real SDK against the fake, a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, RecordedRequest, Reply
from tests.ui.helpers import screen_text
from tui_assist.session.config import ApprovalSettings, ModelSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.turn_parts import Notice


@pytest.fixture
def workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


async def test_the_status_bar_shows_the_fill_and_a_compaction_shows_in_tree_and_pane(
    fake: FakeAnthropic, workdir: Path
) -> None:
    def step(req: RecordedRequest) -> Reply:
        return Reply("the summary" if not req.tools else "a long answer about it, " * 70)

    fake.add(*([step] * 12))
    settings = Settings(
        provider="anthropic",
        workdir=workdir,
        approval=ApprovalSettings(default="allow"),
        models={"claude-sonnet-4-6": ModelSettings(context_window=4000)},
    )
    app = TuiAssistApp(settings)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.session.wait_ready()
        fills: list[float] = []
        for i in range(8):
            await pilot.press(*f"q{i}", "enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            fill = app.query_one(StatusBar).context
            assert fill is not None
            fills.append(fill)
            if app.session.context.compactions:
                break

        assert app.session.context.compactions == 1
        assert fills[0] < fills[1] < fills[2]  # it fills up turn by turn...
        assert fills[-1] < fills[-2]  # ...and empties when the history is compacted
        assert f"ctx {fills[-1]:.0%}" in screen_text(app)
        tree = app.query_one(AgentTree)
        [compact] = [r for r in tree.node_log.nodes.values() if r.kind == "compact"]
        assert compact.output.startswith("compacted ") and tree.node_for(compact.node_id) is not None
        assert "compact compacted" in tree.label_text(compact).plain
        notices = [n.source for n in app.screen.query(Notice) if n.has_class("-compacted")]
        assert len(notices) == 1 and notices[0].startswith("⇣ compacted ")
