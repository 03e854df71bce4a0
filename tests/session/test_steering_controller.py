"""Steering through the controller: queued prompts join the running turn, held ones wait for its end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.session.test_controller import RecordingHost, _session
from tests.ui.helpers import tool_use
from tui_assist.core.conversation import TextBlock
from tui_assist.core.events import PromptJoined
from tui_assist.core.model import ModelRequest, ModelResponse, StreamSink
from tui_assist.providers.scripted import ScriptedProvider, ScriptStep
from tui_assist.session.controller import TurnController


class GatedProvider(ScriptedProvider):
    """A scripted provider whose first request waits until released: a turn mid-flight."""

    def __init__(self, script: list[ScriptStep]) -> None:
        super().__init__(script)
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        if not self.started.is_set():
            self.started.set()
            await self.release.wait()
        return await super().complete(request, sink)


async def _running(tmp_path: Path, script: list[ScriptStep]):
    provider = GatedProvider(script)
    session = _session(tmp_path, provider)
    await session.load()
    host = RecordingHost()
    controller = TurnController(session, host)
    first = controller.submit("run the tests")
    assert first is not None
    await asyncio.wait_for(provider.started.wait(), 5)
    return controller, host, provider, first


async def test_a_queued_prompt_joins_the_next_request_and_a_held_one_runs_after(tmp_path: Path) -> None:
    script: list[ScriptStep] = [tool_use("pytest"), "Ran them; only the fast ones.", "Now the rest."]
    controller, host, provider, first = await _running(tmp_path, script)
    held = controller.submit("then run the slow ones", hold=True)
    joining = controller.submit("only the fast ones")
    assert held is not None and joining is not None
    assert host.queues[-1] == ("then run the slow ones", "only the fast ones")  # both shown queued

    provider.release.set()
    await asyncio.wait_for(held.wait(), 5)

    assert joining.done and joining.joined and not joining.cancelled
    assert "only the fast ones" in provider.requests[1].messages[-1].text
    assert [e.text for e in host.events if isinstance(e, PromptJoined)] == ["only the fast ones"]
    assert not held.joined and host.started == ["run the tests", "then run the slow ones"]
    assert "then run the slow ones" not in provider.requests[1].messages[-1].text
    assert provider.requests[2].messages[-1].text == "then run the slow ones"
    history = controller.session.conversation.messages
    assert any("only the fast ones" in m.text for m in history)  # stored with the turn it joined
    assert first.done and not controller.queued


async def test_with_no_further_request_a_queued_prompt_runs_after_the_turn(tmp_path: Path) -> None:
    controller, host, provider, _ = await _running(tmp_path, [[TextBlock("Done.")], "Follow-up done."])
    follow_up = controller.submit("and then this")
    assert follow_up is not None

    provider.release.set()
    await asyncio.wait_for(follow_up.wait(), 5)

    assert not follow_up.joined and host.started == ["run the tests", "and then this"]
    assert not [e for e in host.events if isinstance(e, PromptJoined)]


async def test_a_command_or_a_shell_line_never_joins(tmp_path: Path) -> None:
    script: list[ScriptStep] = [tool_use("ls"), "Listed."]
    controller, host, provider, _ = await _running(tmp_path, script)
    shell = controller.submit("!echo hi")
    assert shell is not None

    provider.release.set()
    await asyncio.wait_for(shell.wait(), 5)

    assert not shell.joined and host.started[-1] == "!echo hi"
    assert len(provider.requests) == 2 and "echo hi" not in provider.requests[1].messages[-1].text
