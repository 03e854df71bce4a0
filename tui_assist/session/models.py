"""`/model [NAME]`: which models to offer, what a name means, and what each costs.

The offer is the provider's own list when it answers (read once, in the background, the first
time a host asks), else the ids known here; the one in use and the configured ones come first.
Claude Code's aliases (`sonnet`, `opus`, `haiku`) name current ids. A model without a price in
`[prices]` is counted at its list price when it is known here, so the meter follows a switch.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

from tui_assist.core.claude_names import MODEL_ALIASES
from tui_assist.providers.anthropic_info import DEFAULT_MODEL

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.session.config import Price

log = logging.getLogger(__name__)

KNOWN_MODELS: Final = tuple(dict.fromkeys((DEFAULT_MODEL, *MODEL_ALIASES.values())))
"""Offered when the provider's list cannot be read."""

LIST_TIMEOUT: Final = 5.0
"""Seconds the provider's model list may take; completion never waits for it."""

_LIST_PRICES: Final[dict[str, tuple[float, float]]] = {
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
}
"""USD per million input and output tokens, by id prefix; cache writes cost 1.25× input, reads 0.1×."""


def list_price(model: str) -> Price | None:
    """The list price of `model` when it is known here (longest id prefix), else None."""
    matches = [prefix for prefix in _LIST_PRICES if model.startswith(prefix)]
    if not matches:
        return None
    from tui_assist.session.config import Price

    given, got = _LIST_PRICES[max(matches, key=len)]
    return Price(input=given, output=got, cache_write=given * 1.25, cache_read=given * 0.1)


class ModelChoices:
    """The models a session offers for `/model`, with the provider's list once it has come."""

    def __init__(self) -> None:
        self.listed: list[str] | None = None
        """The provider's ids (None: not read, or it could not be)."""
        self._reading: asyncio.Task[None] | None = None

    def offered(self, in_use: str, configured: list[str]) -> list[str]:
        """Every id to offer, best first: in use, configured, then the provider's (or the known) ones."""
        return list(dict.fromkeys([in_use, *configured, *(self.listed or KNOWN_MODELS)]))

    def read_soon(self, provider: Provider | None) -> None:
        """Start reading the provider's list in the background, once (later calls do nothing)."""
        if self._reading is None and provider is not None and hasattr(provider, "list_models"):
            self._reading = asyncio.get_running_loop().create_task(self.read(provider))

    async def read(self, provider: Provider) -> None:
        """Read the provider's model list now; a failure leaves the known ids offered."""
        try:
            listed = await asyncio.wait_for(provider.list_models(), LIST_TIMEOUT)  # pyright: ignore[reportAttributeAccessIssue]
        except Exception as exc:  # an endpoint without the list, no network: the known ids do
            log.info("the provider's model list is unavailable: %s", exc)
            return
        self.listed = [str(model) for model in listed]
