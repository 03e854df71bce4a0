# pyright: strict
"""Control policies for documentation tasks, and the independent outcome checker.

The question this module answers is "which change actually helped?". Every policy gets the same
task, the same corpus and the same tools with the same search settings, and one checker grades
them all: the stop is `final`, the citation is the expected page and the answer is the expected
command, character for character. A fluent paraphrase fails.

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
- `model`: the configured provider proposes the decisions as tool calls (`search`, `read`,
  `final`) through the same runtime and validation, with the adaptive loop's budget. Its score is
  reported separately and never mixed with the scripted ones.

The adaptive loop gets one more action than the scripted loop because both of its adaptations
cost one tool call; the scripted loop never uses more than two, so it scores the same with the
bigger budget (a test keeps that true), and the gain is the adaptation, not the budget.

Case sets come from a case's `family`: `refusal` cases expect validation to refuse them and are
reported apart; families starting with `adaptive` form the adaptive set; all others the baseline.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_assist.core.conversation import Message, ToolResultBlock, ToolUseBlock
from tui_assist.core.model import ModelRequest, Provider, ToolSpec
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import NullObserver, TurnObserver
from tui_assist.flows.docs.corpus import (
    MAX_QUESTION_CHARS,
    TOPICS,
    Case,
    Corpus,
    Fixtures,
    Page,
    Task,
    validate_task,
    words,
)
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

PolicyName = Literal["keyword_route", "workflow", "scripted_loop", "adaptive_loop", "model"]
SCRIPTED_POLICIES: tuple[PolicyName, ...] = ("keyword_route", "workflow", "scripted_loop", "adaptive_loop")
"""The policies every bench run compares, in report order."""
CaseSet = Literal["baseline", "adaptive", "all"]
CASE_SETS: tuple[CaseSet, ...] = ("baseline", "adaptive", "all")
REFUSAL_FAMILY = "refusal"
"""Cases of this family expect a refusal: reported on their own, never scored by `outcome`."""
ADAPTIVE_PREFIX = "adaptive"
"""Cases whose family starts with this form the adaptive set; all others form the baseline."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A bounded loop's budget."""

    max_turns: int
    max_tools: int


SCRIPTED_LIMITS = Limits(max_turns=3, max_tools=2)
"""The scripted loop's budget: search, read, final."""
ADAPTIVE_LIMITS = Limits(max_turns=4, max_tools=3)
"""One more action than the scripted loop: a revised search or a second read."""
MODEL_LIMITS = ADAPTIVE_LIMITS
"""The model decides within the adaptive loop's budget."""
NO_MATCH_ANSWER = "No page of the {version} docs matches this question."
"""The scripted loops' final answer when search finds nothing (with no citation)."""


def outcome(case: Case, result: PolicyResult) -> bool:
    """The independent checker: did the run return the exact command with its page?

    Args:
        case: The case with its expectations.
        result: How a policy ended on the case's task.

    Returns:
        True only when the stop is `final`, the citation equals `expected_doc` and the answer
        equals `expected_command`.
    """
    return (
        result.stop == "final"
        and result.citation == case.expected_doc
        and result.answer == case.expected_command
    )


def route_topics(question: str) -> list[str]:
    """The topic words of a question, in `TOPICS` order (what the keyword route sees)."""
    found = words(question)
    return [t for t in TOPICS if t in found]


async def keyword_route(
    task: Task, corpus: Corpus, *, observer: TurnObserver | None = None, parent_id: str | None = None
) -> PolicyResult:
    """Route on topic words: exactly one topic word reads `<topic>-<version>` and answers from it.

    Args:
        task: The task.
        corpus: The pages and glossary.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.

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
                run.note(1, "needs_review", {"topics": topics}, detail)
                return run.finish("needs_review", detail=detail)
            page_id = f"{topics[0]}-{task.version}"
            run.note(1, "route", {"topics": topics}, page_id)
            observation = run.tool(Read(page_id), turn=1, parent_id=node.node_id)
            node.finish(output=f"{topics[0]} -> {observation.summary}")
        if observation.page is None:
            detail = observation.error or "read failed"
            run.note(2, "needs_review", {}, detail)
            return run.finish("needs_review", detail=detail)
        return _answer(run, 2, observation)


async def workflow(
    task: Task, corpus: Corpus, *, observer: TurnObserver | None = None, parent_id: str | None = None
) -> PolicyResult:
    """A fixed two-step workflow: search the question, read the first hit, answer from it.

    Args:
        task: The task.
        corpus: The pages and glossary.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.

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
            run.note(2, "needs_review", {}, detail)
            return run.finish("needs_review", detail=detail)
        with run.step("read", detail=found.hits[0].id) as node:
            page = run.tool(Read(found.hits[0].id), turn=2, parent_id=node.node_id)
            node.finish(output=page.summary)
        if page.page is None:
            detail = page.error or "read failed"
            run.note(3, "needs_review", {}, detail)
            return run.finish("needs_review", detail=detail)
        return _answer(run, 3, page)


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

    Args:
        state: The run so far.

    Returns:
        The next proposal.
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

    Args:
        state: The run so far.

    Returns:
        The next proposal.
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


async def _bounded(
    task: Task,
    corpus: Corpus,
    decide: Decide,
    limits: Limits,
    policy: str,
    observer: TurnObserver | None,
    parent_id: str | None,
) -> PolicyResult:
    """Run a scripted decider through the bounded runtime with its limits."""
    runtime = DocsRuntime(corpus, observer=observer)
    return await runtime.run(
        task, decide, limits.max_turns, limits.max_tools, policy=policy, parent_id=parent_id
    )


async def scripted_loop(
    task: Task, corpus: Corpus, *, observer: TurnObserver | None = None, parent_id: str | None = None
) -> PolicyResult:
    """The scripted policy through the bounded runtime, with 3 turns and 2 tools.

    Args:
        task: The task.
        corpus: The pages and glossary.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.

    Returns:
        How the run ended.
    """
    return await _bounded(
        task, corpus, scripted_decide, SCRIPTED_LIMITS, "scripted_loop", observer, parent_id
    )


async def adaptive_loop(
    task: Task, corpus: Corpus, *, observer: TurnObserver | None = None, parent_id: str | None = None
) -> PolicyResult:
    """The adaptive policy through the bounded runtime, with 4 turns and 3 tools.

    Args:
        task: The task.
        corpus: The pages and glossary.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.

    Returns:
        How the run ended.
    """
    return await _bounded(
        task, corpus, adaptive_decide, ADAPTIVE_LIMITS, "adaptive_loop", observer, parent_id
    )


MODEL_SYSTEM_PROMPT = """\
You answer questions about docuctl, a command line tool, from its documentation, for the staging \
environment only. You act only through tools, exactly one tool call per reply:
- search {query}: the two best pages of the task's documentation version, as id and title.
- read {id}: one page of that version, with the exact staging command it documents.
- final {answer, citation}: ends the task. answer is the page's command copied exactly; citation \
is the id of the page you read it from in this task, or null when no page answers the question.
Only cite a page you have read. You may make at most {max_tools} search or read calls and \
{max_turns} replies in all."""
"""The model policy's system prompt (`{max_tools}` and `{max_turns}` are filled in)."""

MODEL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search",
        "Search the task's documentation version; returns up to two hits as {id, title}.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look for."}},
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "read",
        "Read one page of the task's documentation version by id.",
        {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "A page id, e.g. rollback-v2."}},
            "required": ["id"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "final",
        "Give the final answer: the exact command, and the id of the page it comes from.",
        {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "The exact command."},
                "citation": {
                    "type": ["string", "null"],
                    "description": "The id of a page read in this task, or null.",
                },
            },
            "required": ["answer", "citation"],
            "additionalProperties": False,
        },
    ),
)
"""The tools offered to the model: its only way to propose decisions."""


class _SilentSink:
    def text(self, delta: str) -> None:
        pass

    def retrying(self, attempt: int, error: str) -> None:
        pass


@dataclass
class ModelDecider:
    """A policy backed by a provider: each reply's single tool call is the proposal.

    It keeps the conversation of one run: the task, then each reply and the observation of its
    tool call as a tool result. A reply with no tool call, or several, is proposed as a problem,
    which the runtime stops as `invalid_decision`.

    Args:
        provider: The model backend.
        task: The task (its question and version are all the model is told).
        limits: The run's budget, stated in the system prompt.
        max_tokens: The reply budget of each model call.
    """

    provider: Provider
    task: Task
    limits: Limits = MODEL_LIMITS
    max_tokens: int = 1024
    messages: list[Message] = field(default_factory=lambda: list[Message]())
    _pending: ToolUseBlock | None = None

    def __post_init__(self) -> None:
        if not self.messages:
            prompt = f"Documentation version: {self.task.version}\nQuestion: {self.task.question}"
            self.messages.append(Message.user(prompt))

    @property
    def system(self) -> str:
        """The system prompt with the budget filled in."""
        return MODEL_SYSTEM_PROMPT.replace("{max_tools}", str(self.limits.max_tools)).replace(
            "{max_turns}", str(self.limits.max_turns)
        )

    async def __call__(self, state: LoopState) -> Proposal:
        """Ask the model for the next decision.

        Args:
            state: The run so far; its last observation answers the previous tool call.

        Returns:
            The model's tool call as a proposal.

        Raises:
            ProviderError: when the model call fails.
        """
        if self._pending is not None and state.history:
            observation = state.history[-1]
            result = ToolResultBlock(self._pending.id, observation.text, observation.is_error)
            self.messages.append(Message("user", (result,)))
            self._pending = None
        request = ModelRequest(
            system=self.system, messages=tuple(self.messages), tools=MODEL_TOOLS, max_tokens=self.max_tokens
        )
        response = await self.provider.complete(request, _SilentSink())
        self.messages.append(response.message)
        uses = response.message.tool_uses
        if len(uses) != 1:
            return Proposal(
                "",
                None,
                problem=f"expected exactly one tool call (search, read or final), got {len(uses)}",
            )
        self._pending = uses[0]
        return Proposal(uses[0].name, uses[0].input, call_id=uses[0].id)


async def model_loop(
    task: Task,
    corpus: Corpus,
    provider: Provider,
    *,
    observer: TurnObserver | None = None,
    parent_id: str | None = None,
    limits: Limits = MODEL_LIMITS,
) -> PolicyResult:
    """The model policy: the provider proposes decisions through the bounded runtime.

    Args:
        task: The task (refused before any model call when not valid).
        corpus: The pages and glossary.
        provider: The model backend.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.
        limits: The budget (default: the adaptive loop's).

    Returns:
        How the run ended; a failed model call is `provider_error`.
    """
    runtime = DocsRuntime(corpus, observer=observer)
    decider = ModelDecider(provider, task, limits)
    return await runtime.run(
        task, decider, limits.max_turns, limits.max_tools, policy="model", parent_id=parent_id
    )


PolicyFn = Callable[..., Awaitable[PolicyResult]]
_POLICY_FUNCTIONS: dict[str, PolicyFn] = {
    "keyword_route": keyword_route,
    "workflow": workflow,
    "scripted_loop": scripted_loop,
    "adaptive_loop": adaptive_loop,
}


async def run_policy(
    name: PolicyName,
    task: Task,
    corpus: Corpus,
    *,
    provider: Provider | None = None,
    observer: TurnObserver | None = None,
    parent_id: str | None = None,
) -> PolicyResult:
    """Run one policy by name.

    Args:
        name: A policy name; `model` needs `provider`.
        task: The task.
        corpus: The pages and glossary.
        provider: The model backend, for `model`.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.

    Returns:
        How the run ended.

    Raises:
        ValueError: for an unknown name, or `model` without a provider.
    """
    if name == "model":
        if provider is None:
            raise ValueError("the model policy needs a provider")
        return await model_loop(task, corpus, provider, observer=observer, parent_id=parent_id)
    fn = _POLICY_FUNCTIONS.get(name)
    if fn is None:
        raise ValueError(f"unknown policy {name!r}")
    return await fn(task, corpus, observer=observer, parent_id=parent_id)


def case_kind(case: Case) -> Literal["baseline", "adaptive", "refusal"]:
    """Which set a case belongs to, by its family."""
    if case.family == REFUSAL_FAMILY:
        return "refusal"
    if case.family.startswith(ADAPTIVE_PREFIX):
        return "adaptive"
    return "baseline"


def select_cases(cases: Sequence[Case], which: CaseSet) -> tuple[Case, ...]:
    """The scored cases of a set, in file order (refusal cases are never scored).

    Args:
        cases: Every case.
        which: `baseline`, `adaptive` or `all` (both).

    Returns:
        The selected cases.

    Raises:
        ValueError: for an unknown set.
    """
    if which not in CASE_SETS:
        raise ValueError(f"unknown case set {which!r}: use baseline, adaptive or all")
    kinds = ("baseline", "adaptive") if which == "all" else (which,)
    return tuple(c for c in cases if case_kind(c) in kinds)


@dataclass(frozen=True, slots=True)
class BenchRow:
    """One policy's score over a case set."""

    policy: str
    passed: int
    total: int
    tool_calls: int
    """Tool calls over all the cases (search and read; a final answer is not a tool call)."""

    def to_dict(self) -> dict[str, Any]:
        """`{"policy", "passed", "total", "tool_calls"}`."""
        return {
            "policy": self.policy,
            "passed": self.passed,
            "total": self.total,
            "tool_calls": self.tool_calls,
        }


@dataclass(frozen=True, slots=True)
class BenchReport:
    """Every policy's results on a case set, and the refusal check."""

    cases: tuple[Case, ...]
    results: dict[str, tuple[PolicyResult, ...]]
    """Policy name -> one result per case, in case order (`model` only when asked)."""
    refusals: tuple[tuple[Case, str | None], ...]
    """Each refusal case with the reason validation refused it (None: it was not refused)."""

    def row(self, policy: str) -> BenchRow:
        """The score of one policy."""
        results = self.results[policy]
        passed = sum(outcome(c, r) for c, r in zip(self.cases, results, strict=True))
        return BenchRow(policy, passed, len(self.cases), sum(r.tool_calls for r in results))

    @property
    def rows(self) -> list[BenchRow]:
        """The scripted policies' rows, then `model` when it ran."""
        return [self.row(p) for p in self.results]


async def run_bench(
    fixtures: Fixtures,
    which: CaseSet = "baseline",
    *,
    provider: Provider | None = None,
    observer: TurnObserver | None = None,
) -> BenchReport:
    """Run every policy on every selected case.

    Policies run one after another, case by case, in a fixed order, and share nothing but the
    read-only corpus, so one policy's results never depend on another's (adding one changes no
    other row) and a run repeats exactly.

    Args:
        fixtures: The corpus and the cases.
        which: The case set.
        provider: When given, the `model` policy runs too (on the same cases).
        observer: Where every run's events go; None discards them.

    Returns:
        The report.
    """
    cases = select_cases(fixtures.cases, which)
    names: list[PolicyName] = list(SCRIPTED_POLICIES)
    if provider is not None:
        names.append("model")
    results: dict[str, tuple[PolicyResult, ...]] = {}
    for name in names:
        out: list[PolicyResult] = []
        for case in cases:
            out.append(
                await run_policy(name, case.task, fixtures.corpus, provider=provider, observer=observer)
            )
        results[name] = tuple(out)
    refusals = tuple((c, validate_task(c.task)) for c in fixtures.cases if case_kind(c) == "refusal")
    return BenchReport(cases, results, refusals)
