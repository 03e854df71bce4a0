"""Slugs for URLs."""


def slugify(title):
    """Turn a title into a URL slug.

    - lower case;
    - every run of characters other than a-z and 0-9 becomes a single "-";
    - no "-" at the start or the end.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    raise NotImplementedError
