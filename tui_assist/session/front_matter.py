"""YAML front matter of Markdown files: Claude Code's agents, commands and skills.

The front matter is the YAML between a first line `---` and the next line `---`; it is read with
a real YAML parser (`yaml.safe_load`), so lists, quoting and block scalars (`description: >-`)
mean what they mean in YAML, and never reaches the model: only the body does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_FENCE = "---"


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A Markdown file split into its front matter and its body."""

    fields: dict[str, Any] = field(default_factory=lambda: {})
    """The YAML mapping (keys as written); empty when the file has none."""
    body: str = ""
    """The text after the front matter (the whole text when there is none), stripped."""
    present: bool = False
    """Whether the file starts with front matter."""

    def text(self, key: str) -> str:
        """The field `key` as one string ("" when absent; a list is joined with `, `)."""
        value = self.fields.get(key)
        if value is None:
            return ""
        if isinstance(value, list):
            return ", ".join(str(v) for v in value if v is not None)
        return str(value).strip()

    def names(self, key: str) -> list[str] | None:
        """The field `key` as a list of names: a YAML list, or a comma-separated string.

        None when the field is absent or empty. `Bash(git add:*), Read` splits at the commas
        outside parentheses.
        """
        value = self.fields.get(key)
        if value is None or value == "" or value == []:
            return None
        items: Iterable[object] = value if isinstance(value, list) else [value]
        names: list[str] = []
        for item in items:
            names.extend(_split_names(str(item)))
        return names

    def unknown(self, known: Iterable[str]) -> list[str]:
        """The keys this program does not read, in file order."""
        wanted = set(known)
        return [key for key in self.fields if key not in wanted]


def parse_front_matter(text: str) -> FrontMatter:
    """Split `text` (a Markdown file) into front matter and body.

    Raises:
        ValueError: when the front matter is not closed, or not `key: value` lines (YAML, or
            lines whose values YAML can't read, kept as written: see `_key_by_key`).
    """
    import yaml

    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        return FrontMatter(body=text.strip())
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == _FENCE), None)
    if end is None:
        raise ValueError("its front matter is not closed (a second line `---`)")
    source = "\n".join(lines[1:end])
    try:
        data = yaml.safe_load(source) if source.strip() else {}
    except yaml.YAMLError:
        data = _key_by_key(lines[1:end])
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("its front matter is not a YAML mapping (`key: value` lines)")
    fields = {str(key): value for key, value in data.items()}
    return FrontMatter(fields, "\n".join(lines[end + 1 :]).strip(), present=True)


def _key_by_key(lines: list[str]) -> dict[str, object]:
    """Front matter that is not YAML as a whole, read a key at a time.

    Claude Code's own documentation writes `argument-hint: [message] [scope]`, which YAML rejects
    (a flow sequence followed by more text): a key whose value YAML can't read keeps its text as
    written, and the other keys (lists, block scalars) are read as YAML.

    Raises:
        ValueError: when a line is neither `key: value` nor indented under one.
    """
    import yaml

    chunks: list[list[str]] = []
    for number, line in enumerate(lines, start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t" or line.startswith("- "):
            if not chunks:
                raise ValueError(f"its front matter is not valid YAML at line {number}")
            chunks[-1].append(line)
        elif ":" in line:
            chunks.append([line])
        else:
            raise ValueError(f"its front matter is not valid YAML at line {number}: not `key: value`")
    data: dict[str, object] = {}
    for chunk in chunks:
        key, _, value = chunk[0].partition(":")
        try:
            parsed = yaml.safe_load("\n".join(chunk))
        except yaml.YAMLError:
            parsed = None
        if isinstance(parsed, dict) and len(parsed) == 1:
            data.update({str(k): v for k, v in parsed.items()})
        else:
            data[key.strip()] = " ".join([value.strip(), *(line.strip() for line in chunk[1:])]).strip()
    return data


def _split_names(text: str) -> list[str]:
    names: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            names.append("".join(current))
            current = []
        else:
            current.append(char)
    names.append("".join(current))
    return [name.strip().strip("\"'") for name in names if name.strip().strip("\"'")]
