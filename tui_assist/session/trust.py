"""Project trust: what a project folder brings along runs only once the user has trusted it.

A cloned repository can carry hooks (`.tui-assist/settings.toml`), allow rules (there and in
`.claude/settings*.json`), MCP servers (`.mcp.json`), sub-agents (`.claude/agents/`,
`.tui-assist/agents/`) and the scripts its hooks and servers run; each runs code or steers the
model. So they wait until the user trusts the project, and the trust is given to *those files as
they were*: the state file in the data dir keeps, per workdir, a digest of the files' paths and
bytes. A file that changes, appears or goes away changes the digest, and the user is asked
again. What the user configured themselves (the user config dir) is never gated.

Any part that reads project files reads them through one `ProjectFiles` (each file read once),
calls `ProjectTrust.status(workdir, files, snapshot)` with the files it would act on, and runs
them only when that answers `trusted`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

TRUST_FILE = "project-trust.json"
"""The state file's name in the data dir."""

TrustStatus = Literal["trusted", "untrusted", "changed"]
"""`untrusted`: never trusted; `changed`: trusted once, but the files are not what they were."""


class ProjectFiles:
    """A project's files, each read once: what is parsed is what is digested (no gap between).

    The parsers of the project's settings, `.mcp.json` and scripts read through it, and the trust
    digest is taken over the same bytes, so a file changed after it was read is not trusted
    along with what was shown.
    """

    def __init__(self, workdir: Path) -> None:
        """Read files of the project in `workdir` (relative paths are taken from there)."""
        self.workdir = workdir.resolve()
        self._read: dict[Path, bytes | OSError] = {}

    def _path(self, file: Path) -> Path:
        return file if file.is_absolute() else self.workdir / file

    def data(self, file: Path) -> bytes:
        """The file's bytes as first read.

        Raises:
            OSError: when it is missing or unreadable (then too, as first found).
        """
        path = self._path(file)
        if path not in self._read:
            try:
                self._read[path] = path.read_bytes()
            except OSError as exc:
                self._read[path] = exc
        data = self._read[path]
        if isinstance(data, OSError):
            raise data
        return data

    def text(self, file: Path) -> str:
        """The file's text (UTF-8) as first read.

        Raises:
            OSError: when it is missing or unreadable.
            UnicodeDecodeError: when it is not UTF-8.
        """
        return self.data(file).decode("utf-8")

    def as_read(self, file: Path) -> bytes | None:
        """The file's bytes as read so far, without reading it (None: missing, unreadable, unread)."""
        data = self._read.get(self._path(file))
        return data if isinstance(data, bytes) else None

    def reread(self, file: Path) -> None:
        """Forget the file's bytes, so they are read again (after the session's own edit)."""
        self._read.pop(self._path(file), None)

    def is_file(self, file: Path) -> bool:
        """Whether the file could be read (it is then kept as read)."""
        try:
            self.data(file)
        except OSError:
            return False
        return True

    def digest(self, files: Iterable[Path]) -> str:
        """The sha256 over the files' paths (relative to the workdir where inside it) and bytes.

        A missing or unreadable file counts as its path with a marker, so its later appearance
        changes the digest too.
        """
        digest = hashlib.sha256()
        named: dict[str, Path] = {}
        for file in files:
            path = self._path(file)
            try:
                named[path.relative_to(self.workdir).as_posix()] = path
            except ValueError:
                named[path.as_posix()] = path
        for name, path in sorted(named.items()):
            digest.update(name.encode() + b"\0")
            try:
                data = self.data(path)
            except OSError:
                digest.update(b"\1missing\0")
                continue
            digest.update(len(data).to_bytes(8, "big") + data)
        return digest.hexdigest()


PROJECT_DIR_VARIABLES = ("CLAUDE_PROJECT_DIR", "TUI_ASSIST_PROJECT_DIR")
"""The variables a hook's command names the project folder with."""


SCRIPT_RUNNERS = frozenset(
    {
        "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "deno", "bun", "ruby",
        "perl", "php", "lua", "tsx", "ts-node", "uv", "run", "source", ".",
    }
)  # fmt: skip
"""Programs (and `uv run`) whose first argument that is not an option is a script they run."""
SCRIPT_SUFFIXES = frozenset(
    {".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua"}
)
"""File name endings that mark a word as a script wherever it stands."""


def named_scripts(
    workdir: Path, commands: Iterable[str | Sequence[str]], cwd: Path | None = None
) -> list[Path]:
    """The files inside `workdir` that shell commands or argument lists run: what trust lets run.

    A word names a script when, taken from the workdir (after `$CLAUDE_PROJECT_DIR/` or `./`), it
    is an existing file inside the workdir and it is run: the program of a simple command, the
    first argument of an interpreter (`python scripts/server.py`, `bash hook.sh`), or any word
    (an `--option=` value too) naming an executable file or one ending like a script (`.py`,
    `.sh`, ...). A file a command only touches (`touch done.txt`) is not one. A shell command's
    words are read with the rules' bash parser (`core/shell_words.py`) and with `shlex`.

    Args:
        workdir: The project folder.
        commands: Shell commands (a hook's `command`) or argument lists (an MCP server's
            `[command, *args]`).
        cwd: Where the commands start (relative to the workdir), when not the workdir: relative
            words are taken from there (the scripts found must still be inside the workdir).

    Returns:
        The scripts, resolved, each once, in the order first named.
    """
    from tui_assist.core.shell_words import analyse_command

    root = workdir.resolve()
    base = (root / cwd).resolve() if cwd is not None else root
    word_lists: list[Sequence[str]] = []
    for command in commands:
        if not isinstance(command, str):
            word_lists.append(command)
            continue
        word_lists += [simple.split(" ") for simple in analyse_command(command).commands]
        try:
            word_lists.append(shlex.split(command))
        except ValueError:
            word_lists.append(command.split())
    found: dict[Path, None] = {}
    for words in word_lists:
        runs_next = True  # the program itself, then an interpreter's first argument
        for word in words:
            value = word.rpartition("=")[2] if word.startswith("-") else word
            script = _script_in(root, base, value)
            if script is not None and (runs_next or _looks_like_script(script)):
                found[script] = None
            if runs_next and not word.startswith("-"):
                runs_next = Path(word).name in SCRIPT_RUNNERS
    return list(found)


def _looks_like_script(path: Path) -> bool:
    return path.suffix in SCRIPT_SUFFIXES or os.access(path, os.X_OK)


def _script_in(root: Path, base: Path, word: str) -> Path | None:
    for variable in PROJECT_DIR_VARIABLES:
        for spelled in (f"${variable}", f"${{{variable}}}"):
            if word.startswith(spelled):
                word, base = "./" + word[len(spelled) :].lstrip("/"), root
    if not word or "$" in word:
        return None
    try:
        path = (base / word).resolve()
        inside = path.is_relative_to(root) and path != root and path.is_file()
    except (OSError, RuntimeError, ValueError):
        return None
    return path if inside else None


def project_digest(workdir: Path, files: Iterable[Path]) -> str:
    """The digest of `files` of the project in `workdir` as they are now (`ProjectFiles.digest`)."""
    return ProjectFiles(workdir).digest(files)


class ProjectTrust:
    """The projects the user trusted, and the digest of their files when they did, in the data dir."""

    def __init__(self, data_dir: Path) -> None:
        """Read and write the trust state in `data_dir` (created when the first trust is saved)."""
        self.path = data_dir / TRUST_FILE

    def _load(self) -> dict[str, str]:
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {str(k): v for k, v in projects.items() if isinstance(v, str)}

    def status(
        self, workdir: Path, files: Iterable[Path], snapshot: ProjectFiles | None = None
    ) -> TrustStatus:
        """Whether the project in `workdir` is trusted with `files` as they are now.

        Args:
            workdir: The project folder.
            files: The project files that would run or take effect (settings with hooks or allow
                rules, `.mcp.json`, agent files, the scripts those name). None at all: nothing
                needs trust, so `trusted`.
            snapshot: The files as read for parsing (read now when omitted).
        """
        files = list(files)
        if not files:
            return "trusted"
        return self.status_of(workdir, (snapshot or ProjectFiles(workdir)).digest(files))

    def status_of(self, workdir: Path, digest: str) -> TrustStatus:
        """Whether the project in `workdir` is trusted with the files whose digest is `digest`."""
        saved = self._load().get(str(workdir.resolve()))
        if saved is None:
            return "untrusted"
        return "trusted" if saved == digest else "changed"

    def trust(self, workdir: Path, files: Iterable[Path]) -> bool:
        """Trust the project in `workdir` with `files` as they are now (see `save`)."""
        return self.save(workdir, project_digest(workdir, files))

    def save(self, workdir: Path, digest: str) -> bool:
        """Trust the project in `workdir` with the files whose digest is `digest` (written atomically).

        The digest is that of the files as they were shown to the user, never read again here:
        a file changed since is not trusted.

        Returns:
            Whether it was saved (False: the state file could not be written; trusted for this run only).
        """
        from tui_assist.tools.safe_io import replace_file

        projects = self._load()
        projects[str(workdir.resolve())] = digest
        data = json.dumps({"projects": projects}, indent=1, sort_keys=True).encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.path, data, str(self.path))
        except Exception:
            log.warning("cannot save the project trust to %s", self.path, exc_info=True)
            return False
        return True
