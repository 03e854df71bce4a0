"""A chat session: the conversation, its turns, and the life of a persisted turn.

`ChatSession.run_turn` is the one place a turn is persisted: the conversation is created on the first turn,
the turn begun before any model call and committed (or stored as cancelled) before the host shows it as
done. Every host's turns reach it through the controller's runs (`session/controller.py`); no host knows
the store's steps. The parts a session runs on and their loading are `SessionParts`'s (`session/parts.py`),
which `ChatSession` extends. Beside this module, by reason to change: `meter.py` (the meter and pricing),
`strategy_factory.py` (the strategy a prompt runs), `turn_store.py` (a turn's end in the store),
`hook_events.py` and `stored_turns.py`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Unpack

from tui_assist.core.conversation import Conversation
from tui_assist.core.interrupted import interrupted_history
from tui_assist.core.nodes import new_id
from tui_assist.core.observer import FanOutObserver, NullObserver
from tui_assist.core.tree import NodeLogObserver
from tui_assist.session.claude_dirs import user_claude_dir
from tui_assist.session.factory import EmptyToolbox
from tui_assist.session.hook_events import AfterTurnStart, TurnHookContext
from tui_assist.session.instructions import Instructions, InstructionsLoader
from tui_assist.session.meter import Meter, cap_reached, price_for
from tui_assist.session.models import ModelChoices, list_price
from tui_assist.session.parts import PartsOptions, SessionParts
from tui_assist.session.stored_turns import StoredTurn, read_page, title_of
from tui_assist.session.strategy_factory import TURN_MODULES, build_strategy, strategy_name
from tui_assist.session.turn_snapshot import TurnSnapshot
from tui_assist.session.turn_store import TurnOutcome, commit_turn, store_cancelled

if TYPE_CHECKING:
    from tui_assist.core.compaction import HistorySummary
    from tui_assist.core.observer import TurnObserver
    from tui_assist.core.steering import Steering
    from tui_assist.core.tooling import ToolboxFactory
    from tui_assist.core.turn import TurnResult, TurnStrategy
    from tui_assist.session.config import Price, Settings
    from tui_assist.session.config_source import ConfigSource
    from tui_assist.session.context import CompactionReport, ContextKeeper
    from tui_assist.session.goals import Goals
    from tui_assist.session.history import History
    from tui_assist.session.mentions import Attachments
    from tui_assist.session.prompt_history import PromptHistory
    from tui_assist.session.slash_commands import CustomCommandLoader, CustomCommands

__all__ = ["TURN_MODULES", "ChatSession", "StoredTurn", "TurnOutcome"]

log = logging.getLogger(__name__)

RESUME_TURNS = 2
"""Turns redrawn first when a conversation is resumed (the newest; the history sent is complete).

Earlier ones are read a page at a time (`stored_page`) as the user scrolls up, so opening a
conversation costs the same at any length. Two ordinary answers fill a screen, and each more turn
drawn before the last answer shows delays it (the TUI loads more pages while the pane isn't full)."""
TITLE_LIMIT = 80
"""Longest conversation title `rename` stores."""
UNTITLED = "(new conversation)"
"""The title of a conversation stored before its first turn (that turn replaces it)."""


class ChatSession(SessionParts):
    """One conversation with a model, as any host runs it."""

    def __init__(self, settings: Settings | ConfigSource, **parts: Unpack[PartsOptions]) -> None:
        """Take the settings and the parts' options (see `SessionParts`); `load` builds the parts."""
        super().__init__(settings, **parts)
        self.conversation = Conversation()
        self.conversation_id: str | None = None
        self._title: str | None = None
        """A title given (`rename`) before the conversation was stored."""
        self._untitled = False
        """The conversation was stored before its first turn, untitled: that turn titles it."""
        self.meter = Meter()
        self.model_choices = ModelChoices()
        """What `/model` offers (the provider's list once read)."""
        self.budget_usd: float | None = None
        """The spend cap `/budget N` set (USD); None: the settings' `max_budget_usd`."""
        self.instructions = Instructions()
        """The project instructions the last turn was given (AGENTS.md files)."""
        self._running: asyncio.Task[TurnResult] | None = None
        self._instructions: InstructionsLoader | None = None
        self._prompt_history: PromptHistory | None = None
        self._context: ContextKeeper | None = None
        self._hook_turns = TurnHookContext()
        self._commands: CustomCommandLoader | None = None
        self._snapshot: TurnSnapshot | None = None
        """The running turn's checkpoints (see `session/turn_snapshot.py`)."""

    @cached_property
    def goals(self) -> Goals:
        """The goal the next turn pursues, and the latest goal's progress (`/goal`, `ask --goal`)."""
        from tui_assist.session.goals import Goals  # (late: it loads `session.commands`)

        return Goals()

    # -- the next turn -------------------------------------------------------------------------

    def strategy_name(self, prompt: str) -> str:
        """How `prompt` runs: `goal`, `shell` for `!COMMAND`, else `refine` or `agent` (hosts label it)."""
        return strategy_name(prompt, refine=self.refine, goal=self.goals.applies(prompt))

    def strategy(
        self, prompt: str = "", *, model: str | None = None, steering: Steering | None = None
    ) -> TurnStrategy:
        """The strategy `prompt` runs: the shell for `!COMMAND`, else agent or refine.

        `model` (a custom command's) is the model this turn's requests ask for; None: the session's.
        `steering` hands over the prompts that join the turn's agent (`core.steering`).

        Raises:
            SetupError: when there is no provider (a shell command needs none).
        """
        return build_strategy(
            prompt,
            settings=self.settings,
            refine=self.refine,
            rounds=self.rounds,
            provider=self._need_provider,
            toolbox_factory=self._toolbox_factory,
            approvals=self.approvals,
            system_prompt=self._system_prompt,
            spend_cap=self.spend_cap,
            context=self.context,
            context_window=lambda: self.context_window,
            hooks=self.hooks,
            before_side_effect=self._snapshot_taken,
            model=model,
            goals=self.goals,
            steering=steering,
        )

    def _system_prompt(self) -> str:
        """The settings' system prompt and the project's instructions, read again for each turn."""
        self.instructions = self._instructions_loader().load()
        if not self.instructions.text:
            return self.settings.system_prompt
        return f"{self.settings.system_prompt}\n\n{self.instructions.text}"

    @property
    def toolbox_factory(self) -> ToolboxFactory:
        """What makes a turn's tools (none before the session has them)."""
        workdir = self.settings.workdir
        return self._toolbox_factory or (lambda: EmptyToolbox(workdir))

    def _instructions_loader(self) -> InstructionsLoader:
        workdir = self.settings.workdir
        if self._instructions is None or self._instructions.workdir != workdir:
            from tui_assist.paths import config_dir

            self._instructions = InstructionsLoader(workdir, config_dir())
        return self._instructions

    def load_instructions(self) -> Instructions:
        """The project instructions as they are on disk now (what the next turn will be given)."""
        self.instructions = self._instructions_loader().load()
        return self.instructions

    def custom_commands(self) -> CustomCommands:
        """The custom commands on disk now, the project's and the user's (re-read when one changed)."""
        from tui_assist.paths import claude_home
        from tui_assist.session.slash_commands import CustomCommandLoader

        workdir = self.settings.workdir if self.ready else self.preview.workdir
        # Before the settings are validated, `[claude] import_user` is taken as its default (on).
        claude_user = user_claude_dir(self.settings) if self.ready else claude_home()
        plugins = self.extensions.plugins if self.extensions is not None else ()
        loader = self._commands
        wanted = (workdir, claude_user, plugins)
        if loader is None or (loader.workdir, loader.claude_user, loader.plugins) != wanted:
            from tui_assist.paths import config_dir
            from tui_assist.session.commands import SLASH

            loader = CustomCommandLoader(
                workdir, config_dir(), reserved=SLASH.names, claude_user=claude_user, plugins=plugins
            )
            self._commands = loader
        return loader.load()

    @property
    def prompt_history(self) -> PromptHistory:
        """The prompts the user sent, in every conversation (stored in the data dir)."""
        if self._prompt_history is None:
            from tui_assist.paths import data_dir
            from tui_assist.session.prompt_history import PromptHistory

            folder = self._settings.data_dir if self._settings is not None else self.preview.data_dir
            self._prompt_history = PromptHistory.in_data_dir(data_dir(folder))
        return self._prompt_history

    # -- context and cost ----------------------------------------------------------------------

    @property
    def context(self) -> ContextKeeper:
        """Keeps the conversation's requests inside the model's context window (see `session/context.py`).

        Built at first use: compaction and the model port behind it are not needed to paint the
        first screen.
        """
        if self._context is None:
            from tui_assist.session.context import ContextKeeper

            self._context = ContextKeeper(window=lambda: self.context_window, save=self._save_summary)
            self._context.before_compact = self._pre_compact
        return self._context

    async def _pre_compact(self, observer: TurnObserver, node_id: str, trigger: str) -> None:
        if self.hooks is not None:
            await self.hooks.pre_compact(observer, node_id, trigger)

    @property
    def context_window(self) -> int:
        """The context window of the session's model, in tokens (settings, else the known-models table)."""
        return self.settings.context_window(self.model)

    @property
    def context_fill(self) -> float | None:
        """How full the context was at the conversation's last request (0..1, past 1 when over), or None."""
        return None if self._context is None else self._context.fill  # (no keeper: no request yet)

    async def compact(
        self, instructions: str | None = None, observer: TurnObserver | None = None
    ) -> CompactionReport | None:
        """Summarise the conversation's history now (`/compact [INSTRUCTIONS]`); call it between turns.

        The stored turns are not changed: the summary stands in for all but the latest turn in what
        later requests send, and is saved with the conversation.

        Args:
            instructions: What the summary should focus on; passed to the summariser.
            observer: Where the `compact` node (a root node) and its usage are reported.

        Returns:
            What was done (`report.notice` is the line to show), or None when there is nothing older
            than the latest turn to summarise.

        Raises:
            SetupError: when there is no provider.
            RuntimeError: when a turn is running.
            ProviderError: when the summariser call fails (nothing is changed then).
        """
        provider = self._need_provider()
        if self.running:
            raise RuntimeError("a turn is running: compact after it")
        self.context.provider = provider
        self.context.compact_at = self.settings.compact_at
        self.context.spend_cap = self.spend_cap
        report = await self.context.compact_history(
            self.conversation.messages, observer or NullObserver(), instructions=instructions
        )
        if report is not None and self._hook_turns.session_started is None:
            self._hook_turns.session_started = (
                "compact"  # as in Claude Code, the next turn starts the session again
            )
        return report

    async def _save_summary(self, summary: HistorySummary) -> None:
        if self.store is not None and self.conversation_id is not None:
            if not await self.store.save_summary(self.conversation_id, summary):
                log.info("history summary not saved: it does not end at a stored turn")

    @property
    def max_budget_usd(self) -> float | None:
        """The conversation's spend cap in USD (`/budget N`, else `max_budget_usd`); None: no cap."""
        configured = self._settings.max_budget_usd if self._settings is not None else None
        cap = self.budget_usd if self.budget_usd is not None else configured
        return None if cap == math.inf else cap  # `/budget off` under a configured cap

    def spend_cap(self) -> str | None:
        """Why no further model request may go out (the meter reached the cap), or None."""
        return cap_reached(self.meter.cost, self.max_budget_usd)

    def price(self, model: str | None = None) -> Price | None:
        """The price of `model` (default: the session's) for the meter: `[prices]`, else its list price."""
        model = model or self.model
        return price_for(self.settings.prices, model) or list_price(model)

    # -- running a turn ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a turn is running."""
        return self._running is not None and not self._running.done()

    def interrupt(self) -> bool:
        """Stop the running turn; `run_turn` then returns it as cancelled. False when none runs."""
        if not self.running:
            return False
        assert self._running is not None
        self._running.cancel()
        return True

    async def attach(self, prompt: str) -> Attachments | None:
        """The files the prompt's `@path` mentions attach; None without mentions.

        Raises:
            UnsendableImageError: when a mentioned image cannot be sent (see `mentions.attach_prompt`).
        """
        from tui_assist.session.mentions import attach_prompt

        return await attach_prompt(prompt, self.settings.workdir)

    async def prompt_hooks(self, prompt: str) -> None:
        """Run the `UserPromptSubmit` hooks for `prompt`, before the host runs it as a turn.

        What they print is added to the message `run_turn(prompt)` sends; their nodes show under
        that turn's node once it starts.

        Raises:
            PromptRefused: when a hook refuses the prompt (exit 2); no turn may run for it.
        """
        self._hook_turns.forget()
        if self.hooks is None or not self.hooks.of("UserPromptSubmit"):
            return
        if self.conversation_id is None and self.store is not None:
            # Every hook gets the conversation's id, the first turn's too: store it now, titled by this turn.
            try:
                await self.start_conversation()
            except Exception:  # the turn's `_begin` tells the user the store failed
                log.warning("store: cannot create the conversation before its first prompt", exc_info=True)
        await self._hook_turns.prompt_submitted(self.hooks, self.conversation_id, prompt)

    async def run_turn(
        self,
        prompt: str,
        observer: TurnObserver,
        *,
        attachments: Attachments | None = None,
        model: str | None = None,
        notes: Sequence[str] = (),
        steering: Steering | None = None,
    ) -> TurnOutcome:
        """Run one turn and persist it: the one place a turn's life is written.

        A prompt `!COMMAND` runs COMMAND in the turn's shell (same sandbox, rules and approvals as
        a model's call) with no model call; the command and its output stay in the history as
        context for the next prompt, and the turn is stored like any other.

        The turn is begun in the store before any model call and committed before this returns.
        A turn stopped by `interrupt` keeps its prompt, finished tool calls and partial answer in
        the history (closed with a marker) and is stored as cancelled with them. Storing never
        fails the turn: what could not be saved becomes a warning.

        The files the prompt's `@path` mentions are attached to the message sent (the history
        keeps them; images as image blocks); the turn is stored with the prompt as typed. A
        mention that attached nothing becomes a warning.

        Args:
            prompt: What the user typed.
            observer: Where the turn's events go.
            attachments: What `attach(prompt)` returned, when the host already asked (to show
                it); None attaches here.
            model: The model this turn runs on (a custom command's `model`); None: the session's.
            notes: Warnings from before the turn (a custom command's expansion), kept with its own.
            steering: Hands over the prompts the user sends meanwhile that join the turn.

        Raises:
            SetupError: when there is no provider.
            asyncio.CancelledError: when the calling task itself is cancelled (the turn is stored
                as cancelled first, and leaves nothing in the history, as a crash would not).
        """
        strategy = self.strategy(prompt, model=model, steering=steering)
        turn_id = new_id()
        if strategy.name == "shell":  # `!COMMAND`: the command as typed, nothing attached
            attachments = None
        elif attachments is None or attachments.prompt != prompt:
            attachments = await self.attach(prompt)
        sent = attachments.text if attachments is not None else prompt
        warnings = [*notes, *(attachments.warnings() if attachments is not None else ())]
        compactions = self.context.compactions
        turn_model = None if strategy.name == "shell" else model or self.model
        stored = await self._begin(turn_id, strategy.name, prompt, warnings, turn_model)
        checkpoints = self.checkpoints if stored else None
        self._snapshot = snapshot = TurnSnapshot(checkpoints, turn_id, warnings) if checkpoints else None
        # The turn's one fold: the store, the interrupted history and the spend read it.
        folding = NodeLogObserver()
        log = folding.log
        sent, before = await self._hook_turns.context(self.hooks, self.conversation_id, prompt, sent, turn_id)
        turn_observer: TurnObserver = FanOutObserver(observer, folding)
        if before:
            turn_observer = AfterTurnStart(turn_observer, turn_id, before)
        self._running = task = asyncio.create_task(
            strategy.run(
                self.conversation,
                sent,
                turn_observer,
                turn_id=turn_id,
                images=attachments.images if attachments is not None else (),
            )
        )
        try:
            result = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            by_host = current is not None and current.cancelling() > 0
            images = attachments.images if attachments is not None else ()
            history = [] if by_host else interrupted_history(sent, log, turn_id, images)
            self.conversation.messages.extend(history)
            from tui_assist.core.turn import TurnResult  # loaded with the strategies

            # What the cancelled calls spent, as far as the API reported it before the cut.
            spent = log.usage(turn_id)
            result = TurnResult(
                turn_id, strategy.name, prompt, "", "cancelled", spent, history, error="cancelled"
            )
            saved = stored and await asyncio.shield(store_cancelled(self.store, turn_id, log, history))
            if by_host:
                raise
            compacted = self.context.compactions > compactions
            return TurnOutcome(result, self.conversation_id, saved, warnings, attachments, compacted)
        finally:
            self._running = None
            if self.hooks is not None:
                warnings.extend(self.hooks.take_warnings())
            if snapshot is not None:  # whatever the outcome: a cut turn may have changed files
                self._snapshot = None
                await snapshot.finish()
        result.prompt = prompt  # stored as typed; the message sent, files attached, is in the history
        saved = stored and await commit_turn(self.store, self.conversation_id, result, log, warnings)
        compacted = self.context.compactions > compactions
        return TurnOutcome(result, self.conversation_id, saved, warnings, attachments, compacted)

    async def _snapshot_taken(self) -> None:
        """Wait for the running turn's snapshot before it (a tool call about to change files)."""
        if self._snapshot is not None:
            await self._snapshot.taken()

    async def _begin(
        self, turn_id: str, strategy: str, prompt: str, warnings: list[str], model: str | None = None
    ) -> bool:
        """Create the conversation if need be and begin the turn; False when it can't be stored."""
        store = self.store
        if store is None:
            return False
        try:
            if self.conversation_id is None:
                self.conversation_id = await store.create_conversation(
                    title=self._title or title_of(prompt),
                    model=self.model,
                    workdir=str(self.settings.workdir),
                )
                self._title = None
                self.conversation.id = self.conversation_id
            elif self._untitled:
                await store.rename_conversation(self.conversation_id, title_of(prompt))
            self._untitled = False
            await store.begin_turn(
                conversation_id=self.conversation_id,
                turn_id=turn_id,
                strategy=strategy,
                prompt=prompt,
                model=model,
            )
        except Exception as exc:
            log.exception("store: cannot begin the turn")
            warnings.append(f"this turn is not saved: {exc}")
            return False
        return True

    # -- conversations -------------------------------------------------------------------------

    @property
    def history(self) -> History | None:
        """The stored conversations, for pickers (None without a store)."""
        if self.store is None:
            return None
        from tui_assist.paths import data_dir
        from tui_assist.session.history import History

        return History(self.store, data_dir(self.settings.data_dir))

    def new_conversation(self) -> None:
        """Start over: the next turn creates a new conversation (and the meter starts at zero)."""
        self.conversation = Conversation()
        self.conversation_id = None
        self.context.reset()
        self.meter = Meter()
        self._title = None
        self._hook_turns.session_started = "clear"  # Claude Code's source after `/clear`
        self._untitled = False

    async def start_conversation(self) -> str:
        """Store the conversation now, before its first turn, and return its id.

        For hosts that must name the conversation before anything is said (an ACP session's id is
        the conversation's). It is titled from its first prompt, unless `rename` gave it a title.

        Raises:
            SetupError: when there is no store.
        """
        store = self._need_store()
        if self.conversation_id is None:
            self.conversation_id = await store.create_conversation(
                title=self._title or UNTITLED, model=self.model, workdir=str(self.settings.workdir)
            )
            self.conversation.id = self.conversation_id
            self._untitled = self._title is None
            self._title = None
        return self.conversation_id

    async def rename(self, title: str) -> str:
        """Give the current conversation a title (`/rename NAME`).

        A conversation that has no turn yet is not stored yet: it gets the title when its first
        turn starts.

        Args:
            title: The new title; whitespace is folded and a long title clipped.

        Returns:
            The title as stored.

        Raises:
            ValueError: when the title is blank.
            SetupError: when there is no store.
        """
        from tui_assist.core.text import clip

        cleaned = clip(title, TITLE_LIMIT)
        if not cleaned:
            raise ValueError("a title needs at least one character")
        store = self._need_store()
        if self.conversation_id is None:
            self._title = cleaned
        else:
            await store.rename_conversation(self.conversation_id, cleaned)
            self._untitled = False
        return cleaned

    async def open_conversation(self, conversation_id: str) -> None:
        """Continue a stored conversation: its full history is sent with the next turn.

        Args:
            conversation_id: An id, or a unique prefix of one.

        Raises:
            SetupError: when there is no store.
            UnknownIdError: when no conversation matches.
        """
        await self.load_history(await self._need_store().resolve_conversation_id(conversation_id))

    async def load_history(self, conversation_id: str) -> None:
        """Continue the stored conversation `conversation_id` (a full id).

        Reads its whole history (what the next turn sends), its summary, the model of its last turn
        (the next turn's, unless `--model` chose one) and what it spent (the meter).

        Raises:
            SetupError: when there is no store.
        """
        store = self._need_store()
        await self.validate()  # the meter's prices and the context window are the settings'
        messages = await store.load_history(conversation_id)
        self.conversation = Conversation(conversation_id, messages)
        self.conversation_id = conversation_id
        self.context.reset(await store.load_summary(conversation_id), messages)
        self._title = None
        self._hook_turns.session_started = "resume"
        self._untitled = False
        self.follow_stored_model(await store.last_model(conversation_id))
        # The meter shows what the conversation has spent so far, as stored turn by turn, each
        # model's turns at its price (`/model` may have switched it).
        self.meter = Meter()
        for model, usage in await store.usage_by_model(conversation_id):
            self.meter.add(usage, self.price(model), model)

    async def find_conversation(self, id_or_prefix: str | None = None) -> str | None:
        """The id of a stored conversation: the one `id_or_prefix` names, else the latest.

        Returns:
            The full id, or None when `id_or_prefix` is None and there is no conversation yet.

        Raises:
            SetupError: when there is no store.
            UnknownIdError: when no conversation (or more than one) matches `id_or_prefix`.
        """
        store = self._need_store()
        if id_or_prefix is None:
            return await store.latest_conversation_id()
        return await store.resolve_conversation_id(id_or_prefix)

    async def continue_latest(self) -> bool:
        """Continue the most recent conversation; False (a new one starts) when there is none."""
        latest = await self._need_store().latest_conversation_id()
        if latest is not None:
            await self.load_history(latest)
        return latest is not None

    async def resume(self, conversation_id: str, *, limit: int = RESUME_TURNS) -> list[StoredTurn]:
        """Open a stored conversation and return its newest turns to redraw (oldest first).

        Each stored turn comes back with its event log, so a host can replay it into the same
        views a live turn builds (conversation, tree, rounds). Only the page shown is read; the
        history sent with the next turn is the whole conversation. A host that wants the page on
        screen before the whole history is read calls `stored_page`, then `open_conversation`.
        """
        if self.store is None:
            return []
        await self.load_history(conversation_id)
        return await self.stored_page(conversation_id, limit=limit)

    async def stored_page(
        self,
        conversation_id: str,
        *,
        before: int | str | None = None,
        after: int | None = None,
        limit: int = RESUME_TURNS,
    ) -> list[StoredTurn]:
        """A page of a stored conversation's turns to redraw, oldest first.

        Its newest turns, those just before the turn `before` (its position, `seq`, or its id),
        or the oldest ones after the position `after` (`-1` for the first page, to replay a whole
        conversation forwards). Reads those turns only (their rows, events and prompts' images),
        whatever the length of the conversation, and opens nothing: the settings need not be
        validated yet. Empty when there is no such turn, or no store.
        """
        if self.store is None:
            return []
        return await read_page(self.store, conversation_id, before=before, after=after, limit=limit)

    def export_markdown(self) -> str:
        """The in-memory history as a Markdown document (what a session without a store exports)."""
        from tui_assist.session.export import messages_markdown

        return messages_markdown(self.conversation.messages, title=self.conversation_id or "conversation")

    async def export(self, fmt: str) -> str:
        """The conversation as a document (`/export`): the stored turns, rounds included.

        Args:
            fmt: `md` or `json`.

        Returns:
            The document. Without a store, the in-memory history as Markdown.

        Raises:
            ExportError: for an unknown format, JSON without the stored history, or nothing yet
                to export.
        """
        from tui_assist.session.export import export_document

        return await export_document(self.store, self.conversation_id, self.conversation.messages, fmt)
