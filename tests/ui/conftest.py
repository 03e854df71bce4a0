from __future__ import annotations

import pytest

from tests.ui.helpers import FixedClock


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> FixedClock:
    """Pin the core's event stamps and tool durations, so timings on screen are deterministic."""
    import tui_assist.core.events as events
    import tui_assist.core.nodes as nodes  # ToolCallScope times every tool call

    clock = FixedClock()
    monkeypatch.setattr(events, "time", clock)
    monkeypatch.setattr(nodes, "time", clock)
    return clock
