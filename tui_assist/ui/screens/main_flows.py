"""The main screen's flows and MCP servers: the grounded flow (asked, run, approved) and `/mcp`.

A flow run is a run of the session's controller, as a turn is; its events go to the agent tree and
the flow panel, and its outcome to the conversation pane as a notice.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_assist.session.runs import Run
    from tui_assist.ui.screens.main import MainScreen


class FlowActions:
    """What `MainScreen`'s flow and MCP keys and commands do."""

    def __init__(self, screen: MainScreen) -> None:
        """Run flows on `screen`."""
        self._screen = screen
        self.held_run_id: str | None = None
        """A grounded run awaiting approval (f8 approves it)."""

    def ask_grounded(self) -> None:
        """Ask a question of a folder of documents (the grounded flow), with the flow panel drawing it."""
        screen = self._screen
        if screen.running:
            screen.notify("Wait for the running turn, or cancel it (escape).", severity="warning")
            return
        from tui_assist.ui.screens.grounded_prompt import GroundedPromptScreen, GroundedRequest

        session = screen.session

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
                self.run_grounded_flow(
                    request.corpus, request.question, leaves=request.leaves, data=request.data
                )

        workdir = session.settings.workdir
        model, problem = model_choice()
        form = GroundedPromptScreen(str(workdir), workdir=workdir, model=model, model_problem=problem)
        screen.app.push_screen(form, chosen)
        if not session.ready:

            async def offer_when_ready() -> None:
                await session.wait_ready()
                if form.is_attached:
                    form.offer_model(*model_choice())

            screen.run_worker(offer_when_ready(), group="grounded-form", exit_on_error=False)

    def run_grounded_flow(
        self, corpus: Path, question: str, *, leaves: str = "rules", data: Path | None = None
    ) -> Run | None:
        """Run the grounded flow with `rules` or `model` leaves (as `tui-assist flow grounded` does)."""
        return self._screen.controller.start(
            "flow", question, lambda: self._grounded_flow(corpus, question, leaves=leaves, data=data)
        )

    async def _grounded_flow(self, corpus: Path, question: str, *, leaves: str, data: Path | None) -> None:
        screen = self._screen
        from tui_assist.session.grounded import ask_grounded
        from tui_assist.ui.grounded_view import grounded_markdown

        using = f"corpus `{corpus}`" + (f", data `{data}`" if data is not None else "") + f", {leaves} leaves"
        screen.conversation.add_notice(f"**grounded question** ({using}): {question}")
        screen.status.state = "running"
        try:
            run = await ask_grounded(
                screen.session,
                corpus,
                question,
                screen.controller.observer,
                leaves="model" if leaves == "model" else "rules",
                data=data,
            )
        except ValueError as exc:
            screen.conversation.add_notice(f"**Cannot ask:** {exc}.", classes="-error")
            return
        except Exception as exc:  # a bad corpus, glossary or database must not take the chat down
            screen.conversation.add_notice(f"**The grounded flow failed:** `{exc}`", classes="-error")
            return
        finally:
            screen.status.state = "idle"
        state = run.state
        if state.outcome == "awaiting_approval":
            self.held_run_id = state.run_id if screen.session.store is not None else None
        screen.conversation.add_notice(grounded_markdown(state, approvable=self.held_run_id is not None))
        screen.call_later(screen.refresh_bindings)

    def approve(self) -> None:
        screen = self._screen
        if self.held_run_id is None:
            screen.notify("No grounded run is awaiting approval.", timeout=2)
            return
        run_id = self.held_run_id
        if screen.controller.start("flow", run_id, lambda: self._approve_held_run(run_id)) is None:
            screen.notify("Wait for the running turn, or cancel it (escape).", severity="warning")

    async def _approve_held_run(self, run_id: str) -> None:
        screen = self._screen
        from tui_assist.flows.grounded import ApprovalError
        from tui_assist.session.grounded import approve_held
        from tui_assist.ui.grounded_view import grounded_markdown

        try:
            run = await approve_held(screen.session, run_id, screen.controller.observer)
        except (ApprovalError, ValueError) as exc:
            screen.notify(f"Cannot approve: {exc}", severity="error")
            return
        self.held_run_id = None
        screen.conversation.add_notice("**approved** · " + grounded_markdown(run.state, approvable=False))
        screen.call_later(screen.refresh_bindings)

    def list_mcp(self) -> None:
        """Show the MCP servers, their state and their tools in the conversation pane."""
        manager = self._screen.session.mcp
        if manager is None:
            lines = ["no MCP servers configured"]
        else:
            from tui_assist.tools.mcp import format_status

            lines = format_status(manager.status())
        body = "\n".join(lines)
        self._screen.conversation.add_notice(f"**MCP servers**\n\n```text\n{body}\n```")

    def restart_mcp(self, name: str | None = None) -> None:
        """Restart one MCP server (`name`), or every configured one."""
        manager = self._screen.session.mcp
        if manager is None or not manager.names:
            self._screen.notify("no MCP servers configured", timeout=3)
            return
        self.restart_mcp_servers([name] if name else list(manager.names))

    def restart_mcp_servers(self, names: list[str]) -> None:
        """Restart the MCP servers `names`, one after the other, in a worker."""
        self._screen.run_worker(self._restart(names), group="mcp", exit_on_error=False)

    async def _restart(self, names: list[str]) -> None:
        screen = self._screen
        manager = screen.session.mcp
        if manager is None:
            return
        for name in names:
            try:
                status = await manager.restart(name)
            except Exception as exc:
                screen.notify(f"MCP {name}: cannot restart: {exc}", severity="error")
                continue
            failed = status.state not in ("ready", "idle")
            screen.notify(f"MCP {status.summary}", severity="error" if failed else "information", timeout=4)
