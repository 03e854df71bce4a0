"""`/export`'s file: written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_assist.session.export import write_export


def test_an_export_makes_its_folders_and_is_on_disk_before_it_has_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "notes" / "deep" / "chat.md"
    synced: list[bool] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(path.exists())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_export(path, "# chat\n\nü\n")
    assert synced == [False]  # flushed to disk while still under a temporary name
    assert path.read_text(encoding="utf-8") == "# chat\n\nü\n"


def test_a_failed_export_leaves_the_file_that_was_there_and_no_partial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.md"
    path.write_text("the earlier export\n", encoding="utf-8")

    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space left"):
        write_export(path, "the new one\n" * 1000)
    assert path.read_text(encoding="utf-8") == "the earlier export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["chat.md"]
