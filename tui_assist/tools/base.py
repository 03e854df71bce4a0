"""Helpers every tool shares: workdir confinement, output truncation, input validation.

Confinement is checked on the *resolved* path (symlinks followed, `..` collapsed), because the
string a model sends says nothing about where a path really leads: `link/x` may sit inside the
workdir and still point at `/etc`. A path that does not exist yet resolves as far as it can, which
is what `create` needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tui_assist.core.tooling import ToolInputError

ModelT = TypeVar("ModelT", bound=BaseModel)


class PathOutsideWorkdir(ValueError):
    """A path resolves outside the working directory (or is not a usable path at all)."""


def confine(workdir: Path, path: str | Path) -> Path:
    """Resolve `path` against `workdir` and refuse anything that lands outside it.

    Relative paths resolve against the workdir; absolute paths are accepted only when they resolve
    inside it. Symlinks are followed before the check, so a link inside the workdir that points
    outside is refused.

    Args:
        workdir: The anchored working directory.
        path: The path as the model gave it.

    Returns:
        The resolved absolute path, inside the resolved workdir.

    Raises:
        PathOutsideWorkdir: if the path is empty, malformed, or resolves outside the workdir.
    """
    if isinstance(path, str) and not path.strip():
        raise PathOutsideWorkdir("path must not be empty")
    root = workdir.resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError, ValueError) as error:  # symlink loops, embedded NUL bytes
        raise PathOutsideWorkdir(f"cannot resolve path {str(path)!r}: {error}") from error
    if not resolved.is_relative_to(root):
        raise PathOutsideWorkdir(
            f"path {str(path)!r} resolves to {resolved}, outside the working directory {root}; "
            "only paths inside the working directory are allowed"
        )
    return resolved


def validate_input(model: type[ModelT], raw: dict[str, Any], tool: str) -> ModelT:
    """Validate a tool's raw input with a pydantic model, with an error the model can act on.

    Args:
        model: The pydantic model for the input.
        raw: The input the model sent.
        tool: The tool's name, for the message.

    Returns:
        The validated input.

    Raises:
        ToolInputError: listing every problem, one per line.
    """
    if not isinstance(raw, dict):  # pyright: ignore[reportUnnecessaryIsInstance]  # untrusted
        raise ToolInputError(f"invalid input for {tool}: expected a JSON object")
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ToolInputError(describe_validation_error(error, tool)) from error


def describe_validation_error(error: ValidationError, tool: str) -> str:
    """Turn a pydantic error into short lines such as `insert_line: Input should be a valid integer`.

    Args:
        error: The validation error.
        tool: The tool's name, for the message.

    Returns:
        The readable message.
    """
    problems: list[str] = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"])
        message = item["msg"]
        if item["type"] == "missing":
            message = "is required"
        message = message.removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return f"invalid input for {tool}: " + "; ".join(problems)
