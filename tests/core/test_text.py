"""Text helpers for what users read."""

from __future__ import annotations

import pytest

from tui_assist.core.text import base64_size, clip, duration


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.0, "0µs"),
        (0.0000423, "42µs"),
        (0.0009996, "1ms"),
        (0.0123, "12ms"),
        (0.9994, "999ms"),
        (0.9996, "1.0s"),
        (59.94, "59.9s"),
        (59.96, "1m00s"),
        (125.4, "2m05s"),
    ],
)
def test_durations_read_at_a_glance(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_clip_folds_whitespace_and_marks_the_cut() -> None:
    assert clip("a  b\n c", 10) == "a b c"
    assert clip("abcdefghijkl", 5) == "abcd…"


@pytest.mark.parametrize("raw", [b"", b"a", b"ab", b"abc", b"abcd", bytes(range(256)) * 3])
def test_base64_size_is_the_decoded_length_padded_or_not(raw: bytes) -> None:
    import base64

    encoded = base64.b64encode(raw).decode("ascii")
    assert base64_size(encoded) == len(raw)
    assert base64_size(encoded.rstrip("=")) == len(raw)
