"""The round review's changes view: a refine turn's edits by hunk through the real SDK against the
loopback fake, real tools, store and checkpoints; and a snapshot of the view."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.ui.helpers import screen_text, settled, wait_until
from tui_assist.session.checkpoints.hunks import TurnChanges, file_hunks, find_remarks
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.screens.round_review import RoundReviewScreen
from tui_assist.ui.widgets.hunk_review import ChangesView, HunkCard, ReasonScreen

OLD = "".join(f"line {i}\n" for i in range(1, 21))
BOTH = OLD.replace("line 3\n", "line three\n").replace("line 17\n", "line 17\nline 17b\n")
CRITIC = "PASS\n`a.txt:3` spells the number out. a.txt lines 17-18 add the line asked for. [2] adds it."


@pytest.fixture
def workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    (path / "a.txt").write_text(OLD)
    return path


def _edit(old: str, new: str) -> ToolUse:
    change = {"command": "str_replace", "path": "a.txt", "old_str": old, "new_str": new}
    return ToolUse("str_replace_based_edit_tool", change)


async def test_rejecting_one_of_two_hunks_leaves_only_the_other_change(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(
        Reply(
            [
                _edit("line 3\n", "line three\n"),
                _edit("line 17\n", "line 17\nline 17b\n"),
                ToolUse("bash", {"command": "echo by bash > notes.txt"}),
            ]
        ),
        Reply("Spelled out line 3 and added line 17b."),
        Reply(CRITIC),
    )
    settings = Settings(
        provider="anthropic",
        workdir=workdir,
        refine=True,
        sandbox="off",  # pyright: ignore[reportArgumentType]
        approval=ApprovalSettings(default="allow"),  # pyright: ignore[reportArgumentType]
    )
    app = TuiAssistApp(settings)
    async with app.run_test(size=(100, 32)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"edit a.txt", "enter")
        await wait_until(pilot, lambda: not app.screen.running and (workdir / "a.txt").read_text() == BOTH)  # type: ignore[attr-defined]
        await app.workers.wait_for_complete()

        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, RoundReviewScreen))
        await pilot.press("c")
        await wait_until(pilot, lambda: len(app.screen.query(HunkCard)) == 3)
        first, second, made = app.screen.query(HunkCard)
        text = screen_text(app)
        assert "a.txt  (modified by the editor)" in text and "notes.txt  (added by a command)" in text
        assert made.hunk.lines == ("+by bash",)
        # Each hunk beside the critic's sentence that names its lines.
        assert first.remarks == ["`a.txt:3` spells the number out."]
        assert second.remarks == [
            "a.txt lines 17-18 add the line asked for.",
            "[2] adds it.",
        ]  # [2]: its edit
        assert app.screen.focused is first

        await pilot.press("space", "space")  # rejected, then kept again
        assert not first.decision.rejected
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonScreen))
        await pilot.press(*"keep the digit", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RoundReviewScreen))
        assert first.decision.rejected and first.decision.reason == "keep the digit"
        assert "why: keep the digit" in screen_text(app)

        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert (workdir / "a.txt").read_text() == OLD.replace("line 17\n", "line 17\nline 17b\n")
        assert (workdir / "notes.txt").read_text() == "by bash\n"
        prompt = app.query_one("#prompt").text  # type: ignore[attr-defined]
        assert prompt.splitlines() == [
            "I reverted these hunks of your change:",
            "- a.txt line 3 (@@ -1,6 +1,6 @@): keep the digit",
        ]

        await pilot.press("f4", "c")  # opened again: the reverted hunk says so
        await wait_until(pilot, lambda: len(app.screen.query(HunkCard)) == 3)
        assert [c.decision.reverted for c in app.screen.query(HunkCard)] == [True, False, False]
        assert "↺ reverted  a.txt  @@ -1,6 +1,6 @@" in screen_text(app)


class _ChangesApp(App[None]):
    """The changes view alone, on a fixed turn (for the snapshot)."""

    def compose(self) -> ComposeResult:
        yield ChangesView()

    async def on_mount(self) -> None:
        old = OLD.encode()
        files = (
            file_hunks("a.txt", "modified", old, BOTH.encode()),
            file_hunks("notes.md", "added", None, b"# Notes\n\nWritten by bash.\n"),
        )
        changes = TurnChanges("/work/project", "0" * 40, "1" * 40, files)
        feedback = CRITIC + " notes.md was not asked for."
        view = self.query_one(ChangesView)
        await view.show(changes, find_remarks(feedback, ["a.txt", "notes.md"]), edited={"a.txt"})
        view.query(HunkCard).last().decision.rejected = True
        view.query(HunkCard).last().decision.reason = "not asked for"
        view.query(HunkCard).last().show_decision()


def test_the_changes_view(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await settled(pilot)

    assert snap_compare(_ChangesApp(), run_before=run_before, terminal_size=(90, 40))


async def test_without_a_store_the_changes_view_says_so() -> None:
    from tests.ui.helpers import review_app

    app = review_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"fix the failing test", "enter")
        await wait_until(pilot, lambda: app.session.conversation.messages)
        await app.workers.wait_for_complete()
        await pilot.press("f4", "c")
        await wait_until(pilot, lambda: "No store: the turn's changes are not recorded." in screen_text(app))
        await pilot.press("c")  # back to the round
        await wait_until(pilot, lambda: "What the generator saw" in screen_text(app))
