# pyright: strict
"""Which change actually helped? Every policy on the same cases, graded by one independent checker.

Every policy gets the same task, the same corpus and the same tools with the same search settings,
and one checker grades them all: the stop is `final`, the citation is the expected page and the
answer is the expected command, character for character. A fluent paraphrase fails.

Case sets come from a case's `family`: `refusal` cases expect validation to refuse them and are
reported apart; families starting with `adaptive` form the adaptive set; all others the baseline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tui_assist.core.model import Provider
from tui_assist.core.observer import TurnObserver
from tui_assist.flows.docs.corpus import Case, Corpus, Fixtures, Task, validate_task
from tui_assist.flows.docs.model_policy import model_loop
from tui_assist.flows.docs.policies import adaptive_loop, keyword_route, scripted_loop, workflow
from tui_assist.flows.docs.runtime import PolicyResult

PolicyName = Literal["keyword_route", "workflow", "scripted_loop", "adaptive_loop", "model"]
SCRIPTED_POLICIES: tuple[PolicyName, ...] = ("keyword_route", "workflow", "scripted_loop", "adaptive_loop")
"""The policies every bench run compares, in report order."""
CaseSet = Literal["baseline", "adaptive", "all"]
CASE_SETS: tuple[CaseSet, ...] = ("baseline", "adaptive", "all")
REFUSAL_FAMILY = "refusal"
"""Cases of this family expect a refusal: reported on their own, never scored by `outcome`."""
ADAPTIVE_PREFIX = "adaptive"
"""Cases whose family starts with this form the adaptive set; all others form the baseline."""


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
