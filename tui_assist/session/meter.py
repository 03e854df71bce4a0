"""The session's meter: tokens and what they cost, in total and by model, at the configured prices.

A price is per million tokens of each kind (`session.config.Price`); a model without one makes the
cost unknown (None) rather than zero, so `/cost` and the status bar never understate it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from tui_assist.core.conversation import Usage
from tui_assist.core.text import money

if TYPE_CHECKING:
    from tui_assist.session.config import Price


def price_for(prices: dict[str, Price], model: str) -> Price | None:
    """The price entry for `model` (exact, then by prefix)."""
    if model in prices:
        return prices[model]
    for name, price in prices.items():
        if model.startswith(name):
            return price
    return None


def cost_of(usage: Usage, price: Price | None) -> float | None:
    """USD for `usage`, or None without a price (no tokens cost nothing: a `!` command's run)."""
    if usage == Usage():
        return 0.0
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / 1_000_000


TokenKind = Literal["input", "output", "cache read", "cache write"]


@dataclass(frozen=True, slots=True)
class SpendLine:
    """One model's tokens of one kind, and what they cost (None without a price)."""

    model: str
    kind: TokenKind
    tokens: int
    cost: float | None


@dataclass
class ModelSpend:
    """What one model was used for in the session."""

    usage: Usage = field(default_factory=Usage)
    price: Price | None = None
    """The price the calls were counted at (the latest one given)."""
    priced: bool = True
    """False once a call was counted without a price: its cost is unknown."""

    def lines(self, model: str) -> list[SpendLine]:
        """The model's tokens and cost by kind: input, output, cache read, cache write."""
        usage, price = self.usage, self.price if self.priced else None
        kinds: list[tuple[TokenKind, int, float | None]] = [
            ("input", usage.input_tokens, price.input if price else None),
            ("output", usage.output_tokens, price.output if price else None),
            ("cache read", usage.cache_read_input_tokens, price.cache_read if price else None),
            ("cache write", usage.cache_creation_input_tokens, price.cache_write if price else None),
        ]
        return [
            SpendLine(model, kind, tokens, None if per_million is None else tokens * per_million / 1_000_000)
            for kind, tokens, per_million in kinds
        ]


@dataclass
class Meter:
    """Tokens and cost of the session, in total and by model."""

    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    by_model: dict[str, ModelSpend] = field(default_factory=lambda: dict[str, ModelSpend]())
    """Per model, in the order first used (only calls counted with a `model`)."""

    def add(self, usage: Usage, price: Price | None, model: str | None = None) -> None:
        """Count one model call's usage at `price` (None: the cost becomes unknown).

        Args:
            usage: The call's tokens.
            price: Its model's price, or None when unknown.
            model: The model that answered; counted in `by_model` when given.
        """
        self.usage = self.usage + usage
        spent = cost_of(usage, price)
        self.cost = None if spent is None or self.cost is None else self.cost + spent
        if model:
            spend = self.by_model.setdefault(model, ModelSpend())
            spend.usage = spend.usage + usage
            spend.price = price or spend.price
            spend.priced = spend.priced and price is not None

    def lines(self) -> list[SpendLine]:
        """Every model's tokens and cost by kind, for `/cost`."""
        return [line for model, spend in self.by_model.items() for line in spend.lines(model)]


def cap_reached(cost: float | None, cap: float | None) -> str | None:
    """The line that stops a request once `cost` reached the spend `cap` (None: it may go out).

    A cost left unknown (a model without a price) cannot be held against the cap: it does not stop.
    """
    if cap is None or cost is None or cost < cap:
        return None
    spent = f"spend cap of {money(cap)} reached ({money(cost)} spent)"
    return f"{spent}: raise it with /budget N or --max-budget-usd"
