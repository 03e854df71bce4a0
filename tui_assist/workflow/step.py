"""Typed steps: the unit every workflow is built from.

A `Step[In, Out]` is a label and `async run(input, ctx) -> Out`. Composition is typed, not
stringly wired: `a.then(b)` only type-checks when `a`'s output type is `b`'s input type, so a
mis-wired chain is a checker error rather than a runtime surprise (In is contravariant and Out
covariant, so a step that accepts `object` fits after any step).

Steps never report themselves. A parent runs a child with `await ctx.run(child, value)`, and that
one call checks the budget *before* the spend, opens the child's node (`NodeStarted` with the
parent's id), and closes it exactly once (`done`, `failed` or `cancelled`) through the core's
`NodeScope`. Leaves therefore stay plain code, and every combinator reports the same way.

Node ids are a per-run random prefix plus a counter: unique like `uuid4`, cheaper to make,
which matters on the per-step hot path (see `bench/bench_workflow.py`).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, overload

from tui_assist.core.budget import Budget, BudgetExhausted, BudgetTracker
from tui_assist.core.events import NodeKind
from tui_assist.core.nodes import NodeScope, new_id
from tui_assist.core.observer import NullObserver, TurnObserver
from tui_assist.core.text import clip

if TYPE_CHECKING:
    from tui_assist.core.conversation import Usage
    from tui_assist.core.model import Provider
    from tui_assist.workflow.combinators import Chain

In = TypeVar("In", contravariant=True)
Out = TypeVar("Out", covariant=True)
I = TypeVar("I")  # noqa: E741 - the input of a step run through a context
O = TypeVar("O")  # noqa: E741 - the output of a step run through a context
T = TypeVar("T")

SUMMARY_LIMIT = 200
"""Characters of an input or output kept in a node's `detail` / `output`."""


def summarize(value: object, limit: int = SUMMARY_LIMIT) -> str:
    """A short, one-value text for a node's `detail` or `output`.

    Args:
        value: Any value; strings are used as they are, anything else through `str()`.
        limit: The longest text returned; longer text is cut and ends with `…`.

    Returns:
        The text, at most `limit` characters long.
    """
    return clip(value if isinstance(value, str) else str(value), limit, fold=False)


class Step(Generic[In, Out]):
    """A typed unit of work: subclass it and implement `run`.

    Attributes:
        label: The node's label in the tree (a leaf's name, or a combinator's kind).
    """

    __slots__ = ("label",)

    node_kind: ClassVar[NodeKind] = "step"
    """How this step's node is shown (`step` for leaves, the combinator's kind otherwise)."""
    reports_itself: ClassVar[bool] = False
    """True for a step that opens its own node (e.g. one wrapping `run_agent`): `ctx.run` then
    checks the budget but opens no node, and the step's `ctx.parent_id` is its caller's."""

    def __init__(self, label: str) -> None:
        self.label = label

    async def run(self, input: In, ctx: WorkflowContext) -> Out:
        """Do the work.

        Args:
            input: The value from the previous step (or the workflow's input).
            ctx: The run's context; run child steps with `await ctx.run(child, value)`.

        Returns:
            The step's output.
        """
        raise NotImplementedError

    def then(self, next: Step[Out, T]) -> Chain[In, T]:
        """This step, then `next` on its output: `Chain(self, next)`.

        Args:
            next: A step whose input type is this step's output type.

        Returns:
            The chain; `a.then(b).then(c)` is `Chain(Chain(a, b), c)`.
        """
        from tui_assist.workflow.combinators import Chain

        return Chain(self, next)

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The steps this one composes, in order (none for a leaf)."""
        return ()

    def describe(self) -> str:
        """The composition as text: a leaf's label, or `Kind(child, ...)` for a combinator."""
        children = self.children
        if not children:
            return self.label
        return f"{type(self).__name__}({', '.join(c.describe() for c in children)})"

    def summarize_input(self, value: In) -> str:
        """The `detail` of this step's `NodeStarted`; override to show less or more."""
        return summarize(value)

    def summarize_output(self, value: object) -> str:
        """The `output` of this step's `NodeFinished` (given the step's output); override to change it."""
        return summarize(value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label!r}>"


class FunctionStep(Step[In, Out]):
    """A step around a plain `async def f(input) -> output`; made by `@step`."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[In], Awaitable[Out]], *, label: str | None = None) -> None:
        super().__init__(label or str(getattr(fn, "__name__", "step")))
        self.fn = fn
        """The wrapped coroutine function."""

    async def run(self, input: In, ctx: WorkflowContext) -> Out:
        """Await the function on `input`."""
        return await self.fn(input)


@overload
def step(fn: Callable[[I], Awaitable[O]], /) -> FunctionStep[I, O]: ...


@overload
def step(*, label: str) -> Callable[[Callable[[I], Awaitable[O]]], FunctionStep[I, O]]: ...


def step(
    fn: Callable[[I], Awaitable[O]] | None = None, /, *, label: str | None = None
) -> FunctionStep[I, O] | Callable[[Callable[[I], Awaitable[O]]], FunctionStep[I, O]]:
    """Turn a plain `async def f(input) -> output` into a `Step`.

    Use it bare (`@step`, labelled with the function's name) or with a label
    (`@step(label="normalize")`). The function's annotations become the step's types.

    Args:
        fn: The coroutine function, when used bare.
        label: The node label, instead of the function's name.

    Returns:
        The step, or a decorator making one.
    """
    if fn is not None:
        return FunctionStep(fn, label=label)

    def decorate(f: Callable[[I], Awaitable[O]]) -> FunctionStep[I, O]:
        return FunctionStep(f, label=label)

    return decorate


@dataclass(frozen=True, slots=True)
class WorkflowBudget:
    """Limits for one workflow run. `None` means unlimited."""

    max_steps: int | None = 10_000
    """Steps (leaves and combinators alike) the run may start."""
    max_model_requests: int | None = None
    """Model calls the run's model-backed leaves may make."""
    max_tokens: int | None = None
    """Tokens (input and output) the run's model calls may spend."""


class WorkflowBudgetTracker:
    """Counts what a run spends and refuses a spend its budget no longer allows.

    Steps are counted here; model requests and tokens by a core `BudgetTracker`, which a host may
    share with the turn the workflow runs in.
    """

    __slots__ = ("budget", "models", "steps")

    def __init__(self, budget: WorkflowBudget | None = None, models: BudgetTracker | None = None) -> None:
        self.budget = budget or WorkflowBudget()
        self.steps = 0
        """Steps started so far."""
        self.models = models or BudgetTracker(
            Budget(
                max_model_requests=self.budget.max_model_requests,
                max_tool_calls=None,
                max_tokens=self.budget.max_tokens,
            )
        )
        """The tracker of model requests and tokens."""

    def before_step(self) -> None:
        """Charge one step.

        Raises:
            BudgetExhausted: if the step limit is already reached.
        """
        limit = self.budget.max_steps
        if limit is not None and self.steps >= limit:
            raise BudgetExhausted(f"step budget of {limit} reached")
        self.steps += 1

    def before_model_request(self) -> None:
        """Charge one model request.

        Raises:
            BudgetExhausted: if the request or token limit is already reached.
        """
        self.models.before_model_request()

    def record(self, usage: Usage) -> None:
        """Add the usage of a finished model call."""
        self.models.record(usage)


class _Run:
    """What every context of one run shares."""

    __slots__ = ("budget", "observer", "provider", "_counter", "_prefix")

    def __init__(
        self, observer: TurnObserver | None, budget: WorkflowBudgetTracker, provider: Provider | None
    ) -> None:
        self.observer = observer
        self.budget = budget
        self.provider = provider
        self._prefix = new_id()[:12] + "."
        self._counter = itertools.count(1)

    def next_id(self) -> str:
        return self._prefix + str(next(self._counter))


class WorkflowContext:
    """What a running step may use: the observer, its node, the budget, the provider.

    One context exists per running node; `ctx.run` makes the child's. Contexts are cheap and
    never shared between concurrent siblings.
    """

    __slots__ = ("_run", "outcome", "output", "parent_id")

    def __init__(self, run: _Run, parent_id: str | None) -> None:
        self._run = run
        self.parent_id = parent_id
        """The running step's own node id: nodes it starts hang under it."""
        self.outcome: str | None = None
        """Set by a step to report a closed outcome (a route's label, a verdict) on its node."""
        self.output: str | None = None
        """Set by a step to report this text as its node's output instead of its summary."""

    @classmethod
    def root(
        cls,
        observer: TurnObserver | None,
        *,
        budget: WorkflowBudget | WorkflowBudgetTracker | None = None,
        provider: Provider | None = None,
        parent_id: str | None = None,
    ) -> WorkflowContext:
        """A context for a new run.

        Args:
            observer: Where node events go; `None` (or a `NullObserver`) runs without reporting:
                the same steps and budget checks, but no events are built at all.
            budget: The run's limits, or a tracker to share with another run.
            provider: The model backend for model-backed leaves, if any.
            parent_id: The node the run's top step hangs under (e.g. a turn's), if any.

        Returns:
            The root context.
        """
        tracker = budget if isinstance(budget, WorkflowBudgetTracker) else WorkflowBudgetTracker(budget)
        if isinstance(observer, NullObserver):
            observer = None  # nobody listens: skip building events on the hot path
        return cls(_Run(observer, tracker, provider), parent_id)

    @property
    def observer(self) -> TurnObserver | None:
        """Where this run's events go (`None` when the run is unobserved)."""
        return self._run.observer

    @property
    def budget(self) -> WorkflowBudgetTracker:
        """The run's budget tracker, shared by all its steps."""
        return self._run.budget

    @property
    def provider(self) -> Provider | None:
        """The configured model backend, if any."""
        return self._run.provider

    def new_node_id(self) -> str:
        """A fresh node id for this run (for a step that reports extra nodes itself)."""
        return self._run.next_id()

    async def run(self, step: Step[I, O], input: I, *, label: str | None = None) -> O:
        """Run `step` on `input` as a child node of this context's node.

        The step budget is charged before the step starts; the child's node reports `done`,
        `failed` or `cancelled` however the step ends.

        Args:
            step: The child step.
            input: Its input.
            label: The node label for this run of the step, instead of `step.label`.

        Returns:
            The step's output.

        Raises:
            BudgetExhausted: when the step budget is spent (before the step starts).
        """
        run = self._run
        run.budget.before_step()
        observer = run.observer
        if observer is None or step.reports_itself:
            return await step.run(input, WorkflowContext(run, self.parent_id))
        node_id = run.next_id()
        child = WorkflowContext(run, node_id)
        with NodeScope(
            observer,
            step.node_kind,
            label or step.label,
            self.parent_id,
            detail=step.summarize_input(input),
            node_id=node_id,
        ) as scope:
            result = await step.run(input, child)
            output = child.output
            scope.finish(
                outcome=child.outcome, output=step.summarize_output(result) if output is None else output
            )
        return result

    def node(self, node_kind: NodeKind, label: str, *, detail: str = "") -> ChildNode:
        """Open a node that is not a step (e.g. a refine round) under this context's node.

        Use it as `with ctx.node("round", "round 1") as round_ctx:` and run the node's children
        through `round_ctx`; set `round_ctx.outcome` / `round_ctx.output` to report them.

        Args:
            node_kind: The node's kind.
            label: The node's label.
            detail: What the node was given.

        Returns:
            A context manager yielding the node's context.
        """
        return ChildNode(self, node_kind, label, detail)


class ChildNode:
    """A non-step node opened by `WorkflowContext.node`; yields the node's context."""

    __slots__ = ("_ctx", "_scope")

    def __init__(self, parent: WorkflowContext, node_kind: NodeKind, label: str, detail: str) -> None:
        run = parent._run  # pyright: ignore[reportPrivateUsage]
        if run.observer is None:
            self._scope = None
            self._ctx = WorkflowContext(run, parent.parent_id)
        else:
            node_id = run.next_id()
            self._scope = NodeScope(
                run.observer, node_kind, label, parent.parent_id, detail=detail, node_id=node_id
            )
            self._ctx = WorkflowContext(run, node_id)

    def __enter__(self) -> WorkflowContext:
        if self._scope is not None:
            self._scope.__enter__()
        return self._ctx

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        scope = self._scope
        if scope is not None:
            scope.finish(outcome=self._ctx.outcome, output=self._ctx.output or "")
            scope.__exit__(exc_type, exc, tb)
