"""Plan mode is told up front: the model's first request already says that only reads run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply

TOLD = "Plan mode is on: only reads run."


@pytest.mark.parametrize(("mode", "told"), [("plan", True), ("default", False), ("accept-edits", False)])
def test_the_first_request_says_plan_mode_is_on(
    fake: FakeAnthropic, tmp_path: Path, mode: str, told: bool
) -> None:
    fake.add(Reply("1. read app.py  2. change the loop"))
    proc = ask("--json", "--mode", mode, "speed up app.py", fake=fake, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = fake.requests[0]
    assert (TOLD in json.dumps(first.system)) is told
    assert "propose a plan" in json.dumps(first.system) if told else "plan_mode" not in first.all_text()


def test_refine_generators_are_told_too_and_the_critic_is_not(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply("The plan: read, then change."), Reply("PASS"))
    proc = ask("--json", "--mode", "plan", "--refine", "plan a change", fake=fake, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    generator, critic = fake.requests[0], fake.requests[1]
    assert TOLD in json.dumps(generator.system)
    assert TOLD not in json.dumps(critic.system)
