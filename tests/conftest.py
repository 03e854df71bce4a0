from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest

from tests.fakes.anthropic import FakeAnthropic


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own settings, keys or endpoints never decide a result."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "TUI_ASSIST_", "OPENAI_")):
            monkeypatch.delenv(name)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic-config"))
    monkeypatch.setenv("TUI_ASSIST_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))  # never the real ~/.claude


_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address, *args, **kwargs):  # type: ignore[no-untyped-def]
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6):
        if not (host.startswith("127.") or host in ("localhost", "::1")):
            raise RuntimeError(f"tests may only reach loopback addresses, not {host!r}")
    return _real_connect(self, address, *args, **kwargs)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection to a non-loopback address fails the test."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """A loopback fake of the Messages API, stopped after the test."""
    with FakeAnthropic() as server:
        yield server
