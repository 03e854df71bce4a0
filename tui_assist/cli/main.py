"""The entry point: parse, read the settings, run the command, and turn every failure into one line.

Heavy modules (the Anthropic SDK, Textual, the store) are imported only by the command that needs
them, so `tui-assist --help` and the TUI's first paint stay fast.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_assist.cli.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE, error_line
from tui_assist.cli.parser import GLOBAL_FLAGS, UsageError, command_name, parse
from tui_assist.session.config_source import ConfigError, ConfigSource, checked_workdir
from tui_assist.session.factory import DataDirError, SetupError

if TYPE_CHECKING:
    from tui_assist.session.config import Settings

log = logging.getLogger("tui_assist")

_SETTING_FLAGS = tuple(flag for flag in GLOBAL_FLAGS if flag != "refine")
"""The global flags that set a setting of the same name (`--refine` is a switch: only on counts)."""


def config_from_args(args: argparse.Namespace) -> ConfigSource:
    """The config file, the environment, then the flags given; not validated yet."""
    flags: dict[str, Any] = {key: getattr(args, key, None) for key in _SETTING_FLAGS}
    if getattr(args, "refine", False):
        flags["refine"] = True
    return ConfigSource.read(flags)


class _LazyFileHandler(logging.FileHandler):
    """A log file created (with its folder) only when the first record comes, so a read-only
    command pointed at an empty folder leaves it empty."""

    def _open(self) -> Any:
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        """A log file that can't be written is not worth a traceback on the user's terminal."""


def configure_logging(data_dir_override: str | Path | None) -> None:
    """Send library log records (the SDK's warnings among them) to a file, never to the terminal.

    Python's last-resort handler would print them on stderr, where they break `--json` consumers
    and the TUI's screen alike.
    """
    from tui_assist.paths import data_dir

    root = logging.getLogger()
    if root.handlers:
        return
    handler = _LazyFileHandler(data_dir(data_dir_override) / "logs" / "tui-assist.log", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `tui-assist` with `argv` (default: the process's arguments); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if any(word in ("-h", "--help") for word in argv) or "--version" in argv:
        return _help_or_version(argv)
    command = "chat"
    args: argparse.Namespace | None = None
    try:
        args = parse(argv)
        command = command_name(args)
        return _run(args)
    except UsageError as exc:
        where = exc.command or command
        print(
            error_line(where, f"{exc} (see tui-assist {'' if where == 'chat' else where + ' '}--help)"),
            file=sys.stderr,
        )
        return EXIT_USAGE
    except (ConfigError, DataDirError) as exc:
        print(error_line(command, str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except SetupError as exc:
        if args is not None and command == "ask" and args.json:
            import json

            from tui_assist.cli.ask import failure_json

            data = failure_json("refine" if getattr(args, "refine", False) else "agent", str(exc))
            if getattr(args, "output_format", None) == "stream-json":
                data = {"type": "result", **data}
            print(json.dumps(data))
        print(error_line(command, str(exc)), file=sys.stderr)
        return EXIT_FAILED
    except (KeyboardInterrupt, asyncio.CancelledError):
        return EXIT_CANCELLED
    except BrokenPipeError:
        # The reader went away (`| head`): no traceback. Point stdout at /dev/null so the
        # interpreter's final flush doesn't fail the same way.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except Exception as exc:  # a bug: one line for the user, the traceback in the log
        log.exception("unexpected error")
        print(
            error_line(command, f"unexpected error: {exc!r} (the traceback is in the log file)"),
            file=sys.stderr,
        )
        return EXIT_FAILED


def _help_or_version(argv: Sequence[str]) -> int:
    """argparse prints help and the version itself, then exits 0."""
    from tui_assist.cli.parser import build_parser

    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    except UsageError:
        pass
    return 0


def _run(args: argparse.Namespace) -> int:
    source = config_from_args(args)
    if args.command in (None, "explore"):
        return _run_tui(args, source)
    if args.command == "ask":
        from tui_assist.cli.ask import preload_sdk

        preload_sdk()
    settings = source.settings()
    configure_logging(settings.data_dir)
    match args.command:
        case "ask":
            from tui_assist.cli.ask import ask

            return asyncio.run(ask(args, settings))
        case "acp":
            from tui_assist.cli.acp import acp

            return asyncio.run(acp(args, settings))
        case "history" | "stats":
            from tui_assist.cli.commands import history_or_stats

            return asyncio.run(history_or_stats(args, settings))
        case "bench" if args.bench_command == "strategies":
            return asyncio.run(_bench_strategies(args, settings))
        case "bench":
            from tui_assist.cli.commands import bench

            return asyncio.run(bench(args, settings))
        case "rewind":
            from tui_assist.cli.rewind import rewind

            return asyncio.run(rewind(args, settings))
        case "plugin":
            from tui_assist.cli.plugin import plugin

            return plugin(args, settings)
        case "doctor":
            from tui_assist.cli.doctor import doctor

            return doctor(args, settings)
        case _:
            from tui_assist.cli.commands import flow

            return asyncio.run(flow(args, settings))


async def _bench_strategies(args: argparse.Namespace, settings: Settings) -> int:
    """`bench strategies`: run the suite, print rows (or JSON rows) and the summary."""
    from tui_assist.session import strategy_bench as bench
    from tui_assist.session.factory import make_provider

    try:
        strategies = bench.parse_strategies(args.strategies)
    except ValueError as exc:
        raise UsageError("bench strategies", f"--strategies: {exc}") from None
    if args.concurrency < 1:
        raise UsageError("bench strategies", "--concurrency must be at least 1")
    tasks = bench.load_suite(args.suite or bench.BUILTIN_SUITE)
    source = "scripted replies (offline)"
    if settings.provider == "scripted":
        missing = [t.script(s) for t in tasks for s in strategies if t.runs(s) and not t.script(s).is_file()]
        if missing:
            raise ConfigError(f"--provider scripted needs {missing[0]} (each task replays its own script)")
    else:
        # Fail once, with the provider's own one line (e.g. no key), rather than once per run.
        provider = await asyncio.to_thread(make_provider, settings)
        source = f"{provider.name} / {provider.model}"
        await provider.aclose()
    progress = bench.Progress(sum(t.runs(s) for t in tasks for s in strategies))
    rows = await bench.run_suite(
        tasks, settings, strategies=strategies, rounds=getattr(args, "rounds", None),
        concurrency=args.concurrency, on_row=progress, on_start=progress.started,
    )  # fmt: skip
    if args.json:
        import json

        print(json.dumps([row.to_dict() for row in rows], indent=2, ensure_ascii=False))
    else:
        print(bench.format_report(rows, bench.summarize(rows), source=source), end="")
    return EXIT_OK


def _run_tui(args: argparse.Namespace, source: ConfigSource) -> int:
    # Until the first frame is painted, Python's cyclic GC would only rescan the objects that
    # importing Textual creates, a delay for nothing; the main screen turns it back on after that frame.
    gc.disable()
    # The TUI validates its settings after its first frame, too (see ConfigSource).
    from tui_assist.ui.app import run

    preview = source.preview()
    checked_workdir(preview.workdir)  # the one mistake worth stopping for before the screen opens
    configure_logging(preview.data_dir)
    if args.command == "explore":
        return run(source, screen="explore")
    from tui_assist.ui.screens.main import StartOptions

    chat = StartOptions(
        prompt=getattr(args, "prompt", None),
        continue_latest=bool(getattr(args, "continue_", False)),
        resume=getattr(args, "resume", None),
    )
    return run(source, chat=chat)
