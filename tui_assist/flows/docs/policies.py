# pyright: strict
"""The scripted control policies for documentation tasks, and the budgets of the bounded loops.

- `keyword_route`: the topic words of the question pick one page; not exactly one topic is
  `needs_review` with no tool call.
- `workflow`: a fixed search, then a read of the first hit.
- `scripted_loop`: the same steps as the workflow, but as decisions through the bounded runtime
  (3 turns, 2 tools). It ties with the workflow on the baseline by construction: that tie is the
  control that shows the runtime itself changes nothing.
- `adaptive_loop`: lets an observation change the next action (4 turns, 3 tools): an empty first
  search is retried once with inflections stripped (`restoring` -> `restore`), and a page that
  defers the question to the other search hit is a conflict that calls for a second read,
  answered from the page it defers to.

The adaptive loop gets one more action than the scripted loop because both of its adaptations
cost one tool call; the scripted loop never uses more than two, so it scores the same with the
bigger budget (a test keeps that true), and the gain is the adaptation, not the budget.

Every policy is called alike, `policy(task, corpus, observer=..., parent_id=...)`: `observer` is
where the run's events go (None discards them), `parent_id` the node the run hangs under, if any.

The model policy is in `model_policy`; `bench` runs them all and grades them with one checker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import NullObserver, TurnObserver
from tui_assist.flows.docs.corpus import MAX_QUESTION_CHARS, TOPICS, Corpus, Page, Task, words
from tui_assist.flows.docs.runtime import (
    Decide,
    DocsRuntime,
    LoopState,
    Observation,
    PolicyResult,
    PolicyRun,
    Proposal,
    Read,
    Search,
)


@dataclass(frozen=True, slots=True)
class Limits:
    """A bounded loop's budget."""

    max_turns: int
    max_tools: int


SCRIPTED_LIMITS = Limits(max_turns=3, max_tools=2)
"""The scripted loop's budget: search, read, final."""
ADAPTIVE_LIMITS = Limits(max_turns=4, max_tools=3)
"""One more action than the scripted loop: a revised search or a second read."""
NO_MATCH_ANSWER = "No page of the {version} docs matches this question."
"""The scripted loops' final answer when search finds nothing (with no citation)."""


def route_topics(question: str) -> list[str]:
    """The topic words of a question, in `TOPICS` order (what the keyword route sees)."""
    found = words(question)
    return [t for t in TOPICS if t in found]


async def keyword_route(
    task: Task, corpus: Corpus, *, observer: TurnObserver | None = None, parent_id: str | None = None
) -> PolicyResult:
    """Route on topic words: exactly one topic word reads `<topic>-<version>` and answers from it.

    Returns:
        `final` with the page's command and id; `needs_review` with 0 tool calls when the
        question has no topic word or several, or with 1 call when the read fails; `refused`
        when the task is not valid.
    """
    with PolicyRun(corpus, task, "keyword_route", observer or NullObserver(), parent_id) as run:
        refused = run.refuse_if_invalid()
        if refused is not None:
            return refused
        topics = route_topics(task.question)
        with NodeScope(run.observer, "route", "keyword route", run.node_id, detail=task.question) as node:
            if len(topics) != 1:
                detail = (
                    "no topic word in the question"
                    if not topics
                    else f"{len(topics)} topic words in the question: {', '.join(topics)}"
                )
                node.finish(outcome="awaiting_approval", output=detail)
                return _needs_review(run, 1, detail, {"topics": topics})
            page_id = f"{topics[0]}-{task.version}"
            run.note(1, "route", {"topics": topics}, page_id)
            observation = run.tool(Read(page_id), turn=1, parent_id=node.node_id)
            node.finish(output=f"{topics[0]} -> {observation.summary}")
        if observation.page is None:
            detail = observation.error or "read failed"
            return _needs_review(run, 2, detail)
        return _answer(run, 2, observation)


async def workflow(
    task: Task, corpus: Corpus, *, observer: TurnObserver | None = None, parent_id: str | None = None
) -> PolicyResult:
    """A fixed two-step workflow: search the question, read the first hit, answer from it.

    Returns:
        `final` with the first hit's command and id (2 tool calls); `needs_review` when the
        search finds nothing (1 call) or the read fails (2 calls); `refused` for an invalid task.
    """
    with PolicyRun(corpus, task, "workflow", observer or NullObserver(), parent_id) as run:
        refused = run.refuse_if_invalid()
        if refused is not None:
            return refused
        with run.step("search", detail=task.question) as node:
            found = run.tool(Search(task.question), turn=1, parent_id=node.node_id)
            node.finish(output=found.summary)
        if not found.hits:
            detail = found.error or "no page matches the question"
            return _needs_review(run, 2, detail)
        with run.step("read", detail=found.hits[0].id) as node:
            page = run.tool(Read(found.hits[0].id), turn=2, parent_id=node.node_id)
            node.finish(output=page.summary)
        if page.page is None:
            detail = page.error or "read failed"
            return _needs_review(run, 3, detail)
        return _answer(run, 3, page)


def _needs_review(
    run: PolicyRun, turn: int, detail: str, data: dict[str, object] | None = None
) -> PolicyResult:
    run.note(turn, "needs_review", data or {}, detail)
    return run.finish("needs_review", detail=detail)


def _answer(run: PolicyRun, turn: int, observation: Observation) -> PolicyResult:
    assert observation.page is not None
    page = observation.page
    run.note(turn, "final", {"answer": page.command, "citation": page.id})
    return run.finish("final", answer=page.command, citation=page.id)


def _final(answer: str, citation: str | None) -> Proposal:
    return Proposal("final", {"answer": answer, "citation": citation})


def _no_match(state: LoopState, search: Observation) -> Proposal:
    return _final(search.error or NO_MATCH_ANSWER.format(version=state.version), None)


async def scripted_decide(state: LoopState) -> Proposal:
    """The scripted loop's policy: search the question, read the first hit, answer from it.

    No hits is a final answer with no citation; a read error is a final answer holding the error
    text and no citation.
    """
    if not state.history:
        return Proposal("search", {"query": state.question})
    last = state.history[-1]
    if isinstance(last.decision, Search):
        if not last.hits:
            return _no_match(state, last)
        return Proposal("read", {"id": last.hits[0].id})
    if last.page is None:
        return _final(last.error or "read failed", None)
    return _final(last.page.command, last.page.id)


_SUFFIXES: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("ing", ("", "e"), 6),
    ("ed", ("", "e"), 5),
    ("es", ("", "e"), 5),
    ("s", ("",), 4),
)
"""(suffix, what replaces it, shortest word it applies to): a deliberately small inflection rule."""


def revise_query(question: str) -> str | None:
    """A second query for a question whose search found nothing: its words with inflections stripped.

    `restoring` gives `restor restore`, `expired` gives `expir expire`, `secrets` gives `secret`.
    Only new words are kept (the original ones already matched nothing), so glossary entries
    and page words for the base forms get a chance.

    Args:
        question: The task's question.

    Returns:
        The revised query, or None when no word has an inflection to strip.
    """
    original = words(question)
    variants: set[str] = set()
    for word in original:
        for suffix, replacements, shortest in _SUFFIXES:
            if word.endswith(suffix) and len(word) >= shortest and not word.endswith("ss"):
                stem = word[: -len(suffix)]
                variants.update(stem + r for r in replacements)
                break
    fresh = sorted(variants - original)
    if not fresh:
        return None
    query = ""
    for variant in fresh:
        candidate = f"{query} {variant}".strip()
        if len(candidate) > MAX_QUESTION_CHARS:
            break
        query = candidate
    return query or None


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def mentions(text: str, page_id: str) -> bool:
    """Whether a text names a page id (as a whole token, case-insensitively)."""
    pattern = rf"(?<![a-z0-9-]){re.escape(page_id.casefold())}(?![a-z0-9-])"
    return re.search(pattern, text.casefold()) is not None


def defers_to(page: Page, other_id: str, question: str) -> bool:
    """Whether a page hands the question over to another page: the conflict signal.

    True when a sentence of the page names `other_id` and shares a word with the question
    (the words of the id itself do not count). A page that merely links elsewhere, about
    something the question does not ask, does not defer.

    Args:
        page: The page just read.
        other_id: Another page's id (the other search hit).
        question: The task's question.

    Returns:
        Whether the two pages conflict about who answers the question.
    """
    asked = words(question)
    for sentence in _SENTENCE_END.split(page.text):
        if mentions(sentence, other_id) and (words(sentence) - words(other_id)) & asked:
            return True
    return False


async def adaptive_decide(state: LoopState) -> Proposal:
    """The adaptive loop's policy: the scripted loop, plus two observation-driven changes.

    - An empty first search is retried once with `revise_query(question)`.
    - When the first page read defers to the other search hit (`defers_to`), the two pages
      conflict about who documents the action; the named page is read too, and the answer
      comes from it.
    """
    if not state.history:
        return Proposal("search", {"query": state.question})
    last = state.history[-1]
    if isinstance(last.decision, Search):
        if last.hits:
            return Proposal("read", {"id": last.hits[0].id})
        revised = revise_query(state.question)
        if len(state.searches) == 1 and revised is not None:
            return Proposal("search", {"query": revised})
        return _no_match(state, last)
    if last.page is None:
        earlier = [o for o in state.history[:-1] if o.page is not None]
        if earlier and earlier[-1].page is not None:
            return _final(earlier[-1].page.command, earlier[-1].page.id)
        return _final(last.error or "read failed", None)
    reads = [o for o in state.history if isinstance(o.decision, Read)]
    hits = next((o.hits for o in reversed(state.history) if o.hits), ())
    if len(reads) == 1:
        for hit in hits:
            if hit.id != last.page.id and defers_to(last.page, hit.id, state.question):
                return Proposal("read", {"id": hit.id})
    return _final(last.page.command, last.page.id)


@dataclass(frozen=True, slots=True)
class BoundedPolicy:
    """A scripted decider run through the bounded runtime with its limits: one policy."""

    name: str
    decide: Decide
    limits: Limits

    async def __call__(
        self,
        task: Task,
        corpus: Corpus,
        *,
        observer: TurnObserver | None = None,
        parent_id: str | None = None,
    ) -> PolicyResult:
        """Run the policy on one task; how the run ended."""
        runtime = DocsRuntime(corpus, observer=observer)
        return await runtime.run(
            task,
            self.decide,
            self.limits.max_turns,
            self.limits.max_tools,
            policy=self.name,
            parent_id=parent_id,
        )


scripted_loop = BoundedPolicy("scripted_loop", scripted_decide, SCRIPTED_LIMITS)
"""The scripted policy through the bounded runtime, with 3 turns and 2 tools."""
adaptive_loop = BoundedPolicy("adaptive_loop", adaptive_decide, ADAPTIVE_LIMITS)
"""The adaptive policy through the bounded runtime, with 4 turns and 3 tools."""
