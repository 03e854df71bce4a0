"""The headless commands besides `ask`: history, stats, flows and benchmarks."""

from __future__ import annotations

import argparse
import functools
import io
import shlex
import sys
from typing import TYPE_CHECKING, TextIO

from tui_assist.cli.errors import EXIT_OK
from tui_assist.cli.parser import UsageError, command_name
from tui_assist.session.factory import NoHistory, make_provider, open_store

if TYPE_CHECKING:
    from tui_assist.session.config import Settings


class PrefixedErrors(io.StringIO):
    """stderr for a command's own messages: each line gets the `tui-assist: <command>: ` prefix.

    A `StringIO` only to be a text stream to its callers; nothing is kept in it.
    """

    def __init__(self, command: str, stream: TextIO | None = None) -> None:
        super().__init__()
        self._prefix = f"tui-assist: {command}: "
        self._stream = stream or sys.stderr
        self._pending = ""

    def write(self, text: str) -> int:
        """Write whole lines with the prefix; keep a partial line until it ends."""
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._stream.write(f"{self._prefix}{line}\n" if line else "\n")
        return len(text)

    def flush(self) -> None:
        """Write a pending partial line."""
        if self._pending:
            self.write("\n")
        self._stream.flush()


async def history_or_stats(args: argparse.Namespace, settings: Settings) -> int:
    """`history list|show|search|export` and `stats`: read-only, they never create a store."""
    from tui_assist.cli import history as commands

    if getattr(args, "limit", 1) < 1:
        raise UsageError("", "--limit must be at least 1")
    if args.command == "history" and args.history_command == "search" and not args.query.strip():
        raise UsageError("", "the search query is empty (give the words to find)")
    try:
        store = await open_store(settings, create=False)
    except NoHistory as exc:
        return _no_history(args, str(exc))
    err = PrefixedErrors(command_name(args))
    try:
        if args.command == "stats":
            code = await commands.stats(store, as_json=args.json, out=sys.stdout)
            if not args.json:
                await _print_checkpoint_size(settings)
            return code
        match args.history_command:
            case "list":
                return await commands.history_list(store, limit=args.limit, as_json=args.json, out=sys.stdout)
            case "show":
                return await commands.history_show(store, args.id, as_json=args.json, out=sys.stdout, err=err)
            case "search":
                return await commands.history_search(
                    store, args.query, limit=args.limit, as_json=args.json, out=sys.stdout
                )
            case _:
                return await commands.history_export(store, args.id, fmt=args.format, out=sys.stdout, err=err)
    finally:
        await store.close()


def _no_history(args: argparse.Namespace, message: str) -> int:
    """A data dir with no history: lists are empty, a conversation asked for by id is unknown."""
    if args.command == "history" and args.history_command in ("show", "export"):
        raise UsageError(command_name(args), f"no conversation {args.id!r}: {message}")
    if getattr(args, "json", False):
        print("[]")
    else:
        print(f"No conversations: {message}.")
    return EXIT_OK


async def bench(args: argparse.Namespace, settings: Settings) -> int:
    """`bench docs` and `bench helpdesk`."""
    from tui_assist.cli.flows import bench_docs, bench_helpdesk

    err = PrefixedErrors(command_name(args))
    provider_factory = functools.partial(make_provider, settings)
    if args.bench_command == "docs":
        return await bench_docs(
            fixtures=args.fixtures,
            cases=args.cases,
            as_json=args.json,
            trace=args.trace,
            model=args.with_model,
            out=sys.stdout,
            err=err,
            provider_factory=provider_factory,
        )
    return await bench_helpdesk(
        as_json=args.json, leaves=args.leaves, out=sys.stdout, err=err, provider_factory=provider_factory
    )


async def flow(args: argparse.Namespace, settings: Settings) -> int:
    """`flow grounded` and `flow approve`."""
    from tui_assist.cli import flows as commands

    store = await open_store(settings)
    err = PrefixedErrors(command_name(args))
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
                err=err,
                provider_factory=functools.partial(make_provider, settings),
                approve_flags=_data_dir_flag(settings),
            )
        return await commands.flow_approve(
            run_id=args.run_id, store=store, out=sys.stdout, err=err, as_json=args.json
        )
    finally:
        await store.close()


def _data_dir_flag(settings: Settings) -> str:
    """` --data-dir D` when the data dir was chosen, so a printed follow-up command finds it."""
    return f" --data-dir {shlex.quote(str(settings.data_dir))}" if settings.data_dir else ""


async def _print_checkpoint_size(settings: Settings) -> None:
    from tui_assist.paths import data_dir
    from tui_assist.session.checkpoints import Checkpoints

    folder = data_dir(settings.data_dir)
    size = await Checkpoints.total_size_bytes(folder)
    print(f"\nFile checkpoints (for rewind): {size / 1_048_576:.1f} MB in {folder / 'checkpoints'}")
