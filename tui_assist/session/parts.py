"""What a chat session runs on: its settings, approval policy, provider, tools, MCP servers and store.

`SessionParts` holds them and builds them: the heavy pieces (the Anthropic SDK, the tools, the
store) are loaded by `load()`, which a host calls when it is ready (the TUI: after its first
paint); nothing here imports them at module level. A part that can't be built never stops the
session: `load` records why, and the host decides what that means. `ChatSession`
(`session/chat.py`) runs the conversation and its turns on these parts.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tui_assist.core.approval import ApprovalMode, ApprovalPolicy
from tui_assist.session.config_source import ConfigError, ConfigPreview, ConfigSource
from tui_assist.session.factory import EmptyToolbox, MissingCredentials, SetupError

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.core.tooling import SubagentSpec, Tool, ToolboxFactory
    from tui_assist.session.config import Settings
    from tui_assist.session.extensions import Extensions
    from tui_assist.session.hooks import SessionHooks
    from tui_assist.session.mcp_config import ProjectMcpServers
    from tui_assist.session.rewind import TurnCheckpoints
    from tui_assist.session.trust import ProjectFiles
    from tui_assist.store.db import Store
    from tui_assist.tools.background import BackgroundShells
    from tui_assist.tools.lsp import LspServers
    from tui_assist.tools.mcp import McpManager
    from tui_assist.tools.sandbox import Sandbox
    from tui_assist.tools.skill import SkillEntry

log = logging.getLogger(__name__)

ProviderFactory = Callable[[], "Provider"]


class PartsOptions(TypedDict, total=False):
    """`SessionParts`'s keyword arguments, for a host that takes them and hands them on as they are."""

    provider_factory: ProviderFactory | None
    toolbox_factory: ToolboxFactory | None
    store: Store | None
    use_store: bool
    approvals: ApprovalPolicy | None
    mode: ApprovalMode | None
    trust_sandbox: bool


class SessionParts:
    """The settings and the parts a session runs on, built by `load` and released by `aclose`."""

    def __init__(
        self,
        settings: Settings | ConfigSource,
        *,
        provider_factory: ProviderFactory | None = None,
        toolbox_factory: ToolboxFactory | None = None,
        store: Store | None = None,
        use_store: bool = True,
        approvals: ApprovalPolicy | None = None,
        mode: ApprovalMode | None = None,
        trust_sandbox: bool = True,
    ) -> None:
        """Take the settings; the parts are built by `load`.

        Args:
            settings: Validated settings, or their unvalidated source: then a host can draw from its
                `preview` at once and `load` validates it (pydantic is slow to import).
            provider_factory: Makes the provider; None builds the one the settings name.
            toolbox_factory: Makes each run's tools; None uses the tool registry (and MCP servers).
            store: A ready store (the caller closes it); None opens the settings' one when `use_store`.
            use_store: Whether to open the store when none is given.
            approvals: The approval policy; None builds it from the settings (the user's and the
                project's permission rules, the mode).
            mode: The approval mode to start in instead of the settings' (`bypass` for `--yes`).
            trust_sandbox: Whether sandboxed shell commands run without asking (see
                `ApprovalPolicy`).
        """
        self._source: ConfigSource | None = None
        self._settings: Settings | None = None
        self._settings_lock = threading.Lock()
        if isinstance(settings, ConfigSource):
            self._source = settings
        self.preview = ConfigPreview.of(settings)
        self.refine = self.preview.refine
        self.rounds = self.preview.rounds
        self.model = self.preview.model
        self._stored_model: str | None = None
        """The resumed conversation's model (`follow_stored_model`), for a provider loaded after it."""
        self.notes: list[str] = []
        """Things the user should know about what was loaded (shown once)."""
        self._project_files: ProjectFiles | None = None
        """The project's files as read for this session (`_project_snapshot`)."""
        self.extensions: Extensions | None = None
        """The user's and the project's hooks and custom sub-agents, and the project's trust."""
        self._fixed_approvals = approvals is not None
        self._mode: ApprovalMode | None = mode
        self._trust_sandbox = trust_sandbox
        self.approvals = approvals or ApprovalPolicy(mode=mode or "default", trust_sandbox=trust_sandbox)
        self.sandbox_description = "sandbox: …"
        """One line for the status bar once `load` chose the bash sandbox."""
        self.config_problem: str | None = None
        """Why the settings are invalid (the session then runs on defaults, without a model)."""
        if not isinstance(settings, ConfigSource):
            self._adopt(settings)
        self.provider: Provider | None = None
        self.provider_problem: str | None = None
        """Why there is no provider: one line, or several for invalid settings."""
        self.missing_credentials = False
        """The provider is Anthropic and the SDK found no credentials."""
        self.store = store
        self.store_error: SetupError | None = None
        """Why the store could not be opened (turns then aren't saved)."""
        self._use_store = use_store and store is None
        self._owns_store = False
        self._mcp: McpManager | None = None
        self._project_mcp: ProjectMcpServers | None = None
        """The project's MCP servers, once `load` has read them (started only when trusted)."""
        self.lsp: LspServers | None = None
        """The language servers that check the editor's writes (each starts on first use)."""
        self.shells: BackgroundShells | None = None
        """The background shells `bash` starts (`run_in_background`), all ended by `aclose`."""
        self._provider_factory = provider_factory
        self._toolbox_factory = toolbox_factory
        self._ready = asyncio.Event()
        self.checkpoints: TurnCheckpoints | None = None
        """Snapshots of the workdir around each turn (None without a store of the session's own)."""
        self.hooks: SessionHooks | None = None
        """The hooks that run (None when there are none)."""

    # -- settings ------------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The validated settings; validated here, at once, if `load` hasn't done it yet."""
        if self._settings is None:
            self._validate()
        assert self._settings is not None
        return self._settings

    async def validate(self) -> Settings:
        """The validated settings, validated in a thread if they aren't yet (`load` does it too)."""
        if self._settings is None:
            await asyncio.to_thread(self._validate)
        return self.settings

    def _validate(self) -> None:
        with self._settings_lock:  # `load` validates in a thread
            if self._settings is not None or self._source is None:
                return
            from tui_assist.session.config import Settings

            try:
                settings = self._source.settings()
            except ConfigError as exc:
                self.config_problem = str(exc)
                # The data dir stays the preview's: the store may be open there already.
                settings = Settings(workdir=self.preview.workdir, data_dir=self.preview.data_dir)
            self._adopt(settings)

    def _adopt(self, settings: Settings) -> None:
        self._settings = settings
        # A refine toggle or round count the user already changed on the first frame wins.
        if self.refine == self.preview.refine:
            self.refine = settings.refine
        if self.rounds == self.preview.rounds:
            self.rounds = settings.rounds
        self.model = settings.resolved_model
        if not self._fixed_approvals:
            self.approvals = self._approval_policy(settings)
            self._adopt_trust()

    def _approval_policy(self, settings: Settings) -> ApprovalPolicy:
        """The policy the settings describe: the user's and the project's rules, the mode."""
        from tui_assist.paths import claude_home, config_file
        from tui_assist.session.rule_files import TomlRulesFiles, load_permissions

        permissions = load_permissions(
            settings.workdir,
            user_allow=settings.permissions.allow,
            user_deny=settings.permissions.deny,
            user_file=config_file(),
            claude_user_file=claude_home() / "settings.json" if settings.claude.import_user else None,
            snapshot=self._project_snapshot(settings.workdir),
        )
        self.notes.extend(permissions.warnings)
        permissions.files = TomlRulesFiles(after_edit=self._rules_file_edited)
        return ApprovalPolicy(
            settings.approval.default,
            settings.approval.rules,
            mode=self._mode or settings.mode,
            permissions=permissions,
            notify=self.notes.append,
            trust_sandbox=self._trust_sandbox,
        )

    def _project_snapshot(self, workdir: Path) -> ProjectFiles:
        """The project's files, each read once: the rules, hooks, servers and digest see the same bytes."""
        from tui_assist.session.trust import ProjectFiles

        snapshot = self._project_files
        if snapshot is None or snapshot.workdir != workdir.resolve():
            snapshot = self._project_files = ProjectFiles(workdir)
        return snapshot

    def _rules_file_edited(self, path: Path, before: bytes | None) -> None:
        """Keep a trusted project trusted when the user's own answer edits one of its rules files.

        `p` in a dialog or `/permissions remove` changes the file; the digest takes in the new
        bytes, but never a change someone else made since the session read the file.
        """
        from tui_assist.paths import data_dir
        from tui_assist.session.trust import ProjectTrust

        found, snapshot = self.extensions, self._project_files
        if found is None or snapshot is None or not found.trusted:
            return
        if not path.resolve().is_relative_to(found.workdir.resolve()):
            return  # the user's own file: never part of a project's trust
        if snapshot.as_read(path) != before:
            return  # changed since the session read it: not the user's to vouch for
        snapshot.reread(path)
        if path not in found.project_files:
            found.project_files.append(path)
        found.digest = snapshot.digest(found.project_files)
        ProjectTrust(data_dir(self.settings.data_dir)).save(found.workdir, found.digest)

    def _adopt_trust(self) -> None:
        """Let the project's allow rules take effect once (and only while) it is trusted."""
        found = self.extensions
        self.approvals.permissions.project_trusted = found is not None and found.trusted

    # -- loading -------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether `load` has finished."""
        return self._ready.is_set()

    async def wait_ready(self) -> None:
        """Wait until `load` has finished."""
        await self._ready.wait()

    @property
    def mcp(self) -> McpManager | None:
        """The `McpManager` of the configured MCP servers (None when none are configured)."""
        return self._mcp

    async def load(self, *, after_store: Callable[[], Awaitable[None]] | None = None) -> None:
        """Validate the settings, build the provider, the tools and the store (in threads where slow).

        Never raises for a part that can't be built: it records why (`config_problem`,
        `provider_problem`, `store_error`, `notes`) and the host decides what that means.

        Args:
            after_store: Awaited once the store is open, before the provider loads (the SDK's
                import would compete with it for the interpreter): e.g. redrawing a resumed
                conversation.
        """
        # The store needs only the data dir, which the preview knows: it opens before validation
        # (pydantic's import and the validation are slow), so a conversation redrawn in
        # `after_store` shows without waiting for them.
        if self._use_store:
            await self._open_store()
        if after_store is not None:
            await after_store()
        await self.validate()
        await asyncio.to_thread(self._load_extensions)
        self._make_checkpoints()
        await self._load_provider()
        if self._toolbox_factory is None:
            from tui_assist.session.factory import sandbox_read_only_paths
            from tui_assist.tools.sandbox import choose_sandbox

            s = self.settings
            # The scripts project hooks and MCP servers run stay read-only, trusted or not yet: a
            # sandboxed command must not rewrite what runs outside the sandbox.
            scripts = self.extensions.trusted_scripts if self.extensions is not None else ()
            read_only = await asyncio.to_thread(sandbox_read_only_paths, s, scripts)
            choice = await asyncio.to_thread(
                choose_sandbox, s.sandbox, network=s.sandbox_network, read_only=read_only
            )
            self.sandbox_description = choice.description
            if choice.warning:
                self.notes.append(choice.warning)
            await self._start_mcp()
            self._toolbox_factory = await asyncio.to_thread(
                self._make_toolbox_factory, self._mcp_tools, choice.sandbox
            )
        if self.checkpoints is not None:
            # Started last: git hashing a big workdir would compete with the SDK's import.
            self.checkpoints.warm_up()
        self._ready.set()

    async def _load_provider(self) -> None:
        if self.config_problem is not None:
            self.provider_problem = self.config_problem
            return
        try:
            if self._provider_factory is not None:
                provider = self._provider_factory()
            else:
                from tui_assist.session.factory import make_provider

                provider = await asyncio.to_thread(make_provider, self.settings)
        except SetupError as exc:
            self.missing_credentials = isinstance(exc, MissingCredentials)
            self.provider_problem = str(exc)
            return
        except Exception as exc:
            log.exception("provider failed to load")
            self.provider_problem = f"the provider could not be started: {exc}"
            return
        self.provider = provider
        if self._stored_model is not None:  # a conversation resumed while the provider loaded
            provider.model = self._stored_model
        self.model = provider.model

    def _make_toolbox_factory(
        self, extra: Callable[[], Sequence[Tool]] | None, sandbox: Sandbox | None
    ) -> ToolboxFactory:
        from tui_assist.session.factory import make_background_shells, make_lsp, make_toolbox_factory

        try:
            self.lsp = make_lsp(self.settings, self.notes.append)
            self.shells = make_background_shells(self.settings, sandbox)
            return make_toolbox_factory(
                self.settings, extra, sandbox, self._custom_agents, self._skills, self.lsp, self.shells
            )
        except Exception as exc:  # a broken tool must not keep the chat from opening
            log.exception("tools unavailable")
            self.notes.append(f"tools are unavailable ({exc}); the model gets no tools")
            workdir = self.settings.workdir
            return lambda: EmptyToolbox(workdir)

    def _load_extensions(self) -> None:
        """Find the user's and the project's hooks and agents, and whether the project is trusted."""
        from tui_assist.paths import config_dir, data_dir
        from tui_assist.session.extensions import load_extensions

        try:
            found = load_extensions(
                self.settings,
                config_dir(),
                data_dir(self.settings.data_dir),
                self._project_snapshot(self.settings.workdir),
            )
        except Exception as exc:  # a broken agent file or hook table must not keep the session from opening
            log.exception("hooks and agents unavailable")
            self.notes.append(f"hooks and custom agents are off: {exc}")
            return
        self.extensions = found
        self.notes.extend(found.warnings)
        warning = found.untrusted_warning()
        if warning is not None:
            self.notes.append(warning)
        self._adopt_hooks()
        self._adopt_trust()

    def _adopt_hooks(self) -> None:
        from tui_assist.session.hooks import SessionHooks

        found = self.extensions
        hooks = found.active_hooks() if found is not None else []
        s = self.settings
        from tui_assist.session.factory import provider_key_variables

        self.hooks = (
            SessionHooks(
                hooks,
                s.workdir,
                frozenset(s.tools.bash.pass_env),
                mode=lambda: self.approvals.mode,
                key_variables=provider_key_variables(s),
            )
            if hooks
            else None
        )

    def _custom_agents(self) -> Sequence[SubagentSpec]:
        return self.extensions.active_agents() if self.extensions is not None else ()

    def _skills(self) -> Sequence[SkillEntry]:
        return self.extensions.active_skills() if self.extensions is not None else ()

    def trust_project(self, digest: str | None = None) -> bool:
        """Trust the workdir's project with its files as they were read and shown (the TUI's dialog).

        The digest saved is the one taken when the files were read, so a file changed since (while
        the dialog was open) is asked about again next time. Its hooks, agents and allow rules
        apply from the next turn on; `start_project_mcp` starts its MCP servers.

        Args:
            digest: The digest of what the user was shown (`Extensions.digest` when shown);
                None: the one taken when the files were read.

        Returns:
            Whether the trust was saved (else it holds for this session only).
        """
        from tui_assist.paths import data_dir
        from tui_assist.session.trust import ProjectTrust

        found = self.extensions
        if found is None:
            return True
        saved = ProjectTrust(data_dir(self.settings.data_dir)).save(found.workdir, digest or found.digest)
        found.trust = "trusted"
        self._adopt_hooks()
        self._adopt_trust()
        return saved

    async def _start_mcp(self) -> None:
        """Start the user's and the enabled plugins' MCP servers, and the project's when trusted.

        `_mcp_tools` offers their tools.
        """
        from tui_assist.session.factory import make_mcp
        from tui_assist.session.mcp_config import session_mcp_servers

        try:
            # The servers the trust gate (`extensions`) parsed from the bytes it digested, never
            # read again; an untrusted project's are named in its warning and its dialog, and
            # start when the user trusts it (`start_project_mcp`).
            found = self.extensions
            project = found.project_mcp if found is not None else None
            if project is not None:
                self.notes.extend(project.warnings)
            self._project_mcp = project
            plugins = await asyncio.to_thread(self._plugin_mcp_servers)
            self.notes.extend(plugins.warnings)
            trusted = found is not None and found.trusted
            servers, clashes = session_mcp_servers(self.settings, project if trusted else None, plugins)
            self.notes.extend(clashes)
            self._mcp = manager = make_mcp(self.settings, servers)
            if manager is not None:
                await manager.start()
                self.notes.extend(self._mcp_failures(manager.names))
        except Exception as exc:
            log.exception("MCP servers failed to start")
            self.notes.append(f"MCP tools are unavailable: {exc}")

    async def start_project_mcp(self) -> list[str]:
        """Start the MCP servers of a project trusted after `load` read its trust (the TUI's dialog).

        Their tools join the next toolbox. Before `load` got that far this does nothing: `load`
        starts them itself.

        Returns:
            A line per problem: a name clash, a server that did not start.
        """
        from tui_assist.session.factory import make_mcp
        from tui_assist.session.mcp_config import session_mcp_servers

        project = self._project_mcp
        if project is None or not project.servers:
            return []
        servers, clashes = session_mcp_servers(self.settings, project)
        wanted = {name: config for name, config in servers.items() if name in project.servers}
        try:
            if self._mcp is None:
                self._mcp = make_mcp(self.settings, wanted)
                if self._mcp is None:
                    return []
                await self._mcp.start()
                added = self._mcp.names
            else:
                added = await self._mcp.add(wanted)
        except Exception as exc:
            log.exception("project MCP servers failed to start")
            return [f"the project's MCP servers are unavailable: {exc}"]
        return [*clashes, *self._mcp_failures(added)] if added else []

    def _plugin_mcp_servers(self) -> ProjectMcpServers:
        """The enabled plugins' MCP servers (installed by the user: no project trust needed)."""
        from tui_assist.paths import data_dir
        from tui_assist.session.mcp_config import ProjectMcpServers, plugin_mcp_servers
        from tui_assist.session.plugins import load_plugins

        if self.extensions is not None:  # read with the plugins' other parts (its warnings said)
            return plugin_mcp_servers(self.extensions.plugins)
        found = load_plugins(data_dir(self.settings.data_dir))
        servers = plugin_mcp_servers(found.plugins)
        return ProjectMcpServers(
            servers.servers, servers.files, (*found.warnings, *servers.warnings), servers.origins
        )

    def _mcp_tools(self) -> Sequence[Tool]:
        """The tools of the session's MCP servers as they are now (a project's trusted since included)."""
        return self._mcp.current_tools() if self._mcp is not None else []

    def _mcp_failures(self, names: Sequence[str]) -> list[str]:
        """A line for each of the servers `names` that did not start."""
        assert self._mcp is not None
        return [
            f"MCP server {status.name} did not start: {status.error or 'it did not start'}; its tools are off"
            for status in self._mcp.status()
            if status.name in names and status.state in ("failed", "crashed")
        ]

    async def _open_store(self) -> None:
        from tui_assist.session.factory import open_store

        try:
            self.store = await open_store(self.preview)
        except SetupError as exc:
            self.store_error = exc
        except Exception as exc:
            log.exception("cannot open the store")
            self.store_error = SetupError(f"cannot open the history: {exc}")
        if self.store is None:
            self.notes.append(f"history is not saved: {self.store_error}")
            return
        self._owns_store = True
        if self.store.recovered:
            self.notes.append(
                f"{len(self.store.recovered)} turn(s) cut by an earlier crash were stored as cancelled"
            )

    def _make_checkpoints(self) -> None:
        """Snapshot the workdir around turns when the settings ask for it and the store is ours."""
        s = self.settings
        if self.store is not None and self._owns_store and s.checkpoints:
            from tui_assist.paths import data_dir
            from tui_assist.session.rewind import TurnCheckpoints

            self.checkpoints = TurnCheckpoints(self.store, data_dir(s.data_dir), s.workdir)

    async def aclose(self) -> None:
        """Run the `SessionEnd` hooks, then release what `load` opened (MCP and language servers...)."""
        if self.hooks is not None and self.hooks.of("SessionEnd"):
            from tui_assist.core.observer import NullObserver

            try:
                await self.hooks.session_end(NullObserver(), "other")
            except Exception:  # a hook must not keep the session from closing
                log.exception("SessionEnd hooks failed")
        for closer in (
            self.shells.aclose if self.shells is not None else None,
            self.checkpoints.aclose if self.checkpoints is not None else None,
            self.hooks.aclose if self.hooks is not None else None,
            self._mcp.aclose if self._mcp is not None else None,
            self.lsp.aclose if self.lsp is not None else None,
            self.provider.aclose if self.provider is not None else None,
            self.store.close if self.store is not None and self._owns_store else None,
        ):
            if closer is None:
                continue
            try:
                await closer()
            except Exception:
                log.exception("error while closing the session")

    # -- the model -----------------------------------------------------------------------------

    def set_model(self, model: str) -> None:
        """Use `model` for the following turns (the provider's requests, the meter, the status).

        Raises:
            SetupError: when there is no provider to switch.
        """
        self._need_provider().model = model
        self.model = model

    def follow_stored_model(self, model: str | None) -> None:
        """On resume: go on with `model`, the one the conversation's last turn used.

        Not when `--model` chose one, or the conversation has no turn yet (`model` None). Before the
        provider loads, it is kept for it.
        """
        if model is None or self.settings.pins_model:
            return
        self._stored_model = model
        if self.provider is not None:
            self.provider.model = model
        self.model = model

    def known_models(self) -> list[str]:
        """The models to offer: the one in use, the configured one, then those with a price."""
        models = [self.model]
        if self._settings is not None:
            models += [self._settings.resolved_model, *self._settings.prices]
        return list(dict.fromkeys(models))

    # -- what a call needs ---------------------------------------------------------------------

    def _need_provider(self) -> Provider:
        if self.provider is None:
            raise SetupError(self.provider_problem or "no provider is configured")
        return self.provider

    def _need_store(self) -> Store:
        if self.store is None:
            raise self.store_error or SetupError("no stored conversations: the store is not open")
        return self.store
