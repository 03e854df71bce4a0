"""Typing while a turn runs, escape and ctrl+c: nothing typed is lost or reordered."""

from __future__ import annotations

import asyncio

from tests.ui.helpers import BlockingProvider, make_app, screen_text, wait_until
from tui_assist.core.conversation import Message, TextBlock
from tui_assist.core.model import ModelRequest, ModelResponse, StreamSink
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.queued_prompt import QueuedPrompt


class GatedProvider:
    """Answers each request with `answer N` once its gate opens; records the prompts it got."""

    name = "gated"
    model = "gated"

    def __init__(self) -> None:
        self.gates: list[asyncio.Event] = []
        self.prompts: list[str] = []
        self.started = asyncio.Event()

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        from tui_assist.core.conversation import Usage

        self.prompts.append(request.messages[-1].text)
        gate = asyncio.Event()
        self.gates.append(gate)
        self.started.set()
        text = f"answer {len(self.prompts)}"
        sink.text(text)
        await gate.wait()
        return ModelResponse(Message.assistant(text), "end_turn", Usage(10, 5), self.model)

    async def aclose(self) -> None:
        return None


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


def _notifications(app: TuiAssistApp) -> list[str]:
    return [notification.message for notification in app._notifications]


def _main(app: TuiAssistApp) -> MainScreen:
    screen = app.screen
    assert isinstance(screen, MainScreen)
    return screen


async def test_text_typed_during_a_turn_is_queued_whole_and_sent_next_in_order() -> None:
    provider = GatedProvider()
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"first part", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        # Typed on at once, during the turn: it stays in the prompt, in order.
        await pilot.press(*" second part")
        assert app.query_one(Prompt).text == " second part"
        await pilot.press("enter", *"third", "enter")
        queued = app.query(QueuedPrompt)
        assert [q.text for q in queued] == ["second part", "third"]
        assert "queued · second part" in screen_text(app)
        assert provider.prompts == ["first part"]

        provider.gates[0].set()
        await wait_until(pilot, lambda: len(provider.prompts) == 2)
        assert provider.prompts[1] == "second part"
        assert [q.text for q in app.query(QueuedPrompt)] == ["third"]
        provider.gates[1].set()
        await wait_until(pilot, lambda: len(provider.prompts) == 3)
        provider.gates[2].set()
        await _settle(app, pilot)
        assert provider.prompts == ["first part", "second part", "third"]
        assert not app.query(QueuedPrompt)
        assert [m.text for m in app.session.conversation.messages] == [
            "first part",
            "answer 1",
            "second part",
            "answer 2",
            "third",
            "answer 3",
        ]


async def test_escape_cancels_the_turn_and_puts_the_queued_prompts_back_in_order() -> None:
    provider = BlockingProvider("Working on it")
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"long task", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        await pilot.press(*"one", "enter", *"two", "enter", *"still typing")
        assert len(app.query(QueuedPrompt)) == 2
        await pilot.press("escape")
        await _settle(app, pilot)
        assert provider.cancelled and not _main(app).running
        prompt = app.query_one(Prompt)
        assert prompt.text == "one\ntwo\nstill typing"
        assert app.focused is prompt
        assert not app.query(QueuedPrompt)
        # The interrupted turn is in the history, and nothing queued was sent.
        assert [m.text for m in app.session.conversation.messages] == [
            "long task",
            "Working on it\n\n[interrupted by the user]",
        ]


async def test_queued_prompts_come_back_when_the_turn_fails() -> None:
    from tui_assist.providers.scripted import ScriptedProvider

    class FailingSlowly(ScriptedProvider):
        def __init__(self) -> None:
            super().__init__([])
            self.gate = asyncio.Event()

        async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
            await self.gate.wait()
            return await super().complete(request, sink)  # the script is empty: a provider error

    provider = FailingSlowly()
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"doomed", "enter", *"follow-up", "enter")
        assert [q.text for q in app.query(QueuedPrompt)] == ["follow-up"]
        provider.gate.set()
        await _settle(app, pilot)
        assert app.query_one(Prompt).text == "follow-up"
        assert len(provider.requests) == 1


async def test_ctrl_c_interrupts_a_running_turn_like_escape() -> None:
    provider = BlockingProvider("Halfway")
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"go", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        await pilot.press(*"next", "enter")
        await pilot.press("ctrl+c")
        await _settle(app, pilot)
        assert provider.cancelled and not _main(app).running
        assert app.query_one(Prompt).text == "next"
        assert app.focused is app.query_one(Prompt)
        assert app.session.conversation.messages[-1].text == "Halfway\n\n[interrupted by the user]"
        assert app.is_running


async def test_ctrl_c_when_idle_asks_once_then_quits() -> None:
    app = make_app([])
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"some text", "ctrl+c")  # first, it clears a prompt with text in it
        assert app.query_one(Prompt).text == ""
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert _notifications(app)[-1] == "press ctrl+c again to quit"
        assert not app._exit
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit


async def test_ctrl_c_with_text_selected_copies_it_and_nothing_else() -> None:
    provider = BlockingProvider("Busy")
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"go", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        await pilot.press(*"copy me", "shift+home", "ctrl+c")
        await pilot.pause()
        assert app.clipboard == "copy me"
        assert _main(app).running and not provider.cancelled  # copying didn't stop the turn
        assert app.query_one(Prompt).text == "copy me"
        provider.release.set()
        await _settle(app, pilot)


async def test_the_interrupt_key_can_be_remapped() -> None:
    app = make_app([], keymap={"interrupt-or-quit": "ctrl+g"})
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert _notifications(app)[-1] == "press ctrl+g again to quit"
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app._exit


async def test_the_prompts_cursor_holds_still_while_a_turn_runs() -> None:
    """A blink is a frame of its own, and would hold back the streamed answer's next frame."""
    provider = GatedProvider()
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        prompt = app.query_one(Prompt)
        assert prompt.cursor_blink
        await pilot.press(*"question", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        assert not prompt.cursor_blink
        provider.gates[0].set()
        await _settle(app, pilot)
        assert prompt.cursor_blink
        # One that was set not to blink (the snapshot tests do) is left so.
        prompt.cursor_blink = False
        await pilot.press(*"again", "enter")
        await wait_until(pilot, lambda: len(provider.gates) == 2)
        provider.gates[1].set()
        await _settle(app, pilot)
        assert not prompt.cursor_blink


async def test_escape_before_the_turn_started_cancels_it_and_the_next_prompt_runs() -> None:
    """The controller handed the turn to a worker that has not started yet: escape ends the run at
    once, and a prompt sent next runs instead of queueing behind it."""
    from tests.launchers import HeldLauncher
    from tui_assist.providers.scripted import ScriptedProvider

    provider = ScriptedProvider([[TextBlock("The second one.")]])
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        main = _main(app)
        controller = main.controller
        held = HeldLauncher(start=controller.launcher)  # the screen's own workers, started late
        controller.launcher = held
        await pilot.press(*"never sent", "enter")
        assert main.running and controller.current is not None
        assert controller.current.state == "starting"
        await pilot.press("escape")
        await pilot.pause()
        assert not main.running and "Turn cancelled." in _notifications(app)
        held.release()  # the worker starts late: its run is over, it does nothing
        await _settle(app, pilot)
        assert not provider.requests and not app.session.conversation.messages

        controller.launcher = held.start
        await pilot.press(*"sent", "enter")
        await _settle(app, pilot)
        assert not app.query(QueuedPrompt)
        assert [m.text for m in app.session.conversation.messages] == ["sent", "The second one."]
