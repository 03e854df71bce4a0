"""Parse network settings from user input."""


def parse_port(text):
    """A TCP port number from text such as "8080" or " 443 "."""
    return int(text.strip())
