"""Images in a prompt: `@shot.png` attaches an image block (sent to Anthropic as an image source,
to OpenAI-compatible servers as a data URL), stored and resumed; too big or not an image: one line."""

from __future__ import annotations

import base64
import io
import random
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.sdk_session import loaded_session, sdk_workdir
from tui_assist.core.conversation import ImageBlock, Message
from tui_assist.core.model import ModelRequest
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.text import file_size
from tui_assist.providers.openai_compat import build_chat_params
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource
from tui_assist.session.mentions import expand_mentions, image_chips
from tui_assist.session.mentions.image_fit import MAX_IMAGE_BYTES, MAX_SENT_BASE64
from tui_assist.ui.widgets.prompt import pasted_image


def png_bytes() -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\0\0\0"))
        + chunk(b"IEND", b"")
    )


def noise_png(width: int, height: int) -> bytes:
    """A real PNG of random pixels: noise hardly compresses, so it is about `3 * width * height` bytes."""
    image = Image.frombytes("RGB", (width, height), random.Random(width).randbytes(width * height * 3))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def test_an_image_mention_attaches_an_image_block(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png_bytes())
    (tmp_path / "fake.png").write_text("not an image")
    (tmp_path / "broken.gif").write_bytes(b"GIF89a" + b"\0" * 100)
    outside = tmp_path.parent / f"{tmp_path.name}-dropped.webp"
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(buffer, "WEBP")
    outside.write_bytes(buffer.getvalue())

    result = expand_mentions(f'what is @shot.png and @fake.png and @broken.gif and @"{outside}"', tmp_path)

    assert [i.media_type for i in result.images] == ["image/png", "image/webp"]
    assert base64.b64decode(result.images[0].data) == png_bytes()
    assert result.images[0].name == "shot.png"
    assert "<attached-files>" not in result.text  # an image is a block of its own, not text
    lines = result.notices()
    assert lines[0] == f"attached shot.png (image, {len(png_bytes())} B)"
    assert "not attached: @fake.png: not a PNG, JPEG, GIF or WebP image" in lines
    assert "not attached: @broken.gif: not a readable image" in lines
    assert [r.path for r in result.unsendable_images()] == ["fake.png", "broken.gif"]
    assert result.warnings() == lines[2:]  # nothing resized: the refusals only
    assert image_chips("look @shot.png @missing.png", tmp_path) == [("shot.png", len(png_bytes()))]
    outside.unlink()


def test_an_image_over_the_api_limits_is_resized_to_fit(tmp_path: Path) -> None:
    big = noise_png(1700, 1300)  # 6.6 MB
    (tmp_path / "big.png").write_bytes(big)
    (tmp_path / "tall.png").write_bytes(noise_png(20, 9000))  # small, but a side over 8,000 px

    result = expand_mentions("what is in @big.png and @tall.png", tmp_path)

    assert result.refused == ()
    sizes = []
    for block in result.images:
        data = base64.b64decode(block.data)
        assert len(data) <= MAX_IMAGE_BYTES and len(block.data) <= MAX_SENT_BASE64
        with Image.open(io.BytesIO(data)) as sent:
            sizes.append(sent.size)
            assert str(sent.format).lower() == block.media_type.removeprefix("image/")
    assert sizes == [(1568, 1199), (3, 1568)]
    # One line each says so (a warning, in headless runs).
    big_line, tall_line = result.warnings()
    assert big_line.startswith(
        f"attached big.png (image, {file_size(len(big))}, over the API's limits: resized to 1,568×1,199 "
    )
    assert tall_line.startswith("attached tall.png (image, ") and "resized to 3×1,568 PNG" in tall_line
    assert image_chips("@big.png", tmp_path) == [("big.png", len(big))]


def test_a_pasted_image_path_is_recognised(tmp_path: Path) -> None:
    shot = tmp_path / "my shot.png"
    shot.write_bytes(png_bytes())
    assert pasted_image(f"'{shot}'") == shot
    assert pasted_image(str(shot).replace(" ", "\\ ")) == shot
    assert pasted_image(f"file://{shot}\n") == shot
    assert pasted_image("some text") is None
    assert pasted_image(str(tmp_path / "missing.png")) is None


def test_the_openai_compatible_provider_sends_a_data_url() -> None:
    image = ImageBlock("image/png", "QUJD", "shot.png")
    params = build_chat_params(
        ModelRequest(system="", messages=[Message.user("what is it?", [image])]), "llava"
    )
    assert params["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is it?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
            ],
        }
    ]


@pytest.fixture
def work(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = sdk_workdir(tmp_path, fake, monkeypatch, 'sandbox = "off"\ncheckpoints = false\n')
    (path / "shot.png").write_bytes(png_bytes())
    return path


@pytest.fixture
async def session(work: Path, tmp_path: Path) -> AsyncIterator[ChatSession]:
    async with loaded_session(work, tmp_path) as chat:
        yield chat


async def test_an_image_goes_to_the_api_as_an_image_block_and_comes_back_on_resume(
    fake: FakeAnthropic, session: ChatSession, tmp_path: Path
) -> None:
    fake.add(Reply("A red pixel."), Reply("Still a red pixel."))

    outcome = await session.run_turn("what is in @shot.png ?", RecordingObserver())

    assert outcome.result.outcome == "answered", outcome.result.error
    sent = fake.requests[-1].body["messages"][0]["content"]
    assert sent[0]["type"] == "image"
    assert sent[0]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(png_bytes()).decode(),
    }
    assert sent[-1]["type"] == "text" and sent[-1]["text"].endswith("what is in @shot.png ?")
    assert "name" not in sent[0]

    assert session.conversation_id is not None
    resumed = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data")}))
    await resumed.load()
    try:
        turns = await resumed.resume(session.conversation_id)
        assert turns[-1].images == [("shot.png", len(png_bytes()))]
        assert resumed.conversation.messages[0].images[0].media_type == "image/png"
        # The next turn sends the image again, as part of the history.
        await resumed.run_turn("and now?", RecordingObserver())
        assert fake.requests[-1].body["messages"][0]["content"][0]["type"] == "image"
    finally:
        await resumed.aclose()


def test_an_image_counts_as_an_image_in_the_context_estimate() -> None:
    from tui_assist.core.compaction import IMAGE_TOKENS, message_tokens

    big = ImageBlock("image/png", "A" * 4_000_000, "shot.png")
    plain = message_tokens([Message.user("hi")])
    assert message_tokens([Message.user("hi", [big])]) == plain + IMAGE_TOKENS
