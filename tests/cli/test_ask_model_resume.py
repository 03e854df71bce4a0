"""`ask --continue` goes on with the model of the conversation's last turn, unless `--model` says
otherwise: the real program, a real store, the real SDK against the loopback fake."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply


def test_continue_uses_the_last_turns_model_and_model_overrides_it(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake.add(Reply("one"), Reply("two"), Reply("three"))
    for args in (
        ("first",),
        ("--continue", "--model", "claude-haiku-4-5", "second"),  # over the last turn's sonnet
        ("--continue", "third"),
    ):
        proc = ask(*args, fake=fake, cwd=work)
        assert proc.returncode == 0, proc.stderr
    models = [r.body["model"] for r in fake.requests]
    assert models == ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-haiku-4-5"]
