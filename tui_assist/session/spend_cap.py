"""`/budget [N|off]`: the conversation's spend cap, as every host sets and shows it.

The cap itself is checked in the core before each model request (`core.budget.SpendCheck`); the
session answers that check from its meter (`ChatSession.spend_cap`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tui_assist.core.text import money, spend_text

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession

USAGE = "usage: /budget [N|off] (N in USD, e.g. /budget 0.50)"


def parse_budget(args: str) -> float:
    """The cap `/budget N|off` asks for; `off` is infinite (it lifts a configured cap too).

    Raises:
        ValueError: with the usage line, for anything but a positive amount or `off`.
    """
    text = args.strip().removeprefix("$")
    if text.lower() == "off":
        return math.inf
    try:
        cap = float(text)
    except ValueError:
        raise ValueError(USAGE) from None
    if not math.isfinite(cap) or cap <= 0:
        raise ValueError(USAGE)
    return cap


def budget_line(session: ChatSession) -> str:
    """What `/budget` says: the cap and what the conversation has spent against it."""
    cap = session.max_budget_usd
    spent = spend_text(session.meter.cost, None)
    if cap is None:
        return f"No spend cap ({spent} spent); `/budget N` sets one in USD."
    left = "" if session.meter.cost is None else f", {money(max(0.0, cap - session.meter.cost))} left"
    return f"Spend cap: {spend_text(session.meter.cost, cap)}{left}"


def budget_command(session: ChatSession, args: str) -> str:
    """Run `/budget [N|off]` on `session` and return its line.

    Raises:
        ValueError: with the usage line, for an argument that is not an amount or `off`.
    """
    if args.strip():
        session.budget_usd = parse_budget(args)
    return budget_line(session)
