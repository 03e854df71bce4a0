"""`/model` mid-conversation: the provider's list (or the known ids), each turn stored with its
model, and the meter at each model's price, resumed too. The real SDK against the loopback fake,
a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Usage
from tests.session.test_compaction import work  # noqa: F401 - the fixture
from tui_assist.core.claude_names import resolve_model
from tui_assist.core.observer import NullObserver
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource
from tui_assist.session.models import KNOWN_MODELS, list_price

SPENT = Usage(
    input_tokens=1_000_000, output_tokens=0, cache_creation_input_tokens=0, cache_read_input_tokens=0
)
"""A million input tokens: the cost is the model's input price."""


async def open_session(data: Path, workdir: Path) -> ChatSession:
    session = ChatSession(ConfigSource.read({"data_dir": str(data), "workdir": str(workdir)}))
    await session.load()
    if session.provider is None or session.store is None:
        await session.aclose()  # an open store's thread would keep the test run from ending
        raise AssertionError(session.provider_problem or session.store_error)
    return session


async def test_the_offer_is_the_providers_list_else_the_known_ids(
    fake: FakeAnthropic,
    work: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    session = await open_session(tmp_path / "data", work)
    try:
        assert session.provider is not None
        await session.model_choices.read(session.provider)  # the fake has no list yet: a 404
        assert session.model_choices.offered(session.model, []) == list(KNOWN_MODELS)
        fake.models = ["claude-opus-4-6", "claude-haiku-4-5", "claude-sonnet-4-6"]
        await session.model_choices.read(session.provider)
        offered = session.model_choices.offered(session.model, [])
        assert offered == ["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"]
    finally:
        await session.aclose()


async def test_each_turn_keeps_its_model_and_the_meter_its_price(
    fake: FakeAnthropic,
    work: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake.add(Reply("one", usage=SPENT), Reply("two", usage=SPENT))
    session = await open_session(tmp_path / "data", work)
    try:
        await session.run_turn("first", NullObserver())
        session.set_model(resolve_model("haiku") or "")
        await session.run_turn("second", NullObserver())
        assert [r.body["model"] for r in fake.requests] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
        conversation_id = session.conversation_id
        assert conversation_id is not None and session.store is not None
        by_model = await session.store.usage_by_model(conversation_id)
        assert [model for model, _ in by_model] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
    finally:
        await session.aclose()

    resumed = await open_session(tmp_path / "data", work)
    try:
        await resumed.load_history(conversation_id)
        haiku = list_price("claude-haiku-4-5")
        assert haiku is not None and haiku.input == 1.0
        assert resumed.meter.cost == pytest.approx(3.0 + 1.0)  # sonnet's $3 and haiku's $1 per M input
    finally:
        await resumed.aclose()


async def test_a_resumed_conversation_goes_on_with_its_last_turns_model_unless_model_was_given(
    fake: FakeAnthropic,
    work: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake.add(Reply("one"), Reply("two"), Reply("three"), Reply("four"))
    session = await open_session(tmp_path / "data", work)
    try:
        await session.run_turn("first", NullObserver())
        session.set_model("claude-haiku-4-5")
        await session.run_turn("second", NullObserver())
        await session.run_turn("!echo a shell command runs no model", NullObserver())
        conversation_id = session.conversation_id
        assert conversation_id is not None
    finally:
        await session.aclose()

    resumed = await open_session(tmp_path / "data", work)
    try:
        assert resumed.model == "claude-sonnet-4-6"  # the configured one, until a conversation opens
        await resumed.load_history(conversation_id)
        assert resumed.model == "claude-haiku-4-5"
        assert resumed.price() == list_price("claude-haiku-4-5")  # the meter counts at its price
        await resumed.run_turn("third", NullObserver())
    finally:
        await resumed.aclose()

    flags = {"data_dir": str(tmp_path / "data"), "workdir": str(work), "model": "claude-opus-4-6"}
    pinned = ChatSession(ConfigSource.read(flags))  # as `--model claude-opus-4-6` gives it
    await pinned.load()
    try:
        await pinned.load_history(conversation_id)
        assert pinned.model == "claude-opus-4-6"
        await pinned.run_turn("fourth", NullObserver())
    finally:
        await pinned.aclose()
    models = [r.body["model"] for r in fake.requests]
    assert models == ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-haiku-4-5", "claude-opus-4-6"]
