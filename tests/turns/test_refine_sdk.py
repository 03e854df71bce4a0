"""Refine turns through the real Anthropic SDK, real tools, against the loopback fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, Reply, Text, ToolUse
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation
from tui_assist.core.events import StreamRetried
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.anthropic import AnthropicProvider
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.agent import AgentTurn
from tui_assist.turns.refine import RefineTurn


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    (path / "sub").mkdir(parents=True)
    return path


def deps(fake: FakeAnthropic, workdir: Path) -> TurnDeps:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)
    return TurnDeps(provider, toolbox_factory(workdir, bash_timeout=10), approvals=ApprovalPolicy("allow"))


def bash(command: str) -> ToolUse:
    return ToolUse("bash", {"command": command})


async def test_critic_sees_the_evidence_and_round_two_sees_the_feedback(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(
        Reply([Text("Checking."), bash("echo evidence-$((6*7))")]),
        Reply("The value is 41."),
        Reply("REVISE\nThe evidence shows 42, not 41."),
        Reply([bash("echo evidence-$((6*7))")]),
        Reply("The value is 42."),
        Reply("PASS"),
    )
    turn = RefineTurn(deps(fake, workdir))
    result = await turn.run(Conversation(), "What does the command print?", RecordingObserver())

    assert result.outcome == "answered" and result.answer == "The value is 42."
    critic = fake.requests[2]
    assert "tools" not in critic.body or critic.body["tools"] == []
    assert "evidence-42" in critic.all_text()  # the real tool output, as executed
    assert "The value is 41." in critic.all_text()
    round2 = fake.requests[3]
    assert "The evidence shows 42, not 41." in round2.all_text()
    assert [
        (r["verdict"], r["tool_calls"])
        for r in [{"verdict": x.verdict, "tool_calls": x.tool_calls} for x in result.rounds]
    ] == [("revise", 1), ("pass", 1)]


async def test_cd_in_round_one_does_not_leak_into_round_two(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(
        Reply([bash("cd sub && export LEAK=yes && pwd")]),
        Reply("moved"),
        Reply("REVISE go again"),
        Reply([bash('pwd; echo "leak=${LEAK:-none}"')]),
        Reply("done"),
        Reply("PASS"),
    )
    result = await RefineTurn(deps(fake, workdir)).run(Conversation(), "where am I?", RecordingObserver())

    first, second = result.rounds[0].evidence[0].output, result.rounds[1].evidence[0].output
    assert first.strip().endswith(str(workdir / "sub"))
    assert str(workdir) in second and str(workdir / "sub") not in second
    assert "leak=none" in second


async def test_follow_up_turn_carries_exactly_the_clean_pairs(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(
        Reply([bash("echo tool-output-secret")]),
        Reply("first answer"),
        Reply("REVISE critic-feedback-secret"),
        Reply("first answer, revised"),
        Reply("PASS"),
        Reply("second answer"),
        Reply("PASS"),
    )
    turn = RefineTurn(deps(fake, workdir))
    conversation = Conversation()
    await turn.run(conversation, "first prompt", RecordingObserver())
    await turn.run(conversation, "second prompt", RecordingObserver())

    follow_up = fake.requests[5]
    shape = [(m["role"], [b["text"] for b in m["content"]]) for m in follow_up.messages]
    assert shape == [
        ("user", ["first prompt"]),
        ("assistant", ["first answer, revised"]),
        ("user", ["second prompt"]),
    ]


async def test_a_clarifying_question_passes_in_one_round(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(
        Reply("Which branch do you mean: main or release?"),
        Reply("PASS\nThe task is ambiguous; asking is right."),
    )
    result = await RefineTurn(deps(fake, workdir)).run(
        Conversation(), "merge the branch", RecordingObserver()
    )
    assert result.outcome == "answered" and len(result.rounds) == 1
    assert "clarifying question" in fake.requests[1].system[0]["text"]


async def test_always_revise_ends_unverified_after_n_rounds(fake: FakeAnthropic, workdir: Path) -> None:
    for i in range(2):
        fake.add(Reply(f"attempt {i}"), Reply("REVISE\nnot good enough"))
    result = await RefineTurn(deps(fake, workdir), max_rounds=2).run(
        Conversation(), "task", RecordingObserver()
    )
    assert result.outcome == "unverified" and result.answer == "attempt 1"
    assert [r.verdict for r in result.rounds] == ["revise", "revise"]
    assert fake.remaining == 0


async def test_critic_failure_is_retried_then_a_clear_error(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(
        Reply("an answer"),
        Reply("PA", error_after=3),  # the critic's stream breaks mid-way...
        Error(529),
        Error(529),
        Error(529),  # ...and the retry meets an overloaded API
    )
    observer = RecordingObserver()
    conversation = Conversation()
    result = await RefineTurn(deps(fake, workdir)).run(conversation, "task", observer)

    assert result.outcome == "error"
    assert result.error and "\n" not in result.error and "529" in result.error
    assert any(isinstance(e, StreamRetried) for e in observer.events)
    assert conversation.messages == []  # nothing half-written


async def test_refine_rounds_reuse_the_cached_prefix(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(Reply("a1"), Reply("REVISE x"), Reply("a2"), Reply("PASS"))
    conversation = Conversation()
    result = await RefineTurn(deps(fake, workdir)).run(conversation, "task", RecordingObserver())
    assert result.usage.cache_read_input_tokens > 0
    assert result.rounds[1].usage.cache_read_input_tokens > 0


async def test_agent_turn_runs_bash_and_the_editor_end_to_end(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(
        Reply([bash("printf 'hello\\n' > note.txt")]),
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "str_replace", "path": "note.txt", "old_str": "hello", "new_str": "bye"},
                )
            ]
        ),
        Reply(
            [ToolUse("str_replace_based_edit_tool", {"command": "view", "path": str(workdir / "note.txt")})]
        ),
        Reply([ToolUse("str_replace_based_edit_tool", {"command": "view", "path": "../outside.txt"})]),
        Reply("note.txt now says bye."),
    )
    result = await AgentTurn(deps(fake, workdir)).run(Conversation(), "edit the note", RecordingObserver())

    assert result.outcome == "answered"
    assert (workdir / "note.txt").read_text() == "bye\n"
    outputs = [(c.name, c.is_error) for c in result.evidence]
    assert outputs == [
        ("bash", False),
        ("str_replace_based_edit_tool", False),
        ("str_replace_based_edit_tool", False),
        ("str_replace_based_edit_tool", True),
    ]
    tools = fake.requests[0].tools
    assert {"type": "bash_20250124", "name": "bash"}.items() <= tools[0].items() or any(
        t.get("type") == "bash_20250124" for t in tools
    )
    assert any(t.get("name") == "agent" and "input_schema" in t for t in tools)


async def test_sub_agent_round_trip_through_the_sdk(fake: FakeAnthropic, workdir: Path) -> None:
    fake.add(
        Reply([ToolUse("agent", {"description": "count files", "prompt": "How many files are in sub?"})]),
        Reply([bash("ls sub | wc -l")]),
        Reply("There are 0 files."),
        Reply("The sub-agent says 0 files."),
    )
    result = await AgentTurn(deps(fake, workdir)).run(Conversation(), "count", RecordingObserver())
    assert result.answer == "The sub-agent says 0 files."
    sub_request = fake.requests[1]
    assert [m["content"][0]["text"] for m in sub_request.messages] == ["How many files are in sub?"]
    assert "There are 0 files." in fake.requests[3].all_text()
    assert [c.name for c in result.evidence] == ["bash", "agent"]


async def test_the_critic_request_holds_context_task_evidence_answer_in_order(
    fake: FakeAnthropic, workdir: Path
) -> None:
    (workdir / "dates.py").write_text("def parse_date(s): ...\n")
    (workdir / "times.py").write_text("def parse_time(s): ...\n")
    fake.add(
        Reply("I fixed parse_date in dates.py."),
        Reply("PASS"),
        Reply([bash("cat times.py")]),
        Reply("I fixed parse_time in times.py."),
        Reply("REVISE\n[1] shows times.py unchanged."),
        Reply([bash("cat times.py")]),
        Reply("times.py still needs the fix."),
        Reply("PASS"),
    )
    turn = RefineTurn(deps(fake, workdir))
    conversation = Conversation()
    await turn.run(conversation, "fix the date parser in dates.py", RecordingObserver())
    result = await turn.run(conversation, "now do the same for the other file", RecordingObserver())

    critic = fake.requests[4]
    assert "tools" not in critic.body
    (message,) = critic.messages
    texts = [b["text"] for b in message["content"]]
    assert [t.split("\n")[0] for t in texts] == [
        "<conversation_context>",
        "<task>",
        "<evidence>",
        "<candidate_answer>",
    ]
    assert "fix the date parser in dates.py" in texts[0] and "I fixed parse_date in dates.py." in texts[0]
    assert "now do the same for the other file" in texts[1]
    assert "[1] bash" in texts[2] and "def parse_time" in texts[2]
    assert "I fixed parse_time in times.py." in texts[3]
    # Context and task are cached for the next round; evidence and answer are not.
    assert [("cache_control" in b) for b in message["content"]] == [False, True, False, False]
    round_two_critic = fake.requests[7]
    assert round_two_critic.body["messages"][0]["content"][1]["text"] == texts[1]
    first, second = (r.critic_usage for r in result.rounds)
    assert second.cache_read_input_tokens >= first.cache_creation_input_tokens > 0


async def test_a_prompt_that_joins_a_round_is_in_the_task_its_critic_judges(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Reply([bash("echo one")]), Reply("One, then two."), Reply("PASS"))
    typed = ["and print two as well"]

    def steering() -> list[str]:  # what the controller hands over: once, then nothing
        texts = list(typed)
        typed.clear()
        return texts

    turn_deps = deps(fake, workdir)
    turn_deps.steering = steering
    result = await RefineTurn(turn_deps).run(Conversation(), "print one", RecordingObserver())

    assert result.outcome == "answered"
    joined = fake.requests[1].messages[-1]["content"]
    assert joined[0]["type"] == "tool_result" and "and print two as well" in joined[-1]["text"]
    critic = fake.requests[2]
    assert "and print two as well" in critic.all_text() and "print one" in critic.all_text()
