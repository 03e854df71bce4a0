"""The spend cap's pure parts: when it stops, how it reads, what `/budget` accepts."""

from __future__ import annotations

import math

import pytest

from tui_assist.core.budget import Budget, BudgetTracker, SpendCapReached, stop_outcome
from tui_assist.core.conversation import Usage
from tui_assist.core.text import spend_text
from tui_assist.session.config import Price
from tui_assist.session.meter import Meter, cap_reached
from tui_assist.session.spend_cap import parse_budget


def test_cap_reached_only_at_or_past_the_cap() -> None:
    assert cap_reached(0.009, 0.01) is None
    assert cap_reached(None, 0.01) is None  # an unpriced model's cost is unknown: it cannot stop
    assert cap_reached(0.5, None) is None
    line = cap_reached(0.01, 0.01)
    assert line is not None and line.startswith("spend cap of $0.0100 reached ($0.0100 spent)")


def test_the_tracker_refuses_a_request_once_the_cap_is_reached() -> None:
    spent = [0.0]
    tracker = BudgetTracker(Budget(spend_cap=lambda: cap_reached(spent[0], 0.01)))
    tracker.before_model_request()
    spent[0] = 0.02
    with pytest.raises(SpendCapReached) as stop:
        tracker.before_model_request()
    assert stop_outcome(stop.value) == "budget" and tracker.spend_stopped
    assert tracker.model_requests == 1


def test_a_run_that_used_no_tokens_leaves_the_cost_known() -> None:
    """A `!` command (or a goal's check) reports a call of no tokens and no price: the cost, and so
    the spend cap, stay in force."""
    meter = Meter()
    meter.add(Usage(input_tokens=1_000_000), Price(input=3.0, output=15.0), "claude-sonnet-4-6")
    meter.add(Usage(), None, "shell")
    assert meter.cost == 3.0 and cap_reached(meter.cost, 1.0) is not None
    meter.add(Usage(input_tokens=1), None, "unpriced")
    assert meter.cost is None  # tokens without a price: unknown, never understated


def test_the_meter_shows_spent_over_cap() -> None:
    assert spend_text(0.0123, None) == "$0.0123"
    assert spend_text(0.0123, 0.5) == "$0.0123/$0.5000"
    assert spend_text(None, 2.0) == "$–/$2.00"


@pytest.mark.parametrize(("text", "cap"), [("0.5", 0.5), ("$2", 2.0), ("off", math.inf)])
def test_budget_accepts_an_amount_or_off(text: str, cap: float) -> None:
    assert parse_budget(text) == cap


@pytest.mark.parametrize("text", ["", "0", "-1", "ten", "nan", "inf"])
def test_budget_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match="usage: /budget"):
        parse_budget(text)
