"""Command line: argument parsing, settings, and the headless commands.

Heavy modules (the Anthropic SDK, Textual, the store) are imported only by the command that needs
them, so `tui-assist --help` and the TUI's first paint stay fast.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_assist import __version__
from tui_assist.session.config_source import ConfigError, ConfigSource, checked_workdir

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.core.tooling import Tool
    from tui_assist.core.turn import TurnResult, TurnStrategy
    from tui_assist.session.config import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


class SetupError(Exception):
    """The program cannot start as asked; one line for the user."""


def _common_flags() -> argparse.ArgumentParser:
    # SUPPRESS defaults: a flag given before or after the subcommand is kept either way.
    p = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    p.add_argument("--refine", action="store_true", help="refine mode: generate, critique, revise")
    p.add_argument("--rounds", type=int, metavar="N", help="refine round budget (default 3)")
    p.add_argument("--workdir", metavar="DIR", help="the anchored working directory for tools")
    p.add_argument("--data-dir", metavar="DIR", help="where conversations are stored")
    p.add_argument(
        "--provider",
        metavar="NAME",
        help="anthropic (default), scripted, openai, or a profile: ollama, vllm, llamacpp",
    )
    p.add_argument(
        "--base-url", metavar="URL", help="endpoint (or profile name) of an OpenAI-compatible provider"
    )
    p.add_argument("--model", metavar="NAME", help="model id (default claude-sonnet-4-6)")
    p.add_argument("--theme", metavar="NAME", help="TUI theme")
    p.add_argument("--script", metavar="FILE", help="script file for --provider scripted")
    return p


def build_parser() -> argparse.ArgumentParser:
    common = _common_flags()
    parser = argparse.ArgumentParser(
        prog="tui-assist",
        parents=[common],
        description="A terminal chat assistant. With no command, opens the chat TUI.",
    )
    parser.add_argument("--version", action="version", version=f"tui-assist {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ask = sub.add_parser("ask", parents=[common], help="run one turn headless and print the answer")
    ask.add_argument("prompt", metavar="PROMPT", help="the request ('-' reads it from stdin)")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument("--yes", action="store_true", help="approve every tool call")
    resume = ask.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue", dest="continue_", action="store_true", help="append to the latest conversation"
    )
    resume.add_argument("--conversation", metavar="ID", help="append to conversation ID")

    sub.add_parser(
        "explore",
        parents=[common],
        help="open the Workflow Explorer: watch the help-desk patterns run (offline)",
    )

    history = sub.add_parser("history", parents=[common], help="list, show, search and export conversations")
    hsub = history.add_subparsers(dest="history_command", metavar="ACTION", required=True)
    hl = hsub.add_parser("list", help="recent conversations")
    hl.add_argument("--json", action="store_true")
    hl.add_argument("--limit", type=int, default=20)
    hs = hsub.add_parser("show", help="one conversation")
    hs.add_argument("id")
    hs.add_argument("--json", action="store_true")
    hq = hsub.add_parser("search", help="full-text search over prompts and answers")
    hq.add_argument("query")
    hq.add_argument("--json", action="store_true")
    hq.add_argument("--limit", type=int, default=20)
    he = hsub.add_parser("export", help="export a conversation with its rounds and tool calls")
    he.add_argument("id")
    he.add_argument("--format", choices=("md", "json"), default="md")

    stats = sub.add_parser("stats", parents=[common], help="outcomes and tokens by week")
    stats.add_argument("--json", action="store_true")

    flow = sub.add_parser("flow", help="run built-in flows")
    fsub = flow.add_subparsers(dest="flow_command", metavar="FLOW", required=True)
    grounded = fsub.add_parser(
        "grounded", parents=[common], help="answer from your documents, with citations"
    )
    grounded.add_argument("question")
    grounded.add_argument(
        "--corpus", metavar="DIR", type=Path, required=True, help="folder of Markdown/text files"
    )
    grounded.add_argument(
        "--data", metavar="FILE", type=Path, help="SQLite file to answer data questions from"
    )
    grounded.add_argument("--json", action="store_true")
    grounded.add_argument("--leaves", choices=("rules", "model"), default="rules")
    approve = fsub.add_parser("approve", parents=[common], help="approve a run that awaits approval")
    approve.add_argument("run_id", metavar="RUN_ID")
    approve.add_argument("--json", action="store_true")

    bench = sub.add_parser("bench", help="reproducible benchmarks of control policies")
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH", required=True)
    docs = bsub.add_parser("docs", parents=[common], help="docs tasks: keyword route vs workflow vs loops")
    docs.add_argument("--fixtures", metavar="DIR", type=Path, help="dir of documents/glossary/cases.json")
    docs.add_argument("--cases", choices=("baseline", "adaptive", "all"), default="baseline")
    docs.add_argument("--json", action="store_true")
    docs.add_argument("--trace", metavar="CASE_ID", help="print each policy's decisions for one case")
    docs.add_argument("--with-model", action="store_true", help="also run the configured model as a policy")
    helpdesk = bsub.add_parser("helpdesk", parents=[common], help="the five workflow patterns on 12 tickets")
    helpdesk.add_argument("--json", action="store_true")
    helpdesk.add_argument("--leaves", choices=("rules", "model"), default="rules")
    return parser


def config_from_args(args: argparse.Namespace) -> ConfigSource:
    """The config file, the environment, then the flags given; not validated yet."""
    flags: dict[str, Any] = {
        key: getattr(args, key, None)
        for key in ("provider", "model", "base_url", "rounds", "theme", "workdir", "data_dir", "script")
    }
    if getattr(args, "refine", False):
        flags["refine"] = True
    return ConfigSource.read(flags)


def make_provider(settings: Settings) -> Provider:
    """The configured provider.

    Raises:
        SetupError: when the provider is unknown or not configured.
    """
    if settings.provider == "scripted":
        from tui_assist.core.model import ProviderError
        from tui_assist.providers.scripted import ScriptedProvider

        if settings.script is None:
            raise SetupError("--provider scripted needs --script FILE (a JSON list of assistant messages)")
        try:
            return ScriptedProvider.from_file(settings.script)
        except ProviderError as exc:
            raise SetupError(str(exc)) from exc
    if settings.provider == "anthropic":
        from tui_assist.providers.anthropic_info import (
            MISSING_CREDENTIALS_HINT,
            anthropic_credentials_available,
        )

        if not anthropic_credentials_available():
            raise SetupError(MISSING_CREDENTIALS_HINT)
        from tui_assist.providers.anthropic import AnthropicProvider

        return AnthropicProvider(settings.resolved_model, base_url=settings.base_url)
    from tui_assist.providers.profiles import EndpointError, is_openai_compatible, make_openai_provider

    if is_openai_compatible(settings.provider, settings.profiles):
        try:
            return make_openai_provider(
                settings.provider,
                model=settings.model,
                base_url=settings.base_url,
                profiles=settings.profiles,
            )
        except EndpointError as exc:
            raise SetupError(str(exc)) from exc
    raise SetupError(
        f"unknown provider {settings.provider!r}: use anthropic, scripted, openai, ollama, vllm, llamacpp "
        "or a profile from config.toml"
    )


def make_strategy(
    settings: Settings,
    provider: Provider,
    *,
    yes: bool,
    extra_tools: Callable[[], Sequence[Tool]] | None = None,
) -> TurnStrategy:
    """The turn strategy the settings ask for, with real tools."""
    from tui_assist.core.approval import ApprovalPolicy
    from tui_assist.core.budget import Budget
    from tui_assist.core.turn import TurnDeps
    from tui_assist.tools.registry import toolbox_factory
    from tui_assist.turns.agent import AgentTurn
    from tui_assist.turns.refine import RefineTurn

    approval = settings.approval
    deps = TurnDeps(
        provider=provider,
        toolbox_factory=toolbox_factory(
            settings.workdir, bash_timeout=settings.bash_timeout, extra_tools=extra_tools or ()
        ),
        approvals=ApprovalPolicy("allow" if yes else approval.default, {} if yes else approval.rules),
        budget=Budget(settings.max_model_requests, settings.max_tool_calls, settings.max_tokens_per_turn),
        system_prompt=settings.system_prompt,
        critic_prompt=settings.critic_prompt,
    )
    return RefineTurn(deps, max_rounds=settings.rounds) if settings.refine else AgentTurn(deps)


def result_json(result: TurnResult, conversation_id: str | None) -> dict[str, Any]:
    """The `ask --json` object (a DESIGN.md contract)."""
    data: dict[str, Any] = {
        "conversation_id": conversation_id,
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
    }
    if result.error and result.outcome in ("error", "cancelled", "budget_exhausted"):
        data["error"] = result.error
    return data


def _failure_json(strategy: str, error: str) -> dict[str, Any]:
    return {
        "conversation_id": None,
        "turn_id": None,
        "strategy": strategy,
        "answer": "",
        "outcome": "error",
        "rounds": [],
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "error": error,
    }


async def _ask(args: argparse.Namespace, settings: Settings) -> int:
    from tui_assist.core.conversation import Conversation, Usage
    from tui_assist.core.nodes import new_id
    from tui_assist.core.observer import FanOutObserver
    from tui_assist.core.turn import TurnResult
    from tui_assist.paths import data_dir
    from tui_assist.session.headless import HeadlessObserver
    from tui_assist.store.db import Store, UnknownIdError, title_from_prompt

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise ConfigError("the prompt is empty")
    from tui_assist.tools.mcp import McpManager

    provider = make_provider(settings)
    mcp = McpManager(settings.mcp_servers, cwd=settings.workdir, log_dir=data_dir(settings.data_dir) / "logs")
    strategy = make_strategy(settings, provider, yes=args.yes, extra_tools=mcp.current_tools)
    store = await Store.open(data_dir(settings.data_dir))
    try:
        await mcp.start()
        if args.conversation:
            try:
                conversation_id = await store.resolve_conversation_id(args.conversation)
            except UnknownIdError as exc:
                raise ConfigError(f"{exc} (see `tui-assist history list`)") from exc
        else:
            latest = await store.latest_conversation_id() if args.continue_ else None
            conversation_id = latest or await store.create_conversation(
                title=title_from_prompt(prompt), model=provider.model, workdir=str(settings.workdir)
            )
        conversation = Conversation(conversation_id, await store.load_history(conversation_id))
        turn_id = new_id()
        await store.begin_turn(
            conversation_id=conversation_id, turn_id=turn_id, strategy=strategy.name, prompt=prompt
        )
        recorder = store.recorder()
        observer = FanOutObserver(HeadlessObserver(progress=sys.stderr.isatty()), recorder)
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            result = await strategy.run(conversation, prompt, observer, turn_id=turn_id)
        except asyncio.CancelledError:
            task.uncancel()
            result = TurnResult(
                turn_id, strategy.name, prompt, "", "cancelled", Usage(), [], error="cancelled"
            )
            await store.mark_cancelled(turn_id, recorder.events)
        else:
            await store.commit_turn(conversation_id, result, recorder.events)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
    finally:
        await store.close()
        await mcp.aclose()
        await provider.aclose()

    if args.json:
        print(json.dumps(result_json(result, conversation_id), ensure_ascii=False))
    elif result.outcome not in ("error", "cancelled"):
        print(result.answer)
    if result.outcome == "unverified" and not args.json:
        print(
            f"tui-assist: unverified: the critic did not pass any of {len(result.rounds)} rounds",
            file=sys.stderr,
        )
    if result.outcome == "error":
        print(f"tui-assist: error: {result.error}", file=sys.stderr)
        return EXIT_FAILED
    if result.outcome == "cancelled":
        if not args.json:
            print("tui-assist: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
    return EXIT_OK


async def _store_command(args: argparse.Namespace, settings: Settings) -> int:
    from tui_assist.paths import data_dir
    from tui_assist.store import commands
    from tui_assist.store.db import Store

    store = await Store.open(data_dir(settings.data_dir))
    try:
        if args.command == "stats":
            return await commands.stats(store, as_json=args.json, out=sys.stdout)
        match args.history_command:
            case "list":
                return await commands.history_list(store, limit=args.limit, as_json=args.json, out=sys.stdout)
            case "show":
                return await commands.history_show(store, args.id, as_json=args.json, out=sys.stdout)
            case "search":
                return await commands.history_search(
                    store, args.query, limit=args.limit, as_json=args.json, out=sys.stdout
                )
            case _:
                return await commands.history_export(store, args.id, fmt=args.format, out=sys.stdout)
    finally:
        await store.close()


async def _bench_command(args: argparse.Namespace, settings: Settings) -> int:
    from tui_assist.flows.docs.commands import bench_docs
    from tui_assist.flows.helpdesk.commands import bench_helpdesk

    if args.bench_command == "docs":
        return await bench_docs(
            fixtures=args.fixtures,
            cases=args.cases,
            as_json=args.json,
            trace=args.trace,
            model=args.with_model,
            out=sys.stdout,
            provider_factory=functools.partial(make_provider, settings),
        )
    return await bench_helpdesk(
        as_json=args.json,
        leaves=args.leaves,
        out=sys.stdout,
        provider_factory=functools.partial(make_provider, settings),
    )


async def _flow_command(args: argparse.Namespace, settings: Settings) -> int:
    from tui_assist.flows.grounded import commands
    from tui_assist.paths import data_dir
    from tui_assist.store.db import Store

    store = await Store.open(data_dir(settings.data_dir))
    try:
        if args.flow_command == "grounded":
            return await commands.flow_grounded(
                corpus=args.corpus,
                data=args.data,
                question=args.question,
                as_json=args.json,
                leaves=args.leaves,
                store=store,
                out=sys.stdout,
                err=sys.stderr,
                provider_factory=functools.partial(make_provider, settings),
            )
        return await commands.flow_approve(
            run_id=args.run_id, store=store, out=sys.stdout, err=sys.stderr, as_json=args.json
        )
    finally:
        await store.close()


def configure_logging(data_dir_override: str | Path | None) -> None:
    """Send library log records (the SDK's warnings among them) to a file, never to the terminal.

    Python's last-resort handler would print them on stderr, where they break `--json` consumers
    and the TUI's screen alike.
    """
    from tui_assist.paths import data_dir

    root = logging.getLogger()
    if root.handlers:
        return
    try:
        log_dir = data_dir(data_dir_override) / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(log_dir / "tui-assist.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    except OSError:
        handler = logging.NullHandler()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    wants_json = getattr(args, "json", False) and args.command == "ask"
    try:
        source = config_from_args(args)
        if args.command in (None, "explore"):
            # Until the first frame is painted, Python's cyclic GC would only rescan the objects that
            # importing Textual creates (~15 ms); the main screen turns it back on after that frame.
            gc.disable()
            # The TUI validates its settings after its first frame, too (see ConfigSource).
            from tui_assist.ui.app import run

            preview = source.preview()
            checked_workdir(preview.workdir)  # the one mistake worth stopping for before the screen opens
            configure_logging(preview.data_dir)
            return run(source, screen="explore" if args.command == "explore" else "chat")
        settings = source.settings()
        configure_logging(settings.data_dir)
        if args.command == "ask":
            return asyncio.run(_ask(args, settings))
        if args.command in ("history", "stats"):
            return asyncio.run(_store_command(args, settings))
        if args.command == "bench":
            return asyncio.run(_bench_command(args, settings))
        return asyncio.run(_flow_command(args, settings))
    except ConfigError as exc:
        print(f"tui-assist: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SetupError as exc:
        if wants_json:
            print(
                json.dumps(_failure_json("refine" if getattr(args, "refine", False) else "agent", str(exc)))
            )
        print(f"tui-assist: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_CANCELLED
    except BrokenPipeError:
        # The reader went away (`| head`): no traceback. Point stdout at /dev/null so the
        # interpreter's final flush doesn't fail the same way.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
