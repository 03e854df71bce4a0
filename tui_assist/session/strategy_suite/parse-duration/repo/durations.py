"""Durations written the way people write them."""


def parse_duration(text):
    """Seconds in a duration such as "1h30m", "45s", "2h" or "1h5s".

    Units are h, m and s, each at most once, in that order. Raise ValueError for anything else
    (an empty string, "abc", "5x", "1h abc").
    """
    raise NotImplementedError
