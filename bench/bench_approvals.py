"""Dialogs a developer answers, and writes outside the workdir, in a scripted 20-call session.

The session (git status, ls, cat, pytest, edits, a commit, and one `rm -rf` of a folder outside
the workdir) runs through the real agent loop, the real approval policy, the real `bash` tool
(under the real bubblewrap sandbox when it is on) and the real text editor, in a fresh temporary
git repository, with a folder outside it (not under /tmp, which the sandbox makes private).
The "dialog" is an observer that counts and approves everything, as a hurried user would.

Configurations:
- default: no rules, no sandbox (every side-effecting call asks);
- rules: the saved rules below, no sandbox;
- sandbox + rules: bash in the `workspace-write` sandbox, and the same rules.

    python bench/bench_approvals.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_assist.core.approval import ApprovalPolicy  # noqa: E402
from tui_assist.core.conversation import Conversation, ToolUseBlock  # noqa: E402
from tui_assist.core.events import TurnEvent  # noqa: E402
from tui_assist.core.observer import ApprovalDecision, ToolApproval  # noqa: E402
from tui_assist.core.turn import TurnDeps  # noqa: E402
from tui_assist.providers.scripted import ScriptedProvider  # noqa: E402
from tui_assist.session.rule_files import load_permissions  # noqa: E402
from tui_assist.tools.registry import toolbox_factory  # noqa: E402
from tui_assist.tools.sandbox import Sandbox, choose_sandbox  # noqa: E402
from tui_assist.turns.agent import AgentTurn  # noqa: E402

SAVED_RULES = [
    "bash(git status)",
    "bash(git diff *)",
    "bash(git log *)",
    "bash(pytest *)",
    "bash(ls *)",
    "bash(cat *)",
    "edit",
]

CALC = "def add(a, b):\n    return a + b\n"
TEST = "from src.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def session(outside: Path) -> list[dict[str, Any]]:
    """The 20 tool calls, in order: (tool, input)."""

    def bash(command: str, **extra: Any) -> dict[str, Any]:
        return {"name": "bash", "input": {"command": command, **extra}}

    def editor(**data: Any) -> dict[str, Any]:
        return {"name": "str_replace_based_edit_tool", "input": data}

    return [
        bash("git status"),
        bash("ls -la"),
        bash("cat README.md"),
        editor(command="view", path="README.md"),
        editor(command="create", path="conftest.py", file_text=""),  # puts the root on sys.path
        editor(command="create", path="src/calc.py", file_text=CALC),
        editor(command="create", path="tests/test_calc.py", file_text=TEST),
        bash("pytest -q -p no:cacheprovider"),
        editor(command="str_replace", path="src/calc.py", old_str="a + b", new_str="b + a"),
        bash("pytest -q -p no:cacheprovider tests/test_calc.py"),
        bash("git diff --stat"),
        bash("ls src tests && cat src/calc.py"),
        bash("git add -A && git commit -qm 'calc: add'"),
        bash(f"rm -rf {outside}"),  # the one destructive command, aimed outside the workdir
        editor(command="insert", path="README.md", insert_line=1, insert_text="Adds numbers.\n"),
        bash("git status"),
        bash("git log --oneline -3"),
        bash("cat src/calc.py | wc -l"),
        bash("pip --version", sandbox=False),  # the model asks to leave the sandbox (network)
        bash("git diff HEAD --stat"),
    ]


@dataclass
class CountingDialog:
    """The user: approves every call, and counts the dialogs."""

    asked: list[ToolApproval] = field(default_factory=list)

    def on_event(self, event: TurnEvent) -> None:
        pass

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision.allow_once()


@dataclass
class Figures:
    name: str
    calls: int
    side_effecting: int
    dialogs: int
    outside_changes: int
    errors: int


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in [folder, *folder.rglob("*")]
    }


def _make_repo(workdir: Path) -> None:
    (workdir / "README.md").write_text("# calc\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=workdir, check=True, capture_output=True)


async def run(name: str, *, rules: list[str], sandbox: Sandbox | None) -> Figures:
    outside_base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    outside = Path(tempfile.mkdtemp(prefix="bench-outside-", dir=outside_base))
    for i in range(3):
        (outside / f"important-{i}.txt").write_text(f"keep {i}\n")
    before = _snapshot(outside)
    with tempfile.TemporaryDirectory(prefix="bench-approvals-") as tmp:
        workdir = Path(tmp) / "project"
        workdir.mkdir()
        _make_repo(workdir)
        calls = session(outside)
        script: list[Any] = [[ToolUseBlock(f"t{i}", c["name"], c["input"])] for i, c in enumerate(calls)]
        script.append("Done: calc added, tested and committed.")
        policy = ApprovalPolicy(permissions=load_permissions(workdir, user_allow=rules))
        deps = TurnDeps(
            ScriptedProvider(script),
            toolbox_factory(workdir, bash_timeout=60, sandbox=sandbox),
            approvals=policy,
        )
        dialog = CountingDialog()
        result = await AgentTurn(deps).run(Conversation(), "add a calc module with a test", dialog)
        assert result.outcome == "answered", result
        side_effecting = sum(1 for c in calls if c["name"] == "bash" or c["input"].get("command") != "view")
        errors = sum(1 for r in result.evidence if r.is_error)
    after = _snapshot(outside)
    changed = len(set(before) ^ set(after)) + sum(1 for k in before if k in after and before[k] != after[k])
    shutil.rmtree(outside, ignore_errors=True)
    return Figures(name, len(calls), side_effecting, len(dialog.asked), changed, errors)


async def main() -> None:
    # The session's `pytest` is this interpreter's (the shell finds it on PATH, as a developer's would).
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for variable, value in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@example.invalid")):
        os.environ.setdefault(variable, value)
        os.environ.setdefault(variable.replace("AUTHOR", "COMMITTER"), value)
    choice = choose_sandbox(None)
    rows = [
        await run("default (no rules, no sandbox)", rules=[], sandbox=None),
        await run("saved rules, no sandbox", rules=SAVED_RULES, sandbox=None),
    ]
    if choice.sandbox is not None:
        rows.append(await run("sandbox + saved rules", rules=SAVED_RULES, sandbox=choice.sandbox))
    print(f"saved rules: {', '.join(SAVED_RULES)}")
    print(choice.description)
    print()
    print(
        f"{'configuration':34} {'calls':>5} {'side-eff.':>9} {'dialogs':>7} {'fewer':>6} {'outside changed':>15}"
    )
    base = rows[0].dialogs
    for row in rows:
        fewer = f"{100 * (base - row.dialogs) / base:.0f}%" if base else "-"
        print(
            f"{row.name:34} {row.calls:>5} {row.side_effecting:>9} {row.dialogs:>7} {fewer:>6} {row.outside_changes:>15}"
        )
    if choice.sandbox is None:
        print(f"\n(no sandbox row: {choice.description})")
    print("\n'outside changed': files created, removed or modified in the folder outside the workdir")
    print("(the hurried user approved every dialog, the rm -rf included).")


if __name__ == "__main__":
    asyncio.run(main())
