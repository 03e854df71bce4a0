from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from tests.workflow.helpers import assert_balanced, finished, started, status_by_label
from tui_assist.core.budget import BudgetExhausted
from tui_assist.core.conversation import Usage
from tui_assist.core.critic import Critique
from tui_assist.core.observer import RecordingObserver
from tui_assist.workflow import (
    Attempt,
    Candidate,
    FunctionStep,
    Judgement,
    OrchestratorWorkers,
    Parallel,
    Refine,
    Route,
    RouteError,
    Synthesis,
    WorkflowBudget,
    WorkflowBudgetTracker,
    node_shape,
    run_reporting,
    step,
)

# --- Route -------------------------------------------------------------------------------------


@step
async def first_word(text: str) -> str:
    return text.split()[0]


@step
async def to_network(text: str) -> str:
    return f"network team: {text}"


@step
async def to_accounts(text: str) -> str:
    return f"accounts team: {text}"


@step
async def decline(text: str) -> str:
    return "sent to triage"


ROUTE = Route(
    first_word, {"vpn": to_network, "password": to_accounts}, fallback=decline, fallback_label="other"
)


async def test_route_runs_the_branch_the_classifier_picked() -> None:
    observer = RecordingObserver()
    assert await run_reporting(ROUTE, "vpn drops", observer) == "network team: vpn drops"
    assert node_shape(observer.events) == "Route(first_word, to_network)"
    route = started(observer.events)[0]
    assert finished(observer.events)[route.node_id].outcome == "vpn"
    assert ROUTE.labels == ("vpn", "password", "other")
    assert ROUTE.describe() == "Route(first_word, to_network, to_accounts, decline)"
    assert_balanced(observer.events)


async def test_route_declines_only_through_its_explicit_fallback() -> None:
    observer = RecordingObserver()
    assert await run_reporting(ROUTE, "other things", observer) == "sent to triage"
    assert finished(observer.events)[started(observer.events)[0].node_id].outcome == "other"


async def test_an_unknown_label_is_a_validation_failure_not_a_new_route() -> None:
    observer = RecordingObserver()
    with pytest.raises(
        RouteError, match=r"returned 'printer', which is not one of 'vpn', 'password', 'other'"
    ):
        await run_reporting(ROUTE, "printer jams", observer)
    assert status_by_label(observer.events) == {"route": "failed", "first_word": "done"}
    assert_balanced(observer.events)


async def test_a_route_without_fallback_rejects_what_it_does_not_know() -> None:
    strict = Route(first_word, {"vpn": to_network})
    with pytest.raises(RouteError):
        await run_reporting(strict, "fallback", None)


def test_route_construction_is_validated() -> None:
    with pytest.raises(ValueError, match="at least one branch"):
        Route(first_word, {})
    with pytest.raises(ValueError, match="also a branch label"):
        Route(first_word, {"vpn": to_network}, fallback=decline, fallback_label="vpn")


# --- Parallel ----------------------------------------------------------------------------------


def voter(name: str, answer: str, barrier: asyncio.Barrier | None = None) -> FunctionStep[str, str]:
    async def vote(text: str) -> str:
        if barrier is not None:
            await barrier.wait()  # only returns if every voter runs at the same time
        return answer

    return step(label=name)(vote)


@step
async def majority(votes: Sequence[str]) -> str:
    return max(sorted(set(votes)), key=votes.count)


async def test_parallel_runs_branches_concurrently_and_merges_in_order() -> None:
    barrier = asyncio.Barrier(3)
    seen: list[list[str]] = []

    @step
    async def merge(votes: list[str]) -> str:
        seen.append(votes)
        return await majority.fn(votes)

    fan = Parallel(
        [voter("v1", "network", barrier), voter("v2", "accounts", barrier), voter("v3", "network", barrier)],
        merge,
    )
    observer = RecordingObserver()
    assert await asyncio.wait_for(run_reporting(fan, "t", observer), 2) == "network"
    assert seen == [["network", "accounts", "network"]]
    assert node_shape(observer.events) == "Parallel(v1, v2, v3, merge)"
    nodes = started(observer.events)
    assert all(n.parent_id == nodes[0].node_id for n in nodes[1:])
    assert_balanced(observer.events)


async def test_a_failing_branch_cancels_its_siblings_cleanly() -> None:
    gate = asyncio.Event()
    cleaned: list[str] = []

    async def slow(text: str) -> str:
        try:
            await gate.wait()
            return "never"
        finally:
            cleaned.append("slow")

    async def broken(text: str) -> str:
        await asyncio.sleep(0)
        raise LookupError("classifier crashed")

    fan = Parallel([step(label="slow")(slow), step(label="broken")(broken)], majority)
    observer = RecordingObserver()
    with pytest.raises(LookupError, match="classifier crashed"):
        await run_reporting(fan, "t", observer)
    assert cleaned == ["slow"]
    assert status_by_label(observer.events) == {"parallel": "failed", "slow": "cancelled", "broken": "failed"}
    assert_balanced(observer.events)


async def test_several_failing_branches_raise_a_group() -> None:
    async def bad(text: str) -> str:
        raise ValueError(text)

    fan = Parallel([step(label="x")(bad), step(label="y")(bad)], majority)
    with pytest.raises(ExceptionGroup) as info:
        await run_reporting(fan, "t", None)
    assert [str(e) for e in info.value.exceptions] == ["t", "t"]


async def test_cancelling_a_run_cancels_every_open_node() -> None:
    entered = asyncio.Event()

    async def hang(text: str) -> str:
        entered.set()
        await asyncio.Event().wait()
        return text

    flow = first_word.then(Parallel([step(label="h1")(hang), step(label="h2")(hang)], majority))
    observer = RecordingObserver()
    task = asyncio.create_task(run_reporting(flow, "vpn down", observer))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert status_by_label(observer.events) == {
        "chain": "cancelled",
        "first_word": "done",
        "parallel": "cancelled",
        "h1": "cancelled",
        "h2": "cancelled",
    }
    assert_balanced(observer.events)


def test_parallel_needs_a_branch() -> None:
    with pytest.raises(ValueError):
        Parallel([], majority)


# --- OrchestratorWorkers -----------------------------------------------------------------------


@step
async def split(text: str) -> list[str]:
    return [part.strip() for part in text.split(";") if part.strip()]


async def test_orchestrator_plans_works_with_bounded_concurrency_and_synthesizes() -> None:
    running = 0
    peak = 0

    @step
    async def work(part: str) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001 * len(part))
        running -= 1
        return len(part)

    @step
    async def synthesize(done: Synthesis[str, str, int]) -> str:
        return " ".join(f"{s}={r}" for s, r in zip(done.subtasks, done.results, strict=True))

    flow = OrchestratorWorkers(split, work, synthesize, max_concurrency=2)
    observer = RecordingObserver()
    out = await run_reporting(flow, "aaaa; b; ccc; dd; e", observer)
    assert out == "aaaa=4 b=1 ccc=3 dd=2 e=1"
    assert peak == 2
    assert node_shape(observer.events).startswith("OrchestratorWorkers(split, work[")
    labels = {s.label for s in started(observer.events)}
    assert {f"work[{i}]" for i in range(1, 6)} <= labels
    assert_balanced(observer.events)


async def test_a_failing_worker_cancels_the_others_and_skips_synthesis() -> None:
    @step
    async def work(part: str) -> int:
        if part == "bad":
            raise RuntimeError("worker failed")
        await asyncio.sleep(1)
        return 0

    @step
    async def synthesize(done: Synthesis[str, str, int]) -> int:
        return sum(done.results)

    observer = RecordingObserver()
    with pytest.raises(RuntimeError, match="worker failed"):
        await run_reporting(OrchestratorWorkers(split, work, synthesize), "ok; bad; ok2", observer)
    statuses = status_by_label(observer.events)
    assert statuses["work[2]"] == "failed"
    assert statuses["work[1]"] == statuses["work[3]"] == "cancelled"
    assert "synthesize" not in statuses
    assert_balanced(observer.events)


def test_orchestrator_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError):
        OrchestratorWorkers(split, split, split, max_concurrency=0)  # type: ignore[arg-type]


# --- Refine ------------------------------------------------------------------------------------

REQUIRED = ("greeting", "ticket", "next step")


@step
async def draft(attempt: Attempt[str, str]) -> str:
    if attempt.previous is None:
        return "hello"
    missing = attempt.feedback.split(", ")
    return attempt.previous + " " + " ".join(missing[:1])  # fixes one item per round


@step
async def check(candidate: Candidate[str, str]) -> Judgement:
    missing = [item for item in REQUIRED[1:] if item not in candidate.draft]
    return Judgement("pass") if not missing else Judgement("revise", ", ".join(missing))


async def test_refine_revises_with_feedback_until_the_draft_passes() -> None:
    observer = RecordingObserver()
    result = await run_reporting(Refine(draft, check, max_rounds=4), "ticket 7", observer)
    assert result.passed and result.outcome == "passed"
    assert result.draft == "hello ticket next step"
    assert [r.judgement.verdict for r in result.rounds] == ["revise", "revise", "pass"]
    assert node_shape(observer.events) == (
        "Refine(round 1(draft, check), round 2(draft, check), round 3(draft, check))"
    )
    ends = finished(observer.events)
    rounds = [s for s in started(observer.events) if s.node_kind == "round"]
    assert [ends[r.node_id].outcome for r in rounds] == ["revise", "revise", "pass"]
    assert ends[started(observer.events)[0].node_id].outcome == "passed"
    assert ends[started(observer.events)[0].node_id].output == "hello ticket next step"
    assert_balanced(observer.events)


async def test_refine_stops_at_its_round_budget() -> None:
    calls = 0

    @step
    async def counting(attempt: Attempt[str, str]) -> str:
        nonlocal calls
        calls += 1
        return "hello"

    result = await run_reporting(Refine(counting, check, max_rounds=2), "t", None)
    assert (result.outcome, len(result.rounds), calls) == ("max_rounds", 2, 2)
    assert not result.passed and result.judgement.feedback == "ticket, next step"


async def test_refine_returns_the_last_draft_when_the_run_budget_runs_out() -> None:
    # refine + (round: draft + check) x2 = 5 steps; the third round's draft is refused
    budget = WorkflowBudget(max_steps=5)
    observer = RecordingObserver()
    result = await run_reporting(Refine(draft, check, max_rounds=5), "t", observer, budget=budget)
    assert result.outcome == "budget_exhausted" and result.error == "step budget of 5 reached"
    assert result.draft == "hello ticket" and len(result.rounds) == 2
    ends = finished(observer.events)
    rounds = [ends[s.node_id] for s in started(observer.events) if s.node_kind == "round"]
    assert [(r.status, r.outcome) for r in rounds] == [
        ("done", "revise"),
        ("done", "revise"),
        ("done", "budget_exhausted"),
    ]
    assert ends[started(observer.events)[0].node_id].outcome == "budget_exhausted"
    assert_balanced(observer.events)


async def test_refine_raises_when_the_budget_stops_the_first_round() -> None:
    with pytest.raises(BudgetExhausted):
        await run_reporting(
            Refine(draft, check), "t", None, budget=WorkflowBudgetTracker(WorkflowBudget(max_steps=2))
        )


async def test_refine_accepts_the_cores_critique_as_a_judgement() -> None:
    @step
    async def critic(candidate: Candidate[str, str]) -> Critique:
        return Critique("pass", "fine", Usage(input_tokens=3, output_tokens=1))

    result = await run_reporting(Refine(draft, critic), "t", None)
    assert result.passed and result.judgement.usage.total_tokens == 4


def test_refine_needs_a_round() -> None:
    with pytest.raises(ValueError):
        Refine(draft, check, max_rounds=0)
