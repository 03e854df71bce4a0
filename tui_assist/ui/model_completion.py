"""Completes the NAME of `/model NAME`: the provider's models when it listed them, else known ids."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_assist.core.text import CompletionSpan
from tui_assist.session.slash_commands import closest
from tui_assist.ui.widgets.completion import CompletionItem

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession

PREFIX = "/model "


def offered_models(session: ChatSession) -> list[str]:
    """What `/model` offers now, and the provider's list asked for (once) for the next time."""
    choices = session.model_choices
    if session.ready:
        choices.read_soon(session.provider)
    return choices.offered(session.model, session.known_models())


class ModelCompletion:
    """The completion source of `/model NAME` (the argument; the name itself is `SlashCompletion`'s)."""

    def __init__(self, session: ChatSession) -> None:
        self.session = session

    def span_at(self, text: str, cursor: int) -> CompletionSpan | None:
        if not text.startswith(PREFIX) or cursor < len(PREFIX) or " " in text[len(PREFIX) :].strip():
            return None
        return CompletionSpan(len(PREFIX), len(text), text[len(PREFIX) : cursor])

    def items(self, span: CompletionSpan) -> list[CompletionItem]:
        models = offered_models(self.session)
        in_use = self.session.model
        query = span.query.strip()
        ranked = [m for m in models if query.lower() in m.lower()] if query else models
        if query and not ranked and (near := closest(query, models)) is not None:
            ranked = [near]
        return [
            CompletionItem(model, model, "in use" if model == in_use else "", submit_on_enter=True)
            for model in ranked
        ]
