"""`GoalTurn` with the scripted provider and a real shell: checks run, are cited, and decide."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, ToolUseBlock
from tui_assist.core.events import GoalUpdated, NodeStarted, event_from_dict, event_to_dict
from tui_assist.core.goal import GoalSpec, check_result, judge, parse_goal_verdict
from tui_assist.core.observer import ApprovalDecision, RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.goal import GoalProgress, GoalTurn

CHECK = "test -f done.txt"


def goal(tmp_path: Path, script, *, checks=(CHECK,), attempts: int = 3, policy: ApprovalPolicy | None = None):
    provider = ScriptedProvider(script)
    deps = TurnDeps(provider, toolbox_factory(tmp_path), approvals=policy or ApprovalPolicy("allow"))
    return GoalTurn(deps, GoalSpec("make done.txt exist", tuple(checks), attempts)), provider


def touch(name: str = "done.txt") -> list[ToolUseBlock]:
    return [ToolUseBlock("t1", "bash", {"command": f"touch {name}"})]


def goal_lines(observer: RecordingObserver) -> list[tuple[str, int, tuple[int | None, ...]]]:
    return [
        (e.state, e.attempts, tuple(c.exit_code for c in e.checks))
        for e in observer.events
        if isinstance(e, GoalUpdated)
    ]


async def test_checks_that_pass_already_end_achieved_with_no_attempt(tmp_path: Path) -> None:
    (tmp_path / "done.txt").write_text("")
    turn, provider = goal(tmp_path, [])
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "make done.txt exist", observer)

    assert result.outcome == "answered" and result.rounds == []
    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("achieved", 0)
    assert provider.requests == []
    assert goal_lines(observer) == [("achieved", 0, (0,))]


async def test_a_pass_while_the_check_fails_is_not_achieved(tmp_path: Path) -> None:
    turn, provider = goal(
        tmp_path,
        ["all done", "PASS\nlooks fine", touch(), "created it", "PASS\n[check 1] exited 0"],
    )
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "make done.txt exist", observer)

    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("achieved", 2)
    assert [r.verdict for r in result.rounds] == ["revise", "pass"]
    assert "[check 1] `test -f done.txt` exited 1" in result.rounds[0].feedback
    first_critic = provider.requests[1]
    assert first_critic.tools == ()
    assert "<checks>\n[check 1] test -f done.txt\nexit code 1" in first_critic.messages[0].text
    second_attempt = provider.requests[2].messages[-1].text
    assert "exited 1" in second_attempt and "all done" in second_attempt
    assert goal_lines(observer) == [("running", 0, (1,)), ("running", 1, (1,)), ("achieved", 2, (0,))]
    rounds = [e.label for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "round"]
    assert rounds == ["attempt 1", "attempt 2"]


async def test_a_check_that_never_passes_ends_budget_limited(tmp_path: Path) -> None:
    turn, provider = goal(
        tmp_path, ["try 1", "PASS", "try 2", "REVISE still failing"], checks=("false",), attempts=2
    )
    conversation = Conversation()

    result = await turn.run(conversation, "make it pass", RecordingObserver())

    assert result.outcome == "budget_exhausted"
    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("budget-limited", 2)
    assert [c.exit_code for c in result.goal.checks] == [1]
    assert provider.remaining == 0
    assert [m.text for m in conversation.messages] == ["make it pass", "try 2"]


async def test_unmet_and_blocked_end_the_goal(tmp_path: Path) -> None:
    turn, _ = goal(tmp_path, ["no way", "UNMET the file system is read-only"])
    result = await turn.run(Conversation(), "g", RecordingObserver())
    assert result.goal is not None and result.goal.state == "unmet"

    turn, provider = goal(tmp_path, ["BLOCKED: which directory should it go in?"])
    result = await turn.run(Conversation(), "g", RecordingObserver())
    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("blocked", 1)
    assert provider.remaining == 0  # no critic for a blocked attempt


async def test_check_commands_are_asked_about_once(tmp_path: Path) -> None:
    turn, _ = goal(
        tmp_path,
        ["nothing yet", "REVISE", touch(), "done", "PASS [check 1] exited 0"],
        policy=ApprovalPolicy("ask"),
    )
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "g", observer)

    assert result.goal is not None and result.goal.state == "achieved"
    asked = [a.summary for a in observer.approvals]
    assert asked.count(CHECK) == 1  # three runs of the check, one question
    assert "touch done.txt" in asked  # the agent's own calls are asked as ever


async def test_a_refused_check_blocks_the_goal(tmp_path: Path) -> None:
    turn, provider = goal(tmp_path, [], policy=ApprovalPolicy("ask"))
    observer = RecordingObserver(decision=ApprovalDecision.deny("no"))

    result = await turn.run(Conversation(), "g", observer)

    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("blocked", 0)
    assert provider.requests == []


async def test_a_cancelled_goal_is_paused_and_resumes_where_it_was(tmp_path: Path) -> None:
    started = asyncio.Event()

    def hang(request):
        started.set()
        return [ToolUseBlock("t1", "bash", {"command": "sleep 30"})]

    turn, _ = goal(tmp_path, ["first", "REVISE make the file", hang])
    observer = RecordingObserver()
    task = asyncio.create_task(turn.run(Conversation(), "g", observer))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    progress = turn.progress
    assert (progress.state, progress.attempts) == ("paused", 1)
    assert goal_lines(observer)[-1][:2] == ("paused", 1)

    resumed, provider = goal(tmp_path, [touch(), "made it", "PASS [check 1] exited 0"])
    resumed = GoalTurn(resumed.deps, progress.spec, progress=progress)
    result = await resumed.run(Conversation(), "g", RecordingObserver())

    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("achieved", 2)
    assert "make the file" in provider.requests[0].messages[-1].text


def test_goal_events_round_trip() -> None:
    progress = GoalProgress(
        GoalSpec("g", ("false",)),
        attempts=2,
        checks=[check_result("false", "[exit status 1]", is_error=False, refused=False)],
    )
    event = GoalUpdated(node_id="t", state="budget-limited", attempts=2, checks=progress.report().checks)
    assert event_from_dict(event_to_dict(event)) == event


@pytest.mark.parametrize(
    ("output", "is_error", "refused", "code"),
    [
        ("ok", False, False, 0),
        ("F\n[exit status 2]", False, False, 2),
        ("[timed out]", True, False, None),
        ("Denied", True, True, None),
    ],
)
def test_exit_codes_come_from_the_shell_result(
    output: str, is_error: bool, refused: bool, code: int | None
) -> None:
    assert check_result("c", output, is_error=is_error, refused=refused).exit_code == code


def test_verdicts_and_the_rule_that_failing_checks_never_pass() -> None:
    assert parse_goal_verdict("**UNMET** no") == ("unmet", "no")
    assert parse_goal_verdict("hmm") == ("revise", "hmm")
    failing = [check_result("pytest", "1 failed\n[exit status 1]", is_error=False, refused=False)]
    assert judge("pass", "great", failing)[0] == "revise"
    passing = [check_result("pytest", "ok", is_error=False, refused=False)]
    assert judge("pass", "great [check 1]", passing) == ("pass", "great [check 1]")
    assert judge("pass", "great", passing) == ("pass", "great\nChecks: [check 1] `pytest` exited 0.")


async def test_a_provider_failure_pauses_the_goal(tmp_path: Path) -> None:
    turn, _ = goal(tmp_path, ["first", "REVISE more"])  # the script runs out in attempt 2

    result = await turn.run(Conversation(), "g", RecordingObserver())

    assert result.outcome == "error" and "exhausted" in (result.error or "")
    assert result.goal is not None and (result.goal.state, result.goal.attempts) == ("paused", 1)
