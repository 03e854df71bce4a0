"""What the loopback fakes of model APIs share: a scripted HTTP server in a thread, and its handler's plumbing.

`FakeAnthropic` and `FakeOpenAI` each speak their API on top of these: the script of steps, the
recorded requests, start and stop, JSON replies and chunked (SSE) writes.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, Self, TypeVar

_ids = itertools.count(1)


def next_id(prefix: str) -> str:
    """A fresh id like the APIs' (`msg_fake000001`), unique across the fakes of a process."""
    return f"{prefix}_fake{next(_ids):06d}"


def estimate_tokens(obj: Any) -> int:
    """About a token per 4 characters of the text (or of the object's compact JSON)."""
    text = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    return max(1, math.ceil(len(text) / 4))


class ScriptedError(Protocol):
    status: int
    retry_after: float | None
    should_retry: bool | None


def retry_headers(error: ScriptedError, retry_after_ms: float | None) -> dict[str, str]:
    """An error reply's retry headers: its own `retry-after`, else `retry-after-ms` for a status the
    SDKs retry (when the fake sets one, so that retries take ~1 ms), and `x-should-retry`."""
    headers: dict[str, str] = {}
    if error.retry_after is not None:
        headers["retry-after"] = f"{error.retry_after:g}"
    elif retry_after_ms is not None and (error.status in (408, 409, 429) or error.status >= 500):
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    if error.should_retry is not None:
        headers["x-should-retry"] = "true" if error.should_retry else "false"
    return headers


StepT = TypeVar("StepT")
RequestT = TypeVar("RequestT")


class LoopbackServer(Generic[StepT, RequestT]):
    """A server on the loopback interface that answers requests with the steps of its script."""

    def __init__(
        self, script: list[StepT] | None, host: str, port: int, handler: type[BaseHTTPRequestHandler]
    ) -> None:
        assert host in ("127.0.0.1", "localhost", "::1"), "loopback only"
        self.script: deque[StepT] = deque(script or [])
        self.requests: list[RequestT] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._request_seen = threading.Condition(self._lock)
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True

    @property
    def origin(self) -> str:
        """`http://HOST:PORT`."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Self:
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop serving; steps still held back (a reply waiting for its release) go at once."""
        self._stopping.set()
        for step in list(self.script):
            release = getattr(step, "release", None)
            if release is not None:
                release()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, *steps: StepT) -> Self:
        with self._lock:
            self.script.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        return len(self.script)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RequestT]:
        deadline = time.monotonic() + timeout
        with self._request_seen:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected {n} requests, got {len(self.requests)}")
                self._request_seen.wait(left)
            return list(self.requests)

    def _record(self, rec: RequestT) -> None:
        with self._request_seen:
            self.requests.append(rec)
            self._request_seen.notify_all()

    def _pop_step(self) -> StepT | None:
        with self._lock:
            return self.script.popleft() if self.script else None


class LoopbackHandler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1 with chunked bodies, as the real APIs answer; quiet in test output."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else headers/body/SSE writes stall ~40 ms on delayed ACKs

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        # A client that closes a keep-alive connection with unread bytes (e.g. it stopped reading at
        # an SSE `error` event) makes the kernel send RST; the idle read for the next request then
        # raises. That is the client going away, not a server error: no traceback for it.
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            self.close_connection = True

    def _read_request(self) -> tuple[str, dict[str, str], Any]:
        """The path (without its query), the headers (lower-cased names) and the body (JSON if it parses)."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        return self.path.split("?")[0], {k.lower(): v for k, v in self.headers.items()}, body

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
