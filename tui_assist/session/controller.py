"""The controller: what a host does with what the user sends, and every run it makes.

Every host (the TUI, `ask`, the ACP agent, streaming output) hands prompts to one
`TurnController` and implements the narrow `Host` protocol: it is told what happens (core events,
a turn started or ended, the queue, a run's state, the meter) and is asked what only a person can
answer (approvals). The controller owns the rest, so that no host keeps run state of its own:

- **runs**: each piece of work (a turn, `!`, `/compact`, a flow, a resume, a rewind) is a `Run`
  (`session/runs.py`) the host can await, cancel in any state and watch; one run at a time holds
  the busy slot. The host says how work starts on its loop (its `Launcher`: a Textual worker, an
  asyncio task); the controller never starts a task of its own kind;
- **routing**: a prompt starting with `/` is a command (a custom command expands to a turn when
  it runs, its !`command` spans run first; a built-in goes to the host's handler; an unknown
  `/name` is refused with one line in every host, never sent), anything else a turn (`!COMMAND`
  a shell turn, which runs the command with no model call);
- **the queue**: a prompt sent while a run holds the slot waits, and runs when it ends; a turn
  that fails or is cancelled gives the queued prompts back to the host instead (they were typed
  as follow-ups to a turn that did not come back);
- **steering**: while a turn runs, a plain queued prompt joins it at its next model request (its
  run ends `joined`; see `core.steering`); a held one (`submit(..., hold=True)`), a command, a
  `!` line, one with images or `@` mentions (or with `UserPromptSubmit` hooks to run) waits;
- **cancel and retry**: `cancel` stops the current run (a turn under way is kept, marked
  interrupted), and "deny and stop" in an approval cancels it too, whichever host asked; the
  prompt of a failed turn can be sent again with `retry`;
- **the meter**: tokens, cache, cost and context fill, fed from the turn's `UsageRecorded` events
  (replayed events never pass here, so a resumed turn is not counted twice).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from tui_assist.core.events import UsageRecorded
from tui_assist.session.hooks import PromptRefused
from tui_assist.session.mentions.attachment import UnsendableImageError
from tui_assist.session.runs import Run, task_launcher
from tui_assist.session.slash_commands import SlashInput, is_command_name, parse_slash, unknown_command

if TYPE_CHECKING:
    from tui_assist.core.conversation import ImageBlock
    from tui_assist.core.events import TurnEvent
    from tui_assist.core.observer import ApprovalDecision, ToolApproval, TurnObserver
    from tui_assist.session.chat import ChatSession, TurnOutcome
    from tui_assist.session.mentions import Attachments
    from tui_assist.session.runs import Launcher, RunKind, Work
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

    def run_command(self, call: SlashInput, text: str) -> Callable[[], Awaitable[None]] | None:
        """Run the built-in command `call` (typed as `text`); the work left to run, if any."""
        ...

    def command_refused(self, text: str, why: str) -> None:
        """`text` names no command (`why`, one line naming the closest): it was not sent."""
        ...

    def run_changed(self, run: Run) -> None:
        """`run` moved on: `starting`, `running` or `done` (the busy state may have changed)."""
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
    refusal: str | None = None
    """Why the last prompt was refused as an unknown command (None: it was not)."""

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

    def command_refused(self, text: str, why: str) -> None:
        """Keep why (the host reports it when the prompt is done)."""
        self.refusal = why

    def run_changed(self, run: Run) -> None:
        """The host awaits its run: nothing to show on the way."""


class TurnController:
    """Owns a host's runs: routes, queues, starts, cancels and retries them, and feeds the meter."""

    def __init__(self, session: ChatSession, host: Host, launcher: Launcher = task_launcher) -> None:
        """Drive `session`'s runs for `host`, starting their work with `launcher`."""
        self.session = session
        self.host = host
        self.launcher = launcher
        self.current: Run | None = None
        """The run holding the busy slot (a turn, a flow, a resume...), from `starting` to done."""
        self.failed_prompt: str | None = None
        """The prompt of the last turn when it failed (`retry` sends it again)."""
        self._queue: list[Run] = []
        """Prompts sent while a run ran, oldest first."""

    @property
    def running(self) -> bool:
        """Whether a run holds the busy slot (a turn, `!`, `/compact`, a flow, a resume, a rewind)."""
        return self.current is not None

    @property
    def queued(self) -> tuple[str, ...]:
        """The prompts waiting behind the current run, oldest first."""
        return tuple(run.label for run in self._queue)

    # -- what the user sends ------------------------------------------------------------------

    @property
    def waiting(self) -> tuple[Run, ...]:
        """The queued runs themselves, oldest first (a host marks the held ones)."""
        return tuple(self._queue)

    def submit(self, text: str, *, images: Sequence[ImageBlock] = (), hold: bool = False) -> Run | None:
        """Route what the user sent; the run it makes (None: nothing left to run).

        A built-in command goes to `host.run_command` (its work, if any, runs as a `command` run
        beside the others); an unknown `/name` is refused with one line (`host.command_refused`),
        never sent; a custom command expands to its prompt; a prompt runs now, or is queued while
        another run holds the busy slot. `images` (an editor's pasted image) go with the prompt.
        A queued prompt may join the running turn (see steering); `hold` keeps it for after.
        """
        call = parse_slash(text)
        if call is not None and self.custom_command(call) is None:
            from tui_assist.session.commands import SLASH

            if call.name in SLASH.names:
                return self._command(call, text)
            if not call.name or is_command_name(call.name):
                self.host.command_refused(text, unknown_command(call.name, self.session.custom_commands()))
                return None
            # Else a path (`/etc/hosts is wrong`): a prompt like any other.
        run = self._new_turn(text, images)
        if self.running or self._queue:
            run.held = hold
            self._queue.append(run)
            self.host.queue_changed(self.queued)
            return run
        self._launch(run, lambda: self._turn(run))
        return run

    def custom_command(self, call: SlashInput) -> CustomCommand | None:
        """The custom command (a Markdown file) `/NAME` names; None for any other."""
        return self.session.custom_commands().commands.get(call.name)

    def retry(self) -> Run | None:
        """Send the failed prompt again; None when there is none or a run holds the busy slot."""
        if self.failed_prompt is None or self.running:
            return None
        run = self._new_turn(self.failed_prompt, ())
        self._launch(run, lambda: self._turn(run))
        return run

    def start(self, kind: RunKind, label: str, work: Work) -> Run | None:
        """Run the host's `work` (a flow, a resume, a rewind, `/compact`) in the busy slot.

        Returns:
            None when another run holds the slot (the host says so; nothing is queued).
        """
        if self.running:
            return None
        if kind in ("resume", "rewind"):
            self.failed_prompt = None  # it belonged to the conversation as it was
        run = Run(kind, label, cancel=self._cancel)
        self._launch(run, work)
        return run

    def new_conversation(self) -> bool:
        """Start a new conversation (the meter at zero, nothing to retry); False while a run runs."""
        if self.running:
            return False
        self.session.new_conversation()
        self.failed_prompt = None
        return True

    def cancel(self) -> bool:
        """Cancel the current run, in whatever state it is; the queue goes back to the user.

        A turn under way is stopped by the session, which keeps it marked interrupted.

        Returns:
            False when no run holds the busy slot.
        """
        return self.current is not None and self._cancel(self.current)

    async def run_prompt(self, prompt: str) -> TurnEnded:
        """Run one prompt as a turn now (never as a command), and return how it ended.

        Raises:
            RuntimeError: when a run holds the busy slot.
        """
        if self.running:
            raise RuntimeError("a run is under way")
        run = self._new_turn(prompt, ())
        self._launch(run, lambda: self._turn(run))
        await run
        return run.ended or TurnEnded(prompt, None, problem="cancelled")

    # -- runs ---------------------------------------------------------------------------------

    def _new_turn(self, text: str, images: Sequence[ImageBlock]) -> Run:
        kind: RunKind = "shell" if self.session.strategy_name(text) == "shell" else "turn"
        return Run(kind, text, images=images, cancel=self._cancel)

    def _command(self, call: SlashInput, text: str) -> Run | None:
        work = self.host.run_command(call, text)
        if work is None:
            return None
        run = Run("command", text, cancel=self._cancel)
        self._launch(run, work, busy=False)
        return run

    def _launch(self, run: Run, work: Callable[[], Awaitable[object]], *, busy: bool = True) -> None:
        """Hand `run` to the launcher; it holds the busy slot from now on (unless not `busy`)."""
        if busy:
            self.current = run
        run.set_state("starting")
        self.host.run_changed(run)

        async def body() -> None:
            if run.done:  # cancelled before the launcher got to it
                return
            run.set_state("running")
            self.host.run_changed(run)
            try:
                run.value = await work()
            except asyncio.CancelledError:
                run.cancelled = True
                raise
            except Exception as exc:  # the host reads it from the run; it must not end the loop
                run.error = exc
            finally:
                self._finish(run)

        run.handle = self.launcher(body)

    def _finish(self, run: Run) -> None:
        """End `run`, and start the next queued prompt when the busy slot is free."""
        if run.done:
            return
        run.set_state("done")
        if self.current is run:
            self.current = None
        if run.kind == "compact":
            self.host.meter_changed()  # the context fill dropped
        self.host.run_changed(run)
        if self.current is None and self._queue:
            following = self._queue.pop(0)
            self.host.queue_changed(self.queued)
            self._launch(following, lambda: self._turn(following))

    def _cancel(self, run: Run) -> bool:
        if run.done:
            return False
        run.cancelled = True
        if run.state == "queued":
            self._queue.remove(run)
            self.host.queue_changed(self.queued)
            self._finish(run)
            return True
        if run is self.current:
            self._give_back_queue()
        handle = run.handle
        if run.state == "starting":
            # Ended now, whether or not the launcher ever starts it: nothing waits on its body.
            self._finish(run)
        elif run.kind in ("turn", "shell") and self.session.interrupt():
            return True  # the session stores the turn as cancelled, and the run ends with it
        if handle is not None:
            handle.cancel()
        return True

    # -- one turn -----------------------------------------------------------------------------

    async def _turn(self, run: Run) -> None:
        """Run `run`'s prompt as a persisted turn (with its images) and keep how it ended."""
        prompt, session = run.label, self.session
        self.failed_prompt = None
        self.host.turn_started(prompt, session.strategy_name(prompt))
        try:
            ended = await self._run(prompt, run.images)
        except asyncio.CancelledError:  # while loading, or the host closing
            run.ended = TurnEnded(prompt, None, problem="cancelled")
            self.host.turn_ended(run.ended)
            raise
        run.ended = ended
        run.cancelled = run.cancelled or ended.cancelled
        if ended.failed:
            self.failed_prompt = prompt
            self._give_back_queue()
        self.host.turn_ended(ended)

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
                sent,
                self.observer,
                attachments=attachments,
                model=model,
                notes=notes,
                steering=self._take_joining,
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

    def _take_joining(self) -> list[str]:
        """The queued prompts that join the running turn now; their runs end as joined."""
        joining = [run for run in self._queue if self._may_join(run)]
        for run in joining:
            self._queue.remove(run)
            run.joined = True
            run.set_state("done")
            self.host.run_changed(run)
        if joining:
            self.host.queue_changed(self.queued)
        return [run.label for run in joining]

    def _may_join(self, run: Run) -> bool:
        """Whether a queued prompt is plain text a running turn can take as it is."""
        from tui_assist.session.mentions import find_mentions

        text, session = run.label, self.session
        if run.held or run.kind != "turn" or run.images or parse_slash(text) is not None:
            return False
        if session.strategy_name(text) not in ("agent", "refine") or find_mentions(text):
            return False
        return session.hooks is None or not session.hooks.of("UserPromptSubmit")

    def _give_back_queue(self) -> None:
        if self._queue:
            queued, self._queue = self._queue, []
            for run in queued:
                run.cancelled = True
                run.set_state("done")
            self.host.queue_returned(tuple(run.label for run in queued))

    # -- the meter ----------------------------------------------------------------------------

    @property
    def observer(self) -> TurnObserver:
        """The host as an observer: the meter fed on the way, and "deny and stop" obeyed.

        Every run reports to it, a flow's and `/compact`'s too, so their spend is counted.
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
        decision = await self._observer.approve(request)
        if decision.kind == "stop":
            # From inside the run: its next await ends it, before another model request.
            self._controller.cancel()
        return decision
