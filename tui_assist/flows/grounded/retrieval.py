# pyright: strict
"""The docs route: a bounded retrieval loop (search, rephrase, search again), then the answer.

Nothing relevant enough ends the run `no_relevant_documents`; otherwise a draft is written from the
passages, citing their chunk ids (the model, or extractive rules offline).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from tui_assist.core.conversation import Message
from tui_assist.core.model import ModelRequest
from tui_assist.flows.grounded.base import WORDS, GroundedDeps, StateStep
from tui_assist.flows.grounded.index import SearchResult, query_terms
from tui_assist.flows.grounded.model_calls import ask_json, complete
from tui_assist.flows.grounded.state import DEFAULT_APPROVAL_RULES, FlowState, Passage
from tui_assist.workflow import Step, WorkflowContext

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class RephraseReply(BaseModel):
    """The model rephraser's reply."""

    query: str


def rephrase_with_glossary(text: str, glossary: Mapping[str, str]) -> str | None:
    """The text with every glossary alias replaced by its corpus term (longest alias first).

    Args:
        text: The question.
        glossary: Alias → term.

    Returns:
        The rephrased text, or None when no alias occurs (a retry would search the same words).
    """
    result = text
    for alias in sorted(glossary, key=len, reverse=True):
        result = re.sub(rf"\b{re.escape(alias)}\b", glossary[alias], result, flags=re.IGNORECASE)
    return result if result != text else None


class RetrieveStep(StateStep):
    """Search the corpus with the question (or its rephrasing); keep the passages above the floor."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("retrieve")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Search once; set `passages` and `top_score`."""
        config = self.deps.config
        query = input.rephrased or input.question
        result: SearchResult = await self.deps.index.search(
            query, top_k=config.top_k, floor=config.relevance_floor
        )
        input.passages = [
            Passage(
                chunk_id=h.chunk.chunk_id,
                doc_id=h.chunk.doc_id,
                title=h.chunk.title,
                heading=h.chunk.heading,
                text=h.chunk.text,
                score=h.score,
            )
            for h in result.hits
        ]
        input.top_score = result.top_score
        ctx.output = f"{len(input.passages)} passage(s), top score {result.top_score:.2f}"
        ctx.outcome = "found" if input.passages else "below_floor"
        return input


class RephraseStep(StateStep):
    """Rephrase the question for the retry: the model, or the corpus glossary offline."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("rephrase")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `rephrased` (None when there is nothing new to search for)."""
        if self.deps.leaves == "model":
            documents = await self.deps.index.documents()
            titles = ", ".join(title for _, title in documents[:40])
            reply = await ask_json(
                ctx,
                input,
                RephraseReply,
                system=(
                    "A search over the user's documents found nothing relevant for their question. "
                    "Rewrite it as a short keyword query in the documents' own vocabulary "
                    f"(document titles: {titles})."
                ),
                prompt=input.question,
                shape='{"query": "..."}',
                max_tokens=self.deps.config.rephrase_max_tokens,
            )
            query = reply.query.strip()
            input.rephrased = query if query and query.casefold() != input.question.casefold() else None
        else:
            input.rephrased = rephrase_with_glossary(input.question, self.deps.glossary)
        ctx.output = input.rephrased or "(nothing to rephrase)"
        return input


class RetrievalLoop(StateStep):
    """Search, and while nothing clears the floor and attempts remain, rephrase and search again.

    The cap is the loop condition's counter (`retrieval_attempts < max_attempts`), never the
    model's choice; a rephrasing that adds nothing new ends the loop early.
    """

    __slots__ = ("retrieve", "rephrase", "max_attempts")

    def __init__(
        self, retrieve: Step[FlowState, FlowState], rephrase: Step[FlowState, FlowState], max_attempts: int
    ) -> None:
        super().__init__("retrieval loop")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.retrieve = retrieve
        self.rephrase = rephrase
        self.max_attempts = max_attempts

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The search and the rephraser."""
        return (self.retrieve, self.rephrase)

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Run the bounded loop."""
        while input.retrieval_attempts < self.max_attempts and not input.passages:
            if input.retrieval_attempts > 0:
                await ctx.run(self.rephrase, input)
                if input.rephrased is None:
                    break
            input.retrieval_attempts += 1
            await ctx.run(self.retrieve, input, label=f"retrieve #{input.retrieval_attempts}")
        ctx.outcome = "found" if input.passages else "none"
        ctx.output = f"{input.retrieval_attempts} attempt(s), {len(input.passages)} passage(s)"
        return input


class NoDocumentsStep(StateStep):
    """End the run: nothing in the corpus is relevant enough to answer from."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("no documents")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set the outcome `no_relevant_documents`."""
        input.outcome = "no_relevant_documents"
        top = input.top_score or 0.0
        input.note = (
            f"no passage cleared the relevance floor of {self.deps.config.relevance_floor:g} "
            f"(best {top:.2f}) in {input.retrieval_attempts} attempt(s)"
        )
        ctx.outcome = input.outcome
        return input


ANSWER_SYSTEM = (
    "You answer questions using only the passages given, from the user's own documents. Cite each "
    "fact with the passage id in square brackets right after it, e.g. [handbook-expenses#c0002]. "
    "Do not use outside knowledge. If the passages do not answer the question, say so briefly and "
    "cite nothing. Be concise."
)
"""The docs answerer's system prompt."""


class AnswerStep(StateStep):
    """Draft a grounded answer from the passages, citing chunk ids."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("answer")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `draft`."""
        if self.deps.leaves == "model":
            passages = "\n\n".join(
                f"[{p.chunk_id}] {p.title}{' > ' + p.heading if p.heading else ''}\n{p.text}"
                for p in input.passages
            )
            request = ModelRequest(
                system=ANSWER_SYSTEM,
                messages=(Message.user(f"Passages:\n\n{passages}\n\nQuestion: {input.question}"),),
                max_tokens=self.deps.config.answer_max_tokens,
            )
            response = await complete(ctx, input, request)
            input.draft = response.message.text.strip()
        else:
            input.draft = extractive_answer(input)
        ctx.output = input.draft
        return input


def _term_hits(sentence: str, terms: Sequence[str]) -> int:
    words = WORDS.findall(sentence.casefold())
    return sum(1 for t in terms if any(w.startswith(t[: max(4, len(t) - 2)]) for w in words))


def extractive_answer(state: FlowState) -> str:
    """The rules answer: the best-matching sentence of the top passages, each cited.

    When the question asks for a message to be drafted, the sentences are framed as an email
    (which the default approval rules then hold for a person).

    Args:
        state: The run's state, with passages.

    Returns:
        The draft.
    """
    terms = query_terms(f"{state.question} {state.rephrased or ''}")
    parts: list[str] = []
    for passage in state.passages[:2]:
        sentences = [s for s in _SENTENCE.split(passage.text.replace("\n\n", " ")) if s.strip()]
        best = max(sentences, key=lambda s: _term_hits(s, terms))
        if parts and _term_hits(best, terms) == 0:
            continue
        parts.append(f"{best.strip()} [{passage.chunk_id}]")
    body = " ".join(parts)
    if DEFAULT_APPROVAL_RULES[0].matches(state):
        top = state.passages[0]
        subject = f"{top.title}: {top.heading}" if top.heading else top.title
        return f"Subject: {subject}\n\nHello,\n\n{body}\n\nBest regards"
    return body
