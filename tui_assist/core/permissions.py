"""Permission rules: which side-effecting tool calls run without a dialog, and which never run.

Rules are strings, kept in two files under `[permissions]` (`allow = [...]`, `deny = [...]`): the
user's `config.toml` and the project's `<workdir>/.tui-assist/settings.toml`. Answers of "allow
for this session" are rules too, kept in memory. Every rule remembers where it came from, so
`/permissions` can list it and remove it from its own file (`core/rule_files.py` reads and edits
the files through the `RulesFiles` port; `tui_assist.session.rule_files` reads and writes them).

- `bash(PATTERN)`: shell commands whose normalised text matches the glob (`fnmatch`, `*` matches
  anything); a pattern ending in ` *` also matches its prefix alone (`bash(ls *)` allows `ls`).
- `edit`: writes of the text editor inside the workdir (never to `.tui-assist/` or `.git/`, the
  files that decide what may run).
- `mcp__SERVER` / `mcp__SERVER__TOOL`: the tools of an MCP server, or one of them.
- `web_fetch(domain:HOST)`: `web_fetch` calls whose URL's host is HOST (exactly, case aside;
  Claude Code's `WebFetch(domain:HOST)` is read the same way). Plain `web_fetch` allows every host.
- any other tool name: every call of that tool.

Claude Code's rules (`Bash(npm run test:*)`, `Edit`, `WebFetch(domain:x)`, `mcp__server__tool`,
from its `settings.json` files) are translated into these by `claude_rule`. A project's allow
rules take effect only once the project is trusted (`Permissions.project_trusted`); its deny
rules always do.

Deny beats allow. A shell command is parsed with a real parser (`bashlex`, in
`core/shell_words.py`), never split with a regex: `a && b`, `a; b`, `a | b`, `$(...)`, backticks,
subshells, loops, process substitutions and the commands inside `sudo`/`env`/`timeout`/`bash -c`/
`eval` are each a *simple command*. A command is allowed by rules only when every simple command in
it is allowed and it redirects output to no file; a deny rule that matches any one of them denies
it. A command the parser cannot read is never allowed by a rule (the user sees it), and deny
patterns are then matched on its whole text.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from tui_assist.core.claude_names import CLAUDE_TOOLS, NOT_BUILT
from tui_assist.core.rule_files import (
    PROJECT_DIR,
    PermissionsError,
    RuleEffect,
    RulesFiles,
    project_settings_path,
)
from tui_assist.core.shell_words import INTERPRETERS, WRAPPERS, CommandAnalysis, analyse_command
from tui_assist.core.tool_labels import BASH_TOOL, EDITOR_TOOL

if TYPE_CHECKING:
    from tui_assist.core.observer import ToolApproval

__all__ = [
    "BASH_TOOL",
    "EDITOR_TOOL",
    "PROJECT_SOURCE",
    "SESSION_SOURCE",
    "USER_SOURCE",
    "CommandAnalysis",
    "Permissions",
    "PermissionsError",
    "Rule",
    "RuleError",
    "RuleSource",
    "analyse_command",
    "WEB_FETCH_TOOL",
    "canonical_rule",
    "claude_rule",
    "project_settings_path",
    "propose_bash_rule",
    "url_host",
]

RuleKind = Literal["bash", "edit", "mcp", "tool", "web"]

WEB_FETCH_TOOL = "web_fetch"
"""The contract name of the web tool the rules understand (the others are in `tool_labels`)."""
EDITOR_WRITES = frozenset({"create", "str_replace", "insert"})
PROTECTED_DIRS = (PROJECT_DIR, ".git")
"""Workdir folders whose files decide what runs: never written without a dialog."""

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_WEB_RULE = re.compile(r"^(?:web_fetch|WebFetch)\(\s*domain:\s*([^\s()]+)\s*\)$")
_HOST_CHARS = re.compile(r"^[a-z0-9.:\[\]_-]+$")
_MCP_PREFIX = "mcp__"
_SEPARATOR = "__"

_SUBCOMMAND_PROGRAMS = frozenset(
    {
        "apt", "apt-get", "brew", "bun", "cargo", "composer", "conda", "deno", "docker", "dotnet",
        "gh", "git", "go", "gradle", "hatch", "helm", "just", "kubectl", "make", "mvn", "nix", "npm",
        "pip", "pip3", "pipx", "pnpm", "poetry", "rustup", "systemctl", "terraform", "uv", "yarn",
    }
)  # fmt: skip
"""Programs whose second word names what they do: the proposed rule keeps it (`git status *`)."""
_CLAUDE_NEVER_ASKED = frozenset({"Read", "WebSearch", "TodoWrite"})
"""Claude Code tools whose calls never ask here: allowing them changes nothing."""
_CLAUDE_TOOLS = {
    claude: "edit" if ours == EDITOR_TOOL else ours
    for claude, ours in CLAUDE_TOOLS.items()
    if claude not in NOT_BUILT and claude not in _CLAUDE_NEVER_ASKED
}
"""Claude Code's tool names in a rule -> this program's rule for all of that tool's calls (from the
one table of names, `core.claude_names`; the editor's writes are the `edit` rule)."""
_MODULE_RUNNERS = frozenset({"python", "python3", "npx", "uvx", "pnpx", "bunx"})
"""`python -m X`, `npx X`: the proposed rule keeps the module or package too."""


class RuleError(ValueError):
    """A rule string that does not follow the rule syntax; the message says why."""


@dataclass(frozen=True, slots=True)
class RuleSource:
    """Where a rule comes from."""

    label: str
    """`user`, `project` or `session`."""
    path: Path | None = None
    """The file the rule is kept in; None for rules that live in memory."""

    def __str__(self) -> str:
        return f"{self.label} ({self.path})" if self.path is not None else self.label


SESSION_SOURCE = RuleSource("session")
USER_SOURCE = "user"
PROJECT_SOURCE = "project"


@dataclass(frozen=True, slots=True)
class Rule:
    """One allow or deny rule, parsed, with its source."""

    text: str
    """The canonical form (whitespace inside `bash(...)` collapsed), as listed."""
    effect: RuleEffect
    source: RuleSource
    kind: RuleKind
    target: str
    """The glob for `bash`, the tool name for `tool`, the server for `mcp`, the host for `web`,
    empty for `edit`."""
    mcp_tool: str | None = None
    """For `mcp__SERVER__TOOL`: the tool's name on its server."""
    written: str = ""
    """The string exactly as written in its file (what removal looks for)."""
    vouched: bool = False
    """Saved to the project's file by the user's own answer this session: in effect before trust."""

    @classmethod
    def parse(cls, text: str, effect: RuleEffect, source: RuleSource) -> Rule:
        """Parse one rule string.

        Args:
            text: The rule, e.g. `bash(git status)`, `edit`, `mcp__files`, `agent`.
            effect: Whether it allows or denies.
            source: Where it comes from.

        Returns:
            The rule.

        Raises:
            RuleError: when the string is not a rule.
        """
        written = text
        text = text.strip()
        if text.startswith(f"{BASH_TOOL}(") or text.startswith("Bash("):
            if not text.endswith(")"):
                raise RuleError(f"invalid rule {written!r}: `bash(` needs a closing `)`")
            pattern = " ".join(text[len(BASH_TOOL) + 1 : -1].split())
            if not pattern:
                raise RuleError(f"invalid rule {written!r}: the command pattern is empty")
            return cls(f"{BASH_TOOL}({pattern})", effect, source, "bash", pattern, written=written)
        if text == "edit":
            return cls("edit", effect, source, "edit", "", written=written)
        if text.startswith((f"{WEB_FETCH_TOOL}(", "WebFetch(")):
            match = _WEB_RULE.match(text)
            host = match.group(1).lower().rstrip(".") if match else ""
            if not host or not _HOST_CHARS.match(host):
                raise RuleError(f"invalid rule {written!r}: expected web_fetch(domain:HOST)")
            return cls(f"{WEB_FETCH_TOOL}(domain:{host})", effect, source, "web", host, written=written)
        if not _TOOL_NAME.match(text):
            raise RuleError(
                f"invalid rule {written!r}: expected bash(PATTERN), edit, web_fetch(domain:HOST), "
                "mcp__SERVER[__TOOL] or a tool name"
            )
        if text.startswith(_MCP_PREFIX):
            server, _, tool = text[len(_MCP_PREFIX) :].partition(_SEPARATOR)
            if not server:
                raise RuleError(f"invalid rule {written!r}: mcp__ needs a server name")
            return cls(text, effect, source, "mcp", server, tool or None, written=written)
        return cls(text, effect, source, "tool", text, written=written)

    def matches_command(self, simple: str) -> bool:
        """Whether a `bash(...)` rule matches one normalised simple command."""
        if self.kind != "bash":
            return False
        pattern = self.target
        return fnmatch.fnmatchcase(simple, pattern) or (pattern.endswith(" *") and simple == pattern[:-2])


def canonical_rule(text: str) -> str:
    """The canonical form of a rule string (for validating settings).

    Raises:
        RuleError: when the string is not a rule.
    """
    return Rule.parse(text, "allow", SESSION_SOURCE).text


def claude_rule(entry: str, effect: RuleEffect) -> str | None:
    """A Claude Code permission rule (from its `settings.json`) in this program's rule syntax.

    `Bash(npm run test:*)` becomes `bash(npm run test *)` (`:*`: the prefix, alone or followed by
    more words), `Bash(git status)` `bash(git status)`, `Bash` `bash`; `Edit`, `Write` and
    `MultiEdit` become `edit`; `WebFetch(domain:x)` `web_fetch(domain:x)`; `Glob`, `Grep` and
    `Task` the `glob`, `grep` and `agent` tools; `mcp__server__*` is `mcp__server`.

    Args:
        entry: The rule as written, e.g. `Bash(npm run test:*)`.
        effect: `allow` or `deny` (an allow of a tool that never asks here needs nothing).

    Returns:
        The rule string, or None when the entry needs nothing here (allowing `Read`: reading
        never asks).

    Raises:
        RuleError: when the entry has no equivalent here (a path pattern such as `Edit(src/**)`,
            an unknown tool); the message names the entry.
    """
    text = entry.strip()
    name, paren, rest = text.partition("(")
    if paren and not rest.endswith(")"):
        raise RuleError(f"invalid rule {entry!r}: `(` needs a closing `)`")
    spec = rest[:-1].strip() if paren else ""
    if name.startswith(_MCP_PREFIX) and not paren:
        return text.removesuffix(f"{_SEPARATOR}*")
    if name in _CLAUDE_NEVER_ASKED:
        if effect == "allow":
            return None
        raise RuleError(f"cannot use Claude Code rule {entry!r} here: {name} calls are not refused by rules")
    ours = _CLAUDE_TOOLS.get(name)
    if ours is None:
        raise RuleError(f"cannot use Claude Code rule {entry!r} here: no such rule for {name!r}")
    if not paren or spec == "*":
        return ours
    if not spec:
        raise RuleError(f"invalid rule {entry!r}: the pattern in `()` is empty")
    if name == "Bash":
        spec = spec[:-2].rstrip() + " *" if spec.endswith(":*") else spec
        return f"{BASH_TOOL}({spec})"
    if name == "WebFetch" and spec.startswith("domain:"):
        return f"{WEB_FETCH_TOOL}({spec})"
    raise RuleError(f"cannot use Claude Code rule {entry!r} here: no rule here matches {name} by {spec!r}")


def propose_bash_rule(simple: str) -> str:
    """The rule `p` proposes for one simple command: its first words, then ` *`.

    The first words are the program, plus its subcommand for tools such as git, npm or cargo,
    plus the module for `python -m` and `npx`. An interpreter or `eval` gets the exact command:
    `bash(bash -c *)` would allow anything.

    Args:
        simple: A normalised simple command.

    Returns:
        A rule such as `bash(git status *)`.
    """
    words = simple.split(" ")
    program = os.path.basename(words[0])
    if program in INTERPRETERS or program == "eval" or "=" in words[0]:
        return f"{BASH_TOOL}({simple})"
    keep = 1
    if len(words) > 1:
        second = words[1]
        if program in _SUBCOMMAND_PROGRAMS | WRAPPERS and not second.startswith("-"):
            keep = 2
        elif program in _SUBCOMMAND_PROGRAMS | WRAPPERS:
            return f"{BASH_TOOL}({simple})"  # `git -C dir push`: options first, so be exact
        elif program in _MODULE_RUNNERS:
            if second == "-m" and len(words) > 2:
                keep = 3
            elif not second.startswith("-"):
                keep = 2
    return f"{BASH_TOOL}({' '.join(words[:keep])} *)"


def url_host(url: str) -> str | None:
    """The host of a URL as rules compare it: lower case, without a trailing dot (None: none).

    Args:
        url: An absolute URL.

    Returns:
        `example.com`, `127.0.0.1`, `::1`; None when the URL has no host.
    """
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".") or None if host else None


# --------------------------------------------------------------------------- the rule set


@dataclass(slots=True)
class Permissions:
    """Every rule of a session, from the user's file, the project's file and the session itself.

    The application layer builds it from the files (`tui_assist.session.rule_files.load_permissions`)
    and hands it the `RulesFiles` that saves and removes rules; `Permissions()` has no rules and
    saves none.
    """

    rules: list[Rule] = field(default_factory=lambda: list[Rule]())
    """All rules, user's first, then the project's, then the session's."""
    project_file: Path | None = None
    """Where `save()` writes (None: rules cannot be saved)."""
    warnings: list[str] = field(default_factory=lambda: list[str]())
    """One line per rule or file that could not be read (it was skipped)."""
    files: RulesFiles | None = None
    """What edits the rules files (None: rules live in memory only)."""
    project_trusted: bool = False
    """Whether the project's allow rules take effect (its deny rules always do)."""

    def extend(self, texts: Iterable[str], effect: RuleEffect, source: RuleSource) -> None:
        """Add rules from one source; invalid ones are skipped with a warning."""
        for text in texts:
            try:
                self.rules.append(Rule.parse(text, effect, source))
            except RuleError as exc:
                self.warnings.append(f"{source}: {exc}; skipped")

    def extend_claude(self, entries: Iterable[str], effect: RuleEffect, source: RuleSource) -> None:
        """Add Claude Code rules from one source (`claude_rule`); one warning per entry not used."""
        for entry in entries:
            try:
                text = claude_rule(entry, effect)
                if text is not None:
                    rule = Rule.parse(text, effect, source)
                    self.rules.append(dataclasses.replace(rule, written=entry))
            except RuleError as exc:
                self.warnings.append(f"{source}: {exc}; skipped")

    def in_effect(self, rule: Rule) -> bool:
        """Whether a rule applies now: a project's allow rule only once the project is trusted."""
        return (
            rule.effect == "deny"
            or self.project_trusted
            or rule.source.label != PROJECT_SOURCE
            or rule.vouched
        )

    def _allows(self) -> list[Rule]:
        return [rule for rule in self.rules if rule.effect == "allow" and self.in_effect(rule)]

    # ----------------------------------------------------------------- matching

    def denial(self, request: ToolApproval) -> tuple[Rule, str] | None:
        """The deny rule that forbids the call, and what it matched (None: no deny rule does)."""
        denies = [rule for rule in self.rules if rule.effect == "deny"]
        if not denies:
            return None
        analysis = bash_analysis(request)
        for rule in denies:
            if rule.kind == "bash" and analysis is not None:
                for simple in analysis.commands:
                    if rule.matches_command(simple):
                        return rule, simple
            elif rule.kind == "edit" and _editor_write(request):
                return rule, f"{request.input.get('command')} {request.input.get('path')}"
            elif rule.kind == "web" and _fetches_from(rule, request):
                return rule, f"{WEB_FETCH_TOOL} of {rule.target}"
            elif _matches_tool(rule, request):
                return rule, request.tool
        return None

    def allowing(self, request: ToolApproval) -> Rule | None:
        """An allow rule that covers the whole call (None when none does).

        A shell command is covered only when it parses, writes no file by redirection, and
        every simple command in it matches an allow rule; the rule returned is the first one.
        """
        allows = self._allows()
        analysis = bash_analysis(request)
        for rule in allows:
            if rule.kind == "tool" and rule.target == request.tool and (analysis is None or analysis.parsed):
                return rule
            if rule.kind == "mcp" and _matches_tool(rule, request):
                return rule
            if rule.kind == "edit" and self.is_workdir_edit(request):
                return rule
            if rule.kind == "web" and _fetches_from(rule, request):
                return rule
        if analysis is None or not analysis.parsed or analysis.writes:
            return None
        first: Rule | None = None
        for simple in analysis.commands:
            match = next((rule for rule in allows if rule.matches_command(simple)), None)
            if match is None:
                return None
            first = first or match
        return first

    def uncovered(self, request: ToolApproval) -> tuple[str, ...]:
        """The simple commands of a shell call that no allow rule matches."""
        analysis = bash_analysis(request)
        if analysis is None or not analysis.parsed:
            return ()
        allows = [rule for rule in self._allows() if rule.kind == "bash"]
        return tuple(s for s in analysis.commands if not any(rule.matches_command(s) for rule in allows))

    @staticmethod
    def is_workdir_edit(request: ToolApproval) -> bool:
        """Whether the call is a text-editor write inside the workdir, outside its protected folders."""
        if not _editor_write(request) or request.workdir is None:
            return False
        path = request.input.get("path")
        if not isinstance(path, str) or not path.strip():
            return False
        root = request.workdir.resolve()
        try:
            resolved = (root / path).resolve()
        except (OSError, RuntimeError, ValueError):
            return False
        if not resolved.is_relative_to(root):
            return False
        inside = resolved.relative_to(root).parts
        return not (inside and inside[0] in PROTECTED_DIRS)

    def propose(self, request: ToolApproval) -> tuple[str, ...]:
        """The rules `p` would save so that calls like this one run without a dialog.

        Returns:
            One `bash(...)` rule per simple command no rule covers yet; `edit` for an editor
            write inside the workdir; `mcp__SERVER__TOOL` for an MCP tool; `web_fetch(domain:HOST)`
            for a fetch; else the tool name.
            Empty when nothing sensible can be proposed (an unparsable command, a write to a
            protected folder).
        """
        analysis = bash_analysis(request)
        if analysis is not None:
            if not analysis.parsed:
                return ()
            return tuple(dict.fromkeys(propose_bash_rule(s) for s in self.uncovered(request)))
        if request.tool == EDITOR_TOOL:
            return ("edit",) if self.is_workdir_edit(request) else ()
        if request.mcp_server is not None and request.mcp_tool is not None:
            return (f"{_MCP_PREFIX}{request.mcp_server}{_SEPARATOR}{request.mcp_tool}",)
        if request.tool == WEB_FETCH_TOOL:
            host = _request_host(request)
            return (f"{WEB_FETCH_TOOL}(domain:{host})",) if host is not None else ()
        return (request.tool,) if _TOOL_NAME.match(request.tool) else ()

    # ----------------------------------------------------------------- changing

    def allow_for_session(self, texts: Iterable[str]) -> list[Rule]:
        """Add allow rules that last as long as this object (the session).

        Raises:
            RuleError: when a string is not a rule.
        """
        added = [Rule.parse(text, "allow", SESSION_SOURCE) for text in texts]
        self.rules.extend(rule for rule in added if not self._has(rule))
        return added

    def save(self, texts: Iterable[str], effect: RuleEffect = "allow") -> list[Rule]:
        """Add rules to the project file (created when missing) and to this set.

        Args:
            texts: Rule strings.
            effect: `allow` or `deny`.

        Returns:
            The rules added.

        Raises:
            RuleError: when a string is not a rule.
            PermissionsError: when there is no project file or it cannot be read or written.
        """
        if self.project_file is None or self.files is None:
            raise PermissionsError("there is no project folder to save rules in")
        source = RuleSource(PROJECT_SOURCE, self.project_file)
        # The user's own answer: in effect at once, trusted project or not.
        added = [dataclasses.replace(Rule.parse(text, effect, source), vouched=True) for text in texts]
        self.files.edit(self.project_file, effect, add=[rule.text for rule in added])
        self.rules = [r for r in self.rules if not any(_same(r, rule) for rule in added)] + added
        return added

    def remove(self, rule: Rule) -> None:
        """Remove a rule from this set and from the file it came from.

        Raises:
            PermissionsError: when its file cannot be read or written.
        """
        if rule.source.path is not None:
            if self.files is None:
                raise PermissionsError(f"cannot edit {rule.source.path} from here")
            self.files.edit(rule.source.path, rule.effect, remove=rule.written or rule.text)
        self.rules = [r for r in self.rules if r != rule]

    def _has(self, rule: Rule) -> bool:
        return any(_same(r, rule) for r in self.rules)


def _same(one: Rule, other: Rule) -> bool:
    return one.text == other.text and one.effect == other.effect and one.source == other.source


def bash_analysis(request: ToolApproval) -> CommandAnalysis | None:
    """A bash call's command as the rules see it (an empty one has no commands); None for other tools."""
    if request.tool != BASH_TOOL:
        return None
    command = request.input.get("command")
    return analyse_command(command) if isinstance(command, str) and command.strip() else CommandAnalysis(())


def _request_host(request: ToolApproval) -> str | None:
    url = request.input.get("url")
    return url_host(url) if isinstance(url, str) else None


def _fetches_from(rule: Rule, request: ToolApproval) -> bool:
    return request.tool == WEB_FETCH_TOOL and _request_host(request) == rule.target


def _editor_write(request: ToolApproval) -> bool:
    return request.tool == EDITOR_TOOL and request.input.get("command") in EDITOR_WRITES


def _matches_tool(rule: Rule, request: ToolApproval) -> bool:
    if rule.kind == "tool":
        return rule.target == request.tool
    if rule.kind != "mcp":
        return False
    if request.mcp_server is not None:
        return rule.target == request.mcp_server and rule.mcp_tool in (None, request.mcp_tool)
    # Without the server's own name, fall back on the qualified `server__tool` name.
    qualified = rule.target if rule.mcp_tool is None else f"{rule.target}{_SEPARATOR}{rule.mcp_tool}"
    return request.tool == qualified or (
        rule.mcp_tool is None and request.tool.startswith(qualified + _SEPARATOR)
    )
