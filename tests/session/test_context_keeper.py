"""The context keeper's policy, driven directly with the scripted provider, and its settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.core.compaction import HistorySummary, request_tokens
from tui_assist.core.conversation import Message, ToolResultBlock, ToolUseBlock, Usage
from tui_assist.core.events import NodeFinished, NodeStarted
from tui_assist.core.model import ContextOverflow, ModelRequest, ProviderError
from tui_assist.core.observer import RecordingObserver
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.config_source import ConfigError, ConfigSource
from tui_assist.session.context import ContextKeeper


def turn(i: int, *, words: int = 200) -> list[Message]:
    return [Message.user(f"question {i}"), Message.assistant(f"answer {i} " + "word " * words)]


def tool_round(i: int, output: str) -> list[Message]:
    return [
        Message("assistant", (ToolUseBlock(f"c{i}", "bash", {"command": f"step {i}"}),)),
        Message("user", (ToolResultBlock(f"c{i}", output),)),
    ]


def keeper(window: int = 4000, script: list | None = None) -> ContextKeeper:
    provider = ScriptedProvider(script or [])
    return ContextKeeper(window=lambda: window, compact_at=0.8, provider=provider)


def request(history: list[Message], current: list[Message]) -> ModelRequest:
    return ModelRequest(system="sys", messages=(*history, *current), stable_prefix=len(history))


# --------------------------------------------------------------------------- settings


def test_the_models_table_sets_a_models_window(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('compact_at = 0.7\n[models."claude-sonnet-4-6"]\ncontext_window = 150000\n')
    settings = ConfigSource.read(path=path).settings()
    assert settings.compact_at == 0.7
    assert settings.context_window("claude-sonnet-4-6") == 150_000
    assert settings.context_window("claude-opus-4-1") == 200_000  # the known-models table
    assert settings.context_window("gpt-4o") == 128_000


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[models."claude-sonnet-4-6"]\ncontext_window = 0\n', "models.claude-sonnet-4-6.context_window"),
        ('[models."m"]\nwindow = 5\n', "models.m.window"),
        ("compact_at = 1.5\n", "compact_at"),
    ],
)
def test_bad_window_settings_are_named(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"invalid setting {named}"):
        ConfigSource.read(path=path).settings()


# --------------------------------------------------------------------------- policy


async def test_a_request_that_fits_goes_as_it_is() -> None:
    guard = keeper()
    sent = request(turn(0), [Message.user("now")])
    fitted = await guard.fit(sent, RecordingObserver(), "agent")
    assert fitted.request is sent and fitted.usage == Usage()


async def test_a_sub_agent_never_gets_the_conversation_summary() -> None:
    history = [m for i in range(3) for m in turn(i)]
    guard = keeper()
    guard.reset(HistorySummary("the summary", 2, 1), history)
    main = await guard.fit(request(history, [Message.user("now")]), RecordingObserver(), "agent")
    sub = await guard.fit(request([], [Message.user("a sub-task")]), RecordingObserver(), "tool")
    assert "the summary" in main.request.messages[0].text
    assert sub.request.messages == (Message.user("a sub-task"),)


async def test_a_stored_summary_that_no_longer_fits_the_history_is_dropped() -> None:
    history = [m for i in range(2) for m in turn(i)]
    guard = keeper()
    guard.reset(HistorySummary("half a turn", 1, 1), history)
    assert guard.summary is None
    guard.reset(HistorySummary("more than there is", 6, 3), history)
    assert guard.summary is None


async def test_overflow_with_nothing_to_compact_raises_it_again() -> None:
    guard = keeper()
    overflow = ContextOverflow("prompt is too long", tokens=5000, limit=4000)
    with pytest.raises(ContextOverflow) as info:
        await guard.fit(
            request([], [Message.user("huge " * 5000)]), RecordingObserver(), "agent", overflow=overflow
        )
    assert info.value is overflow


async def test_overflow_teaches_the_real_window() -> None:
    history = [m for i in range(4) for m in turn(i)]
    guard = keeper(window=8000, script=["the summary"])
    sent = request(history, [Message.user("now")])
    overflow = ContextOverflow("too long", tokens=6500, limit=6000)

    fitted = await guard.fit(sent, RecordingObserver(), "agent", overflow=overflow)

    assert guard.window == 6000 and guard.limit == 4800
    assert "the summary" in fitted.request.messages[0].text
    assert request_tokens(fitted.request) < request_tokens(sent)


async def test_a_failing_summary_sends_the_request_uncompacted_and_the_node_says_why() -> None:
    history = [m for i in range(8) for m in turn(i, words=300)]
    guard = keeper()  # its script is empty: the summary call fails
    observer = RecordingObserver()
    sent = request(history, [Message.user("now")])

    fitted = await guard.fit(sent, observer, "agent")

    assert fitted.request.messages == sent.messages and guard.summary is None
    [failed] = [e for e in observer.events if isinstance(e, NodeFinished)]
    assert failed.status == "failed" and "script exhausted" in (failed.error or "")
    with pytest.raises(ProviderError, match="compacting the history failed"):  # a refusal then is final
        await guard.fit(sent, observer, "agent", overflow=ContextOverflow("too long"))


async def test_a_long_running_turn_cuts_its_own_older_tool_results_but_never_the_latest() -> None:
    output = "y" * 4000
    current = [Message.user("a long task"), *(m for i in range(5) for m in tool_round(i, output))]
    guard = keeper()
    observer = RecordingObserver()

    fitted = await guard.fit(request([], current), observer, "agent")

    results = [
        b.content for m in fitted.request.messages for b in m.content if isinstance(b, ToolResultBlock)
    ]
    assert all(len(r) < 400 for r in results[:3]) and results[3:] == [output, output]
    [started] = [e for e in observer.events if isinstance(e, NodeStarted)]
    assert started.node_kind == "compact" and started.parent_id == "agent"
    [finished] = [e for e in observer.events if isinstance(e, NodeFinished)]
    assert finished.output.startswith("cut older tool results of this turn")
    # The cut is sticky: the next request of the same run sends the same bytes for that part.
    more = [*current, *tool_round(9, "z")]
    again = await guard.fit(request([], more), observer, "agent")
    assert again.request.messages[: len(fitted.request.messages)] == fitted.request.messages
