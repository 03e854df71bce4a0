"""A long conversation through a real terminal: `--resume` of 300 turns vs an empty session, and a
keystroke in the prompt at 300 turns vs an empty session.

The conversation is stored first through a real `ChatSession` (`tests/ui/long_conversation.py`:
Markdown answers with a code block, a tool call every fifth turn). Each sample is a fresh
`python -m tui_assist` in a detached tmux session (a private socket, 120x40, see
`tests/tmux_harness.py`); the clock starts just before tmux is asked for the session and stops when
`capture-pane` (polled every 2 ms through one control-mode client, see `Terminal.capture`) shows:

- resume: the last answer's closing line (`That is all for step 299`), the conversation drawn from
  the store (what the app kept of its pane is removed first: it was last written by another
  process, e.g. `tui-assist ask`);
- resume, left in the TUI: the same, for the conversation as the TUI left it (quit with ctrl+q
  at its end, at this size: its first frame draws the pane kept, see `ui/pane_snapshot.py`);
- empty: the full first screen (the fresh tree hint and the footer).

Keystrokes: with the app idle (loaded, as the status bar says, and the resumed conversation on
screen, or the empty session), each sample types one letter into the prompt and waits for the
pane to show it.

The kinds are interleaved so load on the (shared) machine hits them alike; medians and ranges are
printed, and the ratios of the medians (goals, issue 43: resume <= 1.25x, keystroke <= 1.2x).
Bytecode is compiled once into a cache folder (`PYTHONPYCACHEPREFIX`) before sampling.

Run: `.venv/bin/python bench/bench_long_session.py [--turns N] [--runs N] [--keys N] [--baseline DIR]`;
`--baseline DIR` also samples another checkout (e.g. `git archive main | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from table import print_rows  # bench/table.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.ui.long_conversation import seed  # noqa: E402

EMPTY_SHOWS = ("No turn yet", "palette")
IDLE_SHOWS = "○ idle"
"""The status bar once the session has loaded."""


def app_env(home: Path, base_url: str) -> dict[str, str]:
    """The environment the app runs in: a private home under `home`, the model API at `base_url`."""
    return {
        "TERM": "xterm-256color",
        "PYTHONPYCACHEPREFIX": str(home / "pycache"),
        "ANTHROPIC_API_KEY": "bench-key",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_CONFIG_DIR": str(home / "anthropic"),
        **{
            name: str(home / name.lower()) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
        },
    }


POLL_INTERVAL = 0.002
"""Seconds between two looks at a pane."""


class Terminal:
    """A tmux server on a private socket, one session at a time."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = os.path.join(tempfile.gettempdir(), f"tmux-bench-long-{os.getpid()}.sock")
        self.env = env
        self.count = 0
        self.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "idle", "-x", "120", "-y", "40", "sleep 100000"
        )
        # One control-mode client (attached to the idle session) answers every look at a pane. A
        # `tmux capture-pane` process per look cost more CPU than the app measured (0.7 of a core
        # while an answer streamed, on a 2-core machine), and so slowed what it measured.
        self._control = subprocess.Popen(
            ["tmux", "-S", self.socket, "-C", "attach", "-t", "idle"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert self._control.stdout is not None
        while not self._control.stdout.readline().startswith("%end "):  # attached
            pass

    def capture(self, name: str) -> str:
        """The text session `name`'s pane shows (`capture-pane -p`, through the control client)."""
        control = self._control
        assert control.stdin is not None and control.stdout is not None
        control.stdin.write(f"capture-pane -p -t {name}\n")
        control.stdin.flush()
        lines: list[str] | None = None
        while line := control.stdout.readline():
            if lines is None:
                # The reply to a command of this client: `%begin TIME NUMBER 1` ... `%end ...`
                # (other blocks and `%` notifications are tmux's own).
                if line.startswith("%begin ") and line.split()[-1] == "1":
                    lines = []
            elif line.startswith(("%end ", "%error ")):
                if line.startswith("%error "):
                    raise RuntimeError(f"capture-pane -t {name}: {''.join(lines)}")
                return "".join(lines)
            else:
                lines.append(line)
        raise RuntimeError("the tmux control client is gone")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def open(self, source: Path, args: list[str], shows: tuple[str, ...]) -> tuple[str, float]:
        """Start the app of `source` with `args`; the session's name and seconds to showing `shows`."""
        return self.launch(source, ["-m", "tui_assist", *args], shows)

    def launch(self, source: Path, python_args: list[str], shows: tuple[str, ...]) -> tuple[str, float]:
        """Run Python with `python_args` in `source`; the session's name and seconds to showing `shows`."""
        self.count += 1
        name = f"s{self.count}"
        variables = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        words = " ".join(shlex.quote(a) for a in python_args)
        command = (
            # PYTHONDONTWRITEBYTECODE (inherited by the tmux server) would keep the cache cold: our
            # modules would compile anew in every sample, where Textual has pip's bytecode.
            f"cd {shlex.quote(str(source))} && exec env -u COLUMNS -u LINES -u PYTHONDONTWRITEBYTECODE {variables} "
            f"{shlex.quote(sys.executable)} {words}"
        )
        start = time.perf_counter()
        self.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        self.wait(name, shows, start)
        return name, time.perf_counter() - start

    def wait(self, name: str, shows: tuple[str, ...], start: float, timeout: float = 120) -> str:
        while time.perf_counter() < start + timeout:
            screen = self.capture(name)
            if all(text in screen for text in shows):
                return screen
            time.sleep(POLL_INTERVAL)
        raise RuntimeError(f"{shows} never showed: {self.capture(name)!r}")

    def keystrokes(self, name: str, count: int) -> list[float]:
        """Seconds from sending each of `count` letters to the pane showing the typed text."""
        typed = ""
        took: list[float] = []
        for i in range(count):
            letter = string.ascii_lowercase[i % 26]
            typed += letter
            start = time.perf_counter()
            self.tmux("send-keys", "-t", name, "-l", letter)
            self.wait(name, (typed,), start, timeout=30)
            took.append(time.perf_counter() - start)
        return took

    def close_session(self, name: str) -> None:
        self.tmux("kill-session", "-t", name)

    def quit(self, name: str, timeout: float = 30) -> None:
        """Quit the app in session `name` as a user does (ctrl+q), and wait for it to exit."""
        self.tmux("send-keys", "-t", name, "C-q")
        deadline = time.perf_counter() + timeout
        while (
            subprocess.run(
                ["tmux", "-S", self.socket, "has-session", "-t", name], capture_output=True
            ).returncode
            == 0
        ):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{name} did not quit: {self.capture(name)!r}")
            time.sleep(0.05)

    def close(self) -> None:
        if self._control.stdin is not None:
            self._control.stdin.close()
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)
        self._control.wait(timeout=10)
        Path(self.socket).unlink(missing_ok=True)


def figure(samples: list[float]) -> str:
    return (
        f"median {1000 * statistics.median(samples):6.1f} ms  "
        f"(range {1000 * min(samples):.1f}-{1000 * max(samples):.1f}, n={len(samples)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=10, help="keystrokes per sample")
    parser.add_argument("--baseline", type=Path, help="another checkout to sample alike (before/after)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-long-") as tmp:
        home = Path(tmp)
        work = home / "work"
        work.mkdir()
        data = home / "data"
        conversation = asyncio.run(seed(data, work, args.turns))
        last = f"That is all for step {args.turns - 1}"
        env = app_env(home, "http://127.0.0.1:9") | {"TUI_ASSIST_HOME": str(data)}
        sources = {"": ROOT, **({"baseline ": args.baseline.resolve()} if args.baseline else {})}
        resume = ["--workdir", str(work), "--resume", conversation]
        kinds = {
            "empty": (["--workdir", str(work)], EMPTY_SHOWS),
            "resume": (resume, (last, "palette")),
            "kept": (resume, (last, "palette")),
        }
        kept = data / "resume-screens" / f"{conversation}.json"
        opened: dict[str, list[float]] = {}
        keys: dict[str, list[float]] = {}
        terminal = Terminal(env)
        try:
            for n in range(args.runs + 1):  # the first round warms the bytecode cache
                for label, source in sources.items():
                    for kind, (flags, shows) in kinds.items():
                        if kind == "resume":
                            kept.unlink(missing_ok=True)
                        elif kind == "kept" and not kept.exists():
                            name, _ = terminal.open(ROOT, flags, shows)  # (this checkout's app keeps it)
                            terminal.wait(name, (IDLE_SHOWS,), time.perf_counter())
                            terminal.quit(name)
                        name, took = terminal.open(source, flags, shows)
                        # Idle: loaded (the SDK imported), the resumed turns compacted, the warm-up done.
                        terminal.wait(name, (IDLE_SHOWS,), time.perf_counter())
                        time.sleep(0.5)
                        typed = terminal.keystrokes(name, args.keys)
                        terminal.close_session(name)
                        if n:
                            opened.setdefault(label + kind, []).append(took)
                            keys.setdefault(label + kind, []).extend(typed)
        finally:
            terminal.close()
    rows = [("samples", f"{args.runs} of each, interleaved, {args.keys} keys each; a shared, loaded machine")]
    for label in sources:
        e, r, k = opened[label + "empty"], opened[label + "resume"], opened[label + "kept"]
        ke, kr = keys[label + "empty"], keys[label + "resume"]
        rows += [
            (f"{label}empty session: full screen", figure(e)),
            (f"{label}--resume {args.turns} turns: last answer shown", figure(r)),
            (
                f"{label}resume / empty",
                f"{statistics.median(r) / statistics.median(e):.2f}x  (goal <= 1.25x)",
            ),
            (f"{label}--resume, left in the TUI: last answer shown", figure(k)),
            (f"{label}resume left in the TUI / empty", f"{statistics.median(k) / statistics.median(e):.2f}x"),
            (f"{label}keystroke, empty session", figure(ke)),
            (f"{label}keystroke, {args.turns} turns", figure(kr)),
            (
                f"{label}keystroke, {args.turns} turns / empty",
                f"{statistics.median(kr) / statistics.median(ke):.2f}x  (goal <= 1.2x)",
            ),
        ]
    print_rows(rows)


if __name__ == "__main__":
    main()
