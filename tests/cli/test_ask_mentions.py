"""`tui-assist ask "explain @path"`: the mentioned file goes to the model, headless too."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
from pathlib import Path

from PIL import Image

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply
from tui_assist.session.mentions.image_fit import MAX_IMAGE_BYTES


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


def test_ask_attaches_an_image_and_resizes_a_big_one_with_one_warning(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    from tests.session.test_images import noise_png, png_bytes

    work = tmp_path / "work"
    work.mkdir()
    (work / "shot.png").write_bytes(png_bytes())
    big = noise_png(1500, 1400)  # a 6.3 MB screenshot
    (work / "big.png").write_bytes(big)
    fake.add(Reply("A pixel and noise."))
    proc = ask("--json", "what is @shot.png and @big.png?", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    # One line says so: in `warnings`, and as a warning on stderr.
    [warning] = [line for line in json.loads(proc.stdout)["warnings"] if line.startswith("attached")]
    assert warning.startswith(
        "attached big.png (image, 6.3 MB, over the API's limits: resized to 1,500×1,400 "
    )
    assert f"tui-assist: ask: warning: {warning}" in proc.stderr.splitlines()
    content = fake.requests[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "image", "text"]
    sent = base64.b64decode(content[1]["source"]["data"])
    assert len(sent) <= MAX_IMAGE_BYTES
    with Image.open(io.BytesIO(sent)) as image:
        assert max(image.size) <= 1568
        assert f"image/{str(image.format).lower()}" == content[1]["source"]["media_type"]


def test_ask_refuses_a_file_that_is_not_an_image_with_one_line_and_no_request(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "fake.png").write_text("not an image at all")
    fake.add(Reply("never sent"))
    proc = ask("--json", "what is in @fake.png?", fake=fake, cwd=work)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "tui-assist: ask: @fake.png: not a PNG, JPEG, GIF or WebP image (the prompt was not sent)"
    ]
    assert [r for r in fake.requests if r.path == "/v1/messages"] == []
