"""One end-to-end scenario through the official TypeScript ACP SDK (`@agentclientprotocol/sdk`).

The SDK is installed from npm by the test (into the repo's ignored `.cache/`); the test is skipped
when Node.js or the npm registry can't be reached.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse

SDK = "@agentclientprotocol/sdk"
SDK_VERSION = "2.4.0"
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "acp-ts-sdk"
CLIENT = Path(__file__).with_name("ts_client.mjs")


@pytest.fixture(scope="module")
def sdk_package() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are needed to run the TypeScript ACP client")
    package = CACHE / "node_modules" / "@agentclientprotocol" / "sdk"
    manifest = package / "package.json"
    if not manifest.exists() or json.loads(manifest.read_text())["version"] != SDK_VERSION:
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(
                [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", f"{SDK}@{SDK_VERSION}"],
                capture_output=True,
                text=True,
                timeout=180,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {SDK}@{SDK_VERSION} timed out (is the npm registry reachable?)")
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"npm could not install {SDK}@{SDK_VERSION} (is the npm registry reachable?): {last}")
    return package


def test_the_typescript_sdk_runs_a_turn_with_a_permission(
    sdk_package: Path, fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # Unsandboxed, so the bash call is put to the editor (a sandboxed one would run unasked).
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('sandbox = "off"\n')
    fake.add(
        Reply([Text("Let me write it."), ToolUse("bash", {"command": "echo ts > ts.txt"})]),
        Reply("Wrote ts.txt."),
    )
    env = dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    agent = [sys.executable, "-m", "tui_assist", "acp"]
    proc = subprocess.run(
        ["node", str(CLIENT), str(sdk_package), str(work), "write ts.txt", "--", *agent],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert (seen["agentName"], seen["protocolVersion"], seen["stopReason"]) == ("tui-assist", 1, "end_turn")
    assert seen["modes"] == ["default", "accept-edits", "plan", "bypass"]
    assert seen["permissions"] and "allow_once" in seen["permissions"][0]["kinds"]
    kinds = [u["sessionUpdate"] for u in seen["updates"]]
    assert kinds.index("tool_call") < kinds.index("tool_call_update")
    call = next(u for u in seen["updates"] if u["sessionUpdate"] == "tool_call")
    done = next(u for u in seen["updates"] if u["sessionUpdate"] == "tool_call_update")
    assert (call["kind"], done["status"]) == ("execute", "completed")
    text = "".join(
        u["content"]["text"] for u in seen["updates"] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "Let me write it.Wrote ts.txt."
    assert (work / "ts.txt").read_text() == "ts\n"
