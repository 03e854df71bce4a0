"""The API's web search server tool through the real SDK against the loopback fake: offered,
its blocks and citations kept for the API, and shown as a tool call with the sources listed."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply, ServerToolUse, Text, WebSearchResult, cite
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, Message, ServerToolBlock
from tui_assist.core.events import TextDelta, ToolCallFinished, ToolCallStarted
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.anthropic import AnthropicProvider
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.agent import AgentTurn
from tui_assist.turns.refine import RefineTurn

PEARS = "https://pears.test/facts"
NEWS = "https://fruit.test/news"


def deps(fake: FakeAnthropic, workdir: Path, *, search: bool = True) -> TurnDeps:
    provider = AnthropicProvider(
        api_key="test", base_url=fake.base_url, stream_backoff=0.01, web_search_max_uses=3 if search else None
    )
    return TurnDeps(provider, toolbox_factory(workdir, bash_timeout=10), approvals=ApprovalPolicy("allow"))


def searched_reply() -> Reply:
    return Reply(
        [
            Text("Let me look that up."),
            ServerToolUse({"query": "pear prices 2026"}, id="srvtoolu_01"),
            WebSearchResult("srvtoolu_01", [("Fruit news", NEWS), ("Pear facts", PEARS)]),
            Text("Pears cost 2 euros a kilo", citations=[cite(PEARS, "Pear facts", "2 euros a kilo")]),
            Text(
                ", up from last year",
                citations=[cite(NEWS, "Fruit news", "up"), cite(PEARS, "Pear facts", "x")],
            ),
            Text("."),
        ]
    )


async def test_search_is_offered_shown_as_a_tool_call_and_its_blocks_go_back_to_the_api(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(searched_reply(), Reply("Yes, the same source."))
    turn_deps = deps(fake, tmp_path)
    observer = RecordingObserver()
    conversation = Conversation()
    result = await AgentTurn(turn_deps).run(conversation, "What do pears cost?", observer)

    tools = fake.requests[0].tools
    assert tools[0] == {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    assert [t["name"] for t in tools[1:6]] == ["bash", "str_replace_based_edit_tool", "glob", "grep", "agent"]

    assert result.outcome == "answered"
    assert result.answer == (
        "Let me look that up.Pears cost 2 euros a kilo, up from last year.\n\n"
        f"Sources:\n- [Pear facts]({PEARS})\n- [Fruit news]({NEWS})"
    )
    streamed = "".join(e.text for e in observer.events if isinstance(e, TextDelta))
    assert streamed == result.answer  # the sources list streams under the answer, as kept
    [started] = [e for e in observer.events if isinstance(e, ToolCallStarted)]
    [finished] = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert (started.name, started.input, started.call_id) == (
        "web_search",
        {"query": "pear prices 2026"},
        "srvtoolu_01",
    )
    assert (finished.output, finished.is_error) == (f"Fruit news — {NEWS}\nPear facts — {PEARS}", False)
    assert [(r.name, r.input) for r in result.evidence] == [("web_search", {"query": "pear prices 2026"})]

    # The next turn sends the blocks back verbatim (the fake refuses them otherwise).
    [reply] = [m for m in result.history if m.role == "assistant"]
    assert sum(isinstance(b, ServerToolBlock) for b in reply.content) == 2
    assert Message.from_dict(reply.to_dict()) == reply  # what the store keeps reads back the same
    conversation.messages.extend(result.history)
    second = await AgentTurn(turn_deps).run(conversation, "Same source?", RecordingObserver())
    assert second.outcome == "answered", second
    sent = fake.requests[1].messages[1]["content"]
    assert [b["type"] for b in sent] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "text",
        "text",
    ]
    assert sent[2]["content"][1]["encrypted_content"].startswith("enc-")
    assert sent[3]["citations"][0]["encrypted_index"].startswith("idx-")
    assert "caller" not in sent[1]


async def test_a_paused_turn_is_resumed_and_a_failed_search_is_an_error_call(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(
        Reply(
            [
                ServerToolUse({"query": "q"}, id="srvtoolu_02"),
                WebSearchResult("srvtoolu_02", error_code="too_many_requests"),
            ],
            stop_reason="pause_turn",
        ),
        Reply("I could not search."),
    )
    observer = RecordingObserver()
    result = await AgentTurn(deps(fake, tmp_path)).run(Conversation(), "search", observer)
    assert (result.outcome, result.answer) == ("answered", "I could not search.")
    assert fake.requests[1].messages[-1]["role"] == "assistant"  # resumed with the paused reply
    [finished] = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert (finished.output, finished.is_error) == ("web search failed: too_many_requests", True)


async def test_the_critic_and_an_unconfigured_provider_offer_no_search(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(Reply("Answer."), Reply("PASS"))
    await RefineTurn(deps(fake, tmp_path), max_rounds=1).run(Conversation(), "q", RecordingObserver())
    generator, critic = fake.requests
    assert generator.tools[0]["type"] == "web_search_20250305"
    assert not critic.tools
    fake.add(Reply("Plain."))
    await AgentTurn(deps(fake, tmp_path, search=False)).run(Conversation(), "q", RecordingObserver())
    assert all(t.get("type") != "web_search_20250305" for t in fake.requests[2].tools)
