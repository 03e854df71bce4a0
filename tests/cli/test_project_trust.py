"""A freshly cloned, malicious repository runs nothing before the user trusts it: `tui-assist ask`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tui_assist.session.trust import ProjectTrust

MALICIOUS = """\
[[hooks.SessionStart]]
command = "touch pwned-start"

[[hooks.PreToolUse]]
command = "touch pwned-pre"
"""


def ask(
    work: Path, script: Path, *flags: str, prompt: str = "look around"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_assist",
            "ask",
            "--provider",
            "scripted",
            "--script",
            str(script),
            "--workdir",
            str(work),
            *flags,
            prompt,
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )


def test_project_hooks_run_only_once_trusted_and_again_after_a_change(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    (work / ".tui-assist").mkdir(parents=True)
    settings = work / ".tui-assist" / "settings.toml"
    settings.write_text(MALICIOUS)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "str_replace_based_edit_tool",
                        "input": {"command": "view", "path": "."},
                    }
                ],
                [{"type": "text", "text": "Looked."}],
            ]
        )
    )

    untrusted = ask(work, script)
    assert untrusted.returncode == 0, untrusted.stderr
    assert not (work / "pwned-start").exists() and not (work / "pwned-pre").exists()
    assert "this project's hooks, MCP servers and agents did not run: it is not trusted" in untrusted.stderr
    assert "--trust-project" in untrusted.stderr

    trusted = ask(work, script, "--trust-project")
    assert trusted.returncode == 0, trusted.stderr
    assert (work / "pwned-start").exists() and (work / "pwned-pre").exists()
    assert "did not run" not in trusted.stderr

    # Remembered: the next run needs no flag.
    (work / "pwned-start").unlink()
    again = ask(work, script)
    assert again.returncode == 0, again.stderr
    assert (work / "pwned-start").exists()

    # A changed file asks again.
    (work / "pwned-start").unlink()
    (work / "pwned-pre").unlink()
    settings.write_text(MALICIOUS + '\n[[hooks.Stop]]\ncommand = "touch pwned-stop"\n')
    changed = ask(work, script)
    assert changed.returncode == 0, changed.stderr
    assert not any((work / name).exists() for name in ("pwned-start", "pwned-pre", "pwned-stop"))
    assert "its files changed since you trusted it" in changed.stderr

    # /hooks lists them headless too, with where they came from and that they wait for trust.
    listed = ask(work, script, prompt="/hooks")
    assert listed.returncode == 0, listed.stderr
    assert "SessionStart: touch pwned-start · project" in listed.stdout
    assert "waits for you to trust the project" in listed.stdout


def test_trust_state_digest(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    a = work / "a.md"
    a.write_text("one")
    trust = ProjectTrust(tmp_path / "data")
    assert trust.status(work, []) == "trusted"  # nothing to run needs no trust
    assert trust.status(work, [a]) == "untrusted"
    assert trust.trust(work, [a])
    assert trust.status(work, [a]) == "trusted"
    a.write_text("two")
    assert trust.status(work, [a]) == "changed"
    b = work / "b.md"
    b.write_text("new")
    trust.trust(work, [a])
    assert trust.status(work, [a, b]) == "changed"  # a file that appears asks again
    assert json.loads((tmp_path / "data" / "project-trust.json").read_text())["projects"]


def test_a_refused_prompt_is_one_line_and_no_model_call(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[[hooks.UserPromptSubmit]]\ncommand = "echo no prompts today >&2; exit 2"\n')
    script = tmp_path / "script.json"
    script.write_text(json.dumps([]))  # any model call would fail: the script is empty
    proc = ask(work, script)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "tui-assist: ask: a UserPromptSubmit hook refused the prompt: no prompts today"
    )
    assert "Traceback" not in proc.stderr
