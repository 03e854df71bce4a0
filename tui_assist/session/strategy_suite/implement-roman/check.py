from roman import to_roman


def reference(n):
    table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
             (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for value, letters in table:
        while n >= value:
            out, n = out + letters, n - value
    return out


for n in range(1, 4000):
    assert to_roman(n) == reference(n), n
for bad in (0, 4000, -5):
    try:
        to_roman(bad)
    except ValueError:
        continue
    raise SystemExit(f"accepted {bad}")
