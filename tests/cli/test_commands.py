"""The non-chat commands through the real argument parser, in process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui_assist.cli import main
from tui_assist.flows.grounded import SAMPLE_CORPUS

CORPUS = SAMPLE_CORPUS


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_bench_docs_json_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "bench", "docs", "--json")
    assert code == 0
    rows = {r["policy"]: r for r in json.loads(out)}
    assert list(rows) == ["keyword_route", "workflow", "scripted_loop", "adaptive_loop"]
    assert rows["workflow"]["passed"] == rows["scripted_loop"]["passed"] == rows["workflow"]["total"]
    assert rows["keyword_route"]["passed"] < rows["workflow"]["passed"]


def test_bench_helpdesk_router_misses_ticket_12(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "bench", "helpdesk", "--json")
    assert code == 0
    router_12 = next(r for r in json.loads(out) if r["pattern"] == "router" and r["ticket"] == 12)
    assert router_12["correct"] is False


def test_ask_then_history_and_stats(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([[{"type": "text", "text": "a stored answer"}]]))
    flags = ["--provider", "scripted", "--script", str(script), "--workdir", str(tmp_path)]
    code, out = run(capsys, "ask", "--json", *flags, "a stored question")
    assert code == 0
    conversation_id = json.loads(out)["conversation_id"]

    code, out = run(capsys, "history", "list", "--json")
    assert code == 0 and conversation_id in out
    code, out = run(capsys, "history", "search", "stored", "--json")
    assert code == 0 and "a stored question" in out
    code, out = run(capsys, "history", "export", conversation_id, "--format", "md")
    assert code == 0 and "a stored answer" in out
    code, out = run(capsys, "stats", "--json")
    assert code == 0 and "answered" in out
    assert run(capsys, "history", "show", "no-such-id")[0] == 2


def test_flow_grounded_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(
        capsys,
        "flow",
        "grounded",
        "--corpus",
        str(CORPUS),
        "--json",
        "How much can I spend on a hotel per night?",
    )
    assert code == 0
    data = json.loads(out)
    assert data["outcome"] == "answered" and data["citations"]
    assert "hotel" not in json.dumps(data["audit"]).lower()  # the audit line never holds the question


def test_unknown_provider_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["ask", "--provider", "nope", "--workdir", str(tmp_path), "hi"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown provider" in err


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """`tui-assist ... | head` closes the pipe before the output is written."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tui_assist", "bench", "helpdesk"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    errors = child.stderr.read().decode()
    assert child.wait(timeout=60) == 1
    assert "Traceback" not in errors and "BrokenPipeError" not in errors
