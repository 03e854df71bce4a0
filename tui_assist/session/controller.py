"""The controller: what a host does with what the user sends.

Every host (the TUI, `ask`, the ACP agent, streaming output) hands prompts to one
`TurnController` and implements the narrow `Host` protocol: it is told what happens (core events,
a turn started or ended, the queue, the meter) and is asked what only a person can answer
(approvals). The controller owns the rest, so that no host calls `ChatSession.run_turn` itself:

- **routing**: a prompt starting with `/` is a command (a custom command expands to a turn when
  it runs, its !`command` spans run first; a built-in goes to the host's handler), anything else
  a turn (`!COMMAND` a shell turn, which runs the command with no model call);
- **the queue**: a prompt sent while a turn runs waits, and runs when the turn ends; a turn that
  fails or is cancelled gives the queued prompts back to the host instead (they were typed as
  follow-ups to a turn that did not come back);
- **cancel and retry**: `cancel` stops the running turn (the session keeps it as interrupted);
  the prompt of a failed turn can be sent again with `retry`;
- **the meter**: tokens, cache, cost and context fill, fed from the turn's `UsageRecorded` events
  (replayed events never pass here, so a resumed turn is not counted twice).

The controller never decides where its work runs: `submit` and `retry` return the work for the
host to await in its own turn task (a Textual worker, so approval modals can be awaited), and
`run_prompt` runs one prompt for hosts that wait for its end (`ask`, ACP).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from tui_assist.core.events import UsageRecorded
from tui_assist.session.hooks import PromptRefused
from tui_assist.session.mentions.attachment import UnsendableImageError
from tui_assist.session.slash_commands import SlashInput, parse_slash

if TYPE_CHECKING:
    from tui_assist.core.conversation import ImageBlock
    from tui_assist.core.events import TurnEvent
    from tui_assist.core.observer import ApprovalDecision, ToolApproval, TurnObserver
    from tui_assist.session.chat import ChatSession, TurnOutcome
    from tui_assist.session.mentions import Attachments
    from tui_assist.session.slash_commands import CustomCommand


class Host(Protocol):
    """What a host implements for its controller: show what happens, answer what is asked."""

    @property
    def turn_observer(self) -> TurnObserver:
        """Where a turn's core events go as they happen, and who is asked to approve a tool call."""
        ...

    def turn_started(self, prompt: str, strategy: str) -> None:
        """A prompt begins to run as a turn of `strategy` (`agent`, `refine` or `shell`)."""
        ...

    def prompt_attached(self, attachments: Attachments) -> None:
        """The files the prompt's `@path` mentions attached, before the model is called."""
        ...

    def turn_ended(self, ended: TurnEnded) -> None:
        """The turn is over (its outcome, or why it did not run)."""
        ...

    def queue_changed(self, queued: Sequence[str]) -> None:
        """The prompts waiting behind the running turn are now `queued` (oldest first)."""
        ...

    def queue_returned(self, texts: Sequence[str]) -> None:
        """The queue was emptied after a failure or a cancel: `texts` go back to the user to edit."""
        ...

    def meter_changed(self) -> None:
        """The session's meter or context fill moved."""
        ...

    def run_command(self, call: SlashInput, text: str) -> Awaitable[None] | None:
        """Run the built-in command `call` (typed as `text`); the work to await, if any."""
        ...


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """How a prompt's turn ended, for the host to show."""

    prompt: str
    outcome: TurnOutcome | None
    """What the session returned; None when the turn did not run (see `problem`)."""
    problem: str | None = None
    """Why there is no outcome: no provider, or an unexpected error (one line)."""
    unsent: bool = False
    """The prompt was never sent (no provider): nothing was stored."""
    refused_input: bool = False
    """The prompt was not sent for what it attached (an image that cannot be sent): a usage error."""

    @property
    def failed(self) -> bool:
        """Whether the turn did not come back in one piece (an error, or no outcome)."""
        return self.outcome is None or self.outcome.result.outcome == "error"

    @property
    def cancelled(self) -> bool:
        """Whether the turn was interrupted (it is kept in the conversation, marked)."""
        return self.outcome is not None and self.outcome.result.outcome == "cancelled"


class QuietHost:
    """The part of a `Host` with no screen to keep current, for hosts that run one prompt at a time.

    It keeps how the last turn ended (`ended`) and shows nothing else; a subclass gives the
    `turn_observer` and `run_command`, and overrides what it does show.
    """

    ended: TurnEnded | None = None
    """How the last turn ended (None until one did)."""

    def turn_started(self, prompt: str, strategy: str) -> None:
        """Nothing to show before the turn's own events."""

    def prompt_attached(self, attachments: Attachments) -> None:
        """Reported after the turn, from its outcome."""

    def turn_ended(self, ended: TurnEnded) -> None:
        """Keep how the turn ended."""
        self.ended = ended

    def queue_changed(self, queued: Sequence[str]) -> None:
        """One prompt runs at a time (another is refused): there is no queue to show."""

    def queue_returned(self, texts: Sequence[str]) -> None:
        """One prompt runs at a time: there is no queue to give back."""

    def meter_changed(self) -> None:
        """The meter is read when asked for (at the end, or by `/cost`)."""


class TurnController:
    """Routes, queues, runs, cancels and retries a host's prompts, and feeds the meter."""

    def __init__(self, session: ChatSession, host: Host) -> None:
        """Drive `session`'s turns for `host`."""
        self.session = session
        self.host = host
        self.queued: list[str] = []
        """Prompts sent while a turn ran, oldest first."""
        self.failed_prompt: str | None = None
        """The prompt of the last turn when it failed (`retry` sends it again)."""
        self._task: asyncio.Task[object] | None = None
        """The task running a prompt, from its start (loading included) to its end."""
        self._starting = False
        """A prompt's work is with the host and has not started yet. It counts as running: the
        host may start it a moment later, after handling more input (a second enter typed at
        once), and a prompt sent meanwhile must wait in the queue, not start beside it."""

    @property
    def running(self) -> bool:
        """Whether a prompt is being run (the session may still be loading for it)."""
        return self._task is not None or self._starting

    # -- what the user sends ------------------------------------------------------------------

    def submit(self, text: str, *, images: Sequence[ImageBlock] = ()) -> Awaitable[None] | None:
        """Route what the user sent, and return the work for the host to await (None: nothing).

        A built-in command goes to `host.run_command`; a custom command expands to its prompt; a
        prompt runs now, or waits in the queue while a turn runs (then None is returned: the
        running work sends it). `images` (an editor's pasted image) go with a prompt that runs
        now; hosts that queue attach images by `@path` mentions instead.
        """
        call = parse_slash(text)
        if call is not None and self.custom_command(call) is None:
            return self.host.run_command(call, text)
        if self.running or self.queued:
            self.queued.append(text)
            self.host.queue_changed(tuple(self.queued))
            return None
        self._starting = True
        return self._run_all(text, images)

    def custom_command(self, call: SlashInput) -> CustomCommand | None:
        """The custom command (a Markdown file) `/NAME` names; None for any other."""
        return self.session.custom_commands().commands.get(call.name)

    def retry(self) -> Awaitable[None] | None:
        """Send the failed prompt again; None when there is none or a turn runs."""
        if self.failed_prompt is None or self.running:
            return None
        self._starting = True
        return self._run_all(self.failed_prompt)

    def cancel(self) -> bool:
        """Stop the running turn (kept, marked interrupted); the queue goes back to the user.

        Returns:
            False when no prompt is running.
        """
        if self._task is None:
            return False
        self._give_back_queue()
        # A turn under way is stopped by the session, which stores it as cancelled; a prompt
        # still waiting for the session to load has nothing to store.
        if not self.session.interrupt():
            self._task.cancel()
        return True

    async def _run_all(self, text: str, images: Sequence[ImageBlock] = ()) -> None:
        """Run `text`, then each prompt queued meanwhile, until the queue is empty or a turn fails."""
        self._starting = False  # `run_prompt` takes over at once (no await between)
        while True:
            ended = await self.run_prompt(text, images=images)
            if ended.failed or ended.cancelled or not self.queued:
                return
            text, images = self.queued.pop(0), ()
            self.host.queue_changed(tuple(self.queued))

    # -- one prompt ---------------------------------------------------------------------------

    async def run_prompt(self, prompt: str, *, images: Sequence[ImageBlock] = ()) -> TurnEnded:
        """Run one prompt as a persisted turn now (with `images` attached), and return how it ended.

        Raises:
            RuntimeError: when a prompt is already running.
            asyncio.CancelledError: when the calling task is cancelled before the turn started,
                or while the host closes (the session stores a started turn as cancelled first).
        """
        if self._task is not None:
            raise RuntimeError("a turn is running")
        session = self.session
        self._task = asyncio.current_task()
        self.failed_prompt = None
        self.host.turn_started(prompt, session.strategy_name(prompt))
        try:
            ended = await self._run(prompt, images)
        except asyncio.CancelledError:
            self.host.turn_ended(TurnEnded(prompt, None, problem="cancelled"))
            raise
        finally:
            self._task = None
        if ended.failed:
            self.failed_prompt = prompt
            self._give_back_queue()
        self.host.turn_ended(ended)
        return ended

    async def _run(self, prompt: str, images: Sequence[ImageBlock]) -> TurnEnded:
        session = self.session
        if not session.ready:
            await session.wait_ready()
        if session.provider is None:
            problem = session.provider_problem or "no provider is configured"
            return TurnEnded(prompt, None, problem=problem, unsent=True)
        try:
            sent, model, notes = await self._expanded(prompt)
            await session.prompt_hooks(sent)  # the user's UserPromptSubmit hooks may refuse it
            attachments = with_images(await session.attach(sent), sent, images)
            if attachments is not None:
                self.host.prompt_attached(attachments)
            outcome = await session.run_turn(
                sent, self.observer, attachments=attachments, model=model, notes=notes
            )
        except asyncio.CancelledError:
            raise
        except PromptRefused as exc:  # nothing sent or stored: the hook's words are the problem
            return TurnEnded(prompt, None, problem=str(exc))
        except UnsendableImageError as exc:  # nothing sent or stored: the user fixes the mention
            return TurnEnded(prompt, None, problem=str(exc), refused_input=True)
        except Exception as exc:  # a bug must not take the host down with it
            return TurnEnded(prompt, None, problem=f"{type(exc).__name__}: {exc}")
        return TurnEnded(prompt, outcome)

    async def _expanded(self, prompt: str) -> tuple[str, str | None, list[str]]:
        """What `prompt` sends: a custom command's expanded text, its model and its warnings."""
        call = parse_slash(prompt)
        custom = self.custom_command(call) if call is not None else None
        if call is None or custom is None:
            return prompt, None, []
        from tui_assist.session.command_shell import expand_command

        expanded = await expand_command(self.session, custom, call.args, self.observer)
        return expanded.text, expanded.model, expanded.warnings

    def _give_back_queue(self) -> None:
        if self.queued:
            texts = tuple(self.queued)
            self.queued.clear()
            self.host.queue_returned(texts)

    # -- the meter ----------------------------------------------------------------------------

    @property
    def observer(self) -> TurnObserver:
        """The host as an observer, with the meter fed on the way.

        For any model work the host starts itself (a flow run, `/compact`), so its spend is
        counted too.
        """
        return _MeteredObserver(self)

    def count_usage(self, event: UsageRecorded) -> None:
        """Add one model call's usage to the session's meter (at its model's price)."""
        session = self.session
        model = event.model or session.model
        session.meter.add(event.usage, session.price(model), model)
        self.host.meter_changed()


def with_images(
    attachments: Attachments | None, prompt: str, images: Sequence[ImageBlock]
) -> Attachments | None:
    """The prompt's attachments with `images` added after those its `@path` mentions attached."""
    if not images:
        return attachments
    from tui_assist.session.mentions import Attachments

    if attachments is None:
        attachments = Attachments(prompt, prompt, (), ())
    return replace(attachments, images=(*attachments.images, *images))


class _MeteredObserver:
    """The observer a turn reports to: the host's, with the meter fed on the way."""

    def __init__(self, controller: TurnController) -> None:
        self._controller = controller
        self._observer = controller.host.turn_observer

    def on_event(self, event: TurnEvent) -> None:
        if isinstance(event, UsageRecorded):
            self._controller.count_usage(event)
        self._observer.on_event(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        return await self._observer.approve(request)
