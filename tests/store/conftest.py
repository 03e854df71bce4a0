from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui_assist.store import Store


class Clock:
    """A settable clock for the store (Unix seconds)."""

    def __init__(self, now: float = 1_736_942_400.0) -> None:  # Wed 2025-01-15 12:00 UTC
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
async def store(data_dir: Path) -> AsyncIterator[Store]:
    s = await Store.open(data_dir)
    try:
        yield s
    finally:
        await s.close()
