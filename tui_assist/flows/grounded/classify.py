# pyright: strict
"""Picking the route (`docs`, `data` or `unsupported`), and the explicit decline branch."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel

from tui_assist.flows.grounded.base import GroundedDeps, StateStep, named_table
from tui_assist.flows.grounded.index import query_terms
from tui_assist.flows.grounded.model_calls import ask_json
from tui_assist.flows.grounded.sql import schema_text
from tui_assist.flows.grounded.state import FlowState
from tui_assist.workflow import Step, WorkflowContext

UNSUPPORTED_PATTERNS: tuple[str, ...] = (
    r"\b(poems?|poetry|songs?|lyrics|jokes?|haikus?|limericks?|stories|story)\b",
    r"\b(weather|forecast|stock prices?|horoscopes?|lottery|recipes?)\b",
    r"\b(write|fix|debug|refactor)\b[^.?!]{0,40}\b(code|python|javascript|function|script|program)\b",
)
"""Requests the rules classifier declines outright, whatever words they share with the corpus."""
DATA_CUES = re.compile(
    r"\b(how many|number of|count|total|sum|average|mean|highest|lowest|largest|smallest|maximum|"
    r"minimum|list|show)\b",
    re.IGNORECASE,
)
"""Words that make a question about a named table a data question."""


class ClassifyReply(BaseModel):
    """The model classifier's reply.

    The label is free text here on purpose: the route, not the parser, is the one place that
    checks it against the closed set.
    """

    label: str


class ClassifyStep(Step[FlowState, str]):
    """Pick the route: one cheap model call, or the deterministic rules.

    Rules: decline the request types in `UNSUPPORTED_PATTERNS`; with a data source, a question
    naming one of its tables with a data cue (`how many`, `total`...) is `data`; a question with
    any term the corpus (or its glossary) knows is `docs`; anything else is `unsupported`.
    """

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("classify")
        self.deps = deps

    def summarize_input(self, value: FlowState) -> str:
        """The question."""
        return value.question

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label (validated by the route, not here)."""
        if self.deps.leaves == "model":
            return await self._model(input, ctx)
        return await self._rules(input)

    async def _rules(self, state: FlowState) -> str:
        question = state.question
        if any(re.search(p, question, re.IGNORECASE) for p in UNSUPPORTED_PATTERNS):
            return "unsupported"
        if named_table(question, await self.deps.tables()) is not None and DATA_CUES.search(question):
            return "data"
        if await self.deps.index.known_terms(query_terms(question)) or glossary_hits(
            question, self.deps.glossary
        ):
            return "docs"
        return "unsupported"

    async def _model(self, state: FlowState, ctx: WorkflowContext) -> str:
        documents = await self.deps.index.documents()
        titles = "\n".join(f"- {title}" for _, title in documents[:40]) or "- (none)"
        tables = await self.deps.tables()
        data = f"A SQLite database with these tables:\n{schema_text(tables)}" if tables else "No database."
        system = (
            "You route questions for an assistant that answers only from a user's own documents and "
            "data. Labels: `docs` (the documents below can answer it), `data` (it needs numbers or "
            "rows from the database below), `unsupported` (anything else: general knowledge, "
            "creative writing, code, chit-chat).\n\n"
            f"Documents:\n{titles}\n\n{data}"
        )
        reply = await ask_json(
            ctx,
            state,
            ClassifyReply,
            system=system,
            prompt=state.question,
            shape='{"label": "docs" | "data" | "unsupported"}',
            max_tokens=self.deps.config.classify_max_tokens,
        )
        return reply.label.strip().lower()


def glossary_hits(text: str, glossary: Mapping[str, str]) -> list[str]:
    """The glossary aliases that occur in the text (as whole words, any case)."""
    return [alias for alias in glossary if re.search(rf"\b{re.escape(alias)}\b", text, re.IGNORECASE)]


class DeclineStep(StateStep):
    """The explicit decline branch: the flow was not built for this question."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("decline")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set the outcome `out_of_scope`."""
        input.outcome = "out_of_scope"
        input.note = "the question is not about the documents or data this assistant answers from"
        ctx.outcome = input.outcome
        return input
