"""The spend cap through `ask`: the real SDK against the loopback fake, prices as configured."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse, Usage

COSTLY = Usage(input_tokens=5_000, output_tokens=10)
"""$0.015 at the default Sonnet price: past a cap of $0.01 after one request."""


def test_a_cap_stops_the_turn_before_its_next_request(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake.add(Reply([ToolUse("bash", {"command": "echo hi"})], usage=COSTLY), Reply("never asked for"))
    proc = ask("--json", "--yes", "--max-budget-usd", "0.01", "say hi", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "budget"
    assert "spend cap of $0.0100 reached" in data["error"]
    assert len(fake.requests) == 1  # the tool ran; the request after it never went out


def test_the_critic_is_capped_too(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake.add(Reply("draft", usage=COSTLY), Reply("**PASS**"))
    proc = ask("--refine", "--max-budget-usd", "0.01", "x", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert len(fake.requests) == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("tui-assist: ask: budget: spend cap")


def test_a_continued_conversation_starts_with_what_it_spent(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake.add(Reply("first", usage=COSTLY))
    assert ask("hi", fake=fake, cwd=work).returncode == 0
    proc = ask("--json", "--continue", "--max-budget-usd", "0.01", "again", fake=fake, cwd=work)
    assert json.loads(proc.stdout)["outcome"] == "budget"
    assert len(fake.requests) == 1


def test_a_sub_agent_is_capped_too(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    spawn = ToolUse("agent", {"description": "look", "prompt": "look around"})
    fake.add(Reply([spawn], usage=COSTLY), Reply("sub-agent answer"), Reply("never asked for"))
    proc = ask("--json", "--yes", "--max-budget-usd", "0.01", "delegate", fake=fake, cwd=work)
    assert json.loads(proc.stdout)["outcome"] == "budget", proc.stderr
    assert len(fake.requests) == 1  # neither the sub-agent's request nor the parent's next one


def test_compaction_is_capped_too(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake.add(Reply("first", usage=COSTLY), Reply("second"))
    assert ask("one", fake=fake, cwd=work).returncode == 0
    assert ask("--continue", "two", fake=fake, cwd=work).returncode == 0
    proc = ask("--continue", "--max-budget-usd", "0.01", "/compact", fake=fake, cwd=work)
    assert "cannot compact: spend cap of $0.0100 reached" in proc.stderr
    assert len(fake.requests) == 2  # no summariser request went out
