"""`tui-assist ask`: one turn, headless, through the same session the chat uses."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import signal
import stat
import sys
from typing import TYPE_CHECKING, Any, Literal, TextIO

from tui_assist.cli.commands import PrefixedErrors
from tui_assist.cli.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK
from tui_assist.cli.stream_json import StreamJsonHost
from tui_assist.session.config_source import ConfigError
from tui_assist.session.factory import SetupError

if TYPE_CHECKING:
    from tui_assist.core.approval import Refusal
    from tui_assist.core.goal import GoalSpec
    from tui_assist.core.turn import GoalReport, TurnResult
    from tui_assist.session.chat import TurnOutcome
    from tui_assist.session.config import Settings
    from tui_assist.session.controller import TurnController
    from tui_assist.session.runs import Run


STDIN_WAIT = 3.0
"""Seconds `ask PROMPT` waits for a pipe on stdin to say something before it leaves it unattached."""


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
    if result.goal is not None:
        data["goal"] = goal_json(result.goal)
    return data


def goal_json(report: GoalReport) -> dict[str, Any]:
    """The `goal` object of `ask --json` (a DESIGN.md contract)."""
    return {
        "state": report.state,
        "attempts": report.attempts,
        "checks": [{"command": c.command, "exit_code": c.exit_code} for c in report.checks],
    }


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
    from tui_assist.session.controller import TurnController
    from tui_assist.session.headless import HeadlessHost
    from tui_assist.store.db import UnknownIdError

    if args.yes and getattr(args, "mode", "bypass") != "bypass":
        raise ConfigError(f"--yes is --mode bypass; it contradicts --mode {args.mode} (give one of them)")
    output = output_format(args)
    goal = goal_spec(args)
    prompt = goal.text if goal is not None else read_prompt(args.prompt, sys.stdin)
    if not prompt.strip():
        raise ConfigError("the prompt is empty (pass the request as PROMPT, or '-' to read it from stdin)")
    # Headless, nothing can be asked: without --yes a side-effecting call runs only when a rule
    # of the user's allows it (a sandboxed shell is not enough).
    session = ChatSession(settings, mode="bypass" if args.yes else None, trust_sandbox=False)
    if output == "stream-json":
        host: HeadlessHost = StreamJsonHost()
    else:
        host = HeadlessHost(progress=sys.stderr.isatty())
    controller = host.controller = TurnController(session, host)
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
        if goal is not None:
            session.goals.start(goal)
        run = await run_interruptible(controller, prompt)
    finally:
        await session.aclose()

    if host.command_output is not None:
        if isinstance(host, StreamJsonHost):
            host.emit({"type": "command", "output": host.command_output})
        else:
            print(host.command_output)
        return EXIT_OK
    ended = host.ended
    err = PrefixedErrors("ask")
    if ended is None or (ended.outcome is None and ended.problem == "cancelled"):
        assert run is not None and run.cancelled, "a prompt that is not a command runs a turn"
        print("cancelled", file=err)  # before the turn began: nothing was stored
        return EXIT_CANCELLED
    if ended.outcome is None:
        raise (ConfigError if ended.refused_input else SetupError)(ended.problem or "the turn did not run")
    outcome = ended.outcome
    warnings = [*session.notes, *outcome.warnings]
    result = outcome.result
    paused = session.goals.paused
    if result.goal is None and result.outcome == "cancelled" and paused is not None:
        result.goal = paused.report()  # the session stored the cut turn; the goal says where it was
    if args.json:
        instructions = [str(file.path) for file in session.instructions.files]
        data = result_json(outcome, warnings, instructions, session.approvals.refused)
        if isinstance(host, StreamJsonHost):
            host.emit({"type": "result", **data})
        else:
            print(json.dumps(data, ensure_ascii=False))
    elif result.outcome not in ("error", "cancelled"):
        print(result.answer)
    if outcome.attachments is not None and not args.json:
        for attached in outcome.attachments.attached:
            if not attached.resized:  # a resized image's line is a warning, below
                print(attached.describe(), file=err)
    for warning in warnings:
        print(f"warning: {warning}", file=err)
    for denied_call in session.approvals.refused:
        print(
            f"denied {denied_call.tool} ({denied_call.why}): {denied_call.summary} "
            "(re-run with --yes, or add an allow rule to [permissions] in config.toml)",
            file=err,
        )
    if result.goal is not None and not args.json:
        from tui_assist.session.goals import describe_goal

        print(f"goal {describe_goal(result.goal)}", file=err)
    elif result.outcome == "unverified" and not args.json:
        print(f"unverified: the critic did not pass any of {len(result.rounds)} rounds", file=err)
    if result.outcome == "error":
        print(result.error, file=err)
        return EXIT_FAILED
    if result.outcome == "cancelled":
        if not args.json:
            print("cancelled", file=err)
        return EXIT_CANCELLED
    return EXIT_FAILED if not outcome.saved else EXIT_OK


def goal_spec(args: argparse.Namespace) -> GoalSpec | None:
    """The goal `--goal TEXT [--check CMD]... [--max-attempts N]` asks for; None without `--goal`.

    Raises:
        ConfigError: for `--check` or `--max-attempts` without `--goal`, PROMPT beside it, or N < 1.
    """
    from tui_assist.core.goal import DEFAULT_MAX_ATTEMPTS, GoalSpec

    text = getattr(args, "goal", None)
    checks: list[str] = getattr(args, "checks", None) or []
    attempts: int | None = getattr(args, "max_attempts", None)
    if text is None:
        if checks or attempts is not None:
            raise ConfigError("--check and --max-attempts go with --goal TEXT")
        return None
    if not text.strip():
        raise ConfigError("the goal is empty (pass it as --goal TEXT)")
    if args.prompt is not None:
        raise ConfigError("--goal TEXT is the prompt; give no PROMPT beside it")
    if attempts is not None and attempts < 1:
        raise ConfigError("--max-attempts must be at least 1")
    return GoalSpec(text.strip(), tuple(checks), attempts or DEFAULT_MAX_ATTEMPTS)


def output_format(args: argparse.Namespace) -> str:
    """`text`, `json` or `stream-json`; sets `args.json` for both JSON formats (`--json` is `json`).

    Raises:
        ConfigError: when `--json` contradicts `--output-format`.
    """
    chosen = getattr(args, "output_format", None)
    if args.json and chosen not in (None, "json"):
        raise ConfigError(f"--json is --output-format json; it contradicts --output-format {chosen}")
    chosen = "json" if args.json else chosen or "text"
    args.json = chosen != "text"
    return chosen


def read_prompt(prompt: str | None, stdin: TextIO) -> str:
    """The prompt to send: PROMPT, or what is piped on stdin, or PROMPT with stdin attached.

    `-` reads the prompt from stdin. With PROMPT and a pipe or a file on stdin, what it holds is
    attached to PROMPT as a document (as a mentioned file is); a pipe that says nothing within
    `STDIN_WAIT` seconds is left alone (with a warning). A terminal on stdin is never read.

    Raises:
        ConfigError: when there is neither PROMPT nor anything piped.
    """
    from tui_assist.session.mentions import attach_documents

    kind = _stdin_kind(stdin)
    if prompt == "-" or (prompt is None and kind is not None):
        return stdin.read()
    if prompt is None:
        raise ConfigError("no prompt (pass the request as PROMPT, or pipe it: echo PROMPT | tui-assist ask)")
    if kind == "pipe" and not select.select([stdin], [], [], STDIN_WAIT)[0]:
        # A pipe a parent left open and never writes to (an agent's shell, a CI step): waiting for
        # its end would hang for ever.
        print(
            f"warning: nothing came on stdin within {STDIN_WAIT:g}s; it is not attached "
            "(redirect it from /dev/null, or pipe what to attach)",
            file=PrefixedErrors("ask"),
        )
        return prompt
    if kind is not None:
        document = stdin.read()
        if document.strip():
            return attach_documents(prompt, [("stdin", document)])
    return prompt


def _stdin_kind(stdin: TextIO) -> Literal["pipe", "file"] | None:
    """Whether stdin is a pipe or a file; None for a terminal, /dev/null or a closed stdin."""
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISFIFO(mode):
        return "pipe"
    return "file" if stat.S_ISREG(mode) else None


async def run_interruptible(controller: TurnController, prompt: str) -> Run | None:
    """Run the prompt with SIGINT and SIGTERM cancelling its run (a turn is then stored as
    cancelled; a run not started yet just ends); the run, None when nothing was left to run.

    Raises:
        ConfigError: for a command that is unknown or needs the chat screen.
    """
    from tui_assist.session.commands import CommandError

    loop = asyncio.get_running_loop()
    run: Run | None = None

    def interrupt() -> None:
        # The busy run first (a `/compact` a command started), else the command itself.
        if not controller.cancel() and run is not None:
            run.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupt)
    try:
        run = controller.submit(prompt)
        if run is not None:
            await run
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    refusal = getattr(controller.host, "refusal", None)
    if refusal is not None:
        raise ConfigError(refusal)
    if run is not None and run.error is not None:
        if isinstance(run.error, CommandError):
            raise ConfigError(str(run.error)) from run.error
        raise run.error
    return run
