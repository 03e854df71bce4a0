"""`web_fetch` against a real loopback HTTP server (stdlib, 127.0.0.1), and its approval rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, ToolUseBlock
from tui_assist.core.observer import ApprovalDecision, RecordingObserver, ToolApproval
from tui_assist.core.permissions import Permissions, RuleError, canonical_rule
from tui_assist.core.tooling import ToolContext, ToolInputError
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.rule_files import load_permissions
from tui_assist.tools.registry import toolbox_factory
from tui_assist.tools.web import MAX_BYTES, WebFetchTool, blocked_reason
from tui_assist.turns.agent import AgentTurn

PAGE = b"""<!doctype html><html><head><title>Fruit</title><style>body{color:red}</style>
<script>alert("never shown")</script></head><body>
<h1>Fruit list</h1><p>Some <b>fresh</b> fruit, see <a href="/more">more</a>.</p>
<ul><li>apple</li><li>pear</li></ul></body></html>"""


@dataclass
class Site:
    port: int
    seen: list[tuple[str, str]] = field(default_factory=list)
    """(path, Host header) of every request the server got."""
    sent_endless: list[int] = field(default_factory=lambda: [0])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def site() -> Iterator[Site]:
    state: dict[str, Site] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, ctype: str, body: bytes, **headers: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            s = state["site"]
            s.seen.append((self.path, self.headers.get("Host", "")))
            port = s.port
            match self.path:
                case "/page":
                    self._send(200, "text/html; charset=utf-8", PAGE)
                case "/redirect":
                    self._send(302, "text/plain", b"", Location="/page")
                case "/loop":
                    self._send(302, "text/plain", b"", Location="/loop")
                case "/elsewhere":
                    self._send(301, "text/plain", b"", Location=f"http://127.0.0.1:{port}/page")
                case "/text":
                    self._send(200, "text/plain; charset=latin-1", "caf\xe9 ok".encode("latin-1"))
                case "/json":
                    self._send(200, "application/json", b'{"a": [1, 2], "b": "x"}')
                case "/image":
                    self._send(200, "image/png", b"\x89PNG....")
                case "/missing":
                    self._send(404, "text/plain", b"no such page")
                case "/endless":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()  # no length: the body ends when the server stops, never
                    chunk = b"x" * 65536
                    try:
                        while s.sent_endless[0] < 50 * MAX_BYTES:
                            self.wfile.write(chunk)
                            s.sent_endless[0] += len(chunk)
                    except OSError:
                        pass
                case _:
                    self._send(404, "text/plain", b"?")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["site"] = Site(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["site"]
    finally:
        server.shutdown()
        server.server_close()


async def _no_subagents(description: str, prompt: str) -> str:
    raise AssertionError("no sub-agents here")


CTX = ToolContext(workdir=Path("."), node_id="n", run_subagent=_no_subagents)


async def fetch(tool: WebFetchTool, url: str) -> tuple[str, bool]:
    out = await tool.run(tool.parse({"url": url}), CTX)
    return out.content, out.is_error


# --------------------------------------------------------------------------- fetching


async def test_html_becomes_markdown_and_redirects_on_the_site_are_followed(site: Site) -> None:
    tool = WebFetchTool(allow_private=True)
    text, error = await fetch(tool, site.url("/redirect"))
    assert not error, text
    assert text.startswith(f"URL: {site.url('/page')}\nContent-Type: text/html\n")
    assert "# Fruit list" in text
    assert "Some **fresh** fruit, see [more](/more)." in text
    assert "- apple\n- pear" in text
    assert "alert" not in text and "color:red" not in text
    assert [path for path, _ in site.seen] == ["/redirect", "/page"]


async def test_text_and_json_pass_through_other_types_and_errors_are_refused(site: Site) -> None:
    tool = WebFetchTool(allow_private=True)
    text, error = await fetch(tool, site.url("/text"))
    assert (error, text.splitlines()[-1]) == (False, "café ok")
    text, error = await fetch(tool, site.url("/json"))
    assert not error and '"a": [\n    1,\n    2\n  ],' in text
    text, error = await fetch(tool, site.url("/image"))
    assert (
        error and text == f"web_fetch: {site.url('/image')} is image/png, not HTML, text or JSON; not fetched"
    )
    text, error = await fetch(tool, site.url("/missing"))
    assert error and text == f"web_fetch: {site.url('/missing')} answered 404: no such page"
    text, error = await fetch(tool, site.url("/loop"))
    assert error and text.startswith("web_fetch: more than 5 redirects")


async def test_a_body_is_read_up_to_the_cap_and_no_further(site: Site) -> None:
    tool = WebFetchTool(allow_private=True, max_output_chars=1000)
    text, error = await fetch(tool, site.url("/endless"))
    assert not error
    assert "[the body was cut at 5 MB]" in text and f"[{MAX_BYTES - 1000} more characters not shown]" in text
    assert site.sent_endless[0] < 50 * MAX_BYTES  # the server was cut off, not drained


async def test_long_html_is_cut_before_it_is_converted(site: Site) -> None:
    text, error = await fetch(WebFetchTool(allow_private=True, max_html_chars=228), site.url("/page"))
    assert not error and "# Fruit list" in text and "pear" not in text
    assert text.endswith("[only the first 228 characters of HTML were converted]")


async def test_a_redirect_to_another_site_is_handed_back_not_followed(site: Site) -> None:
    tool = WebFetchTool(allow_private=True, resolve=_fixed({"docs.test": ["127.0.0.1"]}))
    text, error = await fetch(tool, f"http://docs.test:{site.port}/elsewhere")
    assert not error
    assert text.startswith(
        f"http://docs.test:{site.port}/elsewhere redirects to another site: {site.url('/page')}"
    )
    assert site.seen == [("/elsewhere", f"docs.test:{site.port}")]  # pinned to the checked address


# --------------------------------------------------------------------------- where it may connect


def _fixed(table: dict[str, list[str]]):  # noqa: ANN202
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError(-2, "Name or service not known")
        return table[host]

    return resolve


async def test_loopback_and_private_addresses_are_refused_by_default(site: Site) -> None:
    tool = WebFetchTool()
    text, error = await fetch(tool, site.url("/page"))
    assert error
    assert text == (
        f"web_fetch: refused {site.url('/page')}: 127.0.0.1 resolves to 127.0.0.1, a loopback address "
        "(only public addresses are fetched unless [tools.web] allow_private = true)"
    )
    # Every address of a name is checked, not only the first.
    mixed = WebFetchTool(resolve=_fixed({"mixed.test": ["93.184.215.14", "10.0.0.7"]}))
    text, error = await fetch(mixed, "https://mixed.test/")
    assert error and "mixed.test resolves to 10.0.0.7, a private address" in text
    text, error = await fetch(mixed, "https://nowhere.test/")
    assert error and text == "web_fetch: cannot resolve nowhere.test: Name or service not known"
    assert site.seen == []  # nothing was sent anywhere


async def test_every_redirect_hop_is_checked_again_after_resolution(site: Site) -> None:
    """A public name that resolves to a private address on the redirect (DNS rebinding) is refused."""
    answers = iter([["127.0.0.1"], ["10.1.2.3"]])

    async def rebinding(host: str, port: int) -> list[str]:
        assert host == "public.test"
        return next(answers)

    # 127.0.0.1 stands in for a public server; the refusal below is the ordinary check.
    tool = WebFetchTool(resolve=rebinding, public_addresses={"127.0.0.1"})
    text, error = await fetch(tool, f"http://public.test:{site.port}/redirect")
    assert error
    assert text.startswith(
        f"web_fetch: refused http://public.test:{site.port}/page: public.test resolves to 10.1.2.3, a private address"
    )
    assert site.seen == [("/redirect", f"public.test:{site.port}")]

    # A redirect straight to a loopback URL is handed back, and fetching it is refused.
    tool = WebFetchTool(resolve=_fixed({"public.test": ["127.0.0.1"]}), public_addresses={"127.0.0.1"})
    text, _ = await fetch(tool, f"http://public.test:{site.port}/elsewhere")
    target = text.split(": ", 1)[1].splitlines()[0]
    assert target == site.url("/page")
    assert "a loopback address" in (await fetch(WebFetchTool(), target))[0]


def test_which_addresses_are_refused() -> None:
    assert blocked_reason("127.0.0.1") == "loopback"
    assert blocked_reason("::1") == "loopback"
    assert blocked_reason("::ffff:127.0.0.1") == "loopback"
    assert blocked_reason("10.0.0.1") == "private"
    assert blocked_reason("192.168.1.1") == "private"
    assert blocked_reason("169.254.169.254") == "link-local"
    assert blocked_reason("fe80::1%eth0") == "link-local"
    assert blocked_reason("0.0.0.0") == "unspecified"
    assert blocked_reason("100.64.0.1") == "not public"
    assert blocked_reason("224.0.0.1") == "multicast"
    assert blocked_reason("93.184.215.14") is None
    assert blocked_reason("2606:4700::1111") is None


def test_addresses_that_carry_an_ipv4_address_are_judged_by_it() -> None:
    # 6to4 (2002::/16) and Teredo (2001::/32, the client's address inverted) go through a relay.
    assert blocked_reason("2002:7f00:1::") == "loopback"
    assert blocked_reason("2002:a00:1::1") == "private"
    assert blocked_reason("2002:a9fe:a9fe::") == "link-local"
    assert blocked_reason("2002:5db8:d70e::1") == "6to4"
    assert blocked_reason("2001:0:4136:e378:8000:63bf:80ff:fffe") == "loopback"  # client 127.0.0.1
    assert blocked_reason("2001:0:4136:e378:8000:63bf:a2ff:47f1") == "Teredo"  # client 93.0.184.14
    assert blocked_reason("fec0::1") == "site-local"
    assert blocked_reason("feff::1") == "site-local"
    assert blocked_reason("::127.0.0.1") == "loopback"  # IPv4-compatible
    assert blocked_reason("::ffff:10.0.0.1") == "private"  # IPv4-mapped
    assert blocked_reason("64:ff9b::a9fe:a9fe") == "link-local"  # NAT64
    assert blocked_reason("64:ff9b::5db8:d70e") is None  # NAT64 of a public address
    assert blocked_reason("::") == "unspecified" and blocked_reason("::1") == "loopback"


async def test_a_6to4_name_for_a_loopback_address_is_refused(site: Site) -> None:
    """The real path: resolution, the check, and nothing sent."""
    tool = WebFetchTool(resolve=_fixed({"tunnel.test": ["2002:7f00:1::"]}))
    text, error = await fetch(tool, f"http://tunnel.test:{site.port}/page")
    assert error and "tunnel.test resolves to 2002:7f00:1::, a loopback address" in text
    assert site.seen == []


def test_input_is_an_absolute_http_url() -> None:
    tool = WebFetchTool()
    assert tool.parse({"url": " https://example.com/a "}).url == "https://example.com/a"
    for bad in ({}, {"url": "file:///etc/passwd"}, {"url": "example.com"}, {"url": "http://u:p@h.test/"}):
        with pytest.raises(ToolInputError):
            tool.parse(bad)


# --------------------------------------------------------------------------- approvals


def request(url: str) -> ToolApproval:
    return ToolApproval(
        node_id="n", tool="web_fetch", input={"url": url}, summary=f"GET {url}", read_only=True
    )


def test_domain_rules_allow_deny_and_are_proposed() -> None:
    assert canonical_rule("WebFetch(domain:Docs.Python.org)") == "web_fetch(domain:docs.python.org)"
    with pytest.raises(RuleError):
        canonical_rule("web_fetch(example.com)")
    permissions = Permissions()
    permissions.allow_for_session(["web_fetch(domain:docs.python.org)"])
    assert permissions.allowing(request("https://DOCS.python.org./3/")) is not None
    assert permissions.allowing(request("https://evil.test/?docs.python.org")) is None
    assert permissions.allowing(request("https://sub.docs.python.org/")) is None
    assert permissions.propose(request("https://evil.test:8443/x")) == ("web_fetch(domain:evil.test)",)
    permissions.extend(["web_fetch(domain:evil.test)"], "deny", permissions.rules[0].source)
    denial = permissions.denial(request("http://evil.test/"))
    assert denial is not None and denial[0].text == "web_fetch(domain:evil.test)"


async def test_plan_mode_asks_for_a_fetch_and_the_pattern_answer_saves_the_domain_rule(
    site: Site, tmp_path: Path
) -> None:
    permissions = load_permissions(tmp_path)
    policy = ApprovalPolicy(mode="plan", permissions=permissions)
    web = WebFetchTool(allow_private=True)
    provider = ScriptedProvider(
        [
            [ToolUseBlock("t1", "web_fetch", {"url": site.url("/page")})],
            [ToolUseBlock("t2", "bash", {"command": "touch x"})],
            [ToolUseBlock("t3", "web_fetch", {"url": site.url("/text")})],
            "Read both.",
        ]
    )
    deps = TurnDeps(provider, toolbox_factory(tmp_path, extra_tools=[web]), approvals=policy)
    observer = RecordingObserver(decision=ApprovalDecision.allow_pattern())
    result = await AgentTurn(deps).run(Conversation(), "read the fruit page", observer)

    assert result.outcome == "answered"
    [asked] = observer.approvals  # the first fetch asked; the saved rule let the second through
    assert (asked.tool, asked.proposed_rules, asked.read_only) == (
        "web_fetch",
        ("web_fetch(domain:127.0.0.1)",),
        True,
    )
    saved = (tmp_path / ".tui-assist" / "settings.toml").read_text()
    assert "web_fetch(domain:127.0.0.1)" in saved
    outputs = [(r.name, r.is_error) for r in result.evidence]
    assert outputs == [("web_fetch", False), ("bash", True), ("web_fetch", False)]
    assert "plan mode" in result.evidence[1].output
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------- headless, as a user runs it


def ask_fetch(site: Site, work: Path, tmp_path: Path, *flags: str) -> dict[str, Any]:
    script = tmp_path / "fetch.json"
    script.write_text(
        json.dumps(
            [
                [{"type": "tool_use", "id": "t1", "name": "web_fetch", "input": {"url": site.url("/page")}}],
                [{"type": "text", "text": "done"}],
            ]
        )
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_assist",
            "ask",
            "--json",
            "--provider",
            "scripted",
            "--script",
            str(script),
        ]
        + ["--workdir", str(work), *flags, "read the page"],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_ask_without_yes_denies_a_fetch_that_no_domain_rule_allows(site: Site, tmp_path: Path) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[tools.web]\nallow_private = true\n")
    work = tmp_path / "work"
    (work / ".tui-assist").mkdir(parents=True)

    data = ask_fetch(site, work, tmp_path)
    assert data["denied_calls"] == [{"tool": "web_fetch", "summary": f"GET {site.url('/page')}"}]
    assert site.seen == []

    (work / ".tui-assist" / "settings.toml").write_text(
        '[permissions]\nallow = ["web_fetch(domain:127.0.0.1)"]\n'
    )
    data = ask_fetch(site, work, tmp_path, "--trust-project")  # a project's allow rule needs its trust
    assert (data["answer"], data["denied_calls"]) == ("done", [])
    assert site.seen == [("/page", f"127.0.0.1:{site.port}")]

    config.write_text("")  # allow_private back to its default: the rule allows, the address check refuses
    data = ask_fetch(site, work, tmp_path)
    assert data["denied_calls"] == [] and len(site.seen) == 1
