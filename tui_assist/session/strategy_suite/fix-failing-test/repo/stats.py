"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty sequence."""
    return sum(values) / (len(values) - 1)


def median(values):
    """The middle value (the mean of the two middle values for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
