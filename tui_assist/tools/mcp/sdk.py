"""Glue to the `mcp` SDK's client: listing tools, watching a transport, reading results and errors.

The SDK is imported inside the functions (and for type checking only), never when this module is.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Final, cast

from tui_assist.core.text import base64_size, clip, exc_text, truncate_middle
from tui_assist.core.tooling import ToolOutput
from tui_assist.tools.mcp.config import McpStartError
from tui_assist.tools.mcp.tool import RemoteTool

if TYPE_CHECKING:
    from types import TracebackType

    import mcp_types
    from mcp import Client
    from mcp.client._transport import Transport, TransportStreams
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage

_MAX_TOOL_PAGES: Final = 50


async def list_tools(client: Client) -> list[RemoteTool]:
    """Every tool the server lists, following pages (at most `_MAX_TOOL_PAGES`)."""
    out: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        out.extend(RemoteTool(t.name, t.description or "", dict(t.input_schema)) for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return out


@asynccontextmanager
async def watched(inner: Transport, on_lost: Callable[[], None]) -> AsyncGenerator[TransportStreams]:
    """The transport, with a read stream that reports when the server goes away."""
    async with inner as (read, write):
        yield _WatchedReadStream(read, on_lost), write


class _WatchedReadStream:
    """Forwards a transport's read stream; calls `on_lost` once it ends."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_lost: Callable[[], None]) -> None:
        self._inner = inner
        self._on_lost = on_lost

    async def receive(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_lost()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_lost()
            raise

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def to_output(result: mcp_types.CallToolResult, max_chars: int) -> ToolOutput:
    """A tool result as tool output: text kept, media and binary resources described."""
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            kind = "image" if isinstance(block, ImageContent) else "audio"
            parts.append(f"[{kind} {block.mime_type}, {base64_size(block.data)} bytes, not shown]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource {block.uri}: {block.name}]")
        elif isinstance(block, EmbeddedResource):  # pyright: ignore[reportUnnecessaryIsInstance]
            resource = block.resource
            text: object = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[binary resource {resource.uri}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    content = "\n".join(parts)
    if result.is_error and not content:
        content = "the tool reported an error without a message"
    return ToolOutput(truncate_middle(content, max_chars), is_error=result.is_error)


def startup_error(error: BaseException, *, http_refusal: str | None = None) -> str:
    """Why a start failed, in a user's words (unwrapping anyio's exception groups).

    Args:
        error: What the connection raised.
        http_refusal: The HTTP error status the server answered with, if any (`401 Unauthorized`).
    """
    from mcp.shared.exceptions import MCPError

    exc: BaseException = error
    while (inner := _first_in_group(exc)) is not None:
        exc = inner
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError) and exc.message == "Connection closed":
        return "the server exited before the MCP handshake"
    if isinstance(exc, McpStartError):
        return str(exc)
    if (known := _http_error(exc)) is not None:
        return known
    return _refused(http_refusal) if http_refusal is not None else exc_text(exc)


def _refused(status: str) -> str:
    hint = " (check its headers: a token may be missing or wrong)" if status[:3] in ("401", "403") else ""
    return f"the server answered {status}{hint}"


def _http_error(exc: BaseException) -> str | None:
    """An HTTP failure in a user's words (a refused login reads as such, not as a traceback's text)."""
    import httpx2

    if isinstance(exc, httpx2.HTTPStatusError):
        return _refused(f"{exc.response.status_code} {exc.response.reason_phrase}".strip())
    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        try:
            where = f" to {exc.request.url}"
        except RuntimeError:  # raised before a request was attached
            where = ""
        return f"cannot connect{where}: {exc or type(exc).__name__}"
    return None


def _first_in_group(exc: BaseException) -> BaseException | None:
    if isinstance(exc, BaseExceptionGroup):
        group = cast(BaseExceptionGroup[BaseException], exc)
        return group.exceptions[0] if group.exceptions else None
    return None


def stderr_tail(errlog: IO[str] | None) -> str:
    """The last line the server wrote to stderr, as `` (stderr: …)``, or nothing."""
    if errlog is None:
        return ""
    try:
        errlog.flush()
        end = errlog.seek(0, 2)
        errlog.seek(max(0, end - 4096))
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
        errlog.seek(0, 2)
    except (OSError, ValueError):
        return ""
    return f" (stderr: {clip(lines[-1], 160)})" if lines else ""
