"""`ask --continue` goes on with the model of the conversation's last turn, unless `--model` says
otherwise: the command's own entry point, a real store, the real SDK against the loopback fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_ask import api, ask_in_process  # noqa: F401 - a fixture
from tests.fakes.anthropic import FakeAnthropic, Reply


def test_continue_uses_the_last_turns_model_and_model_overrides_it(
    api: FakeAnthropic,  # noqa: F811 - the fixture
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    api.add(Reply("one"), Reply("two"), Reply("three"))
    for args in (
        ("first",),
        ("--continue", "--model", "claude-haiku-4-5", "second"),  # over the last turn's sonnet
        ("--continue", "third"),
    ):
        code, _, err = ask_in_process(capsys, *args, cwd=work)
        assert code == 0, err
    models = [r.body["model"] for r in api.requests]
    assert models == ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-haiku-4-5"]
