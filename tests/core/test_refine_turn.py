from __future__ import annotations

import pytest

from tests.core.toolkit import BoxFactory
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, ToolUseBlock
from tui_assist.core.events import NodeStarted, VerdictReached
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.turns.refine import RefineTurn


def refine(script, rounds: int = 3, factory: BoxFactory | None = None):
    provider = ScriptedProvider(script)
    deps = TurnDeps(provider, factory or BoxFactory(), approvals=ApprovalPolicy("allow"))
    return RefineTurn(deps, max_rounds=rounds), provider


async def test_pass_in_round_one_returns_the_answer_and_a_clean_history() -> None:
    turn, provider = refine(
        [[ToolUseBlock("t1", "echo", {"text": "42"})], "The answer is 42.", "PASS\nmatches the evidence"]
    )
    observer = RecordingObserver()
    conversation = Conversation()

    result = await turn.run(conversation, "what is it?", observer)

    assert result.outcome == "answered" and result.answer == "The answer is 42."
    assert [(r.index, r.verdict, r.tool_calls) for r in result.rounds] == [(1, "pass", 1)]
    assert [(m.role, m.text) for m in conversation.messages] == [
        ("user", "what is it?"),
        ("assistant", "The answer is 42."),
    ]
    critic_request = provider.requests[2]
    assert critic_request.tools == ()
    assert "echo: 42" in critic_request.messages[0].text  # the evidence, as executed
    kinds = [(e.node_kind, e.label) for e in observer.events if isinstance(e, NodeStarted)]
    assert kinds[:2] == [("turn", "refine turn (≤3 rounds)"), ("round", "round 1")]
    assert ("generate", "generate") in kinds and ("critic", "critic") in kinds


async def test_revise_feeds_the_feedback_into_the_next_round() -> None:
    turn, provider = refine(["first try", "REVISE\nyou never ran the tests", "second try", "**PASS**"])
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "fix it", observer)

    assert result.outcome == "answered" and result.answer == "second try"
    assert [r.verdict for r in result.rounds] == ["revise", "pass"]
    round2 = provider.requests[2].messages[-1].text
    assert "first try" in round2 and "you never ran the tests" in round2
    verdicts = [e for e in observer.events if isinstance(e, VerdictReached)]
    assert [(v.round, v.verdict, v.feedback) for v in verdicts] == [
        (1, "revise", "you never ran the tests"),
        (2, "pass", ""),
    ]


async def test_always_revise_ends_unverified_after_the_round_budget() -> None:
    turn, provider = refine(["a1", "REVISE more", "a2", "REVISE more", "a3", "nonsense reply"], rounds=3)
    conversation = Conversation()

    result = await turn.run(conversation, "task", RecordingObserver())

    assert result.outcome == "unverified" and result.answer == "a3"
    assert [r.verdict for r in result.rounds] == ["revise"] * 3
    assert provider.remaining == 0
    assert [m.text for m in conversation.messages] == ["task", "a3"]


async def test_later_turns_see_only_clean_pairs() -> None:
    turn, provider = refine(
        [
            [ToolUseBlock("t1", "echo", {"text": "secret-evidence"})],
            "ans1",
            "REVISE critic-secret",
            "ans2",
            "PASS",
            "next",
            "PASS",
        ]
    )
    conversation = Conversation()
    await turn.run(conversation, "first", RecordingObserver())
    await turn.run(conversation, "second", RecordingObserver())

    follow_up = provider.requests[5]
    assert [(m.role, m.text) for m in follow_up.messages] == [
        ("user", "first"),
        ("assistant", "ans2"),
        ("user", "second"),
    ]
    text = "".join(m.text for m in follow_up.messages)
    assert "critic-secret" not in text and "secret-evidence" not in text


async def test_each_round_gets_a_fresh_toolbox() -> None:
    factory = BoxFactory()
    turn, _ = refine(["a1", "REVISE", "a2", "PASS"], factory=factory)
    await turn.run(Conversation(), "x", RecordingObserver())
    assert len(factory.made) == 2 and all(b.closed == 1 for b in factory.made)


async def test_critic_failure_is_an_error_with_nothing_in_history() -> None:
    turn, _ = refine(["answer"])  # the critic's request finds the script exhausted
    conversation = Conversation()
    result = await turn.run(conversation, "x", RecordingObserver())
    assert result.outcome == "error" and conversation.messages == []


def test_rounds_must_be_positive() -> None:
    with pytest.raises(ValueError):
        refine([], rounds=0)


async def test_the_critic_of_a_follow_up_sees_the_earlier_pairs_before_the_task() -> None:
    turn, provider = refine(
        [
            [ToolUseBlock("t1", "echo", {"text": "evidence-one"})],
            "Fixed parse_date in dates.py.",
            "REVISE critic-feedback-one",
            "Fixed parse_date in dates.py, tested.",
            "PASS",
            "Fixed parse_time in times.py.",
            "PASS",
        ]
    )
    conversation = Conversation()
    await turn.run(conversation, "fix the date parser", RecordingObserver())
    await turn.run(conversation, "now do the same for the other file", RecordingObserver())

    first_critic, follow_up_critic = provider.requests[2], provider.requests[6]
    assert [b.text.split("\n")[0] for b in first_critic.messages[0].content] == [
        "<task>",
        "<evidence>",
        "<candidate_answer>",
    ]
    blocks = [b.text for b in follow_up_critic.messages[0].content]
    assert [b.split("\n")[0] for b in blocks] == [
        "<conversation_context>",
        "<task>",
        "<evidence>",
        "<candidate_answer>",
    ]
    assert "fix the date parser" in blocks[0] and "Fixed parse_date in dates.py, tested." in blocks[0]
    assert "now do the same for the other file" in blocks[1]
    # Only clean pairs: the earlier turn's evidence and critic feedback stay out.
    assert "critic-feedback-one" not in blocks[0] and "evidence-one" not in blocks[0]
    # The context and the task repeat every round: the provider may cache them, not the rest.
    assert follow_up_critic.stable_blocks == 2 and not follow_up_critic.cache_tail
    assert first_critic.stable_blocks == 1


async def test_the_critic_input_is_bounded_by_the_window_it_is_given() -> None:
    script = [
        [ToolUseBlock(f"t{i}", "echo", {"text": f"chunk-{i} " + "w" * 8_000}) for i in range(12)],
        "done",
        "PASS",
    ]
    provider = ScriptedProvider(script)
    deps = TurnDeps(provider, BoxFactory(), approvals=ApprovalPolicy("allow"))
    turn = RefineTurn(deps, critic_max_input_tokens=8_000)

    result = await turn.run(Conversation(), "collect the chunks", RecordingObserver())

    assert result.outcome == "answered"
    critic = provider.requests[-1]
    text = critic.system + critic.messages[0].text
    assert len(text) / 4 <= 8_000
    evidence = critic.messages[0].content[1].text
    assert "chunk-0" in evidence and "chunk-11" in evidence
    assert "omitted to fit the critic's input window" in evidence
