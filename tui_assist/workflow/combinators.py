"""The five combinators, after the common agent-workflow patterns.

Each combinator is itself a `Step`, so they nest freely, and each runs its children through
`ctx.run`, so every child is a node under the combinator's node. What each one guarantees:

- `Chain` runs two steps in order; `a.then(b).then(c)` is `Chain(Chain(a, b), c)`.
- `Route` lets a classifier pick one branch from a closed set of labels. A label outside the set
  is a validation failure (`RouteError`), never a new route; declining is an explicit branch.
- `Parallel` fans one input out to several steps in an `asyncio.TaskGroup` and merges the results.
  A failing branch cancels its siblings (they report `cancelled`) and its error propagates.
- `OrchestratorWorkers` has a planner produce subtasks, runs a worker on each with bounded
  concurrency, and lets a synthesizer merge the results.
- `Refine` is the evaluator-optimizer loop: generate, evaluate, revise with the feedback, within
  a round budget that is checked before each round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, cast

from tui_assist.core.budget import BudgetExhausted
from tui_assist.core.events import Verdict
from tui_assist.workflow.step import In, Out, Step, WorkflowContext, summarize

Mid = TypeVar("Mid")
Sub = TypeVar("Sub")
Res = TypeVar("Res")
X = TypeVar("X")
D = TypeVar("D")
J = TypeVar("J", bound="Judged")


class RouteError(ValueError):
    """A route's classifier returned a label outside the route's closed set."""


class Chain(Step[In, Out]):
    """`first`, then `second` on its output."""

    __slots__ = ("first", "second")
    node_kind = "chain"

    def __init__(self, first: Step[In, Mid], second: Step[Mid, Out], *, label: str = "chain") -> None:
        super().__init__(label)
        self.first: Step[In, Any] = first
        self.second: Step[Any, Out] = second

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The two steps, in order."""
        return (self.first, self.second)

    async def run(self, input: In, ctx: WorkflowContext) -> Out:
        """Run `first` on the input, then `second` on its output."""
        middle = await ctx.run(self.first, input)
        return await ctx.run(self.second, middle)


class Route(Step[In, Out]):
    """A classifier picks one branch by label; the branch runs on the same input.

    The labels are the keys of `branches`, plus `fallback_label` when a fallback is given: the
    classifier declines by returning it. Any other label raises `RouteError`.
    """

    __slots__ = ("classifier", "branches", "fallback", "fallback_label", "_table")
    node_kind = "route"

    def __init__(
        self,
        classifier: Step[In, str],
        branches: Mapping[str, Step[In, Out]],
        *,
        fallback: Step[In, Out] | None = None,
        fallback_label: str = "fallback",
        label: str = "route",
    ) -> None:
        """Build a route.

        Args:
            classifier: Returns one label of the closed set for an input.
            branches: One step per label.
            fallback: The explicit decline branch, chosen by `fallback_label`.
            fallback_label: The label that picks `fallback`.
            label: The route's node label.

        Raises:
            ValueError: when there are no branches, or `fallback_label` is also a branch label.
        """
        super().__init__(label)
        if not branches:
            raise ValueError("a route needs at least one branch")
        if fallback is not None and fallback_label in branches:
            raise ValueError(f"fallback label {fallback_label!r} is also a branch label")
        self.classifier = classifier
        self.branches: dict[str, Step[In, Out]] = dict(branches)
        self.fallback = fallback
        self.fallback_label = fallback_label
        self._table = dict(self.branches)
        if fallback is not None:
            self._table[fallback_label] = fallback

    @property
    def labels(self) -> tuple[str, ...]:
        """The closed set of labels the classifier may return (the fallback's last)."""
        return tuple(self._table)

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The classifier, then every branch (the fallback last)."""
        return (self.classifier, *self._table.values())

    async def run(self, input: In, ctx: WorkflowContext) -> Out:
        """Classify the input and run the chosen branch on it; the node's outcome is the label.

        Raises:
            RouteError: when the classifier's label is not one of `labels`.
        """
        chosen = await ctx.run(self.classifier, input)
        branch = self._table.get(chosen) if isinstance(chosen, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        if branch is None:
            raise RouteError(
                f"route {self.label!r}: classifier {self.classifier.label!r} returned {chosen!r}, "
                f"which is not one of {', '.join(map(repr, self._table))}"
            )
        ctx.outcome = chosen
        return await ctx.run(branch, input)


def _unwrap(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The single error of a task group, or the group when several branches failed."""
    if len(group.exceptions) != 1:
        return group
    error = group.exceptions[0]
    error.__suppress_context__ = True  # the group only repeats it; an explicit cause still shows
    return error


async def _gather(coros: Sequence[Coroutine[Any, Any, X]]) -> list[X]:
    """Run coroutines in a task group; the first failure cancels the rest and is raised."""
    tasks: list[asyncio.Task[X]] = []
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(coro) for coro in coros]
    except ExceptionGroup as failed:
        raise _unwrap(failed)  # noqa: B904 - the group's context is suppressed on purpose
    return [task.result() for task in tasks]


class Parallel(Step[In, Out]):
    """Fan the input out to every branch at once, gather the results in order, merge them.

    If a branch fails, the others are cancelled (their nodes report `cancelled`) and the branch's
    error is raised as it is; an `ExceptionGroup` only when several failed together.
    """

    __slots__ = ("branches", "merge")
    node_kind = "parallel"

    def __init__(
        self, branches: Sequence[Step[In, Mid]], merge: Step[list[Mid], Out], *, label: str = "parallel"
    ) -> None:
        """Build a fan-out.

        Args:
            branches: The steps to run concurrently on the same input.
            merge: Turns the branch results, in branch order, into the output.
            label: The node label.

        Raises:
            ValueError: when there are no branches.
        """
        super().__init__(label)
        if not branches:
            raise ValueError("a parallel step needs at least one branch")
        self.branches: tuple[Step[In, Any], ...] = tuple(branches)
        self.merge: Step[list[Any], Out] = merge

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The branches, then the merge."""
        return (*self.branches, self.merge)

    async def run(self, input: In, ctx: WorkflowContext) -> Out:
        """Run every branch concurrently, then merge."""
        results = await _gather([ctx.run(branch, input) for branch in self.branches])
        return await ctx.run(self.merge, results)


@dataclass(frozen=True, slots=True)
class Synthesis(Generic[X, Sub, Res]):
    """What an orchestrator's synthesizer receives."""

    input: X
    """The orchestrator's input."""
    subtasks: tuple[Sub, ...]
    """The planner's subtasks, in order."""
    results: tuple[Res, ...]
    """The workers' results, one per subtask, in the same order."""


class OrchestratorWorkers(Step[In, Out]):
    """Plan subtasks, run a worker on each (at most `max_concurrency` at a time), synthesize.

    Workers run in a task group like `Parallel`'s branches; a worker waiting for a slot has not
    started, so its node appears only when it runs. Worker nodes are labelled `worker[i]`.
    """

    __slots__ = ("planner", "worker", "synthesizer", "max_concurrency")
    node_kind = "orchestrator"

    def __init__(
        self,
        planner: Step[In, Sequence[Sub]],
        worker: Step[Sub, Res],
        synthesizer: Step[Synthesis[Any, Sub, Res], Out],
        *,
        max_concurrency: int = 4,
        label: str = "orchestrator",
    ) -> None:
        """Build an orchestrator.

        Args:
            planner: Splits the input into subtasks.
            worker: Runs one subtask.
            synthesizer: Merges the input, subtasks and results into the output.
            max_concurrency: Workers that may run at once.
            label: The node label.

        Raises:
            ValueError: when `max_concurrency` is below 1.
        """
        super().__init__(label)
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.planner: Step[In, Sequence[Any]] = planner
        self.worker: Step[Any, Any] = worker
        self.synthesizer: Step[Synthesis[Any, Any, Any], Out] = synthesizer
        self.max_concurrency = max_concurrency

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The planner, the worker and the synthesizer."""
        return (self.planner, self.worker, self.synthesizer)

    async def run(self, input: In, ctx: WorkflowContext) -> Out:
        """Plan, work with bounded concurrency, then synthesize."""
        subtasks = tuple(await ctx.run(self.planner, input))
        slots = asyncio.Semaphore(self.max_concurrency)
        label = self.worker.label

        async def work(index: int, subtask: object) -> object:
            async with slots:
                return await ctx.run(self.worker, subtask, label=f"{label}[{index}]")

        results = await _gather([work(i, s) for i, s in enumerate(subtasks, 1)])
        return await ctx.run(self.synthesizer, Synthesis(input, subtasks, tuple(results)))


class Judged(Protocol):
    """What a refine evaluator returns: a verdict and feedback (core's `Critique` is one)."""

    @property
    def verdict(self) -> Verdict:
        """`pass` ends the loop; `revise` asks for another round."""
        ...

    @property
    def feedback(self) -> str:
        """What to change, given to the next round's generator."""
        ...


@dataclass(frozen=True, slots=True)
class Judgement:
    """A plain evaluator result."""

    verdict: Verdict
    feedback: str = ""


@dataclass(frozen=True, slots=True)
class Attempt(Generic[X, D]):
    """What a refine generator receives each round."""

    input: X
    """The refine step's input."""
    round: int
    """The round, from 1."""
    previous: D | None
    """The previous round's draft (`None` in round 1)."""
    feedback: str
    """The previous round's feedback (empty in round 1)."""


@dataclass(frozen=True, slots=True)
class Candidate(Generic[X, D]):
    """What a refine evaluator receives: the input and the round's draft."""

    input: X
    round: int
    draft: D


@dataclass(frozen=True, slots=True)
class RoundResult(Generic[D, J]):
    """One finished refine round."""

    round: int
    draft: D
    judgement: J


RefineOutcome = Literal["passed", "max_rounds", "budget_exhausted"]


@dataclass(frozen=True, slots=True)
class Refined(Generic[D, J]):
    """A refine loop's result: the last draft and how the loop ended."""

    draft: D
    """The last round's draft."""
    judgement: J
    """The last round's judgement."""
    outcome: RefineOutcome
    """`passed`, `max_rounds` (the round budget ran out), or `budget_exhausted`."""
    rounds: tuple[RoundResult[D, J], ...]
    """Every finished round, in order."""
    error: str | None = None
    """Why the budget stopped the loop, when it did."""

    @property
    def passed(self) -> bool:
        """Whether the evaluator accepted the last draft."""
        return self.outcome == "passed"


class Refine(Step[In, Refined[D, J]]):
    """Evaluator-optimizer: generate a draft, evaluate it, revise with the feedback.

    Each round is a `round` node holding the generator's and the evaluator's nodes: its detail is
    what the generator was given (`generate.summarize_input`), its outcome the verdict, and its
    output the draft (`generate.summarize_output`). The round
    budget is checked before a round starts. When the run's budget (steps, model requests, tokens)
    stops a round, that round ends with outcome `budget_exhausted` (a stop, not a failure) and the
    loop returns the last finished round's draft with the same outcome; if it stops the first
    round, `BudgetExhausted` propagates, since there is no draft to return.
    """

    __slots__ = ("generate", "evaluate", "max_rounds")
    node_kind = "refine"

    def __init__(
        self,
        generate: Step[Attempt[In, D], D],
        evaluate: Step[Candidate[In, D], J],
        *,
        max_rounds: int = 3,
        label: str = "refine",
    ) -> None:
        """Build a refine loop.

        Args:
            generate: Drafts (round 1) or revises (later rounds, with the previous draft and feedback).
            evaluate: Judges a draft: `pass`, or `revise` with feedback.
            max_rounds: Rounds the loop may run.
            label: The node label.

        Raises:
            ValueError: when `max_rounds` is below 1.
        """
        super().__init__(label)
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.generate = generate
        self.evaluate = evaluate
        self.max_rounds = max_rounds

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The generator and the evaluator."""
        return (self.generate, self.evaluate)

    def summarize_output(self, value: object) -> str:
        """The last draft, not the whole result."""
        if isinstance(value, Refined):
            return summarize(cast("Refined[object, Judged]", value).draft)
        return summarize(value)

    async def run(self, input: In, ctx: WorkflowContext) -> Refined[D, J]:
        """Run rounds until a draft passes or the round budget is spent.

        Raises:
            BudgetExhausted: when the run's budget stops the first round.
        """
        rounds: list[RoundResult[D, J]] = []
        previous: D | None = None
        feedback = ""
        for index in range(1, self.max_rounds + 1):
            ended: RoundResult[D, J] | BudgetExhausted
            attempt = Attempt(input, index, previous, feedback)
            detail = self.generate.summarize_input(attempt)
            with ctx.node("round", f"round {index}", detail=detail) as round_ctx:
                try:
                    draft = await round_ctx.run(self.generate, attempt)
                    round_ctx.output = self.generate.summarize_output(draft)
                    judgement = await round_ctx.run(self.evaluate, Candidate(input, index, draft))
                    round_ctx.outcome = judgement.verdict
                    ended = RoundResult(index, draft, judgement)
                except BudgetExhausted as exc:
                    # a budget stop is an outcome of the round, not a failure of it
                    round_ctx.outcome, ended = "budget_exhausted", exc
            if isinstance(ended, BudgetExhausted):
                if not rounds:
                    raise ended
                last = rounds[-1]
                ctx.outcome = "budget_exhausted"
                return Refined(last.draft, last.judgement, "budget_exhausted", tuple(rounds), str(ended))
            rounds.append(ended)
            if ended.judgement.verdict == "pass":
                ctx.outcome = "passed"
                return Refined(ended.draft, ended.judgement, "passed", tuple(rounds))
            previous, feedback = ended.draft, ended.judgement.feedback
        last = rounds[-1]
        ctx.outcome = "max_rounds"
        return Refined(last.draft, last.judgement, "max_rounds", tuple(rounds))
