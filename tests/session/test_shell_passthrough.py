"""`!COMMAND`: runs in the turn's shell through the approval rules, no model call; the command and
its output are context for the next prompt, stored and resumed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply
from tui_assist.core.events import NodeStarted, TextDelta, ToolCallFinished, ToolCallStarted
from tui_assist.core.observer import ApprovalDecision, RecordingObserver
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource


def write_config(tmp_path: Path, text: str) -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


@pytest.fixture
def work(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    (path / "notes.txt").write_text("first line\n")
    return path


async def open_session(tmp_path: Path, work: Path) -> ChatSession:
    chat = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data"), "workdir": str(work)}))
    await chat.load()
    assert chat.provider is not None and chat.store is not None, chat.provider_problem
    return chat


@pytest.fixture
async def session(work: Path, tmp_path: Path) -> AsyncIterator[ChatSession]:
    write_config(tmp_path, 'sandbox = "off"\ncheckpoints = false\n[permissions]\nallow = ["bash(cat *)"]\n')
    chat = await open_session(tmp_path, work)
    yield chat
    await chat.aclose()


async def test_a_bang_command_runs_without_a_model_and_is_context_for_the_next_prompt(
    fake: FakeAnthropic, session: ChatSession, tmp_path: Path, work: Path
) -> None:
    observer = RecordingObserver(decision=ApprovalDecision.deny("no dialog in this test"))

    outcome = await session.run_turn("!cat notes.txt", observer)

    assert outcome.result.outcome == "answered" and outcome.result.strategy == "shell"
    assert fake.requests == []  # no model call
    assert observer.approvals == []  # the allow rule covered it: the same rules as a model's call
    started = [e for e in observer.events if isinstance(e, ToolCallStarted)]
    assert [(e.name, e.input) for e in started] == [("bash", {"command": "cat notes.txt"})]
    finished = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert "first line" in finished[0].output
    shown = "".join(e.text for e in observer.events if isinstance(e, TextDelta))
    assert shown.startswith("```\n") and "first line" in shown
    turn = next(e for e in observer.events if isinstance(e, NodeStarted) and e.parent_id is None)
    assert turn.label == "shell"
    context = session.conversation.messages[-1]
    assert context.role == "user" and context.text.startswith("<bash-input>cat notes.txt</bash-input>")
    assert "<bash-output>\nfirst line\n</bash-output>" in context.text

    fake.add(Reply("It says first line."))
    await session.run_turn("what did it print?", RecordingObserver())
    sent = fake.requests[-1].all_text()
    assert "<bash-input>cat notes.txt</bash-input>" in sent and "first line" in sent

    # Stored: a resumed conversation sends it too.
    assert session.conversation_id is not None
    resumed = await open_session(tmp_path, work)
    try:
        turns = await resumed.resume(session.conversation_id)
        assert [t.strategy for t in turns] == ["shell", "agent"]
        assert any("<bash-input>cat notes.txt" in m.text for m in resumed.conversation.messages)
    finally:
        await resumed.aclose()


async def test_a_bang_command_asks_like_a_model_call_and_a_denial_runs_nothing(
    fake: FakeAnthropic, session: ChatSession, work: Path
) -> None:
    observer = RecordingObserver(decision=ApprovalDecision.deny("the user denied this call"))

    outcome = await session.run_turn("!touch made.txt", observer)

    assert [a.tool for a in observer.approvals] == ["bash"]
    assert observer.approvals[0].summary.startswith("touch made.txt")
    assert not (work / "made.txt").exists()
    assert outcome.result.outcome == "answered" and fake.requests == []
    assert "denied" in session.conversation.messages[-1].text
