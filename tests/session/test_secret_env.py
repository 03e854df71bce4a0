"""A provider's key never reaches bash, hooks or MCP servers: by its configured name, or by its value."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.session.test_hooks import open_session, opened, script, work
from tests.tools.processes import wait_for_file
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.tooling import ToolContext
from tui_assist.session.chat import ChatSession
from tui_assist.session.hooks import HookDefinition, run_hook
from tui_assist.tools.environment import without_secrets
from tui_assist.tools.mcp import McpManager, McpServerConfig
from tui_assist.tools.registry import default_toolbox
from tui_assist.tools.shell import BashTool

__all__ = ["opened", "work"]  # fixtures

LEAKS = {
    "LLM_CRED": "cred-of-a-custom-profile",  # a profile's api_key_env: not secret by its name
    "KEY_COPY_NAMED_PLAINLY": "sk-ant-the-real-key",  # a copy of ANTHROPIC_API_KEY's value
    "DATABASE_URL": "postgres://app:s3cret@db.internal:5432/app",
    "CACHE_URL": "redis://:onlypass@cache:6379/0",
}


@pytest.fixture
def leaky_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-real-key")
    for name, value in LEAKS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLAIN_URL", "https://example.com/path")
    monkeypatch.setenv("HARMLESS", "kept")


def test_the_filter_by_name_by_value_and_urls_with_passwords(leaky_env: None) -> None:
    environ = {**LEAKS, "ANTHROPIC_API_KEY": "sk-ant-the-real-key", "PLAIN_URL": "https://x.test/", "N": "1"}
    kept = without_secrets(environ, key_variables=["LLM_CRED"])
    assert kept == {"PLAIN_URL": "https://x.test/", "N": "1"}
    passed = without_secrets(environ, key_variables=["LLM_CRED"], pass_env=["LLM_CRED", "DATABASE_URL"])
    assert set(passed) == {"LLM_CRED", "DATABASE_URL", "PLAIN_URL", "N"}
    # An MCP server's env is its own by name: only a provider's key (a copy) is taken out.
    server = without_secrets({"GITHUB_TOKEN": "ghp", "K": "sk-ant-the-real-key"}, by_name=False)
    assert server == {"GITHUB_TOKEN": "ghp"}


async def test_bash_gets_none_of_them(tmp_path: Path, leaky_env: None) -> None:
    box = default_toolbox(tmp_path, bash_timeout=5, key_variables=["LLM_CRED"])
    try:
        tool = box.get("bash")
        assert isinstance(tool, BashTool)
        ctx = ToolContext(workdir=tmp_path, node_id="n", run_subagent=_no_subagents)
        out = (await tool.run(tool.parse({"command": "env"}), ctx)).content
    finally:
        await box.aclose()
    assert not any(value in out for value in LEAKS.values()), out
    assert "HARMLESS=kept" in out and "PLAIN_URL=https://example.com/path" in out


async def test_a_hook_gets_none_of_them(tmp_path: Path, leaky_env: None) -> None:
    dump = tmp_path / "env.txt"
    definition = HookDefinition("Stop", f"env > {dump}")
    ran = await run_hook(definition, {}, tmp_path, frozenset(), key_variables=frozenset({"LLM_CRED"}))
    out = dump.read_text()
    assert ran.exit_status == 0
    assert not any(value in out for value in LEAKS.values()), out
    assert "HARMLESS=kept" in out


async def test_a_sessions_hooks_know_the_profiles_key_variables(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession], leaky_env: None
) -> None:
    """The wiring: `[profiles.NAME] api_key_env` in the config reaches the hooks' filter."""
    dump = tmp_path / "env.json"
    dumper = script(
        tmp_path,
        "dump.py",
        f"#!/usr/bin/env python3\nimport json, os\njson.dump(dict(os.environ), open({str(dump)!r}, 'w'))\n",
    )
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'approval = { default = "allow" }\nsandbox = "off"\n'
        '[profiles.mine]\nbase_url = "http://localhost:1/v1"\napi_key_env = "LLM_CRED"\n'
        f"[[hooks.Stop]]\ncommand = {json.dumps(str(dumper))}\n"
    )
    fake.add(Reply("answer"))
    session = await open_session(work, tmp_path, opened)
    await session.run_turn("hi", RecordingObserver())
    env = json.loads(await wait_for_file(dump))
    assert not set(LEAKS) & set(env) and env["HARMLESS"] == "kept"


async def test_an_mcp_server_gets_its_own_variables_but_no_providers_key(
    tmp_path: Path, leaky_env: None
) -> None:
    config = McpServerConfig(
        command=sys.executable,
        args=[str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")],
        env={"COPY": "${ANTHROPIC_API_KEY}", "CRED": "${LLM_CRED}", "OWN_TOKEN": "for-the-server"},
    )
    ctx = ToolContext(workdir=tmp_path, node_id="n", run_subagent=_no_subagents)
    async with McpManager({"s": config}, cwd=tmp_path, key_variables=frozenset({"LLM_CRED"})) as manager:
        await manager.start()
        getenv = next(t for t in manager.current_tools() if t.spec.name.endswith("getenv"))
        seen = {
            name: (await getenv.run(getenv.parse({"name": name}), ctx)).content
            for name in ("COPY", "CRED", "OWN_TOKEN", "ANTHROPIC_API_KEY", "LLM_CRED")
        }
    assert seen == {
        "COPY": "<unset>",
        "CRED": "<unset>",
        "OWN_TOKEN": "for-the-server",
        "ANTHROPIC_API_KEY": "<unset>",
        "LLM_CRED": "<unset>",
    }


async def _no_subagents(description: str, prompt: str, agent: object = None) -> str:
    raise AssertionError("no sub-agents here")
