from __future__ import annotations

import pytest

from tui_assist.core.conversation import Message, TextBlock, ToolResultBlock, ToolUseBlock
from tui_assist.core.critic import clean_pairs, critic_message, format_context, format_evidence, parse_verdict
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.text import estimate_tokens


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


def _pair(i: int, size: int = 10) -> list[Message]:
    return [Message.user(f"prompt {i} " + "p" * size), Message.assistant(f"answer {i} " + "a" * size)]


def test_clean_pairs_skip_tool_traffic_and_keep_the_final_answer() -> None:
    history = [
        Message.user("list the files"),
        Message("assistant", (TextBlock("Looking."), ToolUseBlock("t1", "bash", {"command": "ls"}))),
        Message("user", (ToolResultBlock("t1", "a.py\nb.py"),)),
        Message.assistant("Two files: a.py and b.py."),
        Message.user("now the other one"),
        Message.assistant("Done."),
    ]
    assert clean_pairs(history) == [
        ("list the files", "Two files: a.py and b.py."),
        ("now the other one", "Done."),
    ]


def test_context_holds_the_last_three_pairs_marked() -> None:
    history = [m for i in range(5) for m in _pair(i)]
    context = format_context(history)
    assert context.startswith("<conversation_context>\n") and context.endswith("</conversation_context>")
    assert "prompt 0" not in context and "prompt 1" not in context
    assert context.index("prompt 2") < context.index("answer 2") < context.index("prompt 4")
    assert "Judge only the candidate answer" in context
    assert format_context([]) == ""


def test_context_cuts_the_oldest_pairs_first_with_a_marker() -> None:
    history = [m for i in range(3) for m in _pair(i, size=3_000)]  # ~1,500 tokens a pair
    context = format_context(history, max_tokens=4_000)
    assert len(context) <= 4_000 * 4
    assert "prompt 0" not in context and "prompt 1" in context and "prompt 2" in context
    assert "[1 earlier exchange(s) omitted" in context
    assert context.index("omitted") < context.index("prompt 1")


def test_a_newest_pair_longer_than_the_bound_keeps_both_ends() -> None:
    history = [
        Message.user("START " + "x" * 40_000 + " END-OF-PROMPT"),
        Message.assistant("ok " + "y" * 40_000),
    ]
    context = format_context(history, max_tokens=4_000)
    assert len(context) <= 4_000 * 4 + 200
    assert "START" in context and "END-OF-PROMPT" in context and "characters truncated" in context


def test_critic_message_order_is_context_task_evidence_answer() -> None:
    calls = [ToolCallRecord("n1", "p", "bash", {"command": "ls"}, "a.txt", False, 0.1)]
    message = critic_message("do the same for the other file", calls, "done", history=_pair(1))
    heads = [b.text.split("\n")[0] for b in message.content]
    assert heads == ["<conversation_context>", "<task>", "<evidence>", "<candidate_answer>"]
    assert "prompt 1" in message.content[0].text
    assert "do the same for the other file" in message.content[1].text


def test_evidence_is_cut_from_the_middle_to_fit_the_window() -> None:
    calls = [
        ToolCallRecord(f"n{i}", "p", "bash", {"command": f"step {i}"}, f"out-{i} " + "z" * 6_000, False, 0.1)
        for i in range(1, 21)
    ]
    task, answer = "the task " * 50, "the answer " * 50
    message = critic_message(
        task, calls, answer, history=_pair(1), max_input_tokens=12_000, reserved_tokens=500
    )
    text = "".join(b.text for b in message.content)
    assert estimate_tokens(text) <= 12_000 - 500
    evidence = message.content[2].text
    assert "[1] bash" in evidence and "[20] bash" in evidence  # the first and the last call stay
    assert "omitted to fit the critic's input window" in evidence
    assert evidence.index("[1] bash") < evidence.index("omitted") < evidence.index("[20] bash")
    # What is judged is never cut when it fits: the task, the answer and the context.
    assert task in message.content[1].text and answer in message.content[3].text
    assert "prompt 1" in message.content[0].text


def test_a_single_huge_call_is_shortened_not_dropped() -> None:
    calls = [
        ToolCallRecord(
            "n1", "p", "bash", {"command": "cat big"}, "HEAD " + "q" * 50_000 + " TAIL", False, 0.1
        )
    ]
    evidence = format_evidence(calls, max_chars=3_000)
    assert len(evidence) <= 3_200 and "[1] bash" in evidence and "TAIL" in evidence
