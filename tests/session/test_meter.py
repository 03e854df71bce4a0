"""The session's cost meter: totals, and the split by model and kind behind `/cost`."""

from __future__ import annotations

import pytest

from tui_assist.core.conversation import Usage
from tui_assist.session.config import Price
from tui_assist.session.meter import Meter


def test_the_meter_splits_tokens_and_cost_by_model_and_kind() -> None:
    sonnet = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
    haiku = Price(input=1.0, output=5.0, cache_write=1.25, cache_read=0.10)
    meter = Meter()
    meter.add(Usage(1_000, 200, 4_000, 0), sonnet, "claude-sonnet-4-6")
    meter.add(Usage(500, 100, 0, 4_000), sonnet, "claude-sonnet-4-6")
    meter.add(Usage(2_000, 50, 0, 0), haiku, "claude-haiku-4-5")

    assert meter.usage == Usage(3_500, 350, 4_000, 4_000)
    rows = {(line.model, line.kind): (line.tokens, line.cost) for line in meter.lines()}
    assert rows[("claude-sonnet-4-6", "input")] == (1_500, pytest.approx(1_500 * 3.0 / 1e6))
    assert rows[("claude-sonnet-4-6", "output")] == (300, pytest.approx(300 * 15.0 / 1e6))
    assert rows[("claude-sonnet-4-6", "cache write")] == (4_000, pytest.approx(4_000 * 3.75 / 1e6))
    assert rows[("claude-sonnet-4-6", "cache read")] == (4_000, pytest.approx(4_000 * 0.30 / 1e6))
    assert rows[("claude-haiku-4-5", "input")] == (2_000, pytest.approx(2_000 * 1.0 / 1e6))
    assert [line.model for line in meter.lines()][::4] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
    assert meter.cost == pytest.approx(sum(cost for _, cost in rows.values()))


def test_a_model_without_a_price_has_an_unknown_cost() -> None:
    meter = Meter()
    meter.add(Usage(10, 10), Price(), "priced")
    meter.add(Usage(10, 10), None, "local-model")
    assert meter.cost is None
    costs = {line.model: line.cost for line in meter.lines()}
    assert costs["priced"] is not None and costs["local-model"] is None


def test_calls_counted_without_a_model_count_only_in_the_total() -> None:
    meter = Meter()
    meter.add(Usage(10, 10), Price())
    assert meter.usage == Usage(10, 10) and meter.lines() == []
