"""Custom sub-agent files: Claude Code's front matter, precedence, and files that are not valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.session.agents import agent_folders, load_agents, parse_agent_file


def test_front_matter_tools_and_model() -> None:
    spec = parse_agent_file(
        '---\nname: code-reviewer\ndescription: "Reviews code"\ntools: Read, Grep, Bash, mcp__gh__search\n'
        "model: inherit\n---\n\nYou review code.\n",
        "fallback",
    )
    assert spec.name == "code-reviewer" and spec.description == "Reviews code"
    assert spec.system_prompt == "You review code."
    # Claude Code's names map to ours; others (an MCP tool) are kept as written.
    assert spec.tools == ("str_replace_based_edit_tool", "Grep", "bash", "mcp__gh__search")
    assert spec.model is None  # inherit: the session's model


def test_no_tools_means_all_and_the_file_name_is_the_default_name() -> None:
    spec = parse_agent_file("---\ndescription: d\ntools: [bash, edit]\n---\nbody", "helper")
    assert spec.name == "helper" and spec.tools == ("bash", "str_replace_based_edit_tool")
    assert parse_agent_file("---\ndescription: d\n---\nbody", "x").tools is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no front matter", "front matter"),
        ("---\ndescription: d\nbody", "not closed"),
        ("---\nname: x\n---\nbody", "no description"),
        ("---\ndescription: d\n---\n  \n", "body"),
    ],
)
def test_invalid_files_say_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_agent_file(text, "x")


def test_the_project_wins_a_shared_name_and_bad_files_are_warnings(tmp_path: Path) -> None:
    work, config = tmp_path / "w", tmp_path / "c"
    for folder, body in (
        (config / "agents", "user"),
        (work / ".claude" / "agents", "claude"),
        (work / ".tui-assist" / "agents", "ours"),
    ):
        folder.mkdir(parents=True)
        (folder / "a.md").write_text(f"---\nname: a\ndescription: d\n---\n{body}")
    (config / "agents" / "broken.md").write_text("nothing here")
    agents, warnings = load_agents(agent_folders(work, config))
    assert [(a.spec.name, a.spec.system_prompt, a.project) for a in agents] == [("a", "ours", True)]
    assert len(warnings) == 1 and "broken.md is ignored: it does not start with front matter" in warnings[0]
