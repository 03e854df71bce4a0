from __future__ import annotations

import json

from tests.core.toolkit import BoxFactory
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, Message, TextBlock, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import event_from_dict, event_to_dict
from tui_assist.core.observer import ApprovalDecision, FanOutObserver, RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider, load_script
from tui_assist.turns.refine import RefineTurn


async def test_every_event_survives_a_json_round_trip() -> None:
    provider = ScriptedProvider([[ToolUseBlock("t", "echo", {"text": "x"})], "a", "REVISE no", "b", "PASS"])
    first, second = RecordingObserver(decision=ApprovalDecision.deny()), RecordingObserver()
    fan = FanOutObserver(first, second)
    await RefineTurn(TurnDeps(provider, BoxFactory(), ApprovalPolicy("allow"))).run(Conversation(), "q", fan)

    assert first.events == second.events and len(first.events) > 10
    kinds = {e.kind for e in first.events}
    assert {
        "node_started",
        "node_finished",
        "tool_call_started",
        "verdict_reached",
        "usage_recorded",
    } <= kinds
    for event in first.events:
        assert event_from_dict(json.loads(json.dumps(event_to_dict(event)))) == event


async def test_fan_out_asks_only_the_primary() -> None:
    from tui_assist.core.observer import ToolApproval

    primary, other = RecordingObserver(decision=ApprovalDecision.deny()), RecordingObserver()
    decision = await FanOutObserver(primary, other).approve(ToolApproval("n", "bash", {}, "ls"))
    assert decision == ApprovalDecision.deny() and other.approvals == []


def test_messages_round_trip_in_the_api_shape() -> None:
    message = Message("assistant", (TextBlock("hi"), ToolUseBlock("t1", "bash", {"command": "ls"})))
    assert Message.from_dict(message.to_dict()) == message
    result = Message("user", (ToolResultBlock("t1", "out", True),))
    assert Message.from_dict(result.to_dict()) == result


def test_script_file_is_validated(tmp_path) -> None:
    import pytest

    from tui_assist.core.model import ProviderError

    good = tmp_path / "s.json"
    good.write_text(
        json.dumps(
            [[{"type": "text", "text": "hi"}], [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]]
        )
    )
    assert len(load_script(good)) == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"type": "text"}]))
    with pytest.raises(ProviderError, match="must be a list of content blocks"):
        load_script(bad)
    with pytest.raises(ProviderError, match="cannot read"):
        load_script(tmp_path / "missing.json")
