"""A real `ChatSession` whose Anthropic provider talks to the loopback fake: the set-up the tests
that run a whole session through the SDK share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource


def sdk_workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, config: str) -> Path:
    """An empty workdir under `tmp_path`, with the API at `fake` and `config` as the user's config.toml."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    config_file = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(config)
    path = tmp_path / "work"
    path.mkdir()
    return path


@asynccontextmanager
async def loaded_session(work: Path, tmp_path: Path) -> AsyncIterator[ChatSession]:
    """A loaded session in `work`, its store in `tmp_path / "data"`; closed afterwards."""
    chat = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data"), "workdir": str(work)}))
    await chat.load()
    assert chat.provider is not None and chat.store is not None, chat.provider_problem
    try:
        yield chat
    finally:
        await chat.aclose()
