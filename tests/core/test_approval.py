from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.core.approval import PLAN_MESSAGE, ApprovalPolicy, describe_mode
from tui_assist.core.observer import ApprovalDecision, RecordingObserver, SandboxUse, ToolApproval
from tui_assist.core.permissions import project_settings_path
from tui_assist.session.rule_files import load_permissions


def bash(command: str, workdir: Path, sandbox: SandboxUse = "off") -> ToolApproval:
    return ToolApproval("n", "bash", {"command": command}, command, workdir=workdir, sandbox=sandbox)


def edit(path: str, workdir: Path) -> ToolApproval:
    data = {"command": "create", "path": path, "file_text": "x"}
    return ToolApproval("n", "str_replace_based_edit_tool", data, f"+++ {path}", workdir=workdir)


def policy(workdir: Path, *, allow=(), deny=(), **kwargs) -> ApprovalPolicy:
    permissions = load_permissions(workdir, user_allow=allow, user_deny=deny)
    return ApprovalPolicy(permissions=permissions, **kwargs)


async def test_default_mode_asks_with_a_proposal_and_a_reason(tmp_path: Path) -> None:
    observer = RecordingObserver()
    outcome = await policy(tmp_path, allow=["bash(cd *)"]).check(
        bash("cd src && pytest -q", tmp_path), observer
    )

    assert outcome.allowed and outcome.asked
    (asked,) = observer.approvals
    assert asked.proposed_rules == ("bash(pytest *)",)
    assert asked.reason == "no rule allows: pytest -q"


async def test_accept_edits_runs_workdir_edits_but_still_asks_for_bash(tmp_path: Path) -> None:
    observer = RecordingObserver()
    accepting = policy(tmp_path, mode="accept-edits")

    assert (await accepting.check(edit("src/new.py", tmp_path), observer)).why == "mode accept-edits"
    assert observer.approvals == []
    await accepting.check(edit(".tui-assist/settings.toml", tmp_path), observer)
    await accepting.check(bash("touch x", tmp_path), observer)
    assert len(observer.approvals) == 2


async def test_plan_mode_runs_nothing_side_effecting_and_says_so(tmp_path: Path) -> None:
    observer = RecordingObserver()
    planning = policy(tmp_path, mode="plan", allow=["bash(ls *)", "edit"])

    for request in (bash("ls", tmp_path, "sandboxed"), edit("a.py", tmp_path)):
        outcome = await planning.check(request, observer)
        assert not outcome.allowed and outcome.message == PLAN_MESSAGE
    assert observer.approvals == []
    assert "propose" in PLAN_MESSAGE and "Read" in PLAN_MESSAGE


async def test_bypass_runs_everything_but_what_a_deny_rule_forbids(tmp_path: Path) -> None:
    observer = RecordingObserver()
    bypassing = policy(tmp_path, mode="bypass", deny=["bash(rm -rf *)"])

    assert (await bypassing.check(bash("curl x | sh", tmp_path), observer)).allowed
    assert (await bypassing.check(bash("x", tmp_path, "escape"), observer)).allowed
    denied = await bypassing.check(bash("cd / && rm -rf home", tmp_path), observer)
    assert not denied.allowed and observer.approvals == []
    assert denied.message == "Denied: the deny rule bash(rm -rf *) (user) forbids `rm -rf home`."


def test_mode_cycles_without_bypass_unless_the_session_started_in_it(tmp_path: Path) -> None:
    cycling = policy(tmp_path)
    assert [cycling.next_mode() for _ in range(4)] == ["accept-edits", "plan", "default", "accept-edits"]
    started = policy(tmp_path, mode="bypass")
    assert [started.next_mode() for _ in range(4)] == ["default", "accept-edits", "plan", "bypass"]
    assert describe_mode("plan").startswith("read-only")


async def test_sandboxed_commands_run_without_a_dialog_unless_unreadable_or_denied(tmp_path: Path) -> None:
    observer = RecordingObserver()
    sandboxed = policy(tmp_path, deny=["bash(git push *)"])

    assert (
        await sandboxed.check(bash("rm -rf build && make", tmp_path, "sandboxed"), observer)
    ).why == "sandbox"
    assert observer.approvals == []
    assert not (await sandboxed.check(bash("git push origin", tmp_path, "sandboxed"), observer)).allowed
    assert observer.approvals == []
    await sandboxed.check(bash("case x in x) ls;; esac", tmp_path, "sandboxed"), observer)
    assert observer.approvals[0].reason == "too complex to check against your rules: read it carefully"


async def test_leaving_the_sandbox_always_asks_even_when_a_rule_allows_the_command(tmp_path: Path) -> None:
    observer = RecordingObserver(decision=ApprovalDecision.allow_session())
    escaping = policy(tmp_path, allow=["bash(git push *)"])

    for _ in range(2):
        await escaping.check(bash("git push origin main", tmp_path, "escape"), observer)
    assert len(observer.approvals) == 2
    assert observer.approvals[0].reason.startswith("asks to run outside the sandbox")


async def test_allow_for_the_session_remembers_the_proposed_pattern(tmp_path: Path) -> None:
    observer = RecordingObserver(decision=ApprovalDecision.allow_session())
    session = policy(tmp_path)

    await session.check(bash("git status", tmp_path), observer)
    again = await session.check(bash("git status --short", tmp_path), observer)
    await session.check(bash("git push", tmp_path), observer)

    assert again.allowed and not again.asked
    assert [a.input["command"] for a in observer.approvals] == ["git status", "git push"]
    assert [(r.text, r.source.label) for r in session.permissions.rules][0] == (
        "bash(git status *)",
        "session",
    )
    assert not project_settings_path(tmp_path).exists()


async def test_allow_pattern_saves_the_rule_for_the_next_session(tmp_path: Path) -> None:
    notices: list[str] = []
    observer = RecordingObserver(decision=ApprovalDecision.allow_pattern())
    saving = policy(tmp_path, notify=notices.append)

    assert (await saving.check(bash("pytest -q tests", tmp_path), observer)).allowed

    assert 'allow = ["bash(pytest *)"]' in project_settings_path(tmp_path).read_text()
    assert notices == [f"saved allow bash(pytest *) to {project_settings_path(tmp_path)}"]
    later = policy(tmp_path)
    later.permissions.project_trusted = True  # a project's allow rules apply once it is trusted
    quiet = RecordingObserver(decision=ApprovalDecision.deny())
    assert (await later.check(bash("pytest -x", tmp_path), quiet)).allowed and quiet.approvals == []


async def test_a_rule_that_cannot_be_saved_still_holds_for_the_session(tmp_path: Path) -> None:
    project = project_settings_path(tmp_path)
    project.parent.mkdir()
    project.write_text("[permissions\n")  # broken: never overwritten
    notices: list[str] = []
    saving = policy(tmp_path, notify=notices.append)
    observer = RecordingObserver(decision=ApprovalDecision.allow_pattern())

    await saving.check(bash("make", tmp_path), observer)
    await saving.check(bash("make test", tmp_path), observer)

    assert len(observer.approvals) == 1 and project.read_text() == "[permissions\n"
    assert notices[0].startswith("could not save bash(make *)")


@pytest.mark.parametrize(
    ("decision", "message", "stops"),
    [
        (ApprovalDecision.deny(), "Denied: the user did not approve this bash call.", False),
        (ApprovalDecision.deny("the user said no."), "Denied: the user said no.", False),
        (
            ApprovalDecision.deny_with_feedback("use make instead"),
            "Denied: the user did not approve this bash call and said:\nuse make instead",
            False,
        ),
        (
            ApprovalDecision.stop(),
            "Denied: the user did not approve this bash call and stopped the turn.",
            True,
        ),
    ],
)
async def test_refusals_say_what_the_user_did(
    tmp_path: Path, decision: ApprovalDecision, message: str, stops: bool
) -> None:
    outcome = await policy(tmp_path).check(bash("ls", tmp_path), RecordingObserver(decision=decision))
    assert (outcome.allowed, outcome.message, outcome.stop_turn) == (False, message, stops)


async def test_the_older_approval_settings_still_work(tmp_path: Path) -> None:
    observer = RecordingObserver()
    legacy = ApprovalPolicy("allow", {"bash": "deny", "write": "ask"})
    assert not (await legacy.check(bash("ls", tmp_path, "sandboxed"), observer)).allowed
    assert (await legacy.check(ToolApproval("n", "agent", {}, ""), observer)).why == "[approval] default"
    await legacy.check(ToolApproval("n", "write", {}, ""), observer)
    assert [a.tool for a in observer.approvals] == ["write"]


def test_settings_carry_mode_sandbox_and_rules_and_refuse_a_bad_rule(tmp_path: Path) -> None:
    from tui_assist.session.config import ConfigError
    from tui_assist.session.config_source import ConfigSource

    path = tmp_path / "config.toml"
    path.write_text(
        'mode = "accept-edits"\nsandbox = "off"\nsandbox_network = true\n\n'
        '[permissions]\nallow = ["bash(git status)", "edit"]\ndeny = ["bash(rm -rf *)"]\n'
    )
    settings = ConfigSource.read(path=path).settings()
    assert (settings.mode, settings.sandbox, settings.sandbox_network) == ("accept-edits", "off", True)
    assert settings.permissions.allow == ["bash(git status)", "edit"]
    assert ConfigSource.read(path=tmp_path / "absent.toml").settings().sandbox is None  # bwrap decides

    path.write_text('[permissions]\nallow = ["bash(git status"]\n')
    with pytest.raises(
        ConfigError, match=r"invalid setting permissions\.allow = .*: invalid rule .*needs a closing"
    ):
        ConfigSource.read(path=path).settings()
