"""A scripted, loopback-only fake of the OpenAI Chat Completions API, for tests.

It serves POST /v1/chat/completions (``stream`` true -> SSE ``data:`` chunks ending in
``data: [DONE]``, false -> one JSON completion) and GET /v1/models on 127.0.0.1, answers each
completion request with the next step of a script, and records every request, so a test can
drive the *real* ``openai`` SDK (retries, SSE parsing, error classes) and assert on what the app
sent. Pure stdlib (http.server in a background thread), like ``tests/fakes/anthropic.py``.

Script steps:

    Reply([Text("Hello", deltas=3), ToolCall("bash", {"command": "ls"}, deltas=4)])
    Reply("plain text")            # one Text
    Error(429, retry_after=0)      # rate limit; the SDK retries it
    Error(500)                     # server error; the SDK retries it
    Error(400, message="...")      # not retried
    Hang(5)                        # accept, answer nothing (timeouts)
    lambda req: Reply([...])       # built from the recorded request

Reply options: ``delay`` (seconds between chunks), ``cut_after`` (drop the connection after N
chunks), ``error_after`` (send an in-stream ``{"error": ...}`` payload after N chunks),
``end_after`` (end the stream cleanly after N chunks, no finish reason, no ``[DONE]``),
``usage`` (a ``Usage``, or None to report none even when asked), ``finish_reason``,
``whole_tool_calls`` (send each tool call in one chunk without ``index``, as some servers do).

``ToolCall(arguments=...)`` takes a dict (JSON-encoded, then split into ``deltas`` pieces) or a
raw string, which is sent as is (for invalid JSON).

Request validation (on by default) mirrors the 400s a Chat Completions server gives for a
client's typical mistakes: missing ``model``/``messages``, unknown roles, a ``tool`` message that
answers no pending tool call, an assistant tool call left unanswered, tool names outside
``^[a-zA-Z0-9_-]{1,64}$``, tools without a function, ``stream_options`` without ``stream``. With
``tools_supported=False`` a request carrying tools gets Ollama's "does not support tools" 400.
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.loopback import LoopbackHandler, LoopbackServer, estimate_tokens, next_id, retry_headers

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _split(s: str, parts: int | list[str]) -> list[str]:
    if isinstance(parts, list):
        assert "".join(parts) == s, "pieces must concatenate to the full text"
        return parts
    if not s:
        return [""]
    n = max(1, min(parts, len(s)))
    size = math.ceil(len(s) / n)
    return [s[i : i + size] for i in range(0, len(s), size)]


# --------------------------------------------------------------------------- content


@dataclass
class Text:
    text: str
    deltas: int | list[str] = 3


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    deltas: int | list[str] = 3

    def __post_init__(self) -> None:
        self.id = self.id or next_id("call")

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


Block = Text | ToolCall


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None


# --------------------------------------------------------------------------- steps


@dataclass
class Reply:
    content: list[Block] | str
    finish_reason: str | None = None  # default: "tool_calls" if any ToolCall else "stop"
    usage: Usage | None = field(default_factory=Usage)
    model: str | None = None
    delay: float = 0.0
    cut_after: int | None = None
    error_after: int | None = None
    error_type: str = "server_error"
    error_message: str = "The server had an error while processing your request."
    end_after: int | None = None
    whole_tool_calls: bool = False
    hold_after: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.content, str):
            self.content = [Text(self.content)]
        self._gate = threading.Event()
        self.held = threading.Event()

    def release(self) -> None:
        self._gate.set()


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "server_error",
}


@dataclass
class Error:
    status: int
    message: str | None = None
    type: str | None = None
    retry_after: float | None = None
    should_retry: bool | None = None
    body: Any = None  # a whole body to send instead of the standard error object

    def payload(self) -> Any:
        if self.body is not None:
            return self.body
        etype = self.type or ERROR_TYPES.get(self.status, "server_error")
        return {"error": {"message": self.message or etype, "type": etype, "param": None, "code": None}}


@dataclass
class Hang:
    seconds: float = 30.0


Step = Reply | Error | Hang | Callable[["RecordedRequest"], "Reply | Error | Hang"]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    step: Any = None
    status: int | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return (self.body or {}).get("messages", [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return (self.body or {}).get("tools", [])

    @property
    def retry_count(self) -> int:
        return int(self.headers.get("x-stainless-retry-count", "0"))

    def all_text(self) -> str:
        """Every text the model would see (system, user, assistant and tool messages), joined."""
        out: list[str] = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out += [p.get("text", "") for p in content if isinstance(p, dict)]
        return "\n".join(out)


# --------------------------------------------------------------------------- validation


class InvalidRequest(Exception):
    pass


def validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise InvalidRequest("request body must be a JSON object")
    for key in ("model", "messages"):
        if key not in body:
            raise InvalidRequest(f"Missing required parameter: '{key}'.")
    if "stream_options" in body and not body.get("stream"):
        raise InvalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
            raise InvalidRequest(f"Invalid value for 'tools[{i}]': expected a function tool.")
        name = tool["function"].get("name", "")
        if not _TOOL_NAME.match(name):
            raise InvalidRequest(
                f"Invalid 'tools[{i}].function.name': string does not match pattern '^[a-zA-Z0-9_-]{{1,64}}$'."
            )
        params = tool["function"].get("parameters")
        if params is not None and params.get("type") != "object":
            raise InvalidRequest(
                f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"'."
            )
    msgs = body["messages"]
    if not isinstance(msgs, list) or not msgs:
        raise InvalidRequest("'messages' must contain at least one message.")
    pending: set[str] = set()
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise InvalidRequest(f"Invalid value for 'messages[{i}].role': {role!r}.")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                raise InvalidRequest(
                    f"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages[{i}])."
                )
            pending.discard(m["tool_call_id"])
            if not isinstance(m.get("content"), str | list):
                raise InvalidRequest(f"Missing 'messages[{i}].content'.")
            continue
        if pending:
            raise InvalidRequest(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(sorted(pending))}"
            )
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not calls and not m.get("content"):
                raise InvalidRequest(
                    f"Invalid 'messages[{i}]': assistant message needs content or tool_calls."
                )
            for call in calls:
                if call.get("type") != "function" or not isinstance(
                    call.get("function", {}).get("arguments"), str
                ):
                    raise InvalidRequest(
                        f"Invalid 'messages[{i}].tool_calls': expected function calls with string arguments."
                    )
                pending.add(call["id"])
        elif not m.get("content"):
            raise InvalidRequest(f"Invalid 'messages[{i}].content': empty.")
    if pending:
        raise InvalidRequest(f"tool_call_ids without response messages: {', '.join(sorted(pending))}")


# --------------------------------------------------------------------------- server


class FakeOpenAI(LoopbackServer[Step, "RecordedRequest"]):
    """Loopback fake. Use as a context manager, or start()/stop()."""

    def __init__(
        self,
        script: list[Step] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        validate_requests: bool = True,
        retry_after_ms: float | None = 1.0,
        tools_supported: bool = True,
        api_key: str | None = None,
    ) -> None:
        """
        retry_after_ms: added as ``retry-after-ms`` to retryable errors that set no retry header,
            so SDK retries take ~1 ms instead of its real backoff. None: the SDK's backoff.
        tools_supported: False answers any request with tools like Ollama does for a model
            without tool support.
        api_key: when set, requests must carry ``Authorization: Bearer <api_key>``.
        """
        super().__init__(script, host, port, _make_handler(self))
        self.validate_requests = validate_requests
        self.retry_after_ms = retry_after_ms
        self.tools_supported = tools_supported
        self.api_key = api_key

    @property
    def base_url(self) -> str:
        """The API root as clients configure it, including ``/v1``."""
        return f"{self.origin}/v1"

    @property
    def completions(self) -> list[RecordedRequest]:
        """The recorded chat-completion requests that a step answered."""
        return [r for r in self.requests if r.path.endswith("/chat/completions") and r.step is not None]

    def _next_step(self, rec: RecordedRequest) -> Reply | Error | Hang:
        step = self._pop_step()
        if step is None:
            return Error(500, "fake_openai: script exhausted", should_retry=False)
        if callable(step) and not isinstance(step, Reply | Error | Hang):
            step = step(rec)
        return step


def _chunk(
    cid: str, model: str, created: int, choices: list[dict[str, Any]], usage: Any = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": choices,
    }
    if usage is not None:
        out["usage"] = usage
    return out


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(LoopbackHandler):
        def _sse(self, payload: Any) -> None:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            self._chunk(f"data: {data}\n\n".encode())

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            path, headers, body = self._read_request()
            rec = RecordedRequest(self.command, path, headers, body)
            rid = {"x-request-id": next_id("req")}

            if server.api_key is not None and self.headers.get("authorization") != f"Bearer {server.api_key}":
                rec.status = 401
                server._record(rec)
                return self._send_json(401, Error(401, "Incorrect API key provided.").payload(), rid)
            if self.command == "GET" and path == "/v1/models":
                rec.status = 200
                server._record(rec)
                return self._send_json(200, {"object": "list", "data": []}, rid)
            if self.command != "POST" or path != "/v1/chat/completions":
                rec.status = 404
                server._record(rec)
                return self._send_json(404, Error(404, f"Not found: {self.command} {path}").payload(), rid)
            if server.validate_requests:
                try:
                    validate(body)
                except InvalidRequest as e:
                    rec.status = 400
                    server._record(rec)
                    return self._send_json(400, Error(400, str(e)).payload(), rid)
            if not server.tools_supported and body.get("tools"):
                rec.status = 400
                server._record(rec)
                message = f"registry.ollama.ai/library/{body['model']}:latest does not support tools"
                return self._send_json(
                    400,
                    {"error": {"message": message, "type": "api_error", "param": None, "code": None}},
                    rid,
                )

            step = server._next_step(rec)
            rec.step = step
            rec.status = (
                200 if isinstance(step, Reply) else (step.status if isinstance(step, Error) else None)
            )
            server._record(rec)

            if isinstance(step, Hang):
                server._stopping.wait(step.seconds)
                self.close_connection = True
                return
            if isinstance(step, Error):
                headers = {**rid, **retry_headers(step, server.retry_after_ms)}
                return self._send_json(step.status, step.payload(), headers)
            return self._reply(step, body, rid)

        def _reply(self, reply: Reply, body: dict[str, Any], rid: dict[str, str]) -> None:
            content: list[Block] = reply.content  # type: ignore[assignment]
            calls = [b for b in content if isinstance(b, ToolCall)]
            text = "".join(b.text for b in content if isinstance(b, Text))
            finish = reply.finish_reason or ("tool_calls" if calls else "stop")
            model = reply.model or body.get("model", "fake-model")
            cid, created = next_id("chatcmpl"), int(time.time())
            u = reply.usage
            usage = None
            if u is not None:
                prompt = (
                    u.prompt_tokens if u.prompt_tokens is not None else estimate_tokens(body.get("messages"))
                )
                completion = (
                    u.completion_tokens
                    if u.completion_tokens is not None
                    else estimate_tokens(text + "".join(c.raw for c in calls))
                )
                usage = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": u.cached_tokens or 0},
                }

            if not body.get("stream"):
                message: dict[str, Any] = {"role": "assistant", "content": text or None}
                if calls:
                    message["tool_calls"] = [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw}}
                        for c in calls
                    ]
                completion_obj = {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                }
                if usage is not None:
                    completion_obj["usage"] = usage
                return self._send_json(200, completion_obj, rid)

            def choice(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
                return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]

            chunks: list[Any] = [_chunk(cid, model, created, choice({"role": "assistant", "content": ""}))]
            for block in content:
                if isinstance(block, Text):
                    for piece in _split(block.text, block.deltas):
                        chunks.append(_chunk(cid, model, created, choice({"content": piece})))
            for index, call in enumerate(calls):
                if reply.whole_tool_calls:
                    delta = {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.raw},
                    }
                    chunks.append(_chunk(cid, model, created, choice({"tool_calls": [delta]})))
                    continue
                head = {
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }
                chunks.append(_chunk(cid, model, created, choice({"tool_calls": [head]})))
                for piece in _split(call.raw, call.deltas):
                    if piece:
                        more = {"index": index, "function": {"arguments": piece}}
                        chunks.append(_chunk(cid, model, created, choice({"tool_calls": [more]})))
            chunks.append(_chunk(cid, model, created, choice({}, finish)))
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if include_usage and usage is not None:
                chunks.append(_chunk(cid, model, created, [], usage))
            chunks.append("[DONE]")

            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            for k, v in rid.items():
                self.send_header(k, v)
            self.end_headers()
            try:
                for n, chunk in enumerate(chunks):
                    if reply.cut_after is not None and n == reply.cut_after:
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    if reply.error_after is not None and n == reply.error_after:
                        self._sse(
                            {
                                "error": {
                                    "message": reply.error_message,
                                    "type": reply.error_type,
                                    "code": None,
                                }
                            }
                        )
                        break
                    if reply.end_after is not None and n == reply.end_after:
                        break
                    if reply.hold_after is not None and n == reply.hold_after:
                        reply.held.set()
                        while not reply._gate.wait(0.05):
                            if server._stopping.is_set():
                                return
                    if reply.delay and n:
                        time.sleep(reply.delay)
                    self._sse(chunk)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    return Handler
