"""Skills: `SKILL.md` folders in Claude Code's shape, where they are read, and what the `skill`
tool returns (the body, the folder's other files, one of them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.core.tooling import ToolContext, ToolInputError
from tui_assist.session.skills import load_skills, skill_folders
from tui_assist.tools.skill import SkillTool

PDF = """---
name: pdf-forms
description: >-
  Fill in PDF forms.
  Use when the user asks to fill a PDF.
license: Apache-2.0
allowed-tools: Bash(python:*)
---
# Filling PDF forms

Run `scripts/fill.py FORM VALUES`.
"""


def _skill(folder: Path, text: str, *extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text)
    for name in extra:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"contents of {name}")
    return folder


def test_skills_from_every_folder_the_users_win_and_bad_files_are_warnings(tmp_path: Path) -> None:
    work, config, claude = tmp_path / "w", tmp_path / "c", tmp_path / "claude"
    pdf = _skill(work / ".claude" / "skills" / "pdf", PDF, "scripts/fill.py", "reference.md")
    _skill(claude / "skills" / "notes", "---\nname: notes\ndescription: Take notes\n---\nWrite them down.")
    _skill(config / "skills" / "pdf-mine", "---\nname: pdf-forms\ndescription: Mine\n---\nMy way.")
    _skill(work / ".claude" / "skills" / "broken", "no front matter")
    (work / ".claude" / "skills" / "not-a-skill").mkdir()
    skills, warnings = load_skills(skill_folders(work, config, claude))
    assert [(s.entry.name, s.source, s.entry.body) for s in skills] == [
        ("notes", "user", "Write them down."),
        ("pdf-forms", "user", "My way."),
    ]
    assert warnings == [
        f"skill file {work / '.claude' / 'skills' / 'broken' / 'SKILL.md'} is ignored: it does not start "
        "with front matter (a line `---`)",
        f"skill file {pdf / 'SKILL.md'}: allowed-tools: not read here (the rest loads)",
        f"skill file {pdf / 'SKILL.md'} is ignored: the skill pdf-forms is "
        f"{config / 'skills' / 'pdf-mine' / 'SKILL.md'}",
    ]
    (config / "skills" / "pdf-mine" / "SKILL.md").unlink()
    skills, _ = load_skills(skill_folders(work, config))  # without ~/.claude
    assert [(s.entry.name, s.project) for s in skills] == [("pdf-forms", True)]


async def _no_subagents(description: str, prompt: str, agent: object = None) -> str:
    raise AssertionError("no sub-agents here")


async def test_the_skill_tool_returns_the_body_and_lists_and_reads_the_folders_files(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills" / "pdf", PDF, "scripts/fill.py", "reference.md")
    skills, _ = load_skills(skill_folders(tmp_path / "w", tmp_path / "c", tmp_path))
    tool = SkillTool([s.entry for s in skills])
    assert "- pdf-forms: Fill in PDF forms. Use when the user asks to fill a PDF." in tool.spec.description
    assert tool.spec.input_schema["properties"]["name"]["enum"] == ["pdf-forms"]
    ctx = ToolContext(workdir=tmp_path, node_id="n", run_subagent=_no_subagents)
    args = tool.parse({"name": "pdf-forms"})
    assert not tool.side_effecting(args)
    output = (await tool.run(args, ctx)).content
    assert output.startswith(f'<skill name="pdf-forms" folder="{folder}">\n# Filling PDF forms\n')
    assert "license" not in output and "---" not in output  # the front matter is not the body
    assert output.endswith(
        "Files in the skill's folder (read one with `file`):\n- reference.md\n- scripts/fill.py"
    )
    read = await tool.run(tool.parse({"name": "pdf-forms", "file": "scripts/fill.py"}), ctx)
    assert read.content == "contents of scripts/fill.py"
    with pytest.raises(ToolInputError, match="unknown skill 'nope'; the skills are: pdf-forms"):
        tool.parse({"name": "nope"})
    with pytest.raises(ToolInputError, match="not a file of the skill pdf-forms"):
        tool.parse({"name": "pdf-forms", "file": "../../secret"})
