"""Roman numerals."""


def to_roman(number):
    """The Roman numeral for 1..3999, in subtractive form (4 is IV, 1994 is MCMXCIV).

    Raises ValueError outside 1..3999.
    """
    raise NotImplementedError
