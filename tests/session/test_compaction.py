"""Long conversations: compaction through the real SDK against the loopback fake, with a real store.

The config file sets a tiny window (`[models."claude-sonnet-4-6"] context_window = 4400`), so a few
long turns fill it. The fake answers a request without tools (the summariser) with a summary, and
every other request with a long answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import (
    Error,
    FakeAnthropic,
    RecordedRequest,
    Reply,
    ToolUse,
    Usage,
    _cacheable_blocks,
    _without_cache_control,
    estimate_tokens,
)
from tui_assist.cli import main
from tui_assist.core.conversation import ToolResultBlock
from tui_assist.core.conversation import Usage as CoreUsage
from tui_assist.core.events import NodeFinished, NodeStarted, UsageRecorded
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource

WINDOW = 4400
SUMMARY = "SUMMARY-OF-EARLIER-TURNS: the user asked about topics 0 and up; nothing is open."


@pytest.fixture
def work(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


def write_config(tmp_path: Path, window: int | None = WINDOW, extra: str = "") -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    table = f'[models."claude-sonnet-4-6"]\ncontext_window = {window}\n' if window else ""
    # The window is sized for the shell, editor, glob, grep and agent tools: web_fetch's schema is left out.
    web = "[tools.web]\nfetch = false\n"
    config.write_text(f'approval = {{ default = "allow" }}\n{extra}{web}{table}')


def answer(i: int) -> str:
    return f"ANSWER-{i}: " + f"a long explanation of topic {i}, " * 48


def prompt(i: int) -> str:
    return f"PROMPT-{i}: tell me about topic {i} " + "with details " * 10


def is_summariser(req: RecordedRequest) -> bool:
    return req.path == "/v1/messages" and not req.tools


def model_requests(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.path == "/v1/messages"]


def size(req: RecordedRequest) -> int:
    """The request's input tokens as the fake counts them (its blocks, without cache marks)."""
    blocks = [_without_cache_control(b) for b in _cacheable_blocks(req.body)]
    return estimate_tokens(json.dumps(blocks, sort_keys=True))


def replies(
    fake: FakeAnthropic, n: int, *, summary_usage: Usage | None = None, answer_usage: Usage | None = None
) -> None:
    """`n` steps: a summary for a summariser request, else the next long answer."""
    counter = iter(range(1000))

    def step(req: RecordedRequest) -> Reply:
        if is_summariser(req):
            return Reply(SUMMARY, usage=summary_usage or Usage())
        return Reply(answer(next(counter)), usage=answer_usage or Usage())

    fake.add(*([step] * n))


async def open_session(data: Path) -> ChatSession:
    session = ChatSession(ConfigSource.read({"data_dir": str(data)}))
    await session.load()
    assert session.provider is not None and session.store is not None, session.provider_problem
    return session


@pytest.fixture
async def session(work: Path, tmp_path: Path) -> AsyncIterator[ChatSession]:
    write_config(tmp_path)
    chat = await open_session(tmp_path / "data")
    yield chat
    await chat.aclose()


async def stored(session: ChatSession) -> tuple[list[Any], list[tuple[str, str, str]]]:
    """What the store holds for the conversation: its history and its turns."""
    assert session.store is not None and session.conversation_id is not None
    history = await session.store.load_history(session.conversation_id)
    turns = await session.store.turns_page(session.conversation_id, limit=100)
    return history, [(t.prompt, t.answer, t.outcome) for t in turns]


def texts(req: RecordedRequest) -> str:
    return req.all_text()


# --------------------------------------------------------------------------- automatic compaction


async def test_long_turns_are_summarised_once_and_the_next_request_fits(
    fake: FakeAnthropic, session: ChatSession
) -> None:
    replies(fake, 40)
    observer = RecordingObserver()
    before_history: list[Any] = []
    before_turns: list[tuple[str, str, str]] = []
    before_export = ""
    compacted_at = None
    for i in range(12):
        if session.conversation_id is not None:
            before_history, before_turns = await stored(session)
            before_export = session.export_markdown()
        outcome = await session.run_turn(prompt(i), observer)
        assert outcome.result.outcome == "answered", outcome.result.error
        if outcome.compacted:
            compacted_at = i
            break
    assert compacted_at is not None and compacted_at >= 3, "several long turns fill a 4,400-token window"

    sent = model_requests(fake)
    summarisers = [r for r in sent if is_summariser(r)]
    assert len(summarisers) == 1
    assert "PROMPT-0" in texts(summarisers[0]) and answer(0)[:40] in texts(summarisers[0])
    after = sent[sent.index(summarisers[0]) + 1]
    assert size(after) < WINDOW
    assert SUMMARY in texts(after)
    assert "PROMPT-0" not in texts(after)  # summarised away...
    last = compacted_at - 1  # ...while the last turn before this one is there verbatim
    assert {"role": "user", "content": [{"type": "text", "text": prompt(last)}]} in after.messages
    assert any(b.get("text") == answer(last) for m in after.messages for b in m["content"])

    # The stored turns are unchanged: the history and its export only grew by the new turn.
    history, turns = await stored(session)
    assert history[: len(before_history)] == before_history
    assert turns[: len(before_turns)] == before_turns
    assert session.export_markdown().startswith(before_export)

    # The tree shows a compact node with the notice, under the turn's agent.
    compact = [e for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "compact"]
    assert len(compact) == 1 and compact[0].parent_id is not None
    finished = next(
        e for e in observer.events if isinstance(e, NodeFinished) and e.node_id == compact[0].node_id
    )
    assert finished.outcome == "summary" and finished.output.startswith("compacted ")
    assert "earlier turn" in finished.output and "→" in finished.output

    # The next turn sends the summary again and makes no second summary.
    outcome = await session.run_turn("one more", observer)
    assert not outcome.compacted
    assert [r for r in model_requests(fake) if is_summariser(r)] == summarisers
    assert SUMMARY in texts(model_requests(fake)[-1])
    assert session.context_fill is not None and 0 < session.context_fill < 0.8


async def test_old_tool_results_are_cut_before_anything_is_summarised(
    fake: FakeAnthropic, session: ChatSession
) -> None:
    output = "x" * 2500
    for i in range(5):
        command = f"head -c 2500 /dev/zero | tr '\\0' x # {i}"
        fake.add(Reply([ToolUse("bash", {"command": command}, id=f"t{i}")]), Reply(f"short answer {i}"))
    observer = RecordingObserver()
    outcomes = [await session.run_turn(f"run command {i}", observer) for i in range(5)]

    assert [o.result.outcome for o in outcomes] == ["answered"] * 5
    assert [o.compacted for o in outcomes] == [False, False, False, False, True]
    assert not any(is_summariser(r) for r in model_requests(fake))
    last = model_requests(fake)[-1]
    results = [b["content"] for m in last.messages for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == 5
    assert all("characters cut to save context" in r and len(r) < 400 for r in results[:2])  # the oldest
    assert results[2:] == [output] * 3  # the last two earlier turns and this one: verbatim
    assert size(last) < 0.8 * WINDOW
    finished = [e for e in observer.events if isinstance(e, NodeFinished) and e.outcome == "trim"]
    assert [e.output.split(":")[0] for e in finished] == ["cut old tool results in 2 earlier turns"]
    # The store still holds every result whole.
    history, _ = await stored(session)
    kept = [b for m in history for b in m.content if isinstance(b, ToolResultBlock)]
    assert [b.content for b in kept] == [output] * 5


# --------------------------------------------------------------------------- recovery


async def test_prompt_too_long_leads_to_one_compaction_and_a_successful_retry(
    fake: FakeAnthropic, session: ChatSession
) -> None:
    for i in range(3):
        fake.add(Reply(f"answer {i} " + "words " * 60))
    observer = RecordingObserver()
    for i in range(3):
        assert not (await session.run_turn(f"question {i} " + "more " * 40, observer)).compacted
    before = await stored(session)
    fake.add(
        Error(400, message="prompt is too long: 5000 tokens > 4000 maximum"),
        Reply(SUMMARY, usage=Usage(1111, 77, 0, 0)),
        Reply("the retried answer", usage=Usage(10, 5, 0, 0)),
    )

    outcome = await session.run_turn("question 3", observer)

    assert (outcome.result.outcome, outcome.result.answer) == ("answered", "the retried answer")
    assert outcome.compacted
    sent = model_requests(fake)
    assert [r.status for r in sent[-3:]] == [400, 200, 200]
    assert is_summariser(sent[-2]) and not is_summariser(sent[-1])
    assert SUMMARY in texts(sent[-1]) and "question 0" not in texts(sent[-1])
    assert size(sent[-1]) < size(sent[-3])
    # The summariser's tokens count in the turn's usage.
    assert outcome.result.usage == CoreUsage(1121, 82, 0, 0)
    history, turns = await stored(session)
    assert history[: len(before[0])] == before[0] and turns[: len(before[1])] == before[1]
    assert turns[-1] == ("question 3", "the retried answer", "answered")


async def test_prompt_too_long_with_nothing_to_compact_is_a_clear_error(
    fake: FakeAnthropic, session: ChatSession
) -> None:
    fake.add(Error(400, message="prompt is too long: 5000 tokens > 4000 maximum"))

    outcome = await session.run_turn("a first prompt", RecordingObserver())

    assert outcome.result.outcome == "error" and not outcome.compacted
    assert "prompt is too long" in (outcome.result.error or "")
    assert len(model_requests(fake)) == 1  # no summary, no retry


# --------------------------------------------------------------------------- resume


async def test_a_resumed_conversation_compacts_on_its_first_send_and_reuses_the_summary(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    write_config(tmp_path, window=None)  # the default window: nothing is compacted
    replies(fake, 10)
    first = await open_session(data)
    try:
        for i in range(10):
            assert not (await first.run_turn(prompt(i), RecordingObserver())).compacted
        conversation_id = first.conversation_id
        assert conversation_id is not None
        history_before, turns_before = await stored(first)
    finally:
        await first.aclose()

    write_config(tmp_path)  # now the window is tiny: the history no longer fits
    replies(fake, 3)
    second = await open_session(data)
    try:
        await second.open_conversation(conversation_id)
        assert (second.context_fill or 0) > 0.8  # estimated from the history before anything is sent
        outcome = await second.run_turn("after the resume", RecordingObserver())
        assert outcome.compacted and outcome.result.outcome == "answered"
        summarisers = [r for r in model_requests(fake) if is_summariser(r)]
        # A history longer than the window is summarised in parts, each part a request that fits.
        assert summarisers and all(size(r) + r.body["max_tokens"] < WINDOW for r in summarisers)
        assert size(model_requests(fake)[-1]) < WINDOW
        history, turns = await stored(second)
        assert history[: len(history_before)] == history_before and turns[:10] == turns_before
    finally:
        await second.aclose()

    replies(fake, 1)
    third = await open_session(data)
    try:
        await third.open_conversation(conversation_id)
        outcome = await third.run_turn("after the second resume", RecordingObserver())
        assert not outcome.compacted
        assert [
            r for r in model_requests(fake) if is_summariser(r)
        ] == summarisers  # the stored one is reused
        assert SUMMARY in texts(model_requests(fake)[-1])
    finally:
        await third.aclose()


# --------------------------------------------------------------------------- /compact


async def test_compact_on_demand_passes_the_instructions_and_keeps_the_last_turn(
    fake: FakeAnthropic, session: ChatSession
) -> None:
    fake.add(Reply("one"), Reply("two"))
    observer = RecordingObserver()
    assert await session.compact() is None  # nothing to compact yet
    await session.run_turn("first question", observer)
    assert await session.compact() is None  # the latest turn stays verbatim
    await session.run_turn("second question", observer)
    fake.add(Reply(SUMMARY, usage=Usage(300, 20, 0, 0)), Reply("three"))

    report = await session.compact("keep the file names", observer)

    assert report is not None and report.stage == "summary" and report.turns == 1
    assert report.notice.startswith("compacted 1 earlier turn: ")
    assert report.usage == CoreUsage(300, 20)
    summariser = model_requests(fake)[-1]
    assert is_summariser(summariser) and "keep the file names" in texts(summariser)
    assert "first question" in texts(summariser) and "second question" not in texts(summariser)
    compact = next(e for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "compact")
    assert compact.parent_id is None
    assert any(isinstance(e, UsageRecorded) and e.node_id == compact.node_id for e in observer.events)

    await session.run_turn("third question", observer)
    shape = [(m["role"], m["content"][0]["text"][:20]) for m in model_requests(fake)[-1].messages]
    assert shape[0][0] == "user" and SUMMARY[:20] not in shape[0][1]  # the header comes first
    assert SUMMARY in model_requests(fake)[-1].messages[0]["content"][0]["text"]
    assert [s for s in shape[2:]] == [
        ("user", "second question"),
        ("assistant", "two"),
        ("user", "third question"),
    ]


# --------------------------------------------------------------------------- headless


def test_ask_json_reports_compacted_and_counts_the_summary_in_usage(
    fake: FakeAnthropic, work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(tmp_path)
    replies(fake, 30, summary_usage=Usage(2000, 100, 0, 0), answer_usage=Usage(50, 10, 0, 0))

    runs: list[dict[str, Any]] = []
    for i in range(10):
        args = ["ask", "--json", "--workdir", str(work)] + (["--continue"] if i else []) + [prompt(i)]
        assert main(args) == 0
        runs.append(json.loads(capsys.readouterr().out))
        if runs[-1]["compacted"]:
            break
    assert runs[-1]["compacted"] is True and all(r["compacted"] is False for r in runs[:-1])
    assert len({r["conversation_id"] for r in runs}) == 1
    # The summary call's tokens are inside the turn's usage, beside the answer's.
    assert runs[-1]["usage"] == {
        "input_tokens": 2050,
        "output_tokens": 110,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


# --------------------------------------------------------------------------- refine


async def test_a_refine_generator_is_kept_in_the_window_by_the_same_check(
    fake: FakeAnthropic, session: ChatSession
) -> None:
    def step(req: RecordedRequest) -> Reply:
        system = json.dumps(req.system)
        if "You summarise" in system:
            return Reply(SUMMARY)
        if "strict reviewer" in system:
            return Reply("PASS")
        return Reply(answer(len(fake.requests)))

    fake.add(*([step] * 20))
    observer = RecordingObserver()
    for i in range(6):
        assert not (await session.run_turn(prompt(i), observer)).compacted
    session.refine, session.rounds = True, 1

    outcome = await session.run_turn(prompt(6) + "and more " * 150, observer)

    assert outcome.compacted and outcome.result.strategy == "refine" and outcome.result.outcome == "answered"
    sent = model_requests(fake)
    summariser = next(i for i, r in enumerate(sent) if "You summarise" in json.dumps(r.system))
    generator = sent[summariser + 1]
    assert generator.tools and SUMMARY in texts(generator) and size(generator) < 0.8 * WINDOW
    compact = next(e for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "compact")
    kinds = {e.node_id: e.node_kind for e in observer.events if isinstance(e, NodeStarted)}
    assert kinds[compact.parent_id or ""] == "generate"
