"""Images the Messages API takes: sent as they are when within its limits, else resized to fit.

The API refuses an image whose base64 text is over 5 MiB or that has a side over 8,000 px, and
scales down anything with a long side over 1,568 px anyway. So an image over a limit is scaled to
that long side and re-encoded (PNG first when it is not a JPEG, then JPEG at falling qualities,
then smaller) until it fits, as peers do with a big screenshot, rather than left out.

Every image is opened with Pillow before it is sent, so a file that is not a readable image is
refused here and never costs a request. Pillow is imported by the first image only: start-up and
prompts without images never load it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

MAX_SENT_BASE64 = 5 * 1024 * 1024
"""The Messages API's limit for one image, on its base64 text."""
MAX_IMAGE_BYTES = MAX_SENT_BASE64 // 4 * 3
"""The largest image file sent as it is (its base64 text fits `MAX_SENT_BASE64`)."""
MAX_IMAGE_SIDE = 8000
"""The longest side, in pixels, the API takes."""
RESIZED_LONG_SIDE = 1568
"""The long side a resized image gets: the largest the model sees without scaling it again."""
MAX_SOURCE_BYTES = 100_000_000
"""A bigger file is refused without being read (no screenshot is that big)."""

_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_JPEG_QUALITIES = (85, 70, 50)


class UnreadableImageError(ValueError):
    """The data is not an image Pillow can read in a format the API takes; the message says why."""


@dataclass(frozen=True, slots=True)
class FittedImage:
    """An image as it is sent: within the API's limits."""

    media_type: str
    data: bytes
    width: int
    height: int
    original: tuple[int, int, int] | None = None
    """`(width, height, bytes)` of the image before it was resized; None when sent as it was."""

    @property
    def resized(self) -> bool:
        """Whether it was scaled or re-encoded to fit."""
        return self.original is not None


def fits(size: int, width: int = 0, height: int = 0) -> bool:
    """Whether an image of `size` bytes (and that many pixels, when known) is sent as it is."""
    return size <= MAX_IMAGE_BYTES and max(width, height) <= MAX_IMAGE_SIDE


def fit_image(data: bytes) -> FittedImage:
    """`data` as the API takes it: itself when within the limits, else resized to fit (CPU-bound).

    Raises:
        UnreadableImageError: when it is not a PNG, JPEG, GIF or WebP image Pillow can read, or
            it has too many pixels to decode safely.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            media_type = _MEDIA_TYPES.get(image.format or "")
            if media_type is None:
                raise UnreadableImageError(f"a {image.format or 'non'} image, not PNG, JPEG, GIF or WebP")
            width, height = image.size
            if fits(len(data), width, height):
                image.verify()  # its data, not only its header, must be readable
                return FittedImage(media_type, data, width, height)
            image.load()
            return _resized(image, (width, height, len(data)))
    except UnreadableImageError:
        raise
    except Image.DecompressionBombError as error:
        raise UnreadableImageError(f"too many pixels to read safely ({error})") from error
    except UnidentifiedImageError as error:
        raise UnreadableImageError("not a readable image") from error
    except (OSError, SyntaxError, ValueError) as error:
        # Pillow reports a damaged file as any of these (SyntaxError for a bad PNG chunk).
        raise UnreadableImageError(f"a damaged image ({error})") from error


def _resized(image: Image, original: tuple[int, int, int]) -> FittedImage:
    """`image` scaled to `RESIZED_LONG_SIDE` and re-encoded, smaller still until it fits."""
    from PIL import Image as PILImage
    from PIL import ImageOps

    source_format = image.format
    upright = ImageOps.exif_transpose(image)  # a photo's rotation lives in its EXIF data
    long_side = min(RESIZED_LONG_SIDE, max(upright.size))
    while True:
        scale = long_side / max(upright.size)
        size = (max(1, round(upright.width * scale)), max(1, round(upright.height * scale)))
        scaled = upright if size == upright.size else upright.resize(size, PILImage.Resampling.LANCZOS)
        for media_type, encoded in _encodings(scaled, lossless_first=source_format != "JPEG"):
            if len(encoded) <= MAX_IMAGE_BYTES:
                return FittedImage(media_type, encoded, size[0], size[1], original)
        if long_side <= 64:
            raise UnreadableImageError("it cannot be made small enough to send")
        long_side //= 2


def _encodings(image: Image, *, lossless_first: bool) -> Iterator[tuple[str, bytes]]:
    """`(media type, bytes)` of `image` encoded ever smaller: PNG (when lossless first), then JPEG."""
    if lossless_first:
        buffer = io.BytesIO()
        image.save(buffer, "PNG", optimize=False)
        yield "image/png", buffer.getvalue()
    flat = _flattened(image)
    for quality in _JPEG_QUALITIES:
        buffer = io.BytesIO()
        flat.save(buffer, "JPEG", quality=quality)
        yield "image/jpeg", buffer.getvalue()


def _flattened(image: Image) -> Image:
    """`image` as RGB for JPEG: transparency laid over white."""
    from PIL import Image as PILImage

    if image.mode == "RGB":
        return image
    if "A" in image.getbands() or image.mode == "P" and "transparency" in image.info:
        rgba = image.convert("RGBA")
        background = PILImage.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")
