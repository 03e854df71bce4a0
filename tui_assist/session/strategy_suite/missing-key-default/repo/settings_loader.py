"""Typed access to a settings dict."""


def get(settings, key, default=None):
    """The value at `key`, or `default` when the key is missing."""
    return settings[key]


def get_int(settings, key, default=0):
    """`get`, as an int."""
    return int(get(settings, key, default))
