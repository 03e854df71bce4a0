"""Stock levels."""

import json


def load(path):
    """Read the stock file."""
    with open(path) as f:
        return json.load(f)


def save(path, stock):
    with open(path, "w") as f:
        json.dump(stock, f, indent=2)


class Stock:
    """Items and their counts."""

    def __init__(self):
        self.items = {}

    def add(self, name, count=1):
        """Add `count` of `name`."""
        self.items[name] = self.items.get(name, 0) + count

    def remove(self, name, count=1):
        self.items[name] -= count

    def total(self):
        return sum(self.items.values())


def report(stock):
    """One line per item."""
    return "\n".join(f"{name}: {count}" for name, count in sorted(stock.items.items()))
