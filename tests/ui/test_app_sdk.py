"""The TUI as users run it: the real Anthropic SDK (against the loopback fake), real tools, real store.

The provider is the app's own default (built from `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` after
the first paint), the tools come from the registry, and turns are stored in a SQLite file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse
from tests.ui.helpers import screen_text, wait_until
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.approval import ApprovalScreen
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.turn_parts import TurnBadge


@pytest.fixture
def workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


def make_app(
    workdir: Path, *, approval: str = "ask", refine: bool = False, sandbox: str = "off"
) -> TuiAssistApp:
    # Without the OS sandbox every side-effecting bash call asks, which is what these tests drive.
    settings = Settings(
        provider="anthropic",
        workdir=workdir,
        refine=refine,
        approval=ApprovalSettings(default=approval),  # pyright: ignore[reportArgumentType]
        sandbox=sandbox,  # pyright: ignore[reportArgumentType]
    )
    return TuiAssistApp(settings)


def bash(command: str) -> ToolUse:
    return ToolUse("bash", {"command": command})


async def settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def send(pilot, text: str) -> None:
    await pilot.press(*text, "enter")


async def test_a_refine_turn_drives_the_tree_through_rounds_and_verdicts(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(
        Reply([Text("Checking."), bash("echo evidence-$((6*7))")]),
        Reply("It is 41."),
        Reply("REVISE\nThe evidence says 42."),
        Reply([bash("echo evidence-$((6*7))")]),
        Reply("It is 42."),
        Reply("**PASS**\nMatches the evidence."),
    )
    app = make_app(workdir, approval="allow", refine=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await settle(app, pilot)
        assert type(app.session.provider).__name__ == "AnthropicProvider"
        await send(pilot, "what does the command print?")
        await settle(app, pilot)

        tree = app.query_one(AgentTree)
        rounds = [r for r in tree.node_log.nodes.values() if r.kind == "round"]
        assert [r.verdict for r in rounds] == ["revise", "pass"]
        text = screen_text(app)
        assert "round 1 · REVISE" in text and "round 2 · PASS" in text
        assert "passed in round 2" in text
        assert "evidence-42" in fake.requests[2].all_text()  # the critic judged the real tool output
        assert [m.text for m in app.session.conversation.messages] == [
            "what does the command print?",
            "It is 42.",
        ]
        store = app.session.store
        assert store is not None and app.session.conversation_id is not None
        [turn] = await store.turns_page(app.session.conversation_id)
        assert (turn.outcome, turn.rounds, turn.tool_calls) == ("answered", 2, 2)


async def test_escape_keeps_the_interrupted_turn_in_the_history_and_the_next_request_carries_it(
    fake: FakeAnthropic, workdir: Path
) -> None:
    streaming = Reply([Text("Working through it step by step " * 4, deltas=40)], hold_after=12)
    fake.add(Reply([Text("Looking."), bash("echo found-it")]), streaming, Reply("Fresh answer."))
    app = make_app(workdir, approval="allow")
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(app, pilot)
        await send(pilot, "long task")
        await wait_until(pilot, lambda: "Working through it" in screen_text(app), timeout=10)
        main = app.screen
        assert isinstance(main, MainScreen) and main.running

        await pilot.press("escape")
        await settle(app, pilot)
        streaming.release()

        assert not main.running
        assert app.query_one(TurnBadge).render().plain.startswith("⊘ cancelled")
        store = app.session.store
        assert store is not None and app.session.conversation_id is not None
        [cancelled] = await store.turns_page(app.session.conversation_id)
        assert cancelled.outcome == "cancelled" and cancelled.prompt == "long task"
        kept = app.session.conversation.messages
        assert kept == await store.load_history(app.session.conversation_id)  # a resume sends the same

        await send(pilot, "no, do it like this instead")
        await settle(app, pilot)
        sent = fake.requests[-1].messages
        assert sent[0]["content"][0]["text"] == "long task"
        assert sent[1]["content"][1]["type"] == "tool_use"  # the finished call and its result
        assert "found-it" in json.dumps(sent[2]["content"])
        partial = sent[3]["content"][-1]["text"]
        assert partial.startswith("Working through it") and partial.endswith("[interrupted by the user]")
        assert sent[4]["content"][0]["text"] == "no, do it like this instead"
        assert fake.requests[-1].status == 200
        assert app.session.conversation.messages[-1].text == "Fresh answer."


@pytest.mark.parametrize(("key", "ran"), [("a", True), ("d", False)])
async def test_the_approval_modal_allows_and_denies_a_real_command(
    fake: FakeAnthropic, workdir: Path, key: str, ran: bool
) -> None:
    fake.add(Reply([bash("echo made > notes.txt && echo wrote-it")]), Reply("Done."))
    app = make_app(workdir)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot)
        await send(pilot, "make a file")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=10)
        assert "echo made > notes.txt" in screen_text(app)

        await pilot.press(key)
        await settle(app, pilot)

    assert (workdir / "notes.txt").exists() is ran
    tool_result = fake.requests[1].messages[-1]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert ("wrote-it" in str(tool_result["content"])) is ran
    assert bool(tool_result.get("is_error")) is not ran


async def test_escape_in_the_approval_dialog_stops_the_turn_and_keeps_it_for_steering(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Reply([Text("I'll clean up."), bash("rm -rf build && touch cleaned")]), Reply("Steered."))
    app = make_app(workdir)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot)
        await send(pilot, "clean up")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=10)
        await pilot.press("escape")
        await settle(app, pilot)

        assert isinstance(app.screen, MainScreen) and not app.screen.running
        assert app.query_one(TurnBadge).render().plain.startswith("⊘ cancelled")
        assert getattr(app.focused, "id", None) == "prompt"
        assert not (workdir / "cleaned").exists()
        kept = app.session.conversation.messages
        assert kept[0].text == "clean up" and kept[-1].text.endswith("[interrupted by the user]")

        await send(pilot, "only remove build/")
        await settle(app, pilot)
        assert len(fake.requests) == 2  # the stopped turn asked nothing more
        assert "[interrupted by the user]" in json.dumps(fake.requests[-1].messages)


async def test_shift_tab_cycles_the_approval_mode_and_plan_mode_runs_nothing(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Reply([bash("touch planned")]), Reply("Here is the plan."))
    app = make_app(workdir)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot)
        shown = []
        for _ in range(3):
            await pilot.press("shift+tab")
            await pilot.pause()
            shown.append((app.session.approvals.mode, "plan" in screen_text(app)))
        assert [mode for mode, _ in shown] == ["accept-edits", "plan", "default"]
        assert shown[1][1]  # the status bar says plan
        await pilot.press("shift+tab", "shift+tab")  # back to plan
        await send(pilot, "how would you do it?")
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
    assert not (workdir / "planned").exists()
    assert "Plan mode is on: only reads run." in json.dumps(fake.requests[0].system)  # told up front
    assert "plan mode" in json.dumps(fake.requests[1].messages[-1]["content"])


async def test_a_sandboxed_command_runs_without_a_dialog_and_cannot_write_outside(
    fake: FakeAnthropic, workdir: Path, tmp_path: Path
) -> None:
    from tui_assist.tools.sandbox import probe_bwrap

    if not probe_bwrap().works:
        pytest.skip(f"no OS sandbox here: {probe_bwrap().reason}")
    outside = tmp_path / "outside.txt"
    fake.add(Reply([bash(f"touch inside.txt; echo x > {outside}")]), Reply("Done."))
    app = make_app(workdir, sandbox="workspace-write")
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot)
        assert "sandbox" in screen_text(app)
        await send(pilot, "make files")
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
    assert (workdir / "inside.txt").exists() and not outside.exists()
