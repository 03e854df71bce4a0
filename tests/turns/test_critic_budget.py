"""The critic's input budget counts its system prompt once: `ask --refine` through the real SDK
against the loopback fake, with a small context window, a long critic prompt and evidence too big
for what is left."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tui_assist.core.critic import CRITIC_MAX_TOKENS
from tui_assist.core.text import estimate_tokens

WINDOW = 30_000
CRITIC_PROMPT = "Judge the answer against the evidence. Reply PASS or REVISE first.\n" + "Be strict. " * 2_900


def test_the_critic_gets_the_whole_window_less_its_reply_and_its_system_prompt_once(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    config = tmp_path / "config" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"critic_prompt = {json.dumps(CRITIC_PROMPT)}\n"
        f'[models."claude-sonnet-4-6"]\ncontext_window = {WINDOW}\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    calls = [ToolUse("bash", {"command": f"python3 -c \"print('{i}' * 7000)\""}) for i in range(12)]
    fake.add(Reply(calls), Reply("Printed all twelve."), Reply("PASS"))
    proc = ask(
        "--json", "--yes", "--refine", "--rounds", "1", "print them",
        fake=fake, cwd=work, env={"XDG_CONFIG_HOME": str(tmp_path / "config")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rounds"][0]["verdict"] == "pass"

    critic = fake.requests[-1]
    assert (
        critic.body["system"][0]["text"] == CRITIC_PROMPT if isinstance(critic.body["system"], list) else True
    )
    system = estimate_tokens(CRITIC_PROMPT)
    message = estimate_tokens("".join(block["text"] for block in critic.messages[0]["content"]))
    assert system > 7_000  # the prompt is a large share of the window, so counting it twice shows
    assert "omitted to fit the critic's input window" in json.dumps(critic.messages)  # the budget bound
    room = WINDOW - CRITIC_MAX_TOKENS - system
    assert message <= room  # the request fits: system prompt, input and the reply's room
    assert message > room - system // 2  # and the input had the room: the prompt was not taken twice
