"""Language servers that check each editor write: the `Diagnostics` port, over pygls's LSP client.

One server per configured language (`LspServerSpec`), started on the first write of a file with
one of its extensions and stopped with the session (`LspServers.aclose`). After a write the
server is told the file's new text (`didOpen`, then `didChange` with a new version) and its
errors for that version are read: pulled (`textDocument/diagnostic`) when the server offers it,
else awaited as the `publishDiagnostics` of that version. Only errors that were not there before
the write are returned, so the model reads what its edit broke, not the file's old debts.

pygls is imported when the first server starts: the chat's first paint never loads it. A server
that can't start is reported once (`notify`) and then left alone; one that crashes is started
again once, and after a second crash left alone too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_assist.core.tooling import CodeDiagnostic
from tui_assist.tools.shell import is_secret_variable

if TYPE_CHECKING:
    from lsprotocol import types

log = logging.getLogger(__name__)

MAX_ERRORS = 20
"""The most new errors one write reports."""
RUFF_EXTENSIONS = (".py", ".pyi")
_SHUTDOWN_SECONDS = 2.0
"""How long a stopping server has to answer `shutdown` and exit before it is killed."""
_MAX_RESTARTS = 1


@dataclass(frozen=True, slots=True)
class LspServerSpec:
    """One language server: how to start it and which files it checks."""

    name: str
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    """File name endings with their dot, e.g. `.py`."""


def ruff_command() -> tuple[str, ...] | None:
    """`ruff server` when a `ruff` executable is found (PATH, or beside this Python); else None."""
    found = shutil.which("ruff")
    if found is None:
        beside = Path(sys.executable).parent / "ruff"
        found = str(beside) if beside.is_file() else None
    return (found, "server") if found is not None else None


def _key(diagnostic: CodeDiagnostic, lines: Sequence[str]) -> tuple[str | None, str, str]:
    """What makes an error the same one after an edit moved it: its code, message and line's text."""
    index = diagnostic.line - 1
    text = lines[index].strip() if 0 <= index < len(lines) else ""
    return (diagnostic.code, diagnostic.message, text)


def new_errors(
    before: Sequence[CodeDiagnostic], before_text: str, after: Sequence[CodeDiagnostic], after_text: str
) -> list[CodeDiagnostic]:
    """The errors of `after` that `before` did not have (as many times), at most `MAX_ERRORS`."""
    before_lines = before_text.splitlines()
    remaining = Counter(_key(d, before_lines) for d in before)
    lines = after_text.splitlines()
    fresh: list[CodeDiagnostic] = []
    for diagnostic in after:
        key = _key(diagnostic, lines)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            fresh.append(diagnostic)
    return fresh[:MAX_ERRORS]


@dataclass(slots=True)
class _Document:
    """A file the server has open: the version it was last told."""

    version: int


@dataclass(slots=True)
class _Server:
    """One running server and what it was told."""

    spec: LspServerSpec
    client: Any
    """The pygls `LanguageClient` (typed loosely: pygls loads only when a server starts)."""
    process: asyncio.subprocess.Process
    pulls: bool
    """The server answers `textDocument/diagnostic`."""
    published: dict[tuple[str, int | None], list[types.Diagnostic]]
    """The last `publishDiagnostics` per file URI and version (None: the server sent none)."""
    changed: asyncio.Condition
    """Notified on each `publishDiagnostics`."""
    documents: dict[str, _Document] = field(default_factory=dict[str, "_Document"])
    tasks: list[asyncio.Task[None]] = field(default_factory=list[asyncio.Task[None]])

    @property
    def alive(self) -> bool:
        return self.process.returncode is None


class LspServers:
    """The session's language servers: a `Diagnostics` for the editor; closed with the session."""

    def __init__(
        self,
        specs: Sequence[LspServerSpec],
        workdir: Path,
        *,
        wait_seconds: float = 1.5,
        start_seconds: float = 10.0,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        """Know the servers; none starts until a file of its kind is written.

        Args:
            specs: The servers; every one naming a file's extension checks it.
            workdir: The servers' root (`rootUri`, the workspace folder) and working directory.
            wait_seconds: How long a write waits for its diagnostics once the server is ready.
            start_seconds: How long a server has to answer `initialize` (the first write waits).
            notify: Told once, in one line, when a server can't start or stops for good.
        """
        self._specs = list(specs)
        self._root = workdir.resolve()
        self._wait = wait_seconds
        self._start_seconds = start_seconds
        self._notify: Callable[[str], None] = notify or log.debug
        self._servers: dict[str, _Server] = {}
        self._starting: dict[str, asyncio.Task[_Server | None]] = {}
        self._restarts: Counter[str] = Counter()
        self._given_up: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}
        self._baselines: dict[tuple[str, str], tuple[str, list[CodeDiagnostic]]] = {}
        """Per server and file URI: the last text whose errors are known, and those errors (kept
        across a restart)."""
        self._closed = False

    def specs_for(self, path: Path) -> list[LspServerSpec]:
        """The servers that check `path`, by its extension."""
        name = path.name
        return [
            spec
            for spec in self._specs
            if spec.name not in self._given_up and any(name.endswith(e) for e in spec.extensions)
        ]

    @property
    def specs(self) -> tuple[LspServerSpec, ...]:
        """The servers, in the order they were given."""
        return tuple(self._specs)

    @property
    def pids(self) -> dict[str, int]:
        """The process id of each running server, by name."""
        return {name: s.process.pid for name, s in self._servers.items() if s.alive}

    async def after_write(self, path: Path, before: str | None, after: str) -> Sequence[CodeDiagnostic]:
        """The errors the write of `after` to `path` introduced, by every server that checks it.

        A server without an answer within the wait adds none. The wait counts from when the
        server is ready: the first write also waits for it to start (at most `start_seconds`).
        """
        specs = [] if self._closed else self.specs_for(path)
        found = await asyncio.gather(*(self._errors(spec, path, before, after) for spec in specs))
        return [error for errors in found for error in errors][:MAX_ERRORS]

    async def _errors(
        self, spec: LspServerSpec, path: Path, before: str | None, after: str
    ) -> list[CodeDiagnostic]:
        try:
            async with self._locks.setdefault(spec.name, asyncio.Lock()):
                for attempt in range(2):
                    server = await self._server(spec)
                    if server is None:
                        return []
                    try:
                        return await asyncio.wait_for(self._check(server, path, before, after), self._wait)
                    except Exception:
                        # Died with the request pending: ask again (`_server` restarts it, once).
                        if attempt or not await _exited(server.process):
                            raise
                return []  # pragma: no cover - the second attempt returns or raises
        except TimeoutError:
            log.info("%s: no diagnostics for %s in time", spec.name, path)
            return []
        except Exception:  # a misbehaving server must never fail the edit
            log.exception("%s: diagnostics failed for %s", spec.name, path)
            return []

    async def _check(
        self, server: _Server, path: Path, before: str | None, after: str
    ) -> list[CodeDiagnostic]:
        uri = path.as_uri()
        key = (server.spec.name, uri)
        if key not in self._baselines and before is not None:
            # First sight of an existing file: its errors before the edit are the baseline.
            self._baselines[key] = (before, await self._sync(server, uri, path, before))
        errors = await self._sync(server, uri, path, after)
        old_text, old_errors = self._baselines.get(key, ("", []))
        self._baselines[key] = (after, errors)
        return new_errors(old_errors, old_text, errors, after)

    async def _server(self, spec: LspServerSpec) -> _Server | None:
        server = self._servers.get(spec.name)
        if server is not None and server.alive:
            return server
        if server is not None:  # it crashed
            del self._servers[spec.name]
            await self._stop(server)  # its client and log reader
            if self._restarts[spec.name] >= _MAX_RESTARTS:
                self._give_up(spec, f"language server {spec.name} stopped again; edits are not checked by it")
                return None
            self._restarts[spec.name] += 1
            log.warning(
                "language server %s exited (%s); starting it again", spec.name, server.process.returncode
            )
        task = self._starting.get(spec.name)
        if task is None:
            # Shielded: a write that stops waiting leaves the start running for the next one.
            task = self._starting[spec.name] = asyncio.ensure_future(self._start(spec))
        try:
            started = await asyncio.shield(task)
        finally:
            if task.done():
                self._starting.pop(spec.name, None)
        if started is not None:
            self._servers[spec.name] = started
        return started

    def _give_up(self, spec: LspServerSpec, line: str) -> None:
        self._given_up.add(spec.name)
        log.warning("%s", line)
        self._notify(line)

    async def _start(self, spec: LspServerSpec) -> _Server | None:
        try:
            return await asyncio.wait_for(self._launch(spec), self._start_seconds)
        except Exception as exc:
            why = f"no answer within {self._start_seconds:g} s" if isinstance(exc, TimeoutError) else str(exc)
            self._give_up(
                spec,
                f"language server {spec.name} could not start ({' '.join(spec.command)}: {why}); "
                "edits are not checked by it",
            )
            return None

    async def _launch(self, spec: LspServerSpec) -> _Server:
        from pygls.lsp.client import LanguageClient

        from tui_assist import __version__

        client: Any = LanguageClient("tui-assist", __version__, converter_factory=_converter)
        # Its own session: a ctrl+c in the terminal is the chat's, not the server's. No secrets in
        # its environment: a language server reads code, it calls no APIs.
        env = {name: value for name, value in os.environ.items() if not is_secret_variable(name)}
        await client.start_io(*spec.command, cwd=str(self._root), env=env, start_new_session=True)
        process: asyncio.subprocess.Process = client._server  # pygls keeps the process it started
        server = _Server(spec, client, process, pulls=False, published={}, changed=asyncio.Condition())
        server.tasks.append(asyncio.ensure_future(self._drain_stderr(spec, process)))
        try:
            await self._initialize(server)
        except BaseException:  # no answer, a refusal, or the start given up: leave nothing running
            await self._stop(server, graceful=False)
            raise
        log.info("language server %s started (pid %d)", spec.name, process.pid)
        return server

    async def _initialize(self, server: _Server) -> None:
        from lsprotocol import types

        client = server.client

        async def published_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            server.published[(params.uri, params.version)] = list(params.diagnostics)
            async with server.changed:
                server.changed.notify_all()

        client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(published_diagnostics)
        root = self._root.as_uri()
        result = await client.initialize_async(
            types.InitializeParams(
                process_id=None,
                root_uri=root,
                root_path=str(self._root),
                workspace_folders=[types.WorkspaceFolder(uri=root, name=self._root.name)],
                capabilities=types.ClientCapabilities(
                    text_document=types.TextDocumentClientCapabilities(
                        synchronization=types.TextDocumentSyncClientCapabilities(),
                        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
                        diagnostic=types.DiagnosticClientCapabilities(),
                    ),
                    workspace=types.WorkspaceClientCapabilities(workspace_folders=True),
                ),
            )
        )
        client.initialized(types.InitializedParams())
        server.pulls = result.capabilities.diagnostic_provider is not None

    @staticmethod
    async def _drain_stderr(spec: LspServerSpec, process: asyncio.subprocess.Process) -> None:
        """Read the server's log, so a chatty server never blocks on a full pipe."""
        if process.stderr is None:
            return
        while line := await process.stderr.readline():
            log.debug("%s: %s", spec.name, line.decode(errors="replace").rstrip())

    async def _sync(self, server: _Server, uri: str, path: Path, text: str) -> list[CodeDiagnostic]:
        """Tell the server `text` is the file's content, and wait for its errors in that text."""
        from lsprotocol import types

        document = server.documents.get(uri)
        if document is None:
            document = server.documents[uri] = _Document(1)
            server.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=uri, language_id=_language_id(path), version=1, text=text)
                )
            )
        else:
            document.version += 1
            server.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=document.version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        found = await (
            self._pull(server, uri) if server.pulls else self._pushed(server, uri, document.version)
        )
        # A diagnostic without a severity is the client's to interpret: LSP says an error.
        return [_diagnostic(d) for d in found if d.severity in (None, types.DiagnosticSeverity.Error)]

    @staticmethod
    async def _pull(server: _Server, uri: str) -> list[types.Diagnostic]:
        from lsprotocol import types

        report = await server.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        items = getattr(report, "items", None)
        return list(items) if items is not None else []

    @staticmethod
    async def _pushed(server: _Server, uri: str, version: int) -> list[types.Diagnostic]:
        """The `publishDiagnostics` of `version` (or, from a server that sends no versions, the next one)."""
        unversioned = server.published.pop((uri, None), None)
        async with server.changed:
            while True:
                found = server.published.get((uri, version))
                if found is not None:
                    return found
                if unversioned is None:
                    unversioned = server.published.pop((uri, None), None)
                if unversioned is not None:
                    return unversioned
                await server.changed.wait()

    async def aclose(self) -> None:
        """Stop every server: `shutdown` and `exit`, and a kill for one that doesn't go."""
        self._closed = True
        for task in self._starting.values():
            task.cancel()
        for task in self._starting.values():
            with contextlib.suppress(BaseException):
                await task
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(self._stop(s) for s in servers), return_exceptions=True)

    @staticmethod
    async def _stop(server: _Server, *, graceful: bool = True) -> None:
        """`shutdown` and `exit` (when `graceful`), a kill for a server that doesn't go; then the client."""
        client, process = server.client, server.process
        if not graceful:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        elif server.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), _SHUTDOWN_SECONDS)
                client.exit(None)
            try:
                await asyncio.wait_for(process.wait(), _SHUTDOWN_SECONDS)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        with contextlib.suppress(Exception):
            await client.stop()
        for task in server.tasks:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def _exited(process: asyncio.subprocess.Process) -> bool:
    """Whether the process has ended (or does within a moment: its exit may not be reaped yet)."""
    try:
        await asyncio.wait_for(process.wait(), 1.0)
    except TimeoutError:
        return False
    return True


def _converter() -> Any:
    """The pygls converter, able to read the notebook filters `ruff server` announces.

    lsprotocol 2025.0.0 has no structure hook for a cells filter's optional `notebook`, so the
    whole `initialize` answer would fail to read; those filters are kept as the raw JSON (unused).
    """
    from typing import get_type_hints

    from lsprotocol import types
    from pygls.protocol import default_converter

    converter = default_converter()
    notebook = get_type_hints(types.NotebookDocumentFilterWithCells)["notebook"]
    converter.register_structure_hook(notebook, lambda value, _: value)
    return converter


def _language_id(path: Path) -> str:
    """The LSP language id of a file, by its extension (servers mostly ignore it)."""
    suffix = path.suffix.lower()
    return {".py": "python", ".pyi": "python"}.get(suffix, suffix.lstrip(".") or "plaintext")


def _diagnostic(diagnostic: types.Diagnostic) -> CodeDiagnostic:
    code = diagnostic.code
    return CodeDiagnostic(
        line=diagnostic.range.start.line + 1,
        column=diagnostic.range.start.character + 1,
        message=diagnostic.message,
        code=str(code) if code is not None else None,
    )
