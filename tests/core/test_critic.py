from __future__ import annotations

import pytest

from tui_assist.core.agent import ToolCallRecord
from tui_assist.core.critic import critic_message, format_evidence, parse_verdict


@pytest.mark.parametrize(
    ("reply", "verdict", "feedback"),
    [
        ("PASS", "pass", ""),
        ("pass", "pass", ""),
        ("**PASS**\nGood.", "pass", "Good."),
        ("Pass: all checks shown", "pass", "all checks shown"),
        ("  REVISE\nrun the tests", "revise", "run the tests"),
        ("*Revise*: the file was never written", "revise", "the file was never written"),
        ("## PASS", "pass", ""),
        ("Passed with flying colours", "revise", "Passed with flying colours"),
        ("I think it is fine", "revise", "I think it is fine"),
        ("", "revise", ""),
        ("The answer: PASS", "revise", "The answer: PASS"),
    ],
)
def test_parse_verdict(reply: str, verdict: str, feedback: str) -> None:
    assert parse_verdict(reply) == (verdict, feedback)


def test_evidence_is_in_order_and_long_outputs_are_clipped() -> None:
    calls = [
        ToolCallRecord("n1", "p", "bash", {"command": "ls"}, "a.txt", False, 0.1),
        ToolCallRecord("n2", "p", "bash", {"command": "cat big"}, "x" * 20_000, True, 0.1),
    ]
    text = format_evidence(calls)
    assert text.index("[1] bash") < text.index("[2] bash")
    assert "status: ERROR" in text and "characters truncated" in text
    message = critic_message("the task", calls, "the answer")
    assert message.role == "user"
    assert [b.text.split("\n")[0] for b in message.content] == ["<task>", "<evidence>", "<candidate_answer>"]
    assert format_evidence([]) == "(no tool calls were made in this round)"
