from __future__ import annotations

import asyncio

import pytest

from tests.core.toolkit import BlockTool, BoxFactory, EchoTool, SubagentTool, WriteTool
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.budget import Budget
from tui_assist.core.conversation import Conversation, TextBlock, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted
from tui_assist.core.model import ProviderError
from tui_assist.core.observer import ApprovalDecision, RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.turns.agent import AgentTurn


def use(name: str, **input: object) -> ToolUseBlock:
    return ToolUseBlock(f"toolu_{name}_{len(input)}", name, dict(input))


def make_turn(
    script, *, factory: BoxFactory | None = None, policy: ApprovalPolicy | None = None, budget=None
):
    provider = ScriptedProvider(script)
    deps = TurnDeps(
        provider,
        factory or BoxFactory(),
        approvals=policy or ApprovalPolicy("allow"),
        budget=budget or Budget(),
    )
    return AgentTurn(deps), provider


async def test_events_come_in_tree_order_and_history_keeps_the_transcript() -> None:
    turn, provider = make_turn([[TextBlock("Looking."), use("echo", text="hi")], "It said hi."])
    observer = RecordingObserver()
    conversation = Conversation()

    result = await turn.run(conversation, "say hi", observer)

    assert result.outcome == "answered" and result.answer == "It said hi."
    assert observer.kinds == [
        "node_started",  # turn
        "node_started",  # agent
        "text_delta",
        "usage_recorded",
        "tool_call_started",
        "tool_call_finished",
        "text_delta",
        "usage_recorded",
        "node_finished",  # agent
        "node_finished",  # turn
    ]
    turn_start, agent_start = observer.events[0], observer.events[1]
    assert (
        isinstance(turn_start, NodeStarted)
        and turn_start.node_kind == "turn"
        and turn_start.parent_id is None
    )
    assert isinstance(agent_start, NodeStarted) and agent_start.parent_id == turn_start.node_id
    tool_start = observer.events[4]
    assert isinstance(tool_start, ToolCallStarted) and tool_start.parent_id == agent_start.node_id
    # the whole transcript, tool calls included, is history
    roles = [(m.role, [b.type for b in m.content]) for m in conversation.messages]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["text", "tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert result.history == conversation.messages
    # the second request carried the tool result
    second = provider.requests[1].messages[-1].content[0]
    assert isinstance(second, ToolResultBlock) and second.content == "echo: hi"


async def test_invalid_and_unknown_tool_input_become_error_results() -> None:
    turn, provider = make_turn([[use("echo", txt="wrong key"), use("nope", x=1)], "recovered"])
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "go", observer)

    assert result.outcome == "answered"
    finished = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert [f.is_error for f in finished] == [True, True]
    assert "Invalid input for echo" in finished[0].output
    assert "Unknown tool 'nope'" in finished[1].output and "echo" in finished[1].output
    results = provider.requests[1].messages[-1].content
    assert all(isinstance(b, ToolResultBlock) and b.is_error for b in results)


async def test_tool_input_that_is_not_an_object_becomes_an_error_result() -> None:
    # The Tool protocol promises tools a dict; a provider or a script may hand over anything.
    bad = ToolUseBlock("toolu_bad", "echo", 42)  # pyright: ignore[reportArgumentType]
    turn, provider = make_turn([[bad], "recovered"])
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "go", observer)

    assert result.outcome == "answered"
    finished = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert [(f.output, f.is_error) for f in finished] == [
        ("Invalid input for echo: expected a JSON object, got int.", True)
    ]


async def test_asking_again_after_an_empty_reply_is_a_model_request_of_the_budget() -> None:
    turn, provider = make_turn([[], "never sent"], budget=Budget(max_model_requests=1))
    conversation = Conversation()

    result = await turn.run(conversation, "hi", RecordingObserver())

    assert result.outcome == "budget_exhausted" and len(provider.requests) == 1
    assert [m.text for m in conversation.messages] == ["hi", f"[stopped: {result.error}]"]


async def test_model_request_budget_is_checked_before_the_spend() -> None:
    script = [[use("echo", text=str(i))] for i in range(5)]
    turn, provider = make_turn(script, budget=Budget(max_model_requests=2))
    conversation = Conversation()

    result = await turn.run(conversation, "loop", RecordingObserver())

    assert result.outcome == "budget_exhausted"
    assert len(provider.requests) == 2  # the third request was never sent
    assert "model-request budget of 2" in (result.error or "")
    # a cut transcript is not valid history: only a clean pair is kept
    assert [m.role for m in conversation.messages] == ["user", "assistant"]


async def test_tool_call_budget_stops_before_running_the_tool() -> None:
    writer = WriteTool()
    factory = BoxFactory([writer])
    turn, _ = make_turn(
        [[use("write", text="a"), ToolUseBlock("t2", "write", {"text": "b"})]],
        factory=factory,
        budget=Budget(max_tool_calls=1),
    )

    result = await turn.run(Conversation(), "write twice", RecordingObserver())

    assert result.outcome == "budget_exhausted"
    assert writer.written == ["a"]


async def test_token_budget_refuses_the_next_request() -> None:
    turn, provider = make_turn([[use("echo", text="x" * 400)], "never sent"], budget=Budget(max_tokens=50))

    result = await turn.run(Conversation(), "spend", RecordingObserver())

    assert result.outcome == "budget_exhausted" and "token budget" in (result.error or "")
    assert len(provider.requests) == 1


async def test_denied_call_tells_the_model_what_the_host_said() -> None:
    writer = WriteTool()
    turn, provider = make_turn(
        [[use("write", text="x")], "ok, not written"],
        factory=BoxFactory([writer]),
        policy=ApprovalPolicy("ask"),
    )
    observer = RecordingObserver(decision=ApprovalDecision.deny("re-run with --yes to allow it"))

    await turn.run(Conversation(), "write", observer)

    assert writer.written == []
    assert (
        observer.approvals
        and observer.approvals[0].tool == "write"
        and observer.approvals[0].summary == "echo x"
    )
    result_block = provider.requests[1].messages[-1].content[0]
    assert isinstance(result_block, ToolResultBlock) and result_block.is_error
    assert result_block.content == "Denied: re-run with --yes to allow it."


async def test_a_plain_denial_names_no_host_and_no_flag() -> None:
    turn, provider = make_turn(
        [[use("write", text="x")], "ok"], factory=BoxFactory([WriteTool()]), policy=ApprovalPolicy("ask")
    )

    await turn.run(Conversation(), "write", RecordingObserver(decision=ApprovalDecision.deny()))

    result_block = provider.requests[1].messages[-1].content[0]
    assert isinstance(result_block, ToolResultBlock)
    assert result_block.content == "Denied: the user did not approve this write call."
    assert "headless" not in result_block.content and "--yes" not in result_block.content


async def test_feedback_reaches_the_model_as_the_tool_result() -> None:
    writer = WriteTool()
    turn, provider = make_turn(
        [[use("write", text="x")], "ok"], factory=BoxFactory([writer]), policy=ApprovalPolicy("ask")
    )
    observer = RecordingObserver(decision=ApprovalDecision.deny_with_feedback("write y instead"))

    await turn.run(Conversation(), "write", observer)

    result_block = provider.requests[1].messages[-1].content[0]
    assert isinstance(result_block, ToolResultBlock) and result_block.is_error
    assert result_block.content.endswith("said:\nwrite y instead") and writer.written == []


async def test_stop_denies_the_call_and_asks_nothing_more_in_that_run() -> None:
    writer = WriteTool()
    second = ToolUseBlock("t2", "write", {"text": "2"})
    turn, provider = make_turn(
        [[use("write", text="1"), second], "stopped"],
        factory=BoxFactory([writer]),
        policy=ApprovalPolicy("ask"),
    )
    observer = RecordingObserver(decision=ApprovalDecision.stop())

    await turn.run(Conversation(), "write twice", observer)

    assert writer.written == [] and len(observer.approvals) == 1
    first_result, second_result = provider.requests[1].messages[-1].content
    assert isinstance(first_result, ToolResultBlock) and "stopped the turn" in first_result.content
    assert (
        isinstance(second_result, ToolResultBlock)
        and second_result.content == "Not run: the user stopped the turn."
    )


async def test_allow_for_session_is_remembered() -> None:
    writer = WriteTool()
    policy = ApprovalPolicy("ask")
    turn, _ = make_turn(
        [[use("write", text="1")], [ToolUseBlock("t2", "write", {"text": "2"})], "done"],
        factory=BoxFactory([writer]),
        policy=policy,
    )
    observer = RecordingObserver(decision=ApprovalDecision.allow_session())

    await turn.run(Conversation(), "write twice", observer)

    assert writer.written == ["1", "2"]
    assert len(observer.approvals) == 1  # asked once, then allowed for the session


async def test_cancellation_reports_cancelled_nodes_and_keeps_history() -> None:
    blocker = BlockTool()
    turn, _ = make_turn([[use("block", text="x")]], factory=BoxFactory([blocker]))
    observer = RecordingObserver()
    conversation = Conversation()

    task = asyncio.create_task(turn.run(conversation, "wait", observer))
    await asyncio.wait_for(blocker.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    finished = [e for e in observer.events if isinstance(e, NodeFinished)]
    assert [f.status for f in finished] == ["cancelled", "cancelled"]  # agent, then turn
    tool_done = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert tool_done and tool_done[0].output == "cancelled"
    assert conversation.messages == []


async def test_provider_error_ends_the_turn_with_error_and_no_history() -> None:
    turn, _ = make_turn([])  # exhausted script: the provider fails
    observer = RecordingObserver()
    conversation = Conversation()

    result = await turn.run(conversation, "hi", observer)

    assert result.outcome == "error" and "script exhausted" in (result.error or "")
    assert conversation.messages == []
    last = observer.events[-1]
    assert isinstance(last, NodeFinished) and last.status == "failed"


async def test_subagent_runs_under_its_tool_node_with_a_fresh_context() -> None:
    factory = BoxFactory([EchoTool(), SubagentTool()])
    script = [
        [use("agent", description="look", prompt="find it")],
        [use("echo", text="inner")],
        "inner answer",
        "outer answer",
    ]
    turn, provider = make_turn(script, factory=factory)
    observer = RecordingObserver()

    result = await turn.run(Conversation(), "delegate", observer)

    assert result.answer == "outer answer"
    sub_request = provider.requests[1]
    assert [m.text for m in sub_request.messages] == ["find it"]  # its own fresh context
    agent_call = next(e for e in observer.events if isinstance(e, ToolCallStarted) and e.name == "agent")
    sub_node = next(
        e for e in observer.events if isinstance(e, NodeStarted) and e.parent_id == agent_call.node_id
    )
    assert sub_node.node_kind == "agent" and sub_node.label == "look"
    inner_call = next(e for e in observer.events if isinstance(e, ToolCallStarted) and e.name == "echo")
    assert inner_call.parent_id == sub_node.node_id
    assert [c.name for c in result.evidence] == ["echo", "agent"]  # the sub-agent's call is evidence too
    final = provider.requests[3].messages[-1].content[0]
    assert isinstance(final, ToolResultBlock) and final.content == "inner answer"


async def test_subagent_depth_is_limited() -> None:
    factory = BoxFactory([SubagentTool()])
    script = [
        [use("agent", description="d1", prompt="p1")],
        [use("agent", description="d2", prompt="p2")],
        [use("agent", description="d3", prompt="p3")],
        "level2 done",
        "level1 done",
        "top done",
    ]
    turn, provider = make_turn(script, factory=factory)
    turn.deps.max_depth = 2

    result = await turn.run(Conversation(), "nest", RecordingObserver())

    assert result.answer == "top done"
    depth_result = provider.requests[3].messages[-1].content[0]
    assert (
        isinstance(depth_result, ToolResultBlock)
        and depth_result.is_error
        and "depth limit" in depth_result.content
    )


async def test_each_turn_gets_a_fresh_toolbox_that_is_closed() -> None:
    factory = BoxFactory([EchoTool()])
    turn, _ = make_turn(["a", "b"], factory=factory)
    conversation = Conversation()
    await turn.run(conversation, "1", RecordingObserver())
    await turn.run(conversation, "2", RecordingObserver())
    assert len(factory.made) == 2 and all(box.closed == 1 for box in factory.made)


async def test_provider_error_mid_loop_keeps_the_conversation_intact() -> None:
    def fail(_request):
        raise ProviderError("boom")

    turn, _ = make_turn([[use("echo", text="x")], fail])
    conversation = Conversation()
    result = await turn.run(conversation, "hi", RecordingObserver())
    assert result.outcome == "error" and result.error == "boom"
    assert conversation.messages == []
