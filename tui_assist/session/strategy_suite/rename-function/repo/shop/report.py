"""A one-line summary of an order."""

from shop.pricing import calc_total


def summary(order_id, items):
    """`order 17: 3 items, 12.50`."""
    count = sum(quantity for _, quantity in items)
    return f"order {order_id}: {count} items, {calc_total(items):.2f}"
