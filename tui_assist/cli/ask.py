"""`tui-assist ask`: one turn, headless, through the same session the chat uses."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import TYPE_CHECKING, Any

from tui_assist.cli.commands import PrefixedErrors
from tui_assist.cli.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK
from tui_assist.session.config_source import ConfigError
from tui_assist.session.factory import SetupError

if TYPE_CHECKING:
    from tui_assist.core.approval import Refusal
    from tui_assist.core.turn import TurnResult
    from tui_assist.session.chat import ChatSession, TurnOutcome
    from tui_assist.session.config import Settings


def preload_sdk() -> None:
    """Start importing the model's SDK in a thread, so it overlaps reading the settings, opening the
    store and the rest of `ask`'s set-up (the SDK's import is most of a headless start-up)."""
    import importlib
    import threading

    threading.Thread(
        target=importlib.import_module, args=("tui_assist.providers.anthropic",), daemon=True
    ).start()


def result_json(
    outcome: TurnOutcome, warnings: list[str], instructions: list[str], denied: list[Refusal]
) -> dict[str, Any]:
    """The `ask --json` object (a DESIGN.md contract)."""
    result: TurnResult = outcome.result
    data: dict[str, Any] = {
        "conversation_id": outcome.conversation_id,
        "turn_id": result.turn_id,
        "strategy": result.strategy,
        "answer": result.answer,
        "outcome": result.outcome,
        "rounds": [
            {
                "index": r.index,
                "answer": r.answer,
                "verdict": r.verdict,
                "feedback": r.feedback,
                "tool_calls": r.tool_calls,
            }
            for r in result.rounds
        ],
        "usage": result.usage.to_dict(),
        "compacted": outcome.compacted,
        "warnings": warnings,
        "denied_calls": [{"tool": d.tool, "summary": d.summary} for d in denied],
        "instructions": instructions,
    }
    if result.error and result.outcome in ("error", "cancelled", "budget_exhausted"):
        data["error"] = result.error
    return data


def failure_json(strategy: str, error: str) -> dict[str, Any]:
    """The `ask --json` object for a turn that could not start (the provider failed)."""
    return {
        "conversation_id": None,
        "turn_id": None,
        "strategy": strategy,
        "answer": "",
        "outcome": "error",
        "rounds": [],
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "compacted": False,
        "warnings": [],
        "denied_calls": [],
        "instructions": [],
        "error": error,
    }


async def ask(args: argparse.Namespace, settings: Settings) -> int:
    """Run one persisted turn and print its answer (or its JSON object).

    Raises:
        ConfigError: for an empty prompt or an unknown conversation.
        SetupError: when the provider or the store can't be set up.
    """
    from tui_assist.session.chat import ChatSession
    from tui_assist.store.db import UnknownIdError

    if args.yes and getattr(args, "mode", "bypass") != "bypass":
        raise ConfigError(f"--yes is --mode bypass; it contradicts --mode {args.mode} (give one of them)")
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise ConfigError("the prompt is empty (pass the request as PROMPT, or '-' to read it from stdin)")
    # Headless, nothing can be asked: without --yes a side-effecting call runs only when a rule
    # of the user's allows it (a sandboxed shell is not enough).
    session = ChatSession(settings, mode="bypass" if args.yes else None, trust_sandbox=False)
    try:
        await session.load()
        if session.store is None:
            raise session.store_error or SetupError("the history store is not open")
        if session.provider is None:
            raise SetupError(session.provider_problem or "no provider is configured")
        if args.conversation:
            try:
                await session.open_conversation(args.conversation)
            except UnknownIdError as exc:
                raise ConfigError(f"{exc} (see `tui-assist history list`)") from exc
        elif args.continue_:
            await session.continue_latest()
        outcome = await _run_interruptible(session, prompt)
    finally:
        await session.aclose()

    warnings = [*session.notes, *outcome.warnings]
    result = outcome.result
    err = PrefixedErrors("ask")
    if args.json:
        instructions = [str(file.path) for file in session.instructions.files]
        denied = session.approvals.refused
        print(json.dumps(result_json(outcome, warnings, instructions, denied), ensure_ascii=False))
    elif result.outcome not in ("error", "cancelled"):
        print(result.answer)
    if outcome.attachments is not None and not args.json:
        for attached in outcome.attachments.attached:
            print(attached.describe(), file=err)
    for warning in warnings:
        print(f"warning: {warning}", file=err)
    for denied_call in session.approvals.refused:
        print(
            f"denied {denied_call.tool} ({denied_call.why}): {denied_call.summary} "
            "(re-run with --yes, or add an allow rule to [permissions] in config.toml)",
            file=err,
        )
    if result.outcome == "unverified" and not args.json:
        print(f"unverified: the critic did not pass any of {len(result.rounds)} rounds", file=err)
    if result.outcome == "error":
        print(result.error, file=err)
        return EXIT_FAILED
    if result.outcome == "cancelled":
        if not args.json:
            print("cancelled", file=err)
        return EXIT_CANCELLED
    return EXIT_FAILED if not outcome.saved else EXIT_OK


async def _run_interruptible(session: ChatSession, prompt: str) -> TurnOutcome:
    """Run the turn with SIGINT and SIGTERM stopping it (it is then stored as cancelled)."""
    from tui_assist.session.headless import HeadlessObserver

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def interrupt() -> None:
        if not session.interrupt():  # before the turn starts, stop everything
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupt)
    try:
        return await session.run_turn(prompt, HeadlessObserver(progress=sys.stderr.isatty()))
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
