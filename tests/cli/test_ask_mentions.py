"""`tui-assist ask "explain @path"`: the mentioned file goes to the model, headless too."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply


def test_ask_attaches_a_mentioned_file_and_refuses_one_outside_the_workdir(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("def answer():\n    return 42\n")
    (tmp_path / "secret.txt").write_text("the secret outside")
    fake.add(Reply("It returns 42."), Reply("Still 42."))

    proc = ask("--json", "explain @src/app.py, not @../secret.txt", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "It returns 42."
    assert data["warnings"] == ["not attached: @../secret.txt: outside the working directory"]
    sent = fake.requests[0].messages[-1]["content"][0]["text"]
    assert '<file path="src/app.py">' in sent and "return 42" in sent
    assert sent.endswith("explain @src/app.py, not @../secret.txt")
    assert "the secret outside" not in fake.requests[0].all_text()

    # The stored turn keeps the prompt as typed; the history sent next time keeps the file.
    proc = ask("--continue", "and now?", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "return 42" in fake.requests[1].messages[0]["content"][0]["text"]

    from tui_assist.store.db import Store

    async def stored_prompts() -> list[str]:
        store = await Store.open(Path(os.environ["TUI_ASSIST_HOME"]))
        try:
            return [turn.prompt for turn in await store.turns_page(data["conversation_id"])]
        finally:
            await store.close()

    assert asyncio.run(stored_prompts()) == ["explain @src/app.py, not @../secret.txt", "and now?"]


def test_ask_says_on_stderr_which_files_it_attached(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("remember the milk")
    fake.add(Reply("Milk."))
    proc = ask("what does @notes.md say?", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Milk."
    assert "tui-assist: ask: attached notes.md (17 characters)" in proc.stderr


def test_ask_attaches_an_image_and_refuses_a_huge_one_in_one_line(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    from tests.session.test_images import png_bytes

    work = tmp_path / "work"
    work.mkdir()
    (work / "shot.png").write_bytes(png_bytes())
    (work / "huge.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 5_100_000)
    fake.add(Reply("A pixel."))
    proc = ask("what is @shot.png and @huge.png?", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "tui-assist: ask: attached shot.png (image, 69 B)" in proc.stderr
    assert "not attached: @huge.png: an image of 5.1 MB, over the 5.0 MB limit" in proc.stderr
    content = fake.requests[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "text"]
