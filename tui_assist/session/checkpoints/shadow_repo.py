"""The shadow repository: where one workdir's snapshots live, and how git is run on it.

`ShadowRepo` holds the plumbing `Checkpoints` builds on: a clean environment and fixed config for
every git call, running git, the per-workdir file lock, creating the repository, the snapshot
commits and their refs, and the state file kept beside the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tui_assist.session.checkpoints.types import ChangeKind, CheckpointError, FileChange, SnapshotInfo
from tui_assist.tools.safe_git import git_argv, git_environment
from tui_assist.tools.safe_io import write_atomically

__all__ = ["ShadowRepo", "nul_join", "nul_split", "os_error"]

_IDENTITY = "tui-assist checkpoints"
_EMAIL = "checkpoints@tui-assist.invalid"
_SKIPPED_TRAILER = "tui-assist-skipped: "
_REF_PREFIX = "refs/checkpoints/"
_STATE_FILE = "tui-assist-state.json"
_LOCK_FILE = "tui-assist.lock"
_LOCK_TIMEOUT = 30.0
_STATUS_KINDS: dict[str, ChangeKind] = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Every git call gets these (after them, `safe_git.SAFE_CONFIG`): no user config reaches the shadow
# repository.
_CONFIG = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.untrackedCache=true",
    "core.looseCompression=1",
    "core.logAllRefUpdates=false",
    "core.quotePath=false",
    "core.sparseCheckout=false",
    "core.attributesFile=/dev/null",
    "commit.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "index.version=4",
    # Each snapshot rewrites only the entries that changed, not the whole index.
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=now",
    "status.showUntrackedFiles=all",
    "diff.renames=false",
    "submodule.recurse=false",
    "init.defaultBranch=main",
)
# Highest-precedence attributes: store and restore bytes as they are, whatever `.gitattributes` says.
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol\n"


@dataclass(slots=True)
class _State:
    """Kept in the shadow repository beside the index; lost state only costs one extra commit."""

    head: str | None = None
    tree: str | None = None
    too_large: dict[str, int] = field(default_factory=lambda: {})
    rules: str = ""
    """Digest of the ignore rules the index was last pruned against."""

    @classmethod
    def load(cls, path: Path) -> _State:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                head=raw.get("head"),
                tree=raw.get("tree"),
                too_large={str(k): int(v) for k, v in raw.get("too_large", {}).items()},
                rules=str(raw.get("rules", "")),
            )
        except (OSError, ValueError, TypeError, AttributeError):
            return cls()

    def save(self, path: Path) -> None:
        data = {"head": self.head, "tree": self.tree, "too_large": self.too_large, "rules": self.rules}
        write_atomically(path, json.dumps(data, sort_keys=True).encode("utf-8"))


class ShadowRepo:
    """The shadow git repository of one workdir, and the git plumbing that drives it.

    Hold `_locked` around every use: it creates the repository if needed, serializes calls on one
    instance, and with a file lock serializes processes sharing the workdir.
    """

    def __init__(self, data_dir: Path, workdir: Path, *, git: str = "git") -> None:
        """Set up (lazily: nothing touches the disk before the first call).

        Args:
            data_dir: The app's data dir; shadow repositories live in `<data_dir>/checkpoints/`.
            workdir: The directory whose snapshots this repository holds.
            git: The git executable.
        """
        self.workdir = workdir.expanduser().resolve()
        self.data_dir = data_dir.expanduser().resolve()
        self.root = self.data_dir / "checkpoints"
        digest = hashlib.sha256(os.fsencode(self.workdir)).hexdigest()[:24]
        self.git_dir = self.root / f"{digest}.git"
        self._git_name = git
        self._git_path: str | None = None
        self._lock = asyncio.Lock()

    # -- snapshots and their refs -------------------------------------------------------------

    async def _diff(self, before: str, after: str) -> list[FileChange]:
        if before == after:
            return []
        out = nul_split(
            await self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after)
        )
        changes = [
            FileChange(path, _STATUS_KINDS.get(code[:1], "modified"))
            for code, path in zip(out[::2], out[1::2], strict=False)
        ]
        return sorted(changes, key=lambda c: c.path)

    async def _missing(self, commits: list[str]) -> set[str]:
        query = "".join(f"{c}^{{commit}}\n" for c in commits)
        out = (await self._git("cat-file", "--batch-check=%(objectname)", input=query.encode())).decode()
        found = out.splitlines()
        return {c for i, c in enumerate(commits) if i >= len(found) or not _OBJECT_ID.fullmatch(found[i])}

    async def _require(self, *commits: str) -> None:
        for commit in commits:
            if not re.fullmatch(r"[0-9a-f]{7,64}", commit):
                raise CheckpointError(f"not a snapshot id: {commit!r}")
        if missing := await self._missing(list(commits)):
            raise CheckpointError(f"snapshot {sorted(missing)[0][:12]} no longer exists (it was pruned)")

    async def _commit(self, tree: str, label: str, too_large: list[str], started_ns: int) -> str:
        message = " ".join(label.split()) or "snapshot"
        if too_large:
            message += f"\n\n{_SKIPPED_TRAILER}{json.dumps(too_large)}"
        commit = (await self._git("commit-tree", tree, "-m", message)).decode().strip()
        # The ref name holds when the scan began, to the nanosecond (commit dates have seconds): it
        # orders snapshots, and tells which files existed before one (see `Checkpoints._plan`).
        ref = f"{_REF_PREFIX}{started_ns:020d}-{commit}"
        refs = f"option no-deref\nupdate HEAD {commit}\nupdate {ref} {commit}\n"
        await self._git("update-ref", "--stdin", input=refs.encode())
        return commit

    async def _commit_meta(self, commit: str) -> tuple[float, set[str]]:
        """When a snapshot's scan began (seconds since the epoch), and the too-large files it left out."""
        log = await self._git("log", "-1", "--format=%ct%n%B", commit)
        seconds, _, message = log.decode().partition("\n")
        taken = float(seconds)
        refs = await self._git("for-each-ref", f"--points-at={commit}", "--format=%(refname)", _REF_PREFIX)
        stamps = [ref.removeprefix(_REF_PREFIX).partition("-")[0] for ref in refs.decode().splitlines()]
        if numeric := [int(s) for s in stamps if s.isdigit()]:
            taken = min(numeric) / 1e9
        skipped: set[str] = set()
        for line in message.splitlines():
            if line.startswith(_SKIPPED_TRAILER):
                with contextlib.suppress(ValueError):
                    skipped = {str(p) for p in json.loads(line[len(_SKIPPED_TRAILER) :])}
        return taken, skipped

    async def _refs(self) -> list[tuple[str, SnapshotInfo]]:
        """Every snapshot ref with its snapshot, newest first."""
        out = await self._git(
            "for-each-ref",
            "--sort=-refname",
            "--format=%(refname) %(objectname) %(contents:subject)",
            _REF_PREFIX,
        )
        listed: list[tuple[str, SnapshotInfo]] = []
        for line in out.decode(errors="replace").splitlines():
            ref, commit, label = (line.split(" ", 2) + [""])[:3]
            nanoseconds = ref.removeprefix(_REF_PREFIX).partition("-")[0]
            if nanoseconds.isdigit():
                created = datetime.fromtimestamp(int(nanoseconds) / 1e9, UTC)
                listed.append((ref, SnapshotInfo(commit, label, created)))
        return listed

    # -- state --------------------------------------------------------------------------------

    def _head(self) -> str | None:
        """The latest snapshot: HEAD is detached, so its file holds the commit id itself."""
        try:
            head = (self.git_dir / "HEAD").read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return head if _OBJECT_ID.fullmatch(head) else None

    def _load_state(self) -> _State:
        return _State.load(self.git_dir / _STATE_FILE)

    def _save_state(self, state: _State) -> None:
        try:
            state.save(self.git_dir / _STATE_FILE)
        except OSError as error:
            raise os_error(error, self.git_dir) from None

    @property
    def _user_exclude(self) -> Path:
        return self.workdir / ".git" / "info" / "exclude"

    # -- lock, repository, git ----------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncGenerator[None, None]:
        async with self._lock:
            await self._ensure_repo()
            fd = os.open(self.git_dir / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                deadline = time.monotonic() + _LOCK_TIMEOUT
                while True:
                    if _try_flock(fd):
                        break
                    if time.monotonic() > deadline:
                        raise CheckpointError(
                            f"another tui-assist holds the checkpoints of {self.workdir} (try again)"
                        )
                    await asyncio.sleep(0.05)
                # Holding the lock, no other git runs in this repository: a left-over lock file
                # comes from a git killed mid-way (an `ask` that did not wait for a snapshot it
                # did not need) and would block every later snapshot.
                for stale in ("index.lock", "HEAD.lock", "packed-refs.lock"):
                    with contextlib.suppress(FileNotFoundError):
                        (self.git_dir / stale).unlink()
                yield
            finally:
                os.close(fd)

    async def _ensure_repo(self) -> None:
        try:
            info = os.stat(self.workdir)
        except OSError as error:
            raise CheckpointError(f"cannot read the workdir {self.workdir}: {error.strerror}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise CheckpointError(f"the workdir {self.workdir} is not a directory")
        if not os.access(self.workdir, os.R_OK | os.X_OK):
            raise CheckpointError(f"cannot read the workdir {self.workdir}: permission denied")
        if not (self.git_dir / "HEAD").exists():
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise os_error(error, self.root) from None
            try:
                tmp = Path(tempfile.mkdtemp(prefix=f".init-{self.git_dir.name}-", dir=self.root))
            except OSError as error:
                raise os_error(error, self.root) from None
            try:
                await self._run(
                    ["init", "--quiet", "--bare", "--template=", str(tmp)], env=self._env(bare=True)
                )
                (tmp / "info").mkdir(exist_ok=True)
                (tmp / "info" / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")
                (tmp / "tui-assist-workdir").write_text(f"{self.workdir}\n", encoding="utf-8")
                os.rename(tmp, self.git_dir)  # atomic: a half-made repository is never used
            except FileExistsError:
                shutil.rmtree(tmp, ignore_errors=True)  # another process won the race
            except OSError as error:  # ENOTEMPTY: another process won the race
                shutil.rmtree(tmp, ignore_errors=True)
                if not (self.git_dir / "HEAD").exists():
                    raise os_error(error, self.root) from None
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise

    def _env(self, *, bare: bool = False) -> dict[str, str]:
        env = {
            # No ~/.gitconfig or $XDG_CONFIG_HOME/git/config, even for a git too old for GIT_CONFIG_GLOBAL.
            "HOME": str(self.root),
            "XDG_CONFIG_HOME": str(self.root),
            "LC_ALL": "C",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_AUTHOR_NAME": _IDENTITY,
            "GIT_AUTHOR_EMAIL": _EMAIL,
            "GIT_COMMITTER_NAME": _IDENTITY,
            "GIT_COMMITTER_EMAIL": _EMAIL,
        }
        if not bare:
            env |= {
                "GIT_DIR": str(self.git_dir),
                "GIT_WORK_TREE": str(self.workdir),
                "GIT_INDEX_FILE": str(self.git_dir / "index"),
            }
        return git_environment(env)

    def _config(self) -> list[str]:
        user_exclude = self._user_exclude
        excludes_file = str(user_exclude) if (self.workdir / ".git").is_dir() else os.devnull
        return [*_CONFIG, f"core.excludesFile={excludes_file}"]

    async def _git(
        self, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (), literal: bool = True
    ) -> bytes:
        out, _ = await self._git_with_stderr(*args, input=input, ok=ok, literal=literal)
        return out

    async def _git_with_stderr(
        self, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (), literal: bool = True
    ) -> tuple[bytes, str]:
        env = self._env()
        if not literal:  # check-ignore rejects the literal pathspec magic (it takes paths anyway)
            del env["GIT_LITERAL_PATHSPECS"]
        return await self._run(list(args), env=env, input=input, ok=ok, config=self._config())

    async def _run(
        self,
        args: list[str],
        *,
        env: dict[str, str],
        input: bytes | None = None,
        ok: tuple[int, ...] = (),
        config: list[str] | None = None,
    ) -> tuple[bytes, str]:
        git = self._find_git()
        try:
            proc = await asyncio.create_subprocess_exec(
                *git_argv(git, *args, config=config or ()),
                cwd=self.workdir,
                env=env,
                stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            raise CheckpointError("git is not installed (install git to use checkpoints)") from None
        except OSError as error:
            raise os_error(error, self.workdir) from None
        try:
            out, err = await proc.communicate(input)
        except BaseException:
            # Cancelled (or worse): do not leave git running on the index.
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        stderr = err.decode(errors="replace")
        if proc.returncode != 0 and proc.returncode not in ok:
            raise _git_error(args, stderr, self.git_dir)
        return out, stderr

    def _find_git(self) -> str:
        if self._git_path is None:
            found = shutil.which(self._git_name)
            if found is None:
                raise CheckpointError("git is not installed (install git to use checkpoints)")
            self._git_path = found
        return self._git_path


def nul_join(paths: Iterable[str]) -> bytes:
    """Paths as git's `-z` input: each one NUL-terminated."""
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def nul_split(data: bytes) -> list[str]:
    """The paths in git's `-z` output."""
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _first_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return lines[0] if lines else "no message"


def _git_error(args: list[str], stderr: str, where: Path) -> CheckpointError:
    if "No space left on device" in stderr:
        return CheckpointError(f"no space left on the disk holding {where} (free some space)")
    command = next((a for a in args if not a.startswith("-") and "=" not in a), "git")
    return CheckpointError(f"git {command} failed: {_first_line(stderr)}")


def os_error(error: OSError, where: Path) -> CheckpointError:
    """The one-line `CheckpointError` for a failed file operation at `where`."""
    if error.errno == errno.ENOSPC:
        return CheckpointError(f"no space left on the disk holding {where} (free some space)")
    return CheckpointError(f"{where}: {error.strerror or error}")


def _try_flock(fd: int) -> bool:
    """Take an exclusive lock without waiting; False if another process holds it."""
    if sys.platform == "win32":
        return True  # no flock there; git's own index.lock still refuses concurrent writers
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
