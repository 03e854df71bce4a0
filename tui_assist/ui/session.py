"""The chat session behind the TUI: provider, tools, history, store and meters, without Textual.

Heavy pieces (the Anthropic SDK, the tools, the store) are loaded by `load()`, which the app
calls after its first paint; nothing here imports them at module level. The store and the tool
registry are optional: when they can't be imported the session still runs (turns aren't
persisted; the model gets no tools) and says so once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, ToolUseBlock, Usage
from tui_assist.core.nodes import new_id
from tui_assist.core.observer import FanOutObserver
from tui_assist.paths import config_file
from tui_assist.session.config_source import ConfigError, ConfigPreview, ConfigSource

if TYPE_CHECKING:
    from tui_assist.core.conversation import Message
    from tui_assist.core.events import TurnEvent
    from tui_assist.core.model import Provider
    from tui_assist.core.observer import TurnObserver
    from tui_assist.core.tooling import Tool, ToolboxFactory
    from tui_assist.core.turn import TurnResult, TurnStrategy
    from tui_assist.session.config import Price, Settings
    from tui_assist.store.db import Store
    from tui_assist.store.recorder import TurnRecorder
    from tui_assist.tools.mcp import McpManager

log = logging.getLogger(__name__)

ProviderFactory = Callable[[], "Provider"]

NO_PROVIDER_HELP = """\
**No model provider is configured yet.**

Claude is reached through the Anthropic SDK, which found no credentials. To chat with Claude:

- set `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`) in your environment and start again, or
- put `provider = "anthropic"` and a `model` in `{config}`.

**Offline**, everything but the model works: run `tui-assist --provider scripted --script FILE`,
where FILE is a JSON list of assistant messages (each a list of content blocks, as in the
Messages API), replayed one per model request. Themes, Refine mode, the agent tree and the round
review all work with it."""


INVALID_SETTINGS_HELP = """\
**Your settings are invalid:** {problem}

Until they are fixed (then restart), the model is off; history, themes and the flows that need
no model still work."""


class ProviderUnavailable(Exception):
    """No provider could be made; the message tells the user what to do."""


@dataclass(slots=True)
class _EmptyToolbox:
    workdir: Path
    tools: Sequence[Tool] = ()

    async def aclose(self) -> None:
        return None


def default_provider_factory(settings: Settings) -> ProviderFactory:
    """The provider the settings ask for. Building it may import an SDK (slow): call it in a thread."""

    def make() -> Provider:
        if settings.provider == "anthropic":
            from tui_assist.providers.anthropic_info import anthropic_credentials_available

            if not anthropic_credentials_available():
                raise ProviderUnavailable(NO_PROVIDER_HELP.format(config=config_file()))
        from tui_assist.cli import SetupError, make_provider  # the one place providers are chosen

        try:
            return make_provider(settings)
        except SetupError as exc:
            raise ProviderUnavailable(f"**The provider can't start:** {exc}") from exc

    return make


def default_toolbox_factory(
    settings: Settings, extra_tools: Callable[[], Sequence[Tool]] | None = None
) -> tuple[ToolboxFactory, str | None]:
    """The tool registry's factory, or an empty toolbox and a reason when it can't be loaded."""
    workdir = settings.workdir
    try:
        from tui_assist.tools.registry import toolbox_factory

        factory = toolbox_factory(workdir, bash_timeout=settings.bash_timeout, extra_tools=extra_tools or ())
        return factory, None
    except Exception as exc:  # a broken tool must not keep the chat from opening
        log.exception("tools unavailable")
        return (lambda: _EmptyToolbox(workdir)), f"tools are unavailable ({exc}); the model gets no tools"


async def open_store(settings: Settings) -> tuple[Store | None, str | None]:
    """Open the store; (None, reason) when it can't be opened (the chat still works, unsaved)."""
    from tui_assist.paths import data_dir

    try:
        from tui_assist.store import Store

        return await Store.open(data_dir(settings.data_dir)), None
    except Exception as exc:
        log.exception("cannot open the store")
        return None, f"history is not saved: cannot open the store ({exc})"


def price_for(prices: dict[str, Price], model: str) -> Price | None:
    """The price entry for `model` (exact, then by prefix)."""
    if model in prices:
        return prices[model]
    for name, price in prices.items():
        if model.startswith(name):
            return price
    return None


def cost_of(usage: Usage, price: Price | None) -> float | None:
    """USD for `usage`, or None without a price."""
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / 1_000_000


@dataclass
class Meter:
    """Tokens and cost of the session."""

    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0

    def add(self, usage: Usage, price: Price | None) -> None:
        self.usage = self.usage + usage
        spent = cost_of(usage, price)
        self.cost = None if spent is None or self.cost is None else self.cost + spent


class ChatSession:
    """One conversation with a model, as the TUI runs it."""

    def __init__(
        self,
        settings: Settings | ConfigSource,
        *,
        provider_factory: ProviderFactory | None = None,
        toolbox_factory: ToolboxFactory | None = None,
        store: Store | None = None,
        use_store: bool = True,
    ) -> None:
        """Start a session.

        Args:
            settings: Validated settings, or their unvalidated source: then the first frame is drawn
                from its preview and `load` validates it (pydantic is slow to import).
        """
        self._source: ConfigSource | None = None
        self._settings: Settings | None = None
        self._settings_lock = threading.Lock()
        if isinstance(settings, ConfigSource):
            self._source = settings
            self.preview = settings.preview()
        else:
            self.preview = ConfigPreview.of(settings)
        self.refine = self.preview.refine
        self.rounds = self.preview.rounds
        self.model = self.preview.model
        self.approvals = ApprovalPolicy()
        self.config_problem: str | None = None
        """Why the settings are invalid (the session then runs on defaults, without a model)."""
        if not isinstance(settings, ConfigSource):
            self._adopt(settings)
        self.conversation = Conversation()
        self.conversation_id: str | None = None
        self.meter = Meter()
        self.provider: Provider | None = None
        self.provider_problem: str | None = None
        self.notes: list[str] = []
        """Things the user should know about what was loaded (shown once)."""
        self.store = store
        self._use_store = use_store and store is None
        self._owns_store = False
        self._mcp: McpManager | None = None
        self._provider_factory = provider_factory
        self._toolbox_factory = toolbox_factory
        self._ready = asyncio.Event()

    @property
    def settings(self) -> Settings:
        """The validated settings; validated here, at once, if `load` hasn't done it yet."""
        if self._settings is None:
            self._validate()
        assert self._settings is not None
        return self._settings

    def _validate(self) -> None:
        with self._settings_lock:  # `load` validates in a thread
            if self._settings is not None or self._source is None:
                return
            from tui_assist.session.config import Settings

            try:
                settings = self._source.settings()
            except ConfigError as exc:
                self.config_problem = str(exc)
                settings = Settings(workdir=self.preview.workdir)
            self._adopt(settings)

    def _adopt(self, settings: Settings) -> None:
        self._settings = settings
        # A refine toggle or round count the user already changed on the first frame wins.
        if self.refine == self.preview.refine:
            self.refine = settings.refine
        if self.rounds == self.preview.rounds:
            self.rounds = settings.rounds
        self.model = settings.resolved_model
        self.approvals = ApprovalPolicy(settings.approval.default, settings.approval.rules)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    @property
    def mcp(self) -> McpManager | None:
        """The `McpManager` of the configured MCP servers (None when none are configured)."""
        return self._mcp

    async def load(self) -> None:
        """Validate the settings, load the provider, the tools and the store (in threads where slow)."""
        await asyncio.to_thread(self._validate)
        try:
            if self.config_problem is not None:
                raise ProviderUnavailable(INVALID_SETTINGS_HELP.format(problem=self.config_problem))
            if self._provider_factory is not None:
                provider = self._provider_factory()
            else:
                provider = await asyncio.to_thread(default_provider_factory(self.settings))
            self.provider = provider
            self.model = provider.model
        except ProviderUnavailable as exc:
            self.provider_problem = str(exc)
        except Exception as exc:
            log.exception("provider failed to load")
            self.provider_problem = f"The provider could not be started: {exc}"
        if self._toolbox_factory is None:
            extra = await self._start_mcp()
            factory, problem = await asyncio.to_thread(default_toolbox_factory, self.settings, extra)
            self._toolbox_factory = factory
            if problem:
                self.notes.append(problem)
        if self._use_store:
            self.store, problem = await open_store(self.settings)
            self._owns_store = self.store is not None
            if problem:
                self.notes.append(problem)
            if self.store is not None and self.store.recovered:
                self.notes.append(
                    f"{len(self.store.recovered)} turn(s) cut by an earlier crash were stored as cancelled"
                )
        self._ready.set()

    async def _start_mcp(self) -> Callable[[], Sequence[Tool]] | None:
        """Start the configured MCP servers (if any); their tools join every toolbox."""
        if not self.settings.mcp_servers:
            return None
        try:
            from tui_assist.paths import data_dir
            from tui_assist.tools.mcp import McpManager

            self._mcp = manager = McpManager(
                self.settings.mcp_servers,
                cwd=self.settings.workdir,
                log_dir=data_dir(self.settings.data_dir) / "logs",
            )
            await manager.start()
            return manager.current_tools
        except Exception as exc:
            log.exception("MCP servers failed to start")
            self.notes.append(f"MCP tools are unavailable: {exc}")
            return None

    async def aclose(self) -> None:
        """Release what `load` opened: MCP servers, the provider's connections, the store."""
        for closer in (
            self._mcp.aclose if self._mcp is not None else None,
            self.provider.aclose if self.provider is not None else None,
            self.store.close if self.store is not None and self._owns_store else None,
        ):
            if closer is None:
                continue
            try:
                await closer()
            except Exception:
                log.exception("error while closing the session")

    async def wait_ready(self) -> None:
        await self._ready.wait()

    def strategy(self) -> TurnStrategy:
        # The strategies pull in the whole agent loop: imported at the first turn, not at startup.
        from tui_assist.core.budget import Budget
        from tui_assist.core.turn import TurnDeps
        from tui_assist.turns.agent import AgentTurn
        from tui_assist.turns.refine import RefineTurn

        if self.provider is None:
            raise RuntimeError(self.provider_problem or "no provider")
        s = self.settings
        deps = TurnDeps(
            provider=self.provider,
            toolbox_factory=self._toolbox_factory or (lambda: _EmptyToolbox(s.workdir)),
            approvals=self.approvals,
            budget=Budget(s.max_model_requests, s.max_tool_calls, s.max_tokens_per_turn),
            system_prompt=s.system_prompt,
            critic_prompt=s.critic_prompt,
        )
        return RefineTurn(deps, max_rounds=self.rounds) if self.refine else AgentTurn(deps)

    def price(self, model: str | None = None) -> Price | None:
        return price_for(self.settings.prices, model or self.model)

    async def run_turn(self, prompt: str, observer: TurnObserver) -> TurnResult:
        """Run one turn; with a store, record it and commit it before returning."""
        strategy = self.strategy()
        turn_id = new_id()
        store = self.store
        recorder: TurnRecorder | None = None
        conversation_id = self.conversation_id
        if store is not None:
            try:
                if conversation_id is None:
                    from tui_assist.store.db import title_from_prompt  # loaded with the store

                    conversation_id = await store.create_conversation(
                        title=title_from_prompt(prompt),
                        model=self.model,
                        workdir=str(self.settings.workdir),
                    )
                    self.conversation_id = conversation_id
                await store.begin_turn(
                    conversation_id=conversation_id,
                    turn_id=turn_id,
                    strategy=strategy.name,
                    prompt=prompt,
                )
                recorder = store.recorder()
                observer = FanOutObserver(observer, recorder)
            except Exception as exc:
                log.exception("store: cannot begin the turn")
                self.notes.append(f"this turn is not saved: {exc}")
                recorder = None
        try:
            result = await strategy.run(self.conversation, prompt, observer, turn_id=turn_id)
        except asyncio.CancelledError:
            if store is not None and recorder is not None:
                try:
                    await asyncio.shield(store.mark_cancelled(turn_id, recorder.events))
                except Exception:
                    log.exception("store: cannot mark the turn cancelled")
            raise
        if store is not None and recorder is not None and conversation_id is not None:
            try:
                await store.commit_turn(conversation_id, result, recorder.events)
            except Exception as exc:
                log.exception("store: cannot commit the turn")
                self.notes.append(f"this turn could not be saved: {exc}")
        return result

    def new_conversation(self) -> None:
        self.conversation = Conversation()
        self.conversation_id = None

    async def resume(self, conversation_id: str) -> list[StoredTurn]:
        """Load a stored conversation: its history for the model, and its turns to redraw.

        Each stored turn comes back with its event log, so the UI replays it into the same
        views a live turn builds (conversation, tree, rounds).
        """
        store = self.store
        if store is None:
            return []
        messages = await store.load_history(conversation_id)
        self.conversation = Conversation(id=conversation_id, messages=messages)
        self.conversation_id = conversation_id
        turns: list[StoredTurn] = []
        for row in await store.turns_page(conversation_id, limit=RESUME_TURNS):
            events = await store.turn_events(row.id)
            turns.append(StoredTurn(row.prompt, row.strategy, row.answer, events))
        return turns

    def export_markdown(self) -> str:
        return export_markdown(self.conversation.messages, title=self.conversation_id or "conversation")


RESUME_TURNS = 50
"""Turns redrawn when a conversation is resumed (the newest; the history sent is complete)."""


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A stored turn to redraw: its prompt, strategy, answer and event log (may be empty)."""

    prompt: str
    strategy: str
    answer: str
    events: list[TurnEvent]


def export_markdown(messages: Sequence[Message], *, title: str) -> str:
    """The conversation as a Markdown document (prompts, answers, tool calls in brief)."""
    lines = [f"# {title}", ""]
    for message in messages:
        if message.role == "user":
            if message.text:
                lines += ["## You", "", message.text, ""]
            continue
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                lines += [f"> tool `{block.name}` {block.input}", ""]
        if message.text:
            lines += ["## Assistant", "", message.text, ""]
    return "\n".join(lines)
