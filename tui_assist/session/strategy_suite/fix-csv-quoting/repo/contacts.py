"""Read the contacts export (name,email,phone)."""


def load_contacts(text):
    """Parse CSV text with a header line into a list of dicts."""
    lines = text.strip().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]
