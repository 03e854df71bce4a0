"""`ask` with a Claude Code setup as it is: skills, and the `glob` and `grep` tools, through a real
subprocess, the real SDK and the loopback fake that records every request."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse

SKILL = """---
name: release-notes
description: Write release notes from the git log. Use when asked for release notes.
---
# Release notes

Group the changes as Added, Fixed, Removed. RELEASE-SKILL-BODY
"""


def _messages(fake: FakeAnthropic) -> list[Any]:
    return [r for r in fake.requests if r.path == "/v1/messages"]


def _tool_result(request: Any) -> str:
    (block,) = [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]
    content = block["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def _user_skill() -> Path:
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "skills" / "release-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    (folder / "template.md").write_text("## Added\n")
    return folder


def test_the_model_sees_skill_names_and_loads_a_body_with_the_skill_tool(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    folder = _user_skill()
    fake.add(Reply([ToolUse("skill", {"name": "release-notes"})]), Reply("Notes written."))
    proc = ask("--json", "write the release notes", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    first, second = _messages(fake)
    (skill_tool,) = [t for t in first.tools if t["name"] == "skill"]
    assert "- release-notes: Write release notes from the git log." in skill_tool["description"]
    assert "RELEASE-SKILL-BODY" not in json.dumps(first.body)  # only names and descriptions
    result = _tool_result(second)
    assert result.startswith(f'<skill name="release-notes" folder="{folder}">\n# Release notes')
    assert "RELEASE-SKILL-BODY" in result and result.endswith("- template.md")
    assert json.loads(proc.stdout)["denied_calls"] == []  # read-only: never asked


def test_a_project_skill_waits_for_trust_and_skills_lists_it(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".claude" / "skills" / "release-notes").mkdir(parents=True)
    (work / ".claude" / "skills" / "release-notes" / "SKILL.md").write_text(SKILL)
    fake.add(Reply("No skills."))
    proc = ask("--json", "hello", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "skill" not in [t["name"] for t in _messages(fake)[0].tools]
    listed = ask("/skills", fake=fake, cwd=work)
    assert listed.returncode == 0, listed.stderr
    assert "release-notes: Write release notes" in listed.stdout
    assert "waits for you to trust the project" in listed.stdout


def test_grep_and_glob_answer_in_plan_mode_without_asking(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("def main():\n    return 42  # TODO tidy\n")
    (work / "README.md").write_text("nothing to do\n")
    fake.add(
        Reply([ToolUse("grep", {"pattern": "TODO", "glob": "*.py"})]),
        Reply([ToolUse("glob", {"pattern": "**/*.md"})]),
        Reply("One TODO."),
    )
    proc = ask("--json", "--mode", "plan", "find the TODOs", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    _, after_grep, after_glob = _messages(fake)
    assert _tool_result(after_grep) == "src/app.py:2:     return 42  # TODO tidy"
    assert _tool_result(after_glob) == "README.md"
    assert json.loads(proc.stdout)["denied_calls"] == []
