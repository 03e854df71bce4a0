"""The main screen's flow, MCP and export actions (the palette's).

They share the screen's state (the session, the conversation, the status bar) but not its chat
turns, so they live apart from them; `MainScreen` builds on this class, as on the other parts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import work

from tui_assist.paths import data_dir
from tui_assist.ui.bridge import TextualObserver
from tui_assist.ui.screens.main_base import MainScreenBase


class FlowActions(MainScreenBase):
    """Grounded questions and held runs, MCP servers, the export."""

    # -- flows ---------------------------------------------------------------------------------------

    def action_ask_grounded(self) -> None:
        """Ask a question of a folder of documents (the grounded flow), with the flow panel drawing it."""
        if self.running:
            self.notify("Wait for the running turn, or cancel it (escape).", severity="warning")
            return
        from tui_assist.ui.screens.grounded_prompt import GroundedPromptScreen, GroundedRequest

        session = self.session

        def model_choice() -> tuple[str | None, str]:
            """What `model` leaves would use, or why there is nothing (one line)."""
            if session.provider is not None:
                return f"{session.provider.name} · {session.provider.model}", ""
            if not session.ready:
                return None, "The model provider is still loading"
            problem = (session.provider_problem or "").strip().splitlines()
            return None, problem[0].replace("**", "").strip() if problem else ""

        def chosen(request: GroundedRequest | None) -> None:
            if request is not None:
                self._turn_worker = self.run_grounded_flow(
                    request.corpus, request.question, leaves=request.leaves, data=request.data
                )

        workdir = session.settings.workdir
        model, problem = model_choice()
        form = GroundedPromptScreen(str(workdir), workdir=workdir, model=model, model_problem=problem)
        self.app.push_screen(form, chosen)
        if not session.ready:

            async def offer_when_ready() -> None:
                await session.wait_ready()
                if form.is_attached:
                    form.offer_model(*model_choice())

            self.run_worker(offer_when_ready(), group="grounded-form", exit_on_error=False)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_grounded_flow(
        self, corpus: Path, question: str, *, leaves: str = "rules", data: Path | None = None
    ) -> None:
        """Run the grounded flow with `rules` or `model` leaves (as `tui-assist flow grounded` does)."""
        from tui_assist.flows import grounded
        from tui_assist.flows.grounded import CorpusIndex, SqlSource, default_index_path

        session = self.session
        using = f"corpus `{corpus}`" + (f", data `{data}`" if data is not None else "") + f", {leaves} leaves"
        self.conversation.add_notice(f"**grounded question** ({using}): {question}")
        # The form checked these; the files may have moved since.
        if not corpus.is_dir():
            self.conversation.add_notice(f"**Cannot ask:** `{corpus}` is not a folder.", classes="-error")
            return
        if data is not None and not data.is_file():
            self.conversation.add_notice(f"**Cannot ask:** `{data}` is not a file.", classes="-error")
            return
        await session.wait_ready()
        if leaves == "model" and session.provider is None:
            self.conversation.add_notice("**Cannot ask:** model leaves need a provider.", classes="-error")
            return
        self.status.state = "running"
        self._flow_running = True
        sql: SqlSource | None = None
        try:
            glossary = grounded.load_glossary(corpus)
            if data is not None:
                sql = await SqlSource.open(data)
            index_path = default_index_path(data_dir(session.settings.data_dir), corpus)
            async with await CorpusIndex.open(corpus, index_path) as index:
                await index.refresh()
                run = await grounded.run_grounded(
                    question,
                    index=index,
                    sql=sql,
                    glossary=glossary,
                    leaves="model" if leaves == "model" else "rules",
                    provider=session.provider if leaves == "model" else None,
                    observer=TextualObserver(self, self.app),
                    store=session.store,
                    caller="tui",
                )
        except Exception as exc:  # a bad corpus, glossary or database must not take the chat down
            self.conversation.add_notice(f"**The grounded flow failed:** `{exc}`", classes="-error")
            return
        finally:
            self._flow_running = False
            self.status.state = "idle"
            if sql is not None:
                await sql.close()
        state = run.state
        if state.outcome == "awaiting_approval":
            self.held_run_id = state.run_id if session.store is not None else None
        self.conversation.add_notice(grounded_markdown(state, approvable=self.held_run_id is not None))
        self.call_later(self.refresh_bindings)

    def action_approve_flow(self) -> None:
        if self.held_run_id is None:
            self.notify("No grounded run is awaiting approval.", timeout=2)
            return
        self._turn_worker = self.approve_held_run(self.held_run_id)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def approve_held_run(self, run_id: str) -> None:
        from tui_assist.flows import grounded

        store = self.session.store
        if store is None:
            return
        self._flow_running = True
        try:
            run = await grounded.approve_run(run_id, store=store, observer=TextualObserver(self, self.app))
        except grounded.ApprovalError as exc:
            self.notify(f"Cannot approve: {exc}", severity="error")
            return
        finally:
            self._flow_running = False
        self.held_run_id = None
        self.conversation.add_notice("**approved** · " + grounded_markdown(run.state, approvable=False))
        self.call_later(self.refresh_bindings)

    # -- MCP -----------------------------------------------------------------------------------------

    def action_list_mcp(self) -> None:
        """Show the MCP servers, their state and their tools in the conversation pane."""
        manager = self.session.mcp
        if manager is None:
            lines = ["no MCP servers configured"]
        else:
            from tui_assist.tools.mcp import format_status

            lines = format_status(manager.status())
        body = "\n".join(lines)
        self.conversation.add_notice(f"**MCP servers**\n\n```text\n{body}\n```")

    def action_restart_mcp(self, name: str | None = None) -> None:
        """Restart one MCP server (`name`), or every configured one."""
        manager = self.session.mcp
        if manager is None or not manager.names:
            self.notify("no MCP servers configured", timeout=3)
            return
        self.restart_mcp_servers([name] if name else list(manager.names))

    @work(group="mcp", exit_on_error=False)
    async def restart_mcp_servers(self, names: list[str]) -> None:
        manager = self.session.mcp
        if manager is None:
            return
        for name in names:
            try:
                status = await manager.restart(name)
            except Exception as exc:
                self.notify(f"MCP {name}: cannot restart: {exc}", severity="error")
                continue
            failed = status.state not in ("ready", "idle")
            self.notify(f"MCP {status.summary}", severity="error" if failed else "information", timeout=4)

    def action_export_markdown(self) -> None:
        """The palette's export: what `/export md` writes (the stored turns, rounds included)."""
        self.slash.run("/export md")


def grounded_markdown(state: Any, *, approvable: bool) -> str:
    """A grounded run for the conversation pane: the answer with its citations, or why it stopped."""
    from tui_assist.flows.grounded import Passage, format_run

    head = f"**grounded** · `{state.outcome}` · run `{state.run_id[:8]}`\n\n"
    sources = [
        f"- `[{s.chunk_id}]` {s.title}{' › ' + s.heading if s.heading else ''}"
        if isinstance(s, Passage)
        else f"- `[{s.id}]` `{s.query}`"
        for s in state.cited_sources()
    ]
    cited = "\n\n**Sources**\n\n" + "\n".join(sources) if sources else ""
    match state.outcome:
        case "answered" | "unverified":
            note = f"\n\n*unverified:* {state.note}" if state.outcome == "unverified" else ""
            return head + state.answer + cited + note
        case "awaiting_approval":
            how = (
                "Press **f8** (or *flow: approve held run* in the palette) to approve it."
                if approvable
                else f"Approve it with `tui-assist flow approve {state.run_id}`."
            )
            reasons = ", ".join(state.approval_reasons)
            return f"{head}**Held for approval** ({reasons}); nothing was sent. {how}\n\n{state.draft}{cited}"
        case _:
            return head + format_run(state)
