"""Custom sub-agent files: Claude Code's YAML front matter, tool and model names, precedence,
subfolders, and files or entries that are not valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.session.agents import agent_folders, load_agents, parse_agent_file

# The shape most public Claude Code agents have: a folded block scalar, Claude Code's tool names
# (an MCP tool, one of a whole server, and a tool not built here), a model alias.
CLAUDE_AGENT = """---
name: code-reviewer
description: >-
  Expert code review specialist.
  Use proactively after writing code.
tools: Read, Grep, Glob, Bash, WebFetch, mcp__gh__search_issues, mcp__linear, TodoWrite, NotebookEdit
model: sonnet
color: blue
---

You review code.
"""


def test_claude_code_front_matter_tools_and_model() -> None:
    parsed = parse_agent_file(CLAUDE_AGENT, "fallback")
    spec = parsed.spec
    assert spec.name == "code-reviewer"
    assert spec.description == "Expert code review specialist. Use proactively after writing code."
    assert spec.system_prompt == "You review code."
    assert spec.tools == (
        "str_replace_based_edit_tool(read)",
        "grep",
        "glob",
        "bash",
        "web_fetch",
        "gh__search_issues",
        "linear__*",
        "todo_write",
    )
    assert spec.model == "claude-sonnet-4-6"
    assert parsed.problems == ("tools NotebookEdit: notebooks are not supported",)
    assert spec.allows("linear__create_issue") and not spec.allows("gh__delete_repo")
    # Read without Edit or Write: the editor, to view with only.
    assert spec.allows("str_replace_based_edit_tool") and spec.reads_only("str_replace_based_edit_tool")
    assert not spec.reads_only("bash")
    both = parse_agent_file("---\ndescription: d\ntools: Read, Edit\n---\nbody", "x").spec
    assert both.allows("str_replace_based_edit_tool") and not both.reads_only("str_replace_based_edit_tool")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("opus", "claude-opus-4-6"),
        ("haiku", "claude-haiku-4-5"),
        ("inherit", None),
        ("claude-x-1", "claude-x-1"),
    ],
)
def test_model_aliases(model: str, expected: str | None) -> None:
    assert parse_agent_file(f"---\ndescription: d\nmodel: {model}\n---\nbody", "x").spec.model == expected


def test_a_yaml_list_disallowed_tools_and_unknown_names() -> None:
    parsed = parse_agent_file(
        "---\ndescription: d\ntools:\n  - bash\n  - edit\n  - Frobnicate\n"
        "disallowedTools: [Bash]\nwhen: always\n---\nbody",
        "helper",
    )
    spec = parsed.spec
    assert spec.name == "helper" and spec.tools == ("bash", "str_replace_based_edit_tool")
    assert spec.disallowed_tools == ("bash",)
    assert not spec.allows("bash") and spec.allows("str_replace_based_edit_tool")
    assert parsed.problems == ("tools Frobnicate: no such tool here", "when: not read here")


def test_no_tools_means_all_but_the_disallowed() -> None:
    spec = parse_agent_file("---\ndescription: d\ndisallowedTools: Write, Edit\n---\nbody", "x").spec
    assert spec.tools is None
    assert spec.allows("bash") and spec.allows("gh__search") and not spec.reads_only("bash")
    # Disallowing the editor's writing names leaves it for reading (`Read`), as Claude Code does.
    editor = "str_replace_based_edit_tool"
    assert spec.allows(editor) and spec.reads_only(editor)
    reads_nothing = parse_agent_file("---\ndescription: d\ndisallowedTools: Read, Write\n---\nbody", "x").spec
    assert not reads_nothing.allows(editor)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no front matter", "front matter"),
        ("---\ndescription: d\nbody", "not closed"),
        ("---\nname: x\n---\nbody", "no description"),
        ("---\ndescription: d\n---\n  \n", "body"),
        ("---\ndescription: d\njust words\n---\nbody", "not valid YAML at line 3"),
        ("---\n- a list\n---\nbody", "not a YAML mapping"),
    ],
)
def test_invalid_files_say_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_agent_file(text, "x")


def test_precedence_subfolders_and_warnings_that_name_the_file(tmp_path: Path) -> None:
    work, config, claude = tmp_path / "w", tmp_path / "c", tmp_path / "claude"
    for folder, body in (
        (claude / "agents", "claude-user"),
        (config / "agents", "user"),
        (work / ".claude" / "agents", "claude"),
        (work / ".tui-assist" / "agents", "ours"),
    ):
        folder.mkdir(parents=True)
        (folder / "a.md").write_text(f"---\nname: a\ndescription: d\n---\n{body}")
    (config / "agents" / "broken.md").write_text("nothing here")
    nested = work / ".claude" / "agents" / "engineering" / "backend"
    nested.mkdir(parents=True)
    (nested / "api.md").write_text("---\ndescription: d\ntools: Bash, Nope\n---\nbody")
    (claude / "agents" / "mine.md").write_text("---\ndescription: d\n---\nmine")
    agents, warnings = load_agents(agent_folders(work, config, claude))
    assert [(a.spec.name, a.spec.system_prompt, a.project) for a in agents] == [
        ("a", "ours", True),
        ("api", "body", True),
        ("mine", "mine", False),
    ]
    assert warnings == [
        f"agent file {config / 'agents' / 'broken.md'} is ignored: it does not start with front matter"
        " (a line `---`)",
        f"agent file {nested / 'api.md'}: tools Nope: no such tool here (the rest loads)",
    ]
    assert [a.spec.name for a in load_agents(agent_folders(work, config))[0]] == ["a", "api"]
