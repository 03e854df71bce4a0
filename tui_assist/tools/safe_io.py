r"""Safe file access for the text editor: regular files only, bounded reads, writes by replacement.

What a path names is checked with `lstat` before anything is opened, because opening a FIFO
blocks until a writer appears (forever, in an uninterruptible worker thread) and reading a device
such as `/dev/zero` never ends. Files are opened with `O_NONBLOCK | O_NOFOLLOW` and checked again
with `fstat`, in case the name was swapped in between, and a read stops at `max_bytes + 1` bytes
whatever size `stat` reported. Content is raw bytes (text is decoded as UTF-8 here, never through
universal-newline text mode), so `\r\n` line endings survive an edit.

Writes replace the file instead of writing into it: the new content goes to a fresh temporary
file in the same directory, which is then renamed over the old name. Writing into the existing
inode would write through a hard link, and bash (once approved) can make a hard link in the
workdir to any file outside it (`ln ../outside/x x`); a replacement gives the name in the workdir
a new inode and leaves every other link alone. Refusing files with several links would also be
safe, but would make ordinary hard-linked trees (`cp -al` backups, package stores) uneditable.
The replacement keeps the old file's permission bits (and its owner, where permitted), and a
crash mid-write leaves the old content whole rather than half a file.

Parent folders are created one level at a time, so a very deep path cannot exhaust the recursion
limit; `path_limits` reads the filesystem's limits on names and paths, for refusing over-long
paths before anything is touched. Confining paths to the workdir is the caller's job
(`tui_assist.tools.base.confine`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "EditError",
    "make_directories",
    "path_limits",
    "read_at_most",
    "read_bytes",
    "read_text",
    "replace_file",
    "writable_target",
    "write_atomically",
]

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_CHUNK = 1 << 20
_DEFAULT_NAME_MAX = 255
_DEFAULT_PATH_MAX = 4096


class EditError(Exception):
    """An edit or file access that cannot be made; the message goes back to the model."""


def _lstat(path: Path) -> os.stat_result | None:
    """The path's own status (a symlink is not followed), or None when nothing is there."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for is_kind, name in kinds if is_kind(mode)), "a special file")


def _require_regular(info: os.stat_result, display: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise EditError(f"{display} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise EditError(
            f"{display} is {_kind(info.st_mode)}, not a regular file; "
            "the editor only handles regular files and did not open it"
        )


def _too_large(display: str, max_bytes: int, size: int | None = None) -> EditError:
    actual = f"{size:,} bytes" if size is not None else "larger than that"
    return EditError(
        f"{display} is {actual}; the editor handles files up to {max_bytes:,} bytes. "
        "Use bash (head, sed -n, grep) to work with it."
    )


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd`, read in chunks until it ends."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_bytes(path: Path, display: str, max_bytes: int) -> bytes:
    """The content of a regular file of at most `max_bytes`; anything else is refused unopened.

    Args:
        path: The file (a symlink is refused, not followed).
        display: The path as messages name it.
        max_bytes: The largest content read; a bigger file is refused.

    Returns:
        The raw bytes.

    Raises:
        EditError: when nothing is there, it is not a regular file, or it is too large.
        OSError: when it cannot be opened or read.
    """
    info = _lstat(path)
    if info is None:
        raise EditError(f"{display} does not exist")
    _require_regular(info, display)
    if info.st_size > max_bytes:
        raise _too_large(display, max_bytes, info.st_size)
    fd = os.open(path, _READ_FLAGS)
    try:
        # The name may have been replaced since `lstat`; what was opened is what counts.
        opened = os.fstat(fd)
        _require_regular(opened, display)
        data = read_at_most(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _too_large(display, max_bytes)
    return data


def writable_target(path: Path, display: str) -> bool:
    """Check that `path` can be written by replacement.

    Args:
        path: Where the file is to be written.
        display: The path as messages name it.

    Returns:
        Whether a file is there now (False: nothing is).

    Raises:
        EditError: when a directory or a file that is not regular is there, or the file is
            read-only.
    """
    info = _lstat(path)
    if info is None:
        return False
    if stat.S_ISDIR(info.st_mode):
        raise EditError(f"{display} is a directory; cannot write a file there")
    _require_regular(info, display)
    # Replacing needs only the directory to be writable; keep the file's own protection.
    if not os.access(path, os.W_OK, follow_symlinks=False):
        raise EditError(f"{display} is read-only; no change was made")
    return True


def write_atomically(path: Path, data: bytes, *, new_mode: int = 0o666) -> None:
    """Write `data` to a new file beside `path`, flush it to disk and rename it over `path`.

    The one place in the package that replaces a file (`os.replace`): the editor's writes, the
    saved TUI state, the rules files, the checkpoints' state, the prompt history's cut-backs and
    `/export` all come here. A crash leaves the
    old content or the new, never half a file. The temporary file is created exclusively
    (`O_EXCL | O_NOFOLLOW`), so nothing planted under its name is written through; its data is
    `fsync`ed before the rename. A replaced file keeps its permission bits (and its owner, where
    permitted); a new file gets `new_mode`, less the umask.

    Args:
        path: The file to write; its folder must exist.
        data: The whole new content.
        new_mode: The permission bits of a file that did not exist (0o600 for private state).

    Raises:
        OSError: when the new file cannot be written or renamed (the old one is then unchanged).
    """
    try:
        old = os.lstat(path)
    except FileNotFoundError:
        old = None
    temporary = path.parent / f".tui-assist-{secrets.token_hex(8)}.tmp"
    fd = os.open(temporary, _TEMP_FLAGS, 0o600 if old is not None else new_mode)
    try:
        try:
            if old is not None and stat.S_ISREG(old.st_mode):
                new = os.fstat(fd)
                if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
                    with contextlib.suppress(PermissionError):
                        os.fchown(fd, old.st_uid, old.st_gid)
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def replace_file(path: Path, data: bytes, display: str) -> bool:
    """Replace the file an edit writes (`write_atomically`, after `writable_target` allows it).

    Never writes into an existing inode, so a hard link to a file outside the workdir is broken
    rather than written through; see the module docstring.

    Args:
        path: The file to write; its folder must exist.
        data: The whole new content.
        display: The path as messages name it.

    Returns:
        Whether a file was replaced (False: a new one was created).

    Raises:
        EditError: when `writable_target` refuses the path.
        OSError: when the new file cannot be written or renamed (the old one is then unchanged).
    """
    existed = writable_target(path, display)
    write_atomically(path, data)
    return existed


def make_directories(root: Path, directory: Path) -> None:
    """Create `directory` and its missing parents below `root`, one level at a time.

    Iterative on purpose: `Path.mkdir(parents=True)` recurses once per missing level, so a path
    a thousand levels deep raises `RecursionError`.

    Args:
        root: An existing folder that `directory` lies in.
        directory: The folder to create.

    Raises:
        EditError: when something on the way exists and is not a directory.
        OSError: when a folder cannot be created.
    """
    current = root
    for part in directory.relative_to(root).parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                raise EditError(f"{current.relative_to(root)} exists and is not a directory") from None


def path_limits(directory: Path) -> tuple[int, int]:
    """The longest name and path (in bytes) the filesystem of `directory` allows.

    Args:
        directory: A folder on the filesystem in question.

    Returns:
        `(NAME_MAX, PATH_MAX)`, or the usual 255 and 4096 where the system does not say.
    """
    return (
        _path_limit(directory, "PC_NAME_MAX", _DEFAULT_NAME_MAX),
        _path_limit(directory, "PC_PATH_MAX", _DEFAULT_PATH_MAX),
    )


def _path_limit(directory: Path, name: str, fallback: int) -> int:
    try:
        limit = os.pathconf(directory, name)
    except (OSError, ValueError):
        return fallback
    return limit if limit > 0 else fallback


def read_text(path: Path, display: str, max_bytes: int) -> str:
    """The content of a text file, read as `read_bytes` does and decoded as UTF-8.

    Args:
        path: The file.
        display: The path as messages name it.
        max_bytes: The largest content read.

    Returns:
        The text, line endings as they are in the file.

    Raises:
        EditError: as `read_bytes` does, and when the file looks binary (a NUL byte early on) or
            is not valid UTF-8.
        OSError: when it cannot be opened or read.
    """
    data = read_bytes(path, display, max_bytes)
    if b"\x00" in data[:8192]:
        raise EditError(f"{display} looks like a binary file; the editor only handles text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EditError(
            f"{display} is not valid UTF-8 text ({error.reason} at byte {error.start})"
        ) from error
