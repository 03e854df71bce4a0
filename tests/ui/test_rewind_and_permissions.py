"""`/rewind` (and escape twice) and `/permissions` in the chat, with the real SDK against the
loopback fake, real tools, a real store and real checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.ui.helpers import screen_text, wait_until
from tui_assist.session.config import ApprovalSettings, PermissionSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.rewind import RewindScreen


@pytest.fixture
def workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    (path / "keep.txt").write_text("as it was\n")
    return path


def make_app(workdir: Path, **extra: object) -> TuiAssistApp:
    settings = Settings(
        provider="anthropic",
        workdir=workdir,
        sandbox="off",  # pyright: ignore[reportArgumentType]
        approval=ApprovalSettings(default="allow"),  # pyright: ignore[reportArgumentType]
        **extra,  # pyright: ignore[reportArgumentType]
    )
    return TuiAssistApp(settings)


async def settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_escape_twice_opens_rewind_and_rewinding_restores_files_conversation_and_prompt(
    fake: FakeAnthropic, workdir: Path
) -> None:
    create = {"command": "create", "path": "a.txt", "file_text": "made by the agent\n"}
    fake.add(
        Reply(
            [
                ToolUse("str_replace_based_edit_tool", create),
                ToolUse("bash", {"command": "echo new > keep.txt"}),
            ]
        ),
        Reply("Done."),
    )
    app = make_app(workdir)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"make a.txt", "enter")
        await settle(app, pilot)
        assert (workdir / "a.txt").exists() and (workdir / "keep.txt").read_text() == "new\n"

        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await wait_until(pilot, lambda: "2 file(s): a.txt, keep.txt" in screen_text(app), timeout=10)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "restore keep.txt" in screen_text(app), timeout=10)
        assert "delete  a.txt" in screen_text(app)
        await pilot.press("enter")
        await settle(app, pilot)

        assert not (workdir / "a.txt").exists()
        assert (workdir / "keep.txt").read_text() == "as it was\n"
        assert app.session.conversation.messages == []
        assert app.query_one("#prompt").text == "make a.txt"  # type: ignore[attr-defined]
        assert "Rewound" in screen_text(app)


async def test_permissions_lists_rules_with_their_source_and_removes_one(
    fake: FakeAnthropic, workdir: Path
) -> None:
    project = workdir / ".tui-assist"
    project.mkdir()
    (project / "settings.toml").write_text('[permissions]\nallow = ["bash(pytest *)"]  # keep this comment\n')
    app = make_app(
        workdir, permissions=PermissionSettings(allow=["bash(git status)"], deny=["bash(rm -rf *)"])
    )
    async with app.run_test(size=(110, 32)) as pilot:
        from tui_assist.ui.screens.trust import TrustScreen

        # The project's allow rule waits for its trust: the dialog asks first.
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=15)
        await pilot.press("n")
        await settle(app, pilot)
        await pilot.press(*"/permissions", "enter")
        await pilot.pause()
        shown = screen_text(app)
        assert "bash(git status)" in shown and "bash(rm -rf *)" in shown and "bash(pytest *)" in shown
        assert "project" in shown and "user" in shown
        from tui_assist.ui.widgets.turn_parts import Notice

        listed = app.query(Notice).last().source
        assert "allow `bash(pytest *)` · project" in listed and "waits for you to trust the project" in listed
        rules = app.session.approvals.permissions.rules
        index = next(i for i, r in enumerate(rules, 1) if r.text == "bash(pytest *)")
        await pilot.press(*f"/permissions remove {index}", "enter")
        await pilot.pause()
    text = (project / "settings.toml").read_text()
    assert "pytest" not in text and "[permissions]" in text


async def test_the_rewind_picker_lists_the_turns_first_and_fills_in_their_files_after(
    fake: FakeAnthropic, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each turn's file summary costs git processes: the list must not wait for them."""
    import asyncio

    from tui_assist.session.history import History

    for name in ("one", "two"):
        create = {"command": "create", "path": f"{name}.txt", "file_text": f"{name}\n"}
        fake.add(Reply([ToolUse("str_replace_based_edit_tool", create)]), Reply(f"Made {name}.txt."))
    gate = asyncio.Event()
    real = History.turn_changes

    async def gated(self: History, turn_id: str):  # the git work, held until the list has been seen
        await gate.wait()
        return await real(self, turn_id)

    monkeypatch.setattr(History, "turn_changes", gated)
    app = make_app(workdir)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot)
        for name in ("one", "two"):
            await pilot.press(*f"make {name}.txt", "enter")
            await settle(app, pilot)
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await wait_until(pilot, lambda: "#2 make two.txt" in screen_text(app))
        shown = screen_text(app)
        assert "#1 make one.txt" in shown and shown.count("files …") == 2 and "file(s)" not in shown
        gate.set()
        await wait_until(pilot, lambda: "1 file(s): one.txt" in screen_text(app), timeout=10)
        assert "1 file(s): two.txt" in screen_text(app) and "files …" not in screen_text(app)
        shown = screen_text(app)
        assert shown.index("#2 make two.txt") < shown.index("#1 make one.txt")  # newest first
