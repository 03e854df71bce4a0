# pyright: strict
"""The bounded decision runtime: how a policy (scripted code or a model) acts safely.

A policy only *proposes*. Each turn the runtime asks it for one decision, validates the proposal
(exactly the fields of `search {query}`, `read {id}` or `final {answer, citation}`, each a bounded,
non-blank string; a citation may also be null), checks the budgets before spending, runs the tool
itself with fixed search settings, and hands the observation back. Whatever the policy is, the
same six ways to stop apply (after task validation, which may refuse the task first), so a
scripted loop and a model are measured by the same rules:

- `final`: a valid final decision whose citation (if any) was read in this run;
- `invalid_decision`: a proposal that is not one of the three shapes;
- `provider_error`: the model behind the policy failed;
- `unread_citation`: a final citation that no successful `read` of this run returned;
- `tool_limit`: a tool call beyond `max_tools` was proposed;
- `turn_limit`: `max_turns` decisions without a final one.

Tool errors (an unknown page, a page of the other version) are observations, never crashes. Every
decision and tool call is an observer event, so a flow panel can draw the run as it happens.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from tui_assist.core.model import ProviderError
from tui_assist.core.nodes import NodeScope, ToolCallScope
from tui_assist.core.observer import NullObserver, TurnObserver
from tui_assist.flows.docs.corpus import (
    MAX_FIELD_CHARS,
    MAX_QUESTION_CHARS,
    Corpus,
    DocsToolError,
    Hit,
    Page,
    Task,
    validate_task,
)

Stop = Literal[
    "final",
    "needs_review",
    "refused",
    "invalid_decision",
    "provider_error",
    "unread_citation",
    "tool_limit",
    "turn_limit",
]
"""How a policy run ended. `needs_review` belongs to the fixed routes, `refused` to validation."""

SEARCH_EXPAND = True
"""Search settings shared by the workflow and every loop: glossary expansion on..."""
SEARCH_TOP_K = 2
"""...and two hits."""
MAX_TURNS_RANGE = range(1, 9)
"""`max_turns` the runtime accepts: 1..8."""
MAX_TOOLS_RANGE = range(0, 7)
"""`max_tools` the runtime accepts: 0..6."""
MAX_ANSWER_CHARS = 500
"""Longest final answer."""
ACTIONS = ("search", "read", "final")
"""The decisions a policy may propose."""

_FIELDS: dict[str, tuple[str, ...]] = {"search": ("query",), "read": ("id",), "final": ("answer", "citation")}
_LIMITS = {
    "query": MAX_QUESTION_CHARS,
    "id": MAX_FIELD_CHARS,
    "answer": MAX_ANSWER_CHARS,
    "citation": MAX_FIELD_CHARS,
}


@dataclass(frozen=True, slots=True)
class Proposal:
    """A decision as a policy proposed it, before the runtime validated anything."""

    name: str
    """`search`, `read` or `final` (anything else is invalid)."""
    input: object
    """The decision's fields; must be a dict with exactly the right keys."""
    call_id: str = ""
    """The model's tool-use id, when a model proposed it."""
    problem: str | None = None
    """Set when the policy could not even form a proposal (e.g. a model reply with no tool call)."""


@dataclass(frozen=True, slots=True)
class Search:
    """A validated `search {query}` decision."""

    query: str
    name: Literal["search"] = "search"

    def to_input(self) -> dict[str, Any]:
        """The decision's fields."""
        return {"query": self.query}


@dataclass(frozen=True, slots=True)
class Read:
    """A validated `read {id}` decision."""

    id: str
    name: Literal["read"] = "read"

    def to_input(self) -> dict[str, Any]:
        """The decision's fields."""
        return {"id": self.id}


@dataclass(frozen=True, slots=True)
class Final:
    """A validated `final {answer, citation}` decision; no citation is `None`."""

    answer: str
    citation: str | None
    name: Literal["final"] = "final"

    def to_input(self) -> dict[str, Any]:
        """The decision's fields."""
        return {"answer": self.answer, "citation": self.citation}


Decision = Search | Read | Final
ToolDecision = Search | Read


class InvalidDecision(ValueError):
    """A proposal that is not exactly one of the three decision shapes."""


def validate_decision(proposal: object) -> Decision:
    """Turn a proposal into a decision, or refuse it.

    Args:
        proposal: What the policy returned (a `Proposal`, or anything else by mistake).

    Returns:
        The validated decision.

    Raises:
        InvalidDecision: when the proposal has a problem, an unknown name, missing or extra
            fields, or a field that is not a non-blank string within its bound (a final
            citation may also be null).
    """
    if not isinstance(proposal, Proposal):
        raise InvalidDecision(f"not a decision: {type(proposal).__name__}")
    if proposal.problem is not None:
        raise InvalidDecision(proposal.problem)
    if proposal.name not in _FIELDS:
        raise InvalidDecision(f"unknown decision {proposal.name!r}: use search, read or final")
    data = proposal.input
    if not isinstance(data, dict):
        raise InvalidDecision(f"{proposal.name}: the input must be an object")
    raw = cast(dict[Any, Any], data)
    expected = _FIELDS[proposal.name]
    if set(raw) != set(expected):
        want = ", ".join(expected)
        got = ", ".join(sorted(str(k) for k in raw)) or "none"
        raise InvalidDecision(f"{proposal.name} takes exactly the fields {want} (got {got})")
    values: dict[str, str | None] = {}
    for key in expected:
        value = raw[key]
        if key == "citation" and value is None:
            values[key] = None
            continue
        if not isinstance(value, str) or not value.strip():
            raise InvalidDecision(f"{proposal.name}: {key} must be a non-blank string")
        if len(value) > _LIMITS[key]:
            raise InvalidDecision(f"{proposal.name}: {key} is longer than {_LIMITS[key]} characters")
        values[key] = value
    match proposal.name:
        case "search":
            return Search(cast(str, values["query"]))
        case "read":
            return Read(cast(str, values["id"]))
        case _:
            return Final(cast(str, values["answer"]), values["citation"])


@dataclass(frozen=True, slots=True)
class Observation:
    """What a tool call returned: hits, a page, or an error message."""

    decision: ToolDecision
    hits: tuple[Hit, ...] = ()
    page: Page | None = None
    error: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether the tool refused the call."""
        return self.error is not None

    @property
    def text(self) -> str:
        """The observation as a policy (or a model) reads it: JSON, or `error: ...`."""
        if self.error is not None:
            return f"error: {self.error}"
        if self.page is not None:
            return json.dumps(self.page.to_dict(), ensure_ascii=False)
        return json.dumps([h.to_dict() for h in self.hits], ensure_ascii=False)

    @property
    def summary(self) -> str:
        """One short line for traces."""
        if self.error is not None:
            return f"error: {self.error}"
        if self.page is not None:
            return f"{self.page.id}: {self.page.command}"
        return ", ".join(h.id for h in self.hits) or "no hits"


@dataclass(frozen=True, slots=True)
class LoopState:
    """What a policy sees when it decides: the task's question and version, and what happened."""

    question: str
    version: str
    turn: int
    """The turn being decided, from 1."""
    max_turns: int
    max_tools: int
    tool_calls: int
    """Tool calls executed so far."""
    history: tuple[Observation, ...]
    """Every executed tool call and its observation, in order."""

    @property
    def read_ids(self) -> frozenset[str]:
        """Pages successfully read in this run: the only valid citations."""
        return frozenset(o.page.id for o in self.history if o.page is not None)

    @property
    def searches(self) -> tuple[Observation, ...]:
        """The search observations so far."""
        return tuple(o for o in self.history if isinstance(o.decision, Search))


Decide = Callable[[LoopState], Awaitable[object]]
"""A policy: given the state, propose the next decision (a `Proposal`)."""


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One decision of a run, as a trace prints it."""

    turn: int
    action: str
    """`search`, `read`, `final`, `route`, or the stop (`needs_review`, `invalid_decision`, ...)."""
    input: dict[str, Any]
    observation: str = ""
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "turn": self.turn,
            "action": self.action,
            "input": self.input,
            "observation": self.observation,
            "is_error": self.is_error,
        }


@dataclass(frozen=True, slots=True)
class PolicyResult:
    """How one policy ended on one task."""

    policy: str
    task_id: str
    stop: Stop
    answer: str | None = None
    citation: str | None = None
    tool_calls: int = 0
    trace: tuple[TraceEntry, ...] = ()
    detail: str = ""
    """Why it stopped, in one line (the refusal reason, the invalid field, the provider error...)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "policy": self.policy,
            "task_id": self.task_id,
            "stop": self.stop,
            "answer": self.answer,
            "citation": self.citation,
            "tool_calls": self.tool_calls,
            "detail": self.detail,
            "trace": [t.to_dict() for t in self.trace],
        }


def flow_outcome(stop: Stop, citation: str | None = None) -> str:
    """The closed flow outcome (DESIGN.md) a stop maps to, for the flow node's `NodeFinished`.

    Args:
        stop: How the run ended.
        citation: The final citation, if any.

    Returns:
        One of `answered`, `no_relevant_documents`, `out_of_scope`, `awaiting_approval`,
        `budget_exhausted`, `unverified`, `error`.
    """
    match stop:
        case "final":
            return "answered" if citation is not None else "no_relevant_documents"
        case "refused":
            return "out_of_scope"
        case "needs_review":
            return "awaiting_approval"
        case "tool_limit" | "turn_limit":
            return "budget_exhausted"
        case "unread_citation":
            return "unverified"
        case _:
            return "error"


@dataclass
class PolicyRun:
    """One policy's run on one task: executes tools, counts them, and reports events and trace.

    Shared by the fixed routes and the bounded runtime, so every policy's tool calls look the
    same to observers and in traces. Use as a context manager around the run: it opens the
    flow node and `finish` closes it with the stop.
    """

    corpus: Corpus
    task: Task
    policy: str
    observer: TurnObserver = field(default_factory=NullObserver)
    parent_id: str | None = None
    tool_calls: int = 0
    trace: list[TraceEntry] = field(default_factory=lambda: list[TraceEntry]())
    history: list[Observation] = field(default_factory=lambda: list[Observation]())
    _scope: NodeScope | None = field(default=None, init=False, repr=False)

    def __enter__(self) -> PolicyRun:
        self._scope = NodeScope(
            self.observer,
            "flow",
            f"{self.policy} · {self.task.id}",
            self.parent_id,
            detail=f"[{self.task.version}] {self.task.question}",
        ).__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._scope is not None
        self._scope.__exit__(*exc)

    @property
    def node_id(self) -> str:
        """The flow node's id (steps hang under it)."""
        assert self._scope is not None
        return self._scope.node_id

    def step(self, label: str, *, detail: str = "") -> NodeScope:
        """A child step node of the flow (a turn, a route, a fixed step)."""
        return NodeScope(self.observer, "step", label, self.node_id, detail=detail)

    def tool(self, decision: ToolDecision, *, turn: int, parent_id: str, call_id: str = "") -> Observation:
        """Execute one tool call with the shared search settings, as events and a trace entry.

        Args:
            decision: The search or read to run.
            turn: The turn number, for the trace.
            parent_id: The step node the call belongs to.
            call_id: The model's tool-use id, if any (else a deterministic one).

        Returns:
            The observation; a tool error is an observation too.
        """
        call_id = call_id or f"{self.policy}-{turn}"
        self.tool_calls += 1
        with ToolCallScope(self.observer, parent_id, call_id, decision.name, decision.to_input()) as scope:
            try:
                match decision:
                    case Search(query=query):
                        hits = self.corpus.search(
                            query, self.task.version, expand=SEARCH_EXPAND, top_k=SEARCH_TOP_K
                        )
                        observation = Observation(decision, hits=tuple(hits))
                    case Read(id=page_id):
                        observation = Observation(decision, page=self.corpus.read(page_id, self.task.version))
            except DocsToolError as exc:
                observation = Observation(decision, error=str(exc))
            self.history.append(observation)
            self.trace.append(
                TraceEntry(
                    turn, decision.name, decision.to_input(), observation.summary, observation.is_error
                )
            )
            scope.finish(observation.text, is_error=observation.is_error)
        return observation

    def note(self, turn: int, action: str, data: dict[str, Any], observation: str = "") -> None:
        """Add a trace entry that is not a tool call (a route, a final decision, a stop)."""
        self.trace.append(TraceEntry(turn, action, data, observation))

    def finish(
        self, stop: Stop, *, answer: str | None = None, citation: str | None = None, detail: str = ""
    ) -> PolicyResult:
        """Close the flow node with the stop and build the result.

        Args:
            stop: How the run ended.
            answer: The final answer, if any.
            citation: The final citation, if any.
            detail: Why it stopped, in one line.

        Returns:
            The policy's result.
        """
        assert self._scope is not None
        output = f"{stop}: {answer}" if answer is not None else stop
        if citation is not None:
            output += f" [{citation}]"
        failed = stop in ("invalid_decision", "provider_error")
        self._scope.finish(
            outcome=flow_outcome(stop, citation),
            output=output if not detail else f"{output} ({detail})",
            error=(detail or stop) if failed else None,
        )
        return PolicyResult(
            policy=self.policy,
            task_id=self.task.id,
            stop=stop,
            answer=answer,
            citation=citation,
            tool_calls=self.tool_calls,
            trace=tuple(self.trace),
            detail=detail,
        )

    def refuse_if_invalid(self) -> PolicyResult | None:
        """Validate the task; a refused task ends the run with 0 tool calls.

        Returns:
            The `refused` result, or None when the task may run.
        """
        reason = validate_task(self.task)
        if reason is None:
            return None
        self.note(0, "refused", {}, reason)
        return self.finish("refused", detail=reason)


class DocsRuntime:
    """Runs a policy as a bounded loop of validated decisions over one corpus.

    Args:
        corpus: The pages and glossary the tools read.
        observer: Where the run's events go (a flow panel, a recorder); None discards them.
    """

    def __init__(self, corpus: Corpus, *, observer: TurnObserver | None = None) -> None:
        self.corpus = corpus
        self.observer: TurnObserver = observer or NullObserver()

    async def run(
        self,
        task: Task,
        decide: Decide,
        max_turns: int,
        max_tools: int,
        *,
        policy: str = "loop",
        parent_id: str | None = None,
    ) -> PolicyResult:
        """Run `decide` on `task` until it stops, within the budgets.

        Args:
            task: The task; refused before any decision when it is not valid.
            decide: The policy proposing each decision.
            max_turns: Decisions allowed, 1..8.
            max_tools: Tool calls allowed, 0..6 (checked before each call).
            policy: The policy's name, for events and the result.
            parent_id: The node the run's flow node hangs under, if any.

        Returns:
            How the run ended, with its trace.

        Raises:
            ValueError: when a budget is out of its range.
        """
        if type(max_turns) is not int or max_turns not in MAX_TURNS_RANGE:
            raise ValueError(f"max_turns must be 1..8, not {max_turns!r}")
        if type(max_tools) is not int or max_tools not in MAX_TOOLS_RANGE:
            raise ValueError(f"max_tools must be 0..6, not {max_tools!r}")
        with PolicyRun(self.corpus, task, policy, self.observer, parent_id) as run:
            refused = run.refuse_if_invalid()
            if refused is not None:
                return refused
            for turn in range(1, max_turns + 1):
                state = LoopState(
                    question=task.question,
                    version=task.version,
                    turn=turn,
                    max_turns=max_turns,
                    max_tools=max_tools,
                    tool_calls=run.tool_calls,
                    history=tuple(run.history),
                )
                with run.step(f"turn {turn}") as step:
                    try:
                        proposal = await decide(state)
                    except ProviderError as exc:
                        detail = str(exc) or type(exc).__name__
                        step.finish(output="provider_error", error=detail)
                        run.note(turn, "provider_error", {}, detail)
                        return run.finish("provider_error", detail=detail)
                    try:
                        decision = validate_decision(proposal)
                    except InvalidDecision as exc:
                        step.finish(output="invalid_decision", error=str(exc))
                        run.note(turn, "invalid_decision", _proposal_input(proposal), str(exc))
                        return run.finish("invalid_decision", detail=str(exc))
                    label = f"{decision.name} {json.dumps(decision.to_input(), ensure_ascii=False)}"
                    if isinstance(decision, Final):
                        return self._final(run, step, turn, decision, label, state)
                    if run.tool_calls >= max_tools:
                        detail = f"{decision.name} would be tool call {run.tool_calls + 1} of {max_tools}"
                        step.finish(outcome="budget_exhausted", output=f"{label}: tool_limit")
                        run.note(turn, "tool_limit", decision.to_input(), detail)
                        return run.finish("tool_limit", detail=detail)
                    call_id = proposal.call_id if isinstance(proposal, Proposal) else ""
                    observation = run.tool(decision, turn=turn, parent_id=step.node_id, call_id=call_id)
                    step.finish(output=f"{label} -> {observation.summary}")
            detail = f"no final decision in {max_turns} turns"
            run.note(max_turns, "turn_limit", {}, detail)
            return run.finish("turn_limit", detail=detail)

    @staticmethod
    def _final(
        run: PolicyRun, step: NodeScope, turn: int, decision: Final, label: str, state: LoopState
    ) -> PolicyResult:
        if decision.citation is not None and decision.citation not in state.read_ids:
            detail = f"cited {decision.citation!r}, which no read of this run returned"
            step.finish(output=f"{label}: unread_citation", error=detail)
            run.note(turn, "unread_citation", decision.to_input(), detail)
            return run.finish(
                "unread_citation", answer=decision.answer, citation=decision.citation, detail=detail
            )
        step.finish(outcome=flow_outcome("final", decision.citation), output=label)
        run.note(turn, "final", decision.to_input())
        return run.finish("final", answer=decision.answer, citation=decision.citation)


def _proposal_input(proposal: object) -> dict[str, Any]:
    if isinstance(proposal, Proposal):
        return {"proposed": proposal.name, "input": proposal.input}
    return {"proposed": repr(proposal)}
