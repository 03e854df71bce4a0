"""`/goal` in the chat: a goal runs as a turn, escape pauses it, `/goal resume` goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.ui.helpers import make_app, wait_until
from tests.ui.test_slash_commands import _last_notice, _run
from tui_assist.core.conversation import ToolUseBlock
from tui_assist.tools.registry import toolbox_factory
from tui_assist.ui.screens.round_review import ReviewSection, RoundReviewScreen, ToolCallReview
from tui_assist.ui.widgets.prompt import Prompt


async def test_goal_pauses_on_escape_and_resumes(tmp_path: Path) -> None:
    started = asyncio.Event()

    def hang(request):
        started.set()
        return [ToolUseBlock("t1", "bash", {"command": "sleep 30"})]

    script = [
        "nothing yet",
        "REVISE\n[check 1] exited 1: create the file",
        hang,
        [ToolUseBlock("t2", "bash", {"command": "touch done.txt"})],
        "created done.txt",
        "PASS\n[check 1] exited 0",
    ]
    app = make_app(script, toolbox_factory=toolbox_factory(tmp_path), workdir=tmp_path, mode="bypass")
    async with app.run_test(size=(110, 36)) as pilot:
        await app.session.wait_ready()
        app.query_one(Prompt).load_text('/goal make done.txt exist --check "test -f done.txt"')
        await pilot.press("enter")
        await wait_until(pilot, started.is_set)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.session.goals.paused is not None)
        assert app.session.goals.paused is not None and app.session.goals.paused.attempts == 1
        await app.workers.wait_for_complete()

        await _run(app, pilot, "/goal resume")
        goals = app.session.goals
        await wait_until(pilot, lambda: goals.last is not None and goals.last.progress.state == "achieved")
        assert goals.last is not None and goals.last.progress.attempts == 2
        assert (tmp_path / "done.txt").exists()

        await _run(app, pilot, "/goal")
        assert "achieved after 2 attempt(s)" in _last_notice(app)

        await pilot.press("f4")  # the review of the last attempt: its work, then the checks apart
        await wait_until(pilot, lambda: isinstance(app.screen, RoundReviewScreen))
        screen = app.screen
        await wait_until(pilot, lambda: len(screen.query(ReviewSection)) >= 3)
        titles = [str(s.children[0].render()) for s in screen.query(ReviewSection)]
        assert "Checks the critic ran" in titles and titles[-1] == "Critic: PASS"
        work, checks = (
            [c.call.summary for c in section.query(ToolCallReview)]
            for section in screen.query(ReviewSection)
            if str(section.children[0].render()) in ("The generator's work", "Checks the critic ran")
        )
        assert work == ["bash: touch done.txt"] and checks == ["bash: test -f done.txt"]
