"""Attaching: the files and directories a prompt mentions, as blocks of the text sent to the model.

Every `@path` of a prompt that names a file or a directory inside the workdir adds a labelled
block to the text sent to the model. The blocks come *before* the prompt, as Anthropic advises
for long documents (the question reads best last):

```
<attached-files>
<file path="src/app.py">
…the file's text…
</file>
<directory path="src/" entries="3">
app.py
util/
util/x.py
</directory>
</attached-files>

explain @src/app.py
```

An image (PNG, JPEG, GIF or WebP, by its first bytes) attaches as an image block of the message
instead (`Attachments.images`), before its text; one over the API's limits is resized to fit
(`image_fit`), and one that is not a readable image is refused (`unsendable_images`: the prompt
is not sent, since the user asked about it). An image may also be
named by an absolute path outside the workdir: terminals paste a file dropped on them as its
path, and only the person typing can name one (the model's tools stay confined).

A path outside the workdir (`..`, an absolute path, a symlink leading out) is never read, by the
same rule as the file tools (`tools.base.confine`). Binary files, non-UTF-8 text and special files
(FIFOs, devices, sockets: never opened) are refused with a reason; a missing path stays plain text
with a notice. Text is cut at a size limit with a marker.
"""

from __future__ import annotations

import asyncio
import codecs
import html
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tui_assist.core.conversation import ImageBlock
from tui_assist.core.text import file_size, truncation_marker
from tui_assist.session.mentions.image_fit import MAX_SOURCE_BYTES, UnreadableImageError, fit_image
from tui_assist.session.mentions.listing import MAX_DEPTH, MAX_ENTRIES, git_files, walk_tree, with_parent_dirs
from tui_assist.session.mentions.syntax import find_mentions, format_mention
from tui_assist.tools.safe_io import read_at_most

MAX_FILE_CHARS = 50_000
"""Characters of one file attached at most; the rest is cut with a marker."""
MAX_TOTAL_CHARS = 200_000
"""Characters attached at most by one prompt, all files and listings together."""
MAX_DIR_ENTRIES = 500
"""Entries of a directory listing at most (the shallowest are kept)."""
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""File names that attach as images."""
_BINARY_PROBE = 8192
"""A NUL byte in this many first bytes marks a file as binary (as `tools/files.py` does)."""

RefusalReason = Literal["missing", "outside", "binary", "not_text", "special", "unreadable", "limit"]


@dataclass(frozen=True, slots=True)
class Attached:
    """A file or directory whose content goes to the model."""

    path: str
    """Relative to the workdir, as labelled in the block; a directory ends with `/`."""
    kind: Literal["file", "directory", "image"]
    chars: int
    """Characters of content attached (a file's text, or a listing), marker not counted; for an
    image, its size in bytes."""
    omitted: int
    """Characters (or, past what was read of a big file, bytes) left out; 0 when whole."""
    entries: int = 0
    """For a directory, how many entries the listing shows."""
    resized: str = ""
    """For an image over the API's limits, what was sent instead (`1,568×1,045 JPEG, 1.2 MB`)."""

    def describe(self) -> str:
        """One line for the pane or stderr: `attached src/app.py (1,204 characters)`."""
        if self.kind == "image" and self.resized:
            return (
                f"attached {self.path} (image, {file_size(self.chars)}, over the API's limits: "
                f"resized to {self.resized})"
            )
        if self.kind == "image":
            return f"attached {self.path} (image, {file_size(self.chars)})"
        if self.kind == "directory":
            what = f"listing, {self.entries} {'entry' if self.entries == 1 else 'entries'}"
        else:
            what = f"{self.chars:,} characters"
        cut = f", {self.omitted:,} more cut" if self.omitted else ""
        return f"attached {self.path} ({what}{cut})"


@dataclass(frozen=True, slots=True)
class Refused:
    """A mention that attached nothing, and why."""

    path: str
    """The path as written after `@`."""
    reason: RefusalReason
    detail: str
    """Why, in words for the user."""
    image: bool = False
    """It names an image: the prompt, which asks about it, must not be sent without it."""

    def describe(self) -> str:
        """One line for the pane or stderr: `not attached: @x.bin: a binary file`."""
        return f"not attached: {format_mention(self.path)}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Attachments:
    """What `expand_mentions` made of a prompt."""

    prompt: str
    """The prompt as typed (it keeps its `@path` mentions)."""
    text: str
    """What to send as the user message: the attached blocks, then the prompt."""
    attached: tuple[Attached, ...]
    refused: tuple[Refused, ...]
    images: tuple[ImageBlock, ...] = ()
    """The images attached, in mention order: they go in the message before `text`."""

    def notices(self) -> list[str]:
        """One line per mention, attached ones first: for the pane, or stderr in headless runs."""
        return [item.describe() for item in self.attached] + [item.describe() for item in self.refused]

    def warnings(self) -> list[str]:
        """The lines the turn warns with: the images resized to fit, then the mentions refused."""
        resized = [item.describe() for item in self.attached if item.resized]
        return resized + [item.describe() for item in self.refused]

    def unsendable_images(self) -> list[Refused]:
        """The images mentioned that cannot be sent (not readable images, too big to read)."""
        return [item for item in self.refused if item.image]


class UnsendableImageError(Exception):
    """A prompt names an image that cannot be sent: no request goes out (the message says why)."""


async def attach_prompt(prompt: str, workdir: Path) -> Attachments | None:
    """The files the prompt's `@path` mentions attach (read in a thread); None without mentions.

    Only paths inside `workdir` are read; an image over the API's limits is resized to fit.

    Raises:
        UnsendableImageError: when a mentioned image cannot be sent (not a readable image): the
            prompt asks about it, so it is not sent without it.
    """
    if not find_mentions(prompt):
        return None
    attachments = await asyncio.to_thread(expand_mentions, prompt, workdir)
    if unsendable := attachments.unsendable_images():
        why = "; ".join(f"{format_mention(item.path)}: {item.detail}" for item in unsendable)
        raise UnsendableImageError(f"{why} (the prompt was not sent)")
    return attachments


def expand_mentions(
    prompt: str,
    workdir: Path,
    *,
    max_file_chars: int = MAX_FILE_CHARS,
    max_total_chars: int = MAX_TOTAL_CHARS,
    max_dir_entries: int = MAX_DIR_ENTRIES,
) -> Attachments:
    """Attach the files and directories a prompt mentions (blocking I/O: use a thread in the TUI).

    Each path is attached once, however often and however spelled it is mentioned.

    Args:
        prompt: The prompt as typed.
        workdir: Only paths that resolve inside it are read.
        max_file_chars: A file's text is cut after this many characters, with a marker.
        max_total_chars: All attachments together stay within this many characters; a mention
            past it is refused.
        max_dir_entries: A directory listing shows at most this many entries.

    Returns:
        The text to send, and what was attached or refused.
    """
    # Imported here: `tools.base` loads pydantic, and the TUI imports this module before its
    # first frame (for completion) without needing confinement until a prompt is sent.
    from tui_assist.tools.base import PathOutsideWorkdir, confine

    root = workdir.resolve()
    blocks: list[str] = []
    attached: list[Attached] = []
    refused: list[Refused] = []
    images: list[ImageBlock] = []
    seen: set[Path] = set()
    written: set[str] = set()
    budget = max_total_chars
    for mention in find_mentions(prompt):
        if mention.path in written:
            continue
        written.add(mention.path)
        try:
            resolved = confine(root, mention.path)
        except PathOutsideWorkdir:
            resolved = _outside_image(mention.path)
            if resolved is None:
                refused.append(Refused(mention.path, "outside", "outside the working directory"))
                continue
        if resolved in seen:
            continue
        seen.add(resolved)
        try:
            info = os.stat(resolved)
        except (FileNotFoundError, NotADirectoryError):
            refused.append(Refused(mention.path, "missing", "no such file or directory"))
            continue
        except OSError as error:
            refused.append(Refused(mention.path, "unreadable", error.strerror or str(error)))
            continue
        label = _label(root, mention.path, resolved, stat.S_ISDIR(info.st_mode))
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            refused.append(Refused(mention.path, "special", f"not a regular file ({_file_type(info)})"))
            continue
        if stat.S_ISREG(info.st_mode) and resolved.suffix.lower() in IMAGE_SUFFIXES:
            image = _image(resolved, label, info.st_size)
            if isinstance(image, Refused):
                refused.append(Refused(mention.path, image.reason, image.detail, image=True))
            else:
                images.append(image[0])
                attached.append(image[1])
            continue
        if budget <= 0:
            refused.append(
                Refused(mention.path, "limit", f"the prompt's {max_total_chars:,}-character attachment limit")
            )
            continue
        if stat.S_ISDIR(info.st_mode):
            block, item = _directory_block(resolved, label, max_dir_entries, budget)
        else:
            outcome = _file_block(resolved, label, min(max_file_chars, budget))
            if isinstance(outcome, Refused):
                refused.append(Refused(mention.path, outcome.reason, outcome.detail))
                continue
            block, item = outcome
        budget -= item.chars
        blocks.append(block)
        attached.append(item)
    text = prompt
    if blocks:
        text = "<attached-files>\n" + "\n".join(blocks) + "\n</attached-files>\n\n" + prompt
    return Attachments(prompt, text, tuple(attached), tuple(refused), tuple(images))


def _outside_image(written: str) -> Path | None:
    """An absolute (or `~`) path naming an image, resolved; None for anything else."""
    path = Path(written).expanduser()
    if not path.is_absolute() or path.suffix.lower() not in IMAGE_SUFFIXES:
        return None
    return path.resolve()


def image_chips(prompt: str, workdir: Path) -> list[tuple[str, int]]:
    """The images a prompt mentions that exist, as `(file name, bytes)`, for the prompt's chips.

    Only stats the files (cheap enough for every edit); `expand_mentions` reads them on send.
    """
    chips: list[tuple[str, int]] = []
    for mention in find_mentions(prompt):
        path = Path(mention.path).expanduser()
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        try:
            info = (path if path.is_absolute() else workdir / path).stat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            chips.append((path.name, info.st_size))
    return chips


_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(head: bytes) -> str | None:
    """The media type of an image by its first bytes (PNG, JPEG, GIF, WebP), else None."""
    for magic, media_type in _IMAGE_MAGIC:
        if head.startswith(magic):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _image(path: Path, label: str, size: int) -> tuple[ImageBlock, Attached] | Refused:
    """The image at `path` as a block, resized to fit when over the API's limits, or why not."""
    import base64

    if size > MAX_SOURCE_BYTES:
        return Refused(label, "limit", f"an image of {file_size(size)}, too big to read")
    try:
        data = path.read_bytes()
    except OSError as error:
        return Refused(label, "unreadable", error.strerror or str(error))
    if image_media_type(data[:16]) is None:  # no need to load Pillow for a text file named .png
        return Refused(label, "binary", "not a PNG, JPEG, GIF or WebP image")
    try:
        fitted = fit_image(data)
    except UnreadableImageError as error:
        return Refused(label, "binary", str(error))
    resized = ""
    if fitted.resized:
        kind = fitted.media_type.removeprefix("image/").upper()
        resized = f"{fitted.width:,}×{fitted.height:,} {kind}, {file_size(len(fitted.data))}"
    block = ImageBlock(fitted.media_type, base64.b64encode(fitted.data).decode("ascii"), Path(label).name)
    return block, Attached(label, "image", len(data), 0, resized=resized)


_DOCUMENTS_OPEN = "<attached-documents>\n"
_DOCUMENTS_CLOSE = "\n</attached-documents>"


def attach_documents(prompt: str, documents: Sequence[tuple[str, str]]) -> str:
    """`prompt` with texts that came along with it attached before it, as mentioned files are.

    For text that is not a file of the workdir: what was piped on stdin, a buffer an editor sent.

    Args:
        prompt: What the user asked.
        documents: `(source, text)` pairs; `source` labels the block (`stdin`, a URI).
    """
    if not documents:
        return prompt
    blocks = [
        f'<document source="{html.escape(source)}">\n{text.removesuffix(chr(10))}\n</document>'
        for source, text in documents
    ]
    return _DOCUMENTS_OPEN + "\n".join(blocks) + _DOCUMENTS_CLOSE + "\n\n" + prompt


def without_documents(text: str) -> str:
    """`text` without the documents `attach_documents` put before it (what the user asked)."""
    if text.startswith(_DOCUMENTS_OPEN):
        end = text.find(_DOCUMENTS_CLOSE)
        if end >= 0:
            return text[end + len(_DOCUMENTS_CLOSE) :].lstrip("\n")
    return text


def _label(root: Path, written: str, resolved: Path, is_dir: bool) -> str:
    """The path as the user wrote it, tidied (`./a//b` reads `a/b`); the real one if it left the root."""
    lexical = os.path.normpath(os.path.join(root, written))
    relative = os.path.relpath(lexical, root) if Path(lexical).is_relative_to(root) else None
    if relative is None or relative.startswith(".."):
        relative = os.path.relpath(resolved, root)
    relative = Path(relative).as_posix()
    if is_dir:
        return "./" if relative == "." else relative + "/"
    return relative


def _file_type(info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _file_block(path: Path, label: str, limit: int) -> tuple[str, Attached] | Refused:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        return Refused(label, "unreadable", error.strerror or str(error))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):  # replaced since it was checked
            return Refused(label, "special", f"not a regular file ({_file_type(info)})")
        # UTF-8 takes at most 4 bytes a character: this many bytes hold `limit` characters.
        wanted = min(info.st_size, 4 * limit + 4)
        data = read_at_most(descriptor, wanted)
    except OSError as error:
        return Refused(label, "unreadable", error.strerror or str(error))
    finally:
        os.close(descriptor)
    if b"\x00" in data[:_BINARY_PROBE]:
        return Refused(label, "binary", "a binary file")
    whole = len(data) >= info.st_size
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
    except UnicodeDecodeError as error:
        return Refused(label, "not_text", f"not UTF-8 text ({error.reason} at byte {error.start})")
    unread = max(info.st_size - len(data), 0)
    kept = text
    if len(text) > limit or unread:
        cut = min(len(text), limit)
        line_end = text.rfind("\n", 0, cut) + 1
        if line_end > cut // 2:  # end on a whole line unless that loses too much
            cut = line_end
        kept = text[:cut]
    omitted = len(text) - len(kept) + unread
    body = kept + truncation_marker(omitted).lstrip("\n") if omitted else kept
    if body and not body.endswith("\n"):
        body += "\n"
    block = f'<file path="{html.escape(label)}">\n{body}</file>'
    return block, Attached(label, "file", len(kept), omitted)


def _directory_block(path: Path, label: str, max_entries: int, budget: int) -> tuple[str, Attached]:
    files = git_files(path)
    if files:  # git lists every level: take them all, then keep the shallowest
        paths, more = with_parent_dirs(files, MAX_ENTRIES)
    else:  # the walk is breadth first: its first entries are the shallowest
        paths, more = walk_tree(path, max_entries + 1, MAX_DEPTH)
    paths.sort(key=lambda p: (p.count("/", 0, len(p) - 1), p))
    more = more or len(paths) > max_entries
    shown = sorted(paths[:max_entries])  # in tree order
    text = "\n".join(shown)
    if len(text) > budget:
        text = text[: max(text.rfind("\n", 0, budget), 0)]
        shown = text.split("\n") if text else []
        more = True
    note = "\n[... more entries not listed ...]" if more else ""
    body = (text or "(empty)") + note
    block = f'<directory path="{html.escape(label)}" entries="{len(shown)}">\n{body}\n</directory>'
    return block, Attached(label, "directory", len(text), 0, entries=len(shown))
