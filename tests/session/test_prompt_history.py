"""The prompt history store and its browser, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_assist.session.prompt_history import MAX_ENTRY_CHARS, HistoryBrowser, PromptHistory


def test_prompts_survive_a_restart_in_order(tmp_path: Path) -> None:
    history = PromptHistory.in_data_dir(tmp_path / "data")
    for prompt in ("first", "second\nwith a second line", "third"):
        assert history.add(prompt)
    again = PromptHistory.in_data_dir(tmp_path / "data")
    assert again.entries == ["first", "second\nwith a second line", "third"]


def test_consecutive_duplicates_and_blank_prompts_are_dropped(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    added = [history.add(p) for p in ("a", "a", "b", "a", "  ", "x" * (MAX_ENTRY_CHARS + 1))]
    assert added == [True, False, True, True, False, False]
    assert PromptHistory(tmp_path / "h.jsonl").entries == ["a", "b", "a"]


def test_the_file_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path, max_entries=5)
    for i in range(23):
        history.add(f"prompt {i}")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 10
    assert history.entries == [f"prompt {i}" for i in range(18, 23)]
    assert PromptHistory(path, max_entries=5).entries == history.entries


def test_two_instances_share_one_history(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    one, two = PromptHistory(path), PromptHistory(path)
    one.add("from one")
    two.add("from two")
    browser = HistoryBrowser(one)
    assert browser.previous("") == "from two"
    assert browser.previous("") == "from one"


def test_a_damaged_line_is_skipped_and_an_unreadable_file_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps("good") + "\n{not json\n" + json.dumps(42) + "\n", encoding="utf-8")
    assert PromptHistory(path).entries == ["good"]
    folder = tmp_path / "a-folder"
    folder.mkdir()
    history = PromptHistory(folder)  # a folder where the file should be: read and write fail
    assert history.entries == []
    assert history.add("kept in memory")
    assert history.entries == ["kept in memory"]


def test_browsing_keeps_the_draft_and_returns_to_it(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    for prompt in ("one", "two", "three"):
        history.add(prompt)
    browser = HistoryBrowser(history)
    assert browser.next() is None  # not browsing: down does nothing
    assert [browser.previous("half-typed"), browser.previous("x"), browser.previous("x")] == [
        "three",
        "two",
        "one",
    ]
    assert browser.previous("x") is None  # the oldest
    assert [browser.next(), browser.next()] == ["two", "three"]
    assert browser.next() == "half-typed"
    assert not browser.browsing
    assert browser.previous("") == "three"
    browser.reset()
    assert not browser.browsing


def test_cutting_the_file_back_writes_it_whole_to_disk_before_replacing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui_assist.tools.safe_io as safe_io

    path = tmp_path / "h.jsonl"
    history = PromptHistory(path, max_entries=2)
    for prompt in ("a", "b", "c", "d"):
        history.add(prompt)
    before = path.read_text(encoding="utf-8")
    synced: list[str] = []

    def failing_fsync(fd: int) -> None:
        synced.append(path.read_text(encoding="utf-8"))  # the old file, still whole
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(safe_io.os, "fsync", failing_fsync)
    history.add("e")  # the fifth line: the file is cut back to the newest two
    assert synced == [before]
    assert path.read_text(encoding="utf-8") == before  # a failed write leaves the old file
    assert [p.name for p in tmp_path.iterdir()] == ["h.jsonl"]  # and no partial file
    monkeypatch.undo()
    history.add("f")
    assert PromptHistory(path, max_entries=2).entries == ["e", "f"]
