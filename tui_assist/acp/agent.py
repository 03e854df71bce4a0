"""`tui-assist acp`: the program as an Agent Client Protocol agent over stdio.

An editor (Zed, JetBrains, Neovim, Emacs) or any ACP client starts the program, opens sessions and
sends prompts. Each ACP session is one stored conversation (its id is the session id) run by one
`TurnController`, as the chat screen runs its own: `AcpSession` is that controller's host. It
streams the turn's events as `session/update`s (see `updates.py`), turns approvals into
`session/request_permission`, and answers each `session/prompt` with why the turn stopped.

The approval policy decides before the client is asked: deny rules, `plan` and the sandbox are
enforced here whatever the client answers; only a call the policy would put to the user becomes a
permission request.

stdout carries the protocol only: `serve` moves the process's stdout aside for it, and points
file descriptor 1 (what a stray print or a child process would write to) at stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, RequestError, helpers, run_agent
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    BlobResourceContents,
    ConfigOptionUpdate,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PermissionOptionKind,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TextContentBlock,
    TextResourceContents,
    UnstructuredCommandInput,
)

from tui_assist import __version__
from tui_assist.acp.shells import ShellUpdates
from tui_assist.acp.updates import TurnUpdates
from tui_assist.core.approval import MODES, describe_mode
from tui_assist.core.conversation import ImageBlock
from tui_assist.core.events import ToolCallFinished, ToolCallStarted
from tui_assist.core.observer import ApprovalDecision
from tui_assist.session.chat import ChatSession
from tui_assist.session.commands import COMMANDS, CommandError, run_headless
from tui_assist.session.controller import QuietHost, TurnController
from tui_assist.session.factory import SetupError

if TYPE_CHECKING:
    from acp.helpers import SessionUpdate
    from acp.interfaces import Client

    from tui_assist.core.events import TurnEvent
    from tui_assist.core.observer import ToolApproval, TurnObserver
    from tui_assist.session.chat import StoredTurn
    from tui_assist.session.config import Settings
    from tui_assist.session.controller import TurnEnded
    from tui_assist.session.mentions import Attachments
    from tui_assist.session.runs import Run
    from tui_assist.session.slash_commands import SlashInput

log = logging.getLogger(__name__)

CLOSE_TIMEOUT = 5.0
"""Seconds a closing session waits for its cancelled turn to be stored."""
REFINE = "refine"
"""The id of the session config option that turns Refine mode on and off."""
REPLAY_PAGE = 50
"""Stored turns read at a time when `session/load` replays a conversation (all are sent)."""

_STOP_REASONS: dict[str, StopReason] = {"cancelled": "cancelled", "budget_exhausted": "max_turn_requests"}
"""A turn's outcome -> the prompt's stop reason (any other outcome that answered: `end_turn`)."""

_PERMISSION_OPTIONS: dict[PermissionOptionKind, tuple[str, Callable[[], ApprovalDecision]]] = {
    "allow_once": ("Allow once", ApprovalDecision.allow_once),
    "allow_always": ("Always allow", ApprovalDecision.allow_pattern),
    "reject_once": ("Reject", lambda: ApprovalDecision.deny("the user rejected this call in the editor")),
}
"""Option id (the option's kind) -> its label and the decision it stands for."""


class AcpSession(QuietHost):
    """One ACP session: a chat session, its controller, and the host reporting to the client."""

    def __init__(self, session_id: str, chat: ChatSession, client: Client) -> None:
        """Report `chat`'s turns, as session `session_id`, to `client`."""
        self.id = session_id
        self.chat = chat
        self.client = client
        self.controller = TurnController(chat, self)
        self._turn = TurnUpdates(chat.settings.workdir)
        self._outbox: asyncio.Queue[SessionUpdate | ConfigOptionUpdate] = asyncio.Queue()
        self._pump = asyncio.create_task(self._send_all(), name=f"acp-updates-{session_id}")
        self._shells = ShellUpdates(self.send)
        """The background shells as `execute` tool calls that update."""
        self.ended = None
        """How the prompt's turn ended (None: the prompt was a command)."""
        self._run: Run | None = None
        """The prompt's run (its turn, or a command)."""

    # -- sending -------------------------------------------------------------------------------

    def send(self, update: SessionUpdate | ConfigOptionUpdate) -> None:
        """Queue a `session/update` (sent in order, by one task)."""
        self._outbox.put_nowait(update)

    def say(self, text: str) -> None:
        """Send `text` as (a chunk of) the agent's message."""
        self.send(helpers.update_agent_message_text(text))

    async def flush(self) -> None:
        """Wait until every queued update is sent."""
        await self._outbox.join()

    async def _send_all(self) -> None:
        while True:
            update = await self._outbox.get()
            try:
                await self.client.session_update(self.id, update)
            except Exception:  # a client that went away: the turn goes on, and is stored
                log.warning("acp: cannot send a session update", exc_info=True)
            finally:
                self._outbox.task_done()

    def cancel(self) -> None:
        """Cancel the prompt's run in whatever state it is (the busy one first: a command's `/compact`)."""
        if not self.controller.cancel() and self._run is not None:
            self._run.cancel()

    async def aclose(self) -> None:
        """Stop the running turn, let it be stored as cancelled, and release the session's parts."""
        run = self._run
        if run is not None and not run.done:
            self.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.wait(), CLOSE_TIMEOUT)
        self._shells.close()
        self._pump.cancel()
        await self.chat.aclose()

    # -- what the editor sees ------------------------------------------------------------------

    def modes(self) -> SessionModeState:
        """The approval modes, and the current one."""
        available = [SessionMode(id=mode, name=mode, description=describe_mode(mode)) for mode in MODES]
        return SessionModeState(current_mode_id=self.chat.approvals.mode, available_modes=available)

    def config_options(self) -> list[Any]:
        """The session's options: `refine` (off, on)."""
        return [
            SessionConfigOptionSelect(
                id=REFINE,
                name="Refine",
                description=f"Generate, let a critic judge the answer and its tool evidence, revise "
                f"(up to {self.chat.rounds} rounds)",
                type="select",
                current_value="on" if self.chat.refine else "off",
                options=[
                    SessionConfigSelectOption(value="off", name="Off"),
                    SessionConfigSelectOption(value="on", name="On"),
                ],
            )
        ]

    def available_commands(self) -> list[AvailableCommand]:
        """The commands that make sense without a screen, then the custom ones."""
        commands = [
            AvailableCommand(name=c.name, description=c.description, input=_hint(c.args))
            for c in COMMANDS
            if c.headless
        ]
        for name, custom in self.chat.custom_commands().commands.items():
            description = custom.command.description or f"custom command ({custom.path.name})"
            commands.append(
                AvailableCommand(name=name, description=description, input=_hint(custom.command.args))
            )
        return commands

    def announce_commands(self) -> None:
        """Tell the client which commands a prompt may start with."""
        self.send(helpers.update_available_commands(self.available_commands()))

    def replay(self, turns: Sequence[StoredTurn]) -> None:
        """Send stored turns as the client would have seen them: prompts, tool calls, answers."""
        workdir = self.chat.settings.workdir
        for turn in turns:
            self.send(helpers.update_user_message_text(turn.prompt))
            updates = TurnUpdates(workdir, live=False)
            for event in turn.events:
                if isinstance(event, ToolCallStarted | ToolCallFinished):
                    for update in updates.updates(event):
                        self.send(update)
            if turn.answer:
                self.send(helpers.update_agent_message_text(turn.answer))

    # -- a prompt ------------------------------------------------------------------------------

    async def prompt(self, blocks: Sequence[Any]) -> PromptResponse:
        """Run one prompt (a turn, or a command) and say why it stopped."""
        if self.controller.running:
            raise RequestError.invalid_request({"details": "a prompt is running in this session"})
        text, images = await asyncio.to_thread(prompt_text, blocks, self.chat.settings.workdir)
        if not text.strip() and not images:
            raise RequestError.invalid_params({"details": "the prompt is empty"})
        self.ended = self.refusal = None
        stop: StopReason = "end_turn"
        self._run = run = self.controller.submit(text or "(see the image)", images=images)
        if run is not None:
            await run
            if isinstance(run.error, CommandError):
                self.say(str(run.error))
            elif run.error is not None:
                raise run.error
            elif run.cancelled:
                stop = "cancelled"  # before the turn began, nothing was stored
        if self.refusal is not None:
            self.say(self.refusal)
        if self.ended is not None:
            stop = self._stop_reason(self.ended)
        await self.flush()
        return PromptResponse(stop_reason=stop)

    def _stop_reason(self, ended: TurnEnded) -> StopReason:
        if ended.outcome is None:
            if ended.problem == "cancelled":
                return "cancelled"
            self.say(f"tui-assist: {ended.problem or 'the turn did not run'}")
            return "refusal"
        for warning in ended.outcome.warnings:
            self.say(f"\n\n*warning: {warning}*")
        result = ended.outcome.result
        if result.outcome == "error":
            self.say(f"\n\ntui-assist: {result.error or 'the turn failed'}")
            return "refusal"
        return _STOP_REASONS.get(result.outcome, "end_turn")

    # -- Host ----------------------------------------------------------------------------------

    @property
    def turn_observer(self) -> TurnObserver:
        """Itself: events become updates, approvals permission requests."""
        return self

    def on_event(self, event: TurnEvent) -> None:
        """Stream the event's updates."""
        for update in self._turn.updates(event):
            self.send(update)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Ask the client; a cancelled request stops the turn."""
        options = [
            PermissionOption(
                option_id=kind,
                name=f"{label}: {', '.join(request.proposed_rules)}" if kind == "allow_always" else label,
                kind=kind,
            )
            for kind, (label, _) in _PERMISSION_OPTIONS.items()
            if kind != "allow_always" or request.proposed_rules
        ]
        await self.flush()  # the tool call is on the client's screen before it is asked about
        try:
            response = await self.client.request_permission(
                session_id=self.id, tool_call=self._turn.permission_call(request.node_id), options=options
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an error answer, or a client gone: nobody approved the call
            log.warning("acp: the permission request failed: %s", exc)
            return ApprovalDecision.deny("the editor could not be asked")
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):  # cancelled: stop, as escape does
            return ApprovalDecision.stop()
        # Options are told apart by their kind (each option's id is its kind).
        for option in options:
            if option.option_id == outcome.option_id:
                return _PERMISSION_OPTIONS[option.kind][1]()
        return ApprovalDecision.deny(f"the editor chose an unknown option {outcome.option_id!r}")

    def turn_started(self, prompt: str, strategy: str) -> None:
        """A new turn: a fresh fold of its events."""
        self._turn = TurnUpdates(self.chat.settings.workdir)
        self._shells.follow(self.chat.shells)

    def prompt_attached(self, attachments: Attachments) -> None:
        """Say what the prompt's mentions attached, and what they could not."""
        for line in attachments.notices():
            self.send(helpers.update_agent_thought_text(line + "\n"))

    def run_command(self, call: SlashInput, text: str) -> Callable[[], Awaitable[None]]:
        """Run a command that needs no screen; its reply is the agent's message."""
        return lambda: self._run_command(call)

    async def _run_command(self, call: SlashInput) -> None:
        self.say(await run_headless(self.controller, call.name, call.args))
        if call.name in (REFINE, "rounds"):  # the editor shows the option (and its round budget)
            self.send(
                ConfigOptionUpdate(
                    session_update="config_option_update", config_options=self.config_options()
                )
            )


def _hint(args: str) -> AvailableCommandInput | None:
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=args)) if args else None


def prompt_text(blocks: Sequence[Any], workdir: Path) -> tuple[str, list[ImageBlock]]:
    """The prompt ACP content blocks make: text, with resources attached as mentioned files are.

    A resource link to a file in the workdir becomes an `@path` mention (attached by the turn);
    an embedded text resource (an editor buffer) is attached as a document; an image (png, jpeg,
    gif, webp) is attached as an image block, as `@shot.png` is: resized when over the API's
    limits (CPU-bound: call it in a thread), left out with a note when it is not a readable image.
    """
    from tui_assist.session.mentions import attach_documents, format_mention

    parts: list[str] = []
    documents: list[tuple[str, str]] = []
    images: list[ImageBlock] = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                parts.append(text)
            case EmbeddedResourceContentBlock(resource=TextResourceContents(uri=uri, text=text)):
                documents.append((_label(uri, workdir), text))
            case EmbeddedResourceContentBlock(resource=BlobResourceContents(uri=uri)):
                parts.append(f" [{_label(uri, workdir)}: a binary resource, not attached] ")
            case ResourceContentBlock(uri=uri):
                label = _label(uri, workdir)
                parts.append(f" {format_mention(label) if not Path(label).is_absolute() else uri} ")
            case ImageContentBlock(mime_type=mime, data=data):
                if mime not in ACP_IMAGE_TYPES:
                    parts.append(f" [an image of type {mime} was left out: png, jpeg, gif or webp only] ")
                elif (image := _fitted_image(data, f"image-{len(images) + 1}")) is None:
                    parts.append(" [an image that could not be read was left out] ")
                else:
                    images.append(image)
            case _:
                parts.append(" [a content block of an unsupported type was left out] ")
    return attach_documents("".join(parts).strip(), documents), images


def _fitted_image(data: str, name: str) -> ImageBlock | None:
    """An editor's base64 image as sent: resized when over the API's limits; None if unreadable."""
    import base64
    import binascii

    from tui_assist.session.mentions.image_fit import UnreadableImageError, fit_image

    try:
        fitted = fit_image(base64.b64decode(data, validate=True))
    except (binascii.Error, UnreadableImageError):
        return None
    sent = data if not fitted.resized else base64.b64encode(fitted.data).decode("ascii")
    return ImageBlock(fitted.media_type, sent, name)


ACP_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types an editor's prompt may carry (those the Messages API takes)."""


def _label(uri: str, workdir: Path) -> str:
    """A `file://` URI as a path relative to the workdir when inside it; else the URI or path."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.resolve().relative_to(workdir.resolve()))
    except ValueError:
        return str(path)


class TuiAssistAgent:
    """The ACP agent: sessions on the store, each driven by its own controller."""

    def __init__(self, settings: Settings) -> None:
        """Open sessions with `settings` (each in the workdir its client names)."""
        self._settings = settings
        self._client: Client | None = None
        self._sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        """Keep the connection to the client."""
        self._client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        """Protocol version 1; sessions can be loaded; prompts may hold images and resources."""
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
            ),
            agent_info=Implementation(name="tui-assist", title="tui-assist", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """Nothing to authenticate: the provider's credentials come from the environment."""

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A new conversation in `cwd`, stored at once: its id is the session id."""
        session = await self._open(cwd, mcp_servers)
        try:
            session_id = await session.start_conversation()
        except SetupError as exc:
            await session.aclose()
            raise RequestError.internal_error({"details": str(exc)}) from exc
        acp_session = self._add(session_id, session)
        acp_session.announce_commands()
        return NewSessionResponse(
            session_id=session_id, modes=acp_session.modes(), config_options=acp_session.config_options()
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Open a stored conversation (made here, by the TUI or by `ask`) and replay all of it first."""
        from tui_assist.session.history import UnknownIdError

        session = await self._open(cwd, mcp_servers)
        try:
            conversation_id = await session.find_conversation(session_id)
            assert conversation_id is not None
            await session.load_history(conversation_id)
        except (SetupError, UnknownIdError) as exc:
            await session.aclose()
            raise RequestError.resource_not_found(session_id) from exc
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await old.aclose()
        acp_session = self._add(session_id, session)
        # The editor shows what it is sent: the whole conversation, oldest first, a page at a time.
        position = -1
        while turns := await session.stored_page(conversation_id, after=position, limit=REPLAY_PAGE):
            acp_session.replay(turns)
            position = turns[-1].seq
        acp_session.announce_commands()
        await acp_session.flush()
        return LoadSessionResponse(modes=acp_session.modes(), config_options=acp_session.config_options())

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """Switch the approval mode (`default`, `accept-edits`, `plan`, `bypass`)."""
        session = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params(
                {"details": f"unknown mode {mode_id!r}: use {', '.join(MODES)}"}
            )
        session.chat.approvals.mode = mode_id
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Set `refine` to `on` or `off`."""
        session = self._session(session_id)
        if config_id != REFINE or value not in ("on", "off"):
            raise RequestError.invalid_params(
                {"details": f"unknown option {config_id}={value!r} (refine: on|off)"}
            )
        session.chat.refine = value == "on"
        return SetSessionConfigOptionResponse(config_options=session.config_options())

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        """Run the prompt as one persisted turn (or a command) and stream it."""
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the prompt's run, as escape does, started or not (a turn is kept, marked interrupted)."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def aclose(self) -> None:
        """Stop every session's turn and release its parts."""
        for session in list(self._sessions.values()):
            await session.aclose()
        self._sessions.clear()

    # -- sessions ------------------------------------------------------------------------------

    async def _open(self, cwd: str, mcp_servers: list[Any] | None) -> ChatSession:
        """A loaded chat session working in `cwd`, with the client's stdio MCP servers added."""
        from tui_assist.session.config_source import ConfigError, checked_workdir
        from tui_assist.tools.mcp.config import McpServerConfig

        try:
            workdir = checked_workdir(Path(cwd)).resolve()
        except ConfigError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from exc
        servers = dict(self._settings.mcp_servers)
        for server in mcp_servers or []:
            if isinstance(server, McpServerStdio):
                env = {variable.name: variable.value for variable in server.env}
                servers[server.name] = McpServerConfig(command=server.command, args=server.args, env=env)
            else:
                log.warning(
                    "acp: MCP server %s is not a stdio server; left out", getattr(server, "name", "?")
                )
        settings = self._settings.model_copy(update={"workdir": workdir, "mcp_servers": servers})
        session = ChatSession(settings)
        await session.load()
        for note in session.notes:
            log.warning("acp session: %s", note)
        if session.store is None:
            await session.aclose()
            raise RequestError.internal_error(
                {"details": str(session.store_error or "the history store is not open")}
            )
        return session

    def _add(self, session_id: str, chat: ChatSession) -> AcpSession:
        assert self._client is not None, "on_connect comes first"
        session = self._sessions[session_id] = AcpSession(session_id, chat, self._client)
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session


async def serve(settings: Settings) -> None:
    """Be an ACP agent on stdin/stdout until the client closes stdin."""
    from acp.stdio import stdio_streams

    # The protocol gets the real stdout; fd 1 (prints, child processes) goes to stderr.
    protocol_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    real_stdout = sys.stdout
    sys.stdout = os.fdopen(protocol_fd, "w", closefd=False)
    try:
        reader, writer = await stdio_streams(limit=50 * 1024 * 1024)
    finally:
        sys.stdout = real_stdout
    agent = TuiAssistAgent(settings)
    # The provider's SDK takes seconds to import: begun now, while the editor says hello, it is
    # ready (or nearly) when the first session opens.
    warm_up = asyncio.create_task(asyncio.to_thread(_import_provider, settings))
    try:
        await run_agent(cast(Any, agent), writer, reader)  # implements the methods it serves
    finally:
        warm_up.cancel()
        await agent.aclose()


def _import_provider(settings: Settings) -> None:
    if settings.provider == "anthropic":
        import tui_assist.providers.anthropic  # noqa: F401 - imported for its side effect: loaded
