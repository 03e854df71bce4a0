from pathlib import Path

from invoice import format_money

assert format_money(1234.5) == "$1,234.50"
assert Path("invoice.py").read_text().count(",.2f") == 1, "the money format is still written twice"
