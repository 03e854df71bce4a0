"""Prices of orders."""


def calc_total(items, tax_rate=0.0):
    """The order's total: the sum of price * quantity, plus tax."""
    subtotal = sum(price * quantity for price, quantity in items)
    return round(subtotal * (1 + tax_rate), 2)
