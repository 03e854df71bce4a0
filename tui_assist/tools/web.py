"""`web_fetch`: read one web page (GET), as Markdown for HTML, as it is for plain text and JSON.

What the tool guards, and how:

- **Where it may connect.** Every hop (the first request and each redirect) resolves its host
  name (`getaddrinfo`, in a thread) and checks *every* address it gets: loopback, private,
  link-local, site-local, unspecified, multicast, reserved and other non-global addresses are
  refused unless `[tools.web] allow_private = true`. An IPv6 address that carries an IPv4 one
  (IPv4-mapped, IPv4-compatible, NAT64) is judged as that IPv4 address; 6to4 (`2002::/16`) and
  Teredo (`2001::/32`) ones are refused, naming what their IPv4 address is when that is not
  public (they reach it through a relay). The request then goes to
  the address that was checked, not to the name: the URL is rewritten to the IP, the `Host` header
  and, for https, the TLS server name (SNI, and so the certificate check) keep the real host. So
  a DNS answer that changes between the check and the connection (rebinding) changes nothing.
  Proxies from the environment are not used, since a proxy would make the check meaningless.
- **Whose pages.** Approval is per host (`web_fetch(domain:HOST)`, `core/permissions.py`), so a
  redirect is followed only within the approved site: the same host, or the same host with or
  without `www.`. A redirect elsewhere ends the call with the new URL, so the model can fetch it
  with a call of its own, which the approval policy sees (an open redirect on an approved site
  cannot carry the model's requests to any host).
- **How much.** At most `max_redirects` hops, a connect and a read timeout, an overall deadline,
  and at most `max_bytes` (5 MB) read from the body: it is streamed and the read stops there. At most 2 MB
  of HTML is converted, in a thread (markdownify takes about a second per megabyte).

HTTP goes through `httpx2`, the HTTP client the Anthropic and MCP SDKs already bring (one HTTP
stack). HTML becomes Markdown through `markdownify`; both are imported on the first call.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tui_assist.core.model import ToolSpec
from tui_assist.core.permissions import WEB_FETCH_TOOL, url_host
from tui_assist.core.text import exc_text, one_line
from tui_assist.core.tooling import ToolContext, ToolOutput
from tui_assist.tools.base import validate_input

if TYPE_CHECKING:
    import httpx2

__all__ = ["MAX_BYTES", "Resolver", "WebFetchArgs", "WebFetchTool", "blocked_reason", "system_resolver"]

MAX_BYTES: Final = 5 * 1024 * 1024
"""How much of a body is read at most."""
MAX_HTML_CHARS: Final = 2_000_000
"""How much HTML is turned into Markdown: the conversion takes about a second per megabyte, and
the Markdown the model gets is cut far below what more HTML would give."""
_HTML_TYPES: Final = ("text/html", "application/xhtml+xml")
_TEXT_TYPES: Final = ("text/plain", "text/markdown", "text/x-markdown", "text/csv")
_REDIRECTS: Final = (301, 302, 303, 307, 308)
_BLANK_RUNS = re.compile(r"\n{3,}")

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""`(host, port) -> addresses`: how host names become IP addresses (tests may pass their own)."""

_DESCRIPTION = """\
Fetch a web page by URL (http or https, GET only) and return its content: HTML as Markdown, \
plain text and JSON as they are. Redirects on the same site are followed; a redirect to another \
site returns its URL instead, to fetch with another call. Other content types (images, PDFs, \
binaries) are refused. Pages from private or local network addresses are refused."""


class WebFetchArgs(BaseModel):
    """Validated input of `web_fetch`."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    url: str = Field(min_length=1)
    """An absolute http or https URL."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip()
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https"):
            raise ValueError("must be an http:// or https:// URL")
        if url_host(value) is None:
            raise ValueError("has no host name")
        if parts.username is not None or parts.password is not None:
            raise ValueError("must not carry a user name or password")
        return value


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, through the system's resolver (in a thread).

    Raises:
        OSError: when the name does not resolve.
    """
    infos = await asyncio.to_thread(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def blocked_reason(address: str) -> str | None:
    """Why an address is refused without `allow_private` (None: it is a public address).

    IPv4-mapped, IPv4-compatible and NAT64 (`64:ff9b::/96`) IPv6 forms of an IPv4 address are
    judged as that address; 6to4 and Teredo ones are refused, as what their IPv4 address is when
    that is refused, else as `6to4` or `Teredo`.

    Args:
        address: An IP address as text (a scope suffix such as `%eth0` is ignored).

    Returns:
        `loopback`, `private`, `link-local`, `site-local`, `unspecified`, `multicast`,
        `reserved`, `6to4`, `Teredo` or `not public`; None for a global address.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        tunnelled = _tunnelled(ip)
        if tunnelled is not None:
            kind, inner = tunnelled
            return _judge(inner) or kind
        inner = _embedded(ip)
        if inner is not None:
            return _judge(inner)
    return _judge(ip)


def _tunnelled(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The tunnel an address goes through and the IPv4 address it ends at (6to4, Teredo's client)."""
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo", ip.teredo[1]
    return None


def _embedded(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for: IPv4-mapped, IPv4-compatible or NAT64."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):  # `::` and `::1` are themselves
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _judge(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    site_local = isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local
    for reason, flag in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("site-local", site_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
    ):
        if flag:
            return reason
    return None if ip.is_global else "not public"


class _Refused(Exception):
    """The fetch stops here; the message is the tool result."""


class WebFetchTool:
    """The `web_fetch` tool. It holds no connection between calls, so toolboxes may share it.

    Args:
        allow_private: Whether private, loopback and link-local addresses may be fetched.
        timeout: Seconds to connect, and to wait for each read.
        deadline: Seconds the whole call may take, redirects included.
        max_bytes: Bytes of a body read at most.
        max_redirects: Redirects followed at most.
        max_output_chars: Longer Markdown or text is cut, with a marker.
        max_html_chars: Longer HTML is cut before it is converted, with a marker.
        resolve: Resolves host names; None: the system's resolver.
        public_addresses: Addresses to treat as public although they are not: only for tests,
            where a loopback server stands in for a public host. The settings never set it.
    """

    def __init__(
        self,
        *,
        allow_private: bool = False,
        timeout: float = 20.0,
        deadline: float = 60.0,
        max_bytes: int = MAX_BYTES,
        max_redirects: int = 5,
        max_output_chars: int = 100_000,
        max_html_chars: int = MAX_HTML_CHARS,
        resolve: Resolver | None = None,
        public_addresses: Collection[str] = (),
    ) -> None:
        self._allow_private = allow_private
        self._timeout = timeout
        self._deadline = deadline
        self._max_bytes = max_bytes
        self._max_redirects = max_redirects
        self._max_output_chars = max_output_chars
        self._max_html_chars = max_html_chars
        self._resolve = resolve or system_resolver
        self._public = frozenset(public_addresses)
        self._spec = ToolSpec(
            name=WEB_FETCH_TOOL,
            description=_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {"url": {"type": "string", "description": "The http(s) URL to fetch."}},
                "required": ["url"],
            },
        )

    @property
    def spec(self) -> ToolSpec:
        """`web_fetch` as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> WebFetchArgs:
        """Validate the model's input.

        Raises:
            ToolInputError: when `url` is missing or not an absolute http(s) URL.
        """
        return validate_input(WebFetchArgs, raw, WEB_FETCH_TOOL)

    def side_effecting(self, args: WebFetchArgs) -> bool:
        """Always: a request leaves the machine, so it passes the approval policy (per host)."""
        return True

    def read_only(self, args: WebFetchArgs) -> bool:
        """Always: it only reads, so `plan` mode asks (or applies a rule) instead of refusing it."""
        return True

    def summary(self, args: WebFetchArgs) -> str:
        """`GET URL`, for the approval dialog."""
        return f"GET {args.url}"

    async def run(self, args: WebFetchArgs, ctx: ToolContext) -> ToolOutput:
        """Fetch the URL; every failure is an error output, never an exception."""
        import httpx2

        try:
            async with asyncio.timeout(self._deadline):
                return await self._fetch(args.url)
        except _Refused as refusal:
            return ToolOutput(str(refusal), is_error=True)
        except TimeoutError:
            return ToolOutput(f"web_fetch: {args.url} took longer than {self._deadline:g} s", is_error=True)
        except httpx2.HTTPError as exc:
            return ToolOutput(one_line(f"web_fetch: {args.url} failed: {exc_text(exc)}"), is_error=True)

    async def _fetch(self, url: str) -> ToolOutput:
        import httpx2

        timeout = httpx2.Timeout(self._timeout)
        origin = url_host(url)
        async with httpx2.AsyncClient(
            timeout=timeout, trust_env=False, follow_redirects=False, verify=_tls_context()
        ) as client:
            for _ in range(self._max_redirects + 1):
                request = await self._pinned_request(client, url)
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.status_code not in _REDIRECTS or not location:
                        return await self._read(url, response)
                finally:
                    await response.aclose()
                target = urljoin(url, location)
                if urlsplit(target).scheme.lower() not in ("http", "https"):
                    raise _Refused(
                        f"web_fetch: {url} redirects to {target}, which is not http(s); not followed"
                    )
                if not _same_site(url_host(target), origin):
                    return ToolOutput(
                        f"{url} redirects to another site: {target}\n"
                        "Not followed: fetch that URL with web_fetch if you need it."
                    )
                url = target
        raise _Refused(f"web_fetch: more than {self._max_redirects} redirects; stopped at {url}")

    async def _pinned_request(self, client: httpx2.AsyncClient, url: str) -> httpx2.Request:
        """A GET for `url` sent to the one address checked for its host (see the module's notes)."""
        parts = urlsplit(url)
        host = url_host(url)
        assert host is not None  # parse() and the redirect check saw to it
        https = parts.scheme.lower() == "https"
        port = parts.port or (443 if https else 80)
        try:
            addresses = await self._resolve(host, port)
        except OSError as exc:
            raise _Refused(f"web_fetch: cannot resolve {host}: {exc.strerror or exc}") from None
        if not addresses:
            raise _Refused(f"web_fetch: {host} has no address")
        if not self._allow_private:
            for address in addresses:
                reason = None if address in self._public else blocked_reason(address)
                if reason is not None:
                    raise _Refused(
                        f"web_fetch: refused {url}: {host} resolves to {address}, a {reason} address "
                        "(only public addresses are fetched unless [tools.web] allow_private = true)"
                    )
        address = addresses[0]
        literal = f"[{address}]" if ":" in address else address
        netloc = f"{literal}:{parts.port}" if parts.port else literal
        pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
        host_header = parts.netloc.rpartition("@")[2]
        extensions = {"sni_hostname": host} if https else {}
        return client.build_request(
            "GET",
            pinned,
            headers={
                "Host": host_header,
                "Accept": "text/html, text/plain, application/json;q=0.9, */*;q=0.1",
            },
            extensions=extensions,
        )

    async def _read(self, url: str, response: httpx2.Response) -> ToolOutput:
        content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if response.status_code >= 400:
            body, _ = await self._body(response, 2_000)
            text = one_line(_decode(body, response)) if body else ""
            detail = f": {text}" if text else ""
            return ToolOutput(f"web_fetch: {url} answered {response.status_code}{detail}", is_error=True)
        kind = _kind(content_type)
        if kind is None:
            return ToolOutput(
                f"web_fetch: {url} is {content_type or 'of no declared type'}, not HTML, text or JSON; "
                "not fetched",
                is_error=True,
            )
        body, cut = await self._body(response, self._max_bytes)
        text = _decode(body, response)
        notes: list[str] = []
        if cut:
            notes.append(f"[the body was cut at {self._max_bytes // (1024 * 1024)} MB]")
        if kind == "html":
            if len(text) > self._max_html_chars:
                notes.append(f"[only the first {self._max_html_chars:,} characters of HTML were converted]")
                text = text[: self._max_html_chars]
            text = await asyncio.to_thread(_markdown, text)  # CPU-bound: keep the event loop free
        elif kind == "json" and not cut:
            try:
                text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
            except ValueError:
                pass  # not valid JSON after all: pass it on as it came
        if len(text) > self._max_output_chars:
            notes.append(f"[{len(text) - self._max_output_chars} more characters not shown]")
            text = text[: self._max_output_chars]
        header = f"URL: {url}\nContent-Type: {content_type}\n\n"
        return ToolOutput(header + text.strip() + ("\n\n" + "\n".join(notes) if notes else ""))

    @staticmethod
    async def _body(response: httpx2.Response, limit: int) -> tuple[bytes, bool]:
        """At most `limit` bytes of the body, and whether there was more (the stream stops there)."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return b"".join(chunks)[:limit], True
        return b"".join(chunks), False


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The default verifying TLS context, built once: building one (loading the CA store) is slow."""
    import httpx2

    return httpx2.create_ssl_context(trust_env=False)


def _same_site(host: str | None, origin: str | None) -> bool:
    if host is None or origin is None:
        return False
    return host.removeprefix("www.") == origin.removeprefix("www.")


def _kind(content_type: str) -> str | None:
    if content_type in _HTML_TYPES:
        return "html"
    if content_type in _TEXT_TYPES:
        return "text"
    if content_type == "application/json" or content_type.endswith("+json"):
        return "json"
    return None


def _decode(body: bytes, response: httpx2.Response) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def _markdown(html: str) -> str:
    from markdownify import markdownify

    text = markdownify(html, heading_style="ATX", bullets="-", strip=["img"])
    return _BLANK_RUNS.sub("\n\n", text)
