"""Invoice lines."""


def line(description, amount):
    """`Coffee.............. $1,234.50`"""
    return f"{description:.<20} ${amount:,.2f}"


def total_line(amount):
    """`TOTAL............... $1,234.50`"""
    return f"{'TOTAL':.<20} ${amount:,.2f}"
